//! A server with many clients: each client on its own links estimates its own truth, every
//! reliable message reaches every client exactly once, a client's events do not depend on how
//! many others there are, the server's shared uplink queues everyone behind one download, and
//! live changes reach the client they name.

use std::collections::BTreeMap;

use ackscope_protocol::*;

use crate::support::Ledger;

/// 16 clients in 4 groups with different links (a preset among them).
fn sixteen(seed: u64, strategy: Strategy) -> Scenario {
    let text = r#"(
        clients: [
            (count: 4, link: (latency_ms: 20, loss_percent: 1)),
            (count: 4, link: (latency_ms: 50, loss_percent: 5)),
            (count: 4, link: (latency_ms: 100, loss_percent: 10)),
            (count: 4, preset: "cable"),
        ],
    )"#;
    let opts = ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
    let base: Scenario = opts.from_str(text).unwrap();
    Scenario { seed, strategy, ..base }
}

/// Each client's events (its own and the run's), in order.
fn by_client(events: &[Event]) -> BTreeMap<ClientId, Vec<Event>> {
    let mut out: BTreeMap<ClientId, Vec<Event>> = BTreeMap::new();
    for e in events {
        out.entry(e.client).or_default().push(e.clone());
    }
    out
}

/// Runs `s` for `secs`, then drains message strategies; every event.
fn run_all(s: Scenario, secs: f64) -> (Simulation, Vec<Event>) {
    let strategy = s.strategy;
    let mut sim = Simulation::try_new(s).unwrap();
    let mut events = Vec::new();
    for _ in 0..(secs as u64) {
        sim.run_for_secs(1.0);
        events.extend(sim.drain_events());
    }
    if registry::info(strategy).has_messages {
        drain(&mut sim, 30.0);
    }
    events.extend(sim.drain_events());
    (sim, events)
}

#[test]
fn sixteen_clients_in_four_groups_each_estimate_their_own_links_truth() {
    let seed = 5;
    let s = sixteen(seed, Strategy::Glenn);
    let (sim, events) = run_all(s.clone(), 40.0);
    assert!(events.windows(2).all(|w| w[0].time <= w[1].time), "seed {seed}: events out of time order");
    let tick_ms = 1000.0 / s.send_rate_pps;
    let summary = sim.summary();
    assert_eq!(summary.client_count(), 16);
    for k in 1..=16 {
        let c = summary.client(k).unwrap();
        let (totals, est) = c.finish();
        let own = s.for_client(k).unwrap();
        let link_loss = own.link.a_to_b.loss_percent;
        // The truth is the client's own links', not the run's.
        assert!((est.true_loss_percent - link_loss).abs() < 2.0, "seed {seed} client {k}: {est:?} vs {link_loss} %");
        let loss = est.loss_percent.expect("a loss estimate");
        assert!(
            (loss - est.true_loss_percent).abs() <= 3.0,
            "seed {seed} client {k}: loss estimate {loss:.2} vs true {:.2}",
            est.true_loss_percent
        );
        let rtt = est.rtt_ms.expect("an RTT estimate");
        let true_rtt = est.true_rtt_ms.expect("a true RTT");
        assert!(
            (rtt - true_rtt).abs() <= 5.0 + tick_ms,
            "seed {seed} client {k}: RTT estimate {rtt:.1} vs true {true_rtt:.1}"
        );
        let base_rtt = own.link.a_to_b.latency_ms + own.link.b_to_a.latency_ms;
        assert!((true_rtt - base_rtt).abs() < 6.0, "seed {seed} client {k}: true RTT {est:?} vs {base_rtt}");
        assert_eq!(totals.false_acks, 0, "seed {seed} client {k}");
        assert!(totals.sent > 3000, "seed {seed} client {k}: {totals:?}");
    }
    // The run's figures: totals over every client, estimates the mean over clients.
    let (totals, est) = sim.summary().finish();
    let sent: u64 = (1..=16).map(|k| summary.client(k).unwrap().finish().0.sent).sum();
    assert_eq!(totals.sent, sent);
    let mean_true_loss = (1..=16).map(|k| summary.client(k).unwrap().finish().1.true_loss_percent).sum::<f64>() / 16.0;
    assert!((est.true_loss_percent - mean_true_loss).abs() < 1e-9, "{est:?}");
}

/// Every reliable message of `sender` reached the other end exactly once; nothing delivered that
/// was not queued.
fn exactly_once(ledger: &Ledger, sender: Side, what: &str) {
    let receiver = sender.other();
    let queued = &ledger.queued[sender.index()];
    for (id, n) in &ledger.deliveries[receiver.index()] {
        assert!(queued.contains_key(id), "{what}: {id} delivered, never queued");
        if queued[id] {
            assert_eq!(*n, 1, "{what}: reliable {id} from {sender:?} delivered {n} times");
        }
    }
    let missing = queued.iter().filter(|(id, r)| **r && !ledger.was_delivered(receiver, **id)).count();
    assert_eq!(missing, 0, "{what}: {missing} reliable messages from {sender:?} never delivered");
    assert!(
        ledger.reliable_queued(sender) > 0
            || what.contains("chunks")
            || what.contains("fragments")
            || what.contains("acks")
    );
}

#[test]
fn every_strategy_delivers_every_reliable_message_once_to_every_client_without_false_acks() {
    let seed = 11;
    for strategy in Strategy::all() {
        let mut s = sixteen(seed, strategy);
        // The chunk strategies' server sends each client a block.
        s.workload.chunk_kib = 32;
        let (sim, events) = run_all(s, 10.0);
        let clients = by_client(&events);
        let run_wide = clients.get(&RUN_WIDE).cloned().unwrap_or_default();
        for k in 1..=16 {
            let what = format!("{} seed {seed} client {k}", strategy.name());
            let mut ledger = Ledger { packets: PacketLedger::for_client(k), ..Ledger::default() };
            let mut own: Vec<Event> = clients[&k].iter().chain(&run_wide).cloned().collect();
            own.sort_by_key(|e| e.time);
            ledger.observe(&own);
            assert_eq!(ledger.false_acks(), 0, "{what}: {}", ledger.brief());
            assert_eq!(sim.summary().client(k).unwrap().finish().0.false_acks, 0, "{what}");
            assert!(ledger.sent() > 100, "{what}: {}", ledger.brief());
            if registry::info(strategy).has_messages {
                if matches!(strategy, Strategy::Dnm | Strategy::Rellikt) {
                    // Ordered strategies ack a message when it arrives, possibly before the ones
                    // ahead of it (as in `message_soaks`).
                    assert_eq!(ledger.false_msg_acks, 0, "{what}");
                }
                for sender in Side::BOTH {
                    exactly_once(&ledger, sender, &what);
                }
            }
        }
        assert_eq!(sim.totals().false_acks, 0, "{}", strategy.name());
        assert_eq!(sim.unacked_reliable(), 0, "{}: drained", strategy.name());
    }
}

#[test]
fn clients_one_to_eight_meet_the_same_events_with_eight_or_sixteen_clients() {
    for strategy in [Strategy::Glenn, Strategy::Ue4] {
        let sixteen = sixteen(3, strategy);
        let Clients::Groups(groups) = &sixteen.clients else { unreachable!() };
        let eight = Scenario { clients: Clients::Groups(groups[..2].to_vec()), ..sixteen.clone() };
        let with_step = |s: Scenario| {
            // A scripted link change of every client on the way.
            let step = LinkStep {
                at_s: 4.0,
                dir: StepDirection::BToA,
                set: LinkPatch { latency_ms: Some(70.0), ..LinkPatch::default() },
            };
            Scenario { script: vec![step.into()], ..s }
        };
        let (sim_a, a) = run_all(with_step(eight), 8.0);
        let (sim_b, b) = run_all(with_step(sixteen.clone()), 8.0);
        let alone = Scenario { clients: Clients::Count(1), ..sixteen.for_client(1).unwrap() };
        let (sim_one, one) = run_all(with_step(alone), 8.0);
        // The drains end when every client is done: compare up to the earliest end.
        let end = sim_a.now().min(sim_b.now()).min(sim_one.now());
        let upto = |v: Vec<Event>| by_client(&v.into_iter().filter(|e| e.time <= end).collect::<Vec<_>>());
        // Client 1's and the run's events in the order the run made them.
        let mut first: Vec<Event> =
            b.iter().filter(|e| e.time <= end && (e.client == FIRST_CLIENT || e.client == RUN_WIDE)).cloned().collect();
        let (a, b) = (upto(a), upto(b));
        assert_eq!(b.keys().copied().collect::<Vec<_>>(), [RUN_WIDE].into_iter().chain(1..=16).collect::<Vec<_>>());
        assert_eq!(a[&RUN_WIDE], b[&RUN_WIDE], "{}: the run's own events", strategy.name());
        for k in 1..=8 {
            assert!(a[&k].len() > 1000, "{} client {k}", strategy.name());
            assert!(a[&k] == b[&k], "{} client {k}: events differ with 16 clients", strategy.name());
        }
        // Client 1 is the two-endpoint run of its own settings.
        let one: Vec<Event> = one.into_iter().filter(|e| e.time <= end).collect();
        for e in &mut first {
            e.client = FIRST_CLIENT;
        }
        assert!(first == one, "{}: client 1 of 16 differs from the run of client 1 alone", strategy.name());
    }
}

/// The `q` percentile of side B's snapshot staleness of client `k` sampled every 5 ms in
/// `[from, until)` (the age of the newest server snapshot the client holds).
fn staleness_percentile(events: &[Event], k: ClientId, from: SimTime, until: SimTime, q: f64) -> f64 {
    let mut queued: BTreeMap<u64, SimTime> = BTreeMap::new();
    let mut held: Option<(u64, SimTime)> = None;
    let mut ages = Vec::new();
    let mut next = from.0;
    for e in events.iter().filter(|e| e.client == k && e.time < until) {
        while let Some((_, queued_at)) = held.filter(|_| next < e.time.0) {
            if next >= from.0 {
                ages.push((next - queued_at.0) as f64 / 1000.0);
            }
            next += measure::STALENESS_SAMPLE_MS * 1000;
        }
        match e.kind {
            EventKind::MessageQueued { side: Side::A, msg, reliable: false, .. } => {
                queued.insert(msg, e.time);
            }
            EventKind::MessageDelivered { side: Side::B, msg } => {
                if let Some(&q) = queued.get(&msg) {
                    if held.is_none_or(|(id, _)| msg > id) {
                        held = Some((msg, q));
                        next = next.max(e.time.0);
                    }
                }
            }
            _ => {}
        }
    }
    Percentiles::of(ages).at(q)
}

#[test]
fn a_capped_server_uplink_delays_every_clients_snapshots_while_one_downloads() {
    let run = |uplink_kbps: f64| {
        let mut s = Scenario { seed: 21, clients: Clients::Count(4), ..Scenario::default() };
        s.set("server.uplink_kbps", &uplink_kbps.to_string()).unwrap();
        // A quarter of a second of queue at 512 kbit/s.
        s.set("server.uplink_queue_bytes", "16384").unwrap();
        // Client 3 is sent 256 KiB in 1000-byte reliable messages at 5 s (a burst of its
        // server's end) and nothing else reliable, while the others only play.
        for (name, value) in [
            ("burst_messages", "263"),
            ("reliable_min_bytes", "1000"),
            ("reliable_max_bytes", "1000"),
            ("reliable_rate_hz", "0"),
        ] {
            s.set(&format!("client.3.workload.{name}"), value).unwrap();
        }
        let mut sim = Simulation::try_new(s).unwrap();
        sim.run_for_secs(5.0);
        sim.burst_for(3, Side::A);
        sim.run_for_secs(25.0);
        let events: Vec<Event> = sim.drain_events().collect();
        (sim, events)
    };
    let (capped, events) = run(512.0);
    let (free, free_events) = run(0.0);
    // Client 3's download: all of it arrives, later under the cap.
    for (sim, what) in [(&capped, "capped"), (&free, "free")] {
        assert_eq!(sim.peer_of(3, Side::A).unwrap().unacked_reliable(), 0, "{what}: client 3's download done");
    }
    for k in [1, 2, 4] {
        let before = staleness_percentile(&events, k, SimTime::from_secs_f64(1.0), SimTime::from_secs_f64(5.0), 0.95);
        let during = staleness_percentile(&events, k, SimTime::from_secs_f64(5.5), SimTime::from_secs_f64(9.0), 0.95);
        let after = staleness_percentile(&events, k, SimTime::from_secs_f64(25.0), SimTime::from_secs_f64(30.0), 0.95);
        eprintln!("client {k}: staleness p95 {before:.1} -> {during:.1} -> {after:.1} ms");
        assert!(during > before + 150.0, "client {k}: staleness p95 {before:.1} -> {during:.1} ms while 3 downloads");
        assert!(after < before + 30.0, "client {k}: p95 {after:.1} ms after (before {before:.1})");
        let f =
            |a, b| staleness_percentile(&free_events, k, SimTime::from_secs_f64(a), SimTime::from_secs_f64(b), 0.95);
        let (free_before, free_during) = (f(1.0, 5.0), f(5.5, 9.0));
        assert!(free_during < free_before + 30.0, "client {k} without a cap: {free_before:.1} -> {free_during:.1} ms");
    }
    // The uplink's drops are ground truth (QueueFull on the server's side), and replaying the
    // server's sends through the same queue finds exactly them.
    let drops = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::LinkDropped { dir: Dir::AtoB, reason: DropReason::QueueFull, .. }))
        .count() as u64;
    let mut server = ServerAccumulator::new(capped.scenario().server);
    for e in &events {
        server.observe(e);
    }
    let up = server.finish(None).uplink.expect("capped");
    assert_eq!(up.dropped, drops);
    assert!(up.queue_delay_ms.p99 > 200.0, "{up:?}");
    assert_eq!(capped.totals().false_acks, 0);
    let mut free_server = ServerAccumulator::new(free.scenario().server);
    for e in &free_events {
        free_server.observe(e);
    }
    assert!(free_server.finish(None).uplink.is_none());
}

#[test]
fn live_changes_reach_the_client_they_name_and_the_number_of_clients_is_fixed() {
    let s = Scenario { seed: 2, clients: Clients::Count(3), ..Scenario::default() };
    let mut sim = Simulation::new(s);
    sim.run_for_secs(2.0);
    let set = |name: &str, value: &str| Action::Set(ParamChange::parse(name, value));
    sim.apply(&set("client.2.link.loss_percent", "40")).unwrap();
    sim.apply(&set("link.latency_ms", "80")).unwrap();
    for (name, value, why) in [
        ("clients", "4", "fixed"),
        ("client.4.link.loss_percent", "1", "3 client"),
        ("client.2.seed", "1", "whole run"),
    ] {
        let e = sim.apply(&set(name, value)).unwrap_err().0;
        assert!(e.contains(why), "{name}: {e}");
    }
    let changes: Vec<(ClientId, String)> = sim
        .events()
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ParamChanged { name, .. } => Some((e.client, name.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(changes, [(2, "client.2.link.loss_percent".to_string()), (RUN_WIDE, "link.latency_ms".to_string())]);
    for k in 1..=3 {
        let c = sim.client_scenario_now(k).unwrap();
        let loss = if k == 2 { 40.0 } else { 5.0 };
        assert_eq!((c.link.a_to_b.loss_percent, c.link.b_to_a.latency_ms), (loss, 80.0), "client {k}");
    }
    sim.run_for_secs(20.0);
    let est = sim.summary().client(2).unwrap().finish().1;
    assert!(est.true_loss_percent > 30.0, "{est:?}");
    assert!(sim.summary().client(1).unwrap().finish().1.true_loss_percent < 10.0);
}

#[test]
fn a_thousand_and_twenty_four_clients_run_side_by_side() {
    let s = Scenario { seed: 8, clients: Clients::Count(1024), ..Scenario::default() };
    let mut sim = Simulation::try_new(s).unwrap();
    sim.set_keep_events(false);
    sim.run_for_secs(3.0);
    let summary = sim.summary();
    assert_eq!(summary.client_count(), 1024);
    for k in [1, 2, 512, 1024] {
        let (t, _) = summary.client(k).unwrap().finish();
        assert!(t.sent > 300 && t.acked > 200 && t.false_acks == 0, "client {k}: {t:?}");
    }
}
