//! The real-UDP transport over loopback, in process: both endpoints of a run (`UdpRun`) and lone
//! endpoints (`UdpEndpoint`). The `ackscope peer` processes are in tests/peer_cli.rs. Every test is
//! bounded in time and binds 127.0.0.1 ports chosen by the OS.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use ackscope::runtime::udp::UdpRun;
use ackscope::runtime::udp_truth::EventTally;
use ackscope::runtime::Lanes;
use ackscope_protocol::{Action, Dir, EventKind, ParamChange, Scenario, Side};

fn any_port() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// A free loopback port for a child process: bound by the OS, then released.
fn free_port() -> SocketAddr {
    UdpSocket::bind(any_port()).unwrap().local_addr().unwrap()
}

fn lossy_scenario(seed: u64, loss_percent: f64) -> Scenario {
    let mut s = Scenario { seed, strategy: ackscope_protocol::Strategy::Acks, ..Scenario::default() };
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.loss_percent = loss_percent;
        l.latency_ms = 20.0;
        l.jitter_ms = 0.0;
    }
    s
}

/// Runs a UDP run for `secs` of real time, folding its events into a tally.
fn run_udp_for(scenario: Scenario, secs: f64) -> (EventTally, UdpRun) {
    let mut run = UdpRun::spawn(scenario, any_port(), any_port(), || {}).expect("spawn UDP run");
    let mut tally = EventTally::new();
    let until = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < until {
        if let Some(b) = run.recv_batch_timeout(Duration::from_millis(20)).map(|b| b.events) {
            tally.observe(&b);
        }
    }
    run.stop();
    for b in run.try_batches() {
        tally.observe(&b.events);
    }
    (tally, run)
}

#[test]
fn udp_run_delivers_and_acks_over_loopback_through_the_lossy_link() {
    let seed = 5;
    let (t, _run) = run_udp_for(lossy_scenario(seed, 20.0), 6.0);
    let p = t.totals();
    let e = t.estimates();
    let ctx = format!("seed {seed}: {p:?} {e:?}");
    for side in Side::BOTH {
        let (sent, acked) = (t.sent(side), t.acked(side));
        // 60 pps for as long as the run ran: the run's own clock, not the test's 6 s, which a
        // loaded machine cuts into (threads started late, the last batches still in the channel).
        let ran_s = t.end().as_secs_f64();
        assert!(ran_s > 3.0, "the run ran {ran_s} s of 6; {ctx}");
        let expected = 60.0 * ran_s;
        assert!((sent as f64 - expected).abs() <= 12.0, "{side:?} sent {sent} in {ran_s:.2} s; {ctx}");
        assert!(acked > 0 && acked < sent, "{side:?} acked {acked} of {sent}; {ctx}");
        // An ack needs the packet through the 20 % link: about 80 % of sends.
        let ratio = acked as f64 / sent as f64;
        assert!((0.65..0.92).contains(&ratio), "{side:?} acked ratio {ratio}; {ctx}");
        let dir = side.outgoing();
        // Every datagram reached the receiving socket and met its link (some may be in the
        // kernel when the run stops: a receiving thread descheduled for 300 ms on a loaded
        // machine leaves 18 at 60 pps).
        assert!(t.link_sent(dir) <= sent && t.link_sent(dir) + 20 >= sent, "{dir:?} link {}; {ctx}", t.link_sent(dir));
        let loss = t.link_loss_percent(dir).unwrap();
        assert!((12.0..28.0).contains(&loss), "{dir:?} true loss {loss}; {ctx}");
        assert!(acked <= t.link_delivered(dir), "{ctx}");
        let delay = t.mean_link_delay_ms(dir).unwrap();
        assert!((delay - 20.0).abs() < 0.01, "{dir:?} link delay {delay}; {ctx}");
    }
    assert_eq!(p.false_acks, 0, "{ctx}");
    assert_eq!(p.duplicate_acks, 0, "{ctx}");
    assert_eq!(p.malformed, 0, "{ctx}");
    let loss = e.loss_percent.expect("a loss estimate");
    assert!((10.0..30.0).contains(&loss), "estimated loss {loss}; {ctx}");
    // The estimate adds the wait for the next packet carrying the ack (<= 1/60 s) and scheduling.
    let (rtt, true_rtt) = (e.rtt_ms.expect("an RTT sample"), e.true_rtt_ms.expect("a true RTT"));
    assert!(rtt >= true_rtt - 1.0 && rtt < true_rtt + 30.0, "{ctx}");
    eprintln!("{ctx}");
}

/// Replays every datagram the UDP run's links received, at the same instants, on fresh links
/// built from the scenario; returns, per direction, the drops and the delivery delays (by uid) of
/// the run and of the replay.
type LinkOutcome = (std::collections::BTreeSet<u64>, std::collections::BTreeMap<u64, u32>);

fn link_outcomes(events: &[ackscope_protocol::Event]) -> [LinkOutcome; 2] {
    let mut out: [LinkOutcome; 2] = Default::default();
    for e in events {
        match e.kind {
            EventKind::LinkDropped { dir, uid, .. } => {
                out[dir.index()].0.insert(uid);
            }
            EventKind::LinkDelivered { dir, uid, delay_us } => {
                out[dir.index()].1.insert(uid, delay_us);
            }
            _ => {}
        }
    }
    out
}

#[test]
fn udp_link_decisions_replay_exactly_on_the_scenarios_link() {
    let seed = 21;
    let mut sc = lossy_scenario(seed, 30.0);
    sc.strategy = ackscope_protocol::Strategy::Glenn;
    // Asymmetric, so a direction or configuration mix-up shows.
    sc.link.b_to_a.loss_percent = 10.0;
    sc.link.a_to_b.jitter_ms = 5.0;
    let mut run = UdpRun::spawn(sc.clone(), any_port(), any_port(), || {}).unwrap();
    let mut events = Vec::new();
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        if let Some(b) = run.recv_batch_timeout(Duration::from_millis(20)).map(|b| b.events) {
            events.extend(b);
        }
    }
    run.stop();
    let mut tally = EventTally::new();
    tally.observe(&events);
    assert_eq!(tally.totals().false_acks, 0, "seed {seed}: {:?}", tally.totals());
    assert!(tally.acked(Side::A) > 50 && tally.acked(Side::B) > 50, "seed {seed}: {:?}", tally.totals());

    // The replay: the same datagrams (by size), at the same instants, in the same order.
    let mut links = Dir::BOTH.map(|d| ackscope_protocol::Link::new(d, *sc.link.get(d), seed));
    let mut replayed = Vec::new();
    for e in &events {
        if let EventKind::LinkSent { dir, uid, bytes } = e.kind {
            links[dir.index()].send(e.time, uid, vec![0; bytes as usize], &mut replayed);
        }
    }
    for l in &mut links {
        while l.pop_due(ackscope_protocol::SimTime(u64::MAX), &mut replayed).is_some() {}
    }
    let (udp, replay) = (link_outcomes(&events), link_outcomes(&replayed));
    for d in Dir::BOTH {
        let (u, r) = (&udp[d.index()], &replay[d.index()]);
        assert!(tally.link_sent(d) >= 150, "seed {seed} {d:?}: {} datagrams", tally.link_sent(d));
        assert!(!u.0.is_empty(), "seed {seed} {d:?}: some drops");
        assert_eq!(u.0, r.0, "seed {seed} {d:?}: the same datagrams dropped");
        // Everything delivered during the run was delivered after the same delay in the replay.
        for (uid, delay) in &u.1 {
            assert_eq!(r.1.get(uid), Some(delay), "seed {seed} {d:?} uid {uid}");
        }
        assert!(u.1.len() + 10 >= r.1.len(), "seed {seed} {d:?}: only the last few still in flight");
    }
}

#[test]
fn scripted_link_steps_apply_on_the_receiving_end() {
    let seed = 3;
    let mut sc = lossy_scenario(seed, 0.0);
    sc.script = vec![ackscope_protocol::LinkStep {
        at_s: 0.5,
        dir: ackscope_protocol::StepDirection::AToB,
        set: ackscope_protocol::LinkPatch { loss_percent: Some(100.0), ..Default::default() },
    }
    .into()];
    let mut run = UdpRun::spawn(sc, any_port(), any_port(), || {}).unwrap();
    let mut events = Vec::new();
    let until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < until {
        if let Some(b) = run.recv_batch_timeout(Duration::from_millis(20)).map(|b| b.events) {
            events.extend(b);
        }
    }
    run.stop();
    let at = ackscope_protocol::SimTime(500_000);
    let changed: Vec<_> = events.iter().filter(|e| matches!(e.kind, EventKind::ParamChanged { .. })).collect();
    assert_eq!(changed.len(), 1, "seed {seed}: {changed:?}");
    assert!(
        matches!(&changed[0].kind, EventKind::ParamChanged { name, value } if name == "link.a_to_b.loss_percent" && value == "100")
    );
    let count = |f: &dyn Fn(&EventKind) -> bool, after: bool| {
        events.iter().filter(|e| (e.time >= at) == after && f(&e.kind)).count()
    };
    let sent_ab = |k: &EventKind| matches!(k, EventKind::LinkSent { dir: Dir::AtoB, .. });
    let dropped_ab = |k: &EventKind| matches!(k, EventKind::LinkDropped { dir: Dir::AtoB, .. });
    let dropped_ba = |k: &EventKind| matches!(k, EventKind::LinkDropped { dir: Dir::BtoA, .. });
    assert_eq!(count(&dropped_ab, false), 0, "seed {seed}: no loss before the step");
    assert!(count(&sent_ab, true) > 40 && count(&dropped_ab, true) == count(&sent_ab, true), "seed {seed}");
    assert_eq!(count(&dropped_ba, true), 0, "seed {seed}: the other direction is untouched");
}

#[test]
fn udp_run_carries_a_chunk_transfer_end_to_end() {
    let seed = 11;
    let mut sc = lossy_scenario(seed, 10.0);
    // Heavy enough that some of the ~25 slices are surely dropped (draws are keyed by real time).
    sc.link.a_to_b.loss_percent = 30.0;
    sc.strategy = ackscope_protocol::Strategy::Chunks;
    sc.workload.chunk_kib = 16;
    let mut run = UdpRun::spawn(sc, any_port(), any_port(), || {}).unwrap();
    let (mut completed, mut delivered) = (None, None);
    let mut t = EventTally::new();
    let until = Instant::now() + Duration::from_secs(5);
    // Keep reading until the first chunk is done both ways and the lossy link has shown a drop:
    // chunks go back to back, so later slices meet the link too if the first chunk's happened not
    // to (and batches from the two endpoint threads may arrive in either order).
    while Instant::now() < until && (completed.is_none() || delivered.is_none() || t.link_dropped(Dir::AtoB) == 0) {
        let Some(b) = run.recv_batch_timeout(Duration::from_millis(20)).map(|b| b.events) else { continue };
        t.observe(&b);
        for e in &b {
            match e.kind {
                EventKind::ChunkCompleted { side, bytes, elapsed_us, .. } if completed.is_none() => {
                    completed = Some((side, bytes, elapsed_us))
                }
                EventKind::ChunkDelivered { side, bytes, payload_id, .. } if delivered.is_none() => {
                    delivered = Some((side, bytes, payload_id))
                }
                _ => {}
            }
        }
    }
    run.stop();
    let ctx = format!("seed {seed}: {:?}", t.totals());
    assert_eq!(delivered, Some((Side::B, 16 * 1024, Some(0))), "B reads A's first chunk intact; {ctx}");
    let (side, bytes, elapsed_us) = completed.expect("A learns the chunk arrived");
    assert_eq!((side, bytes), (Side::A, 16 * 1024), "{ctx}");
    assert!(elapsed_us > 100_000 && elapsed_us < 5_000_000, "{elapsed_us} us; {ctx}");
    assert!(t.link_dropped(Dir::AtoB) > 0, "slices met the lossy link; {ctx}");
    assert_eq!(t.malformed(), 0, "{ctx}");
}

#[test]
fn every_strategy_acks_only_delivered_packets_over_udp() {
    use ackscope_protocol::Strategy;
    let seed = 13;
    let strategies = [Strategy::Acks, Strategy::Glenn, Strategy::Ue4, Strategy::Dnm, Strategy::Rellikt];
    // All at once, so the test takes one run's time.
    let mut runs: Vec<_> = strategies
        .iter()
        .map(|&st| {
            let sc = Scenario { strategy: st, ..lossy_scenario(seed, 15.0) };
            (st, UdpRun::spawn(sc, any_port(), any_port(), || {}).unwrap(), EventTally::new())
        })
        .collect();
    let until = Instant::now() + Duration::from_millis(2500);
    while Instant::now() < until {
        for (_, run, t) in &mut runs {
            for b in run.try_batches() {
                t.observe(&b.events);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    for (st, mut run, mut t) in runs {
        run.stop();
        for b in run.try_batches() {
            t.observe(&b.events);
        }
        let p = t.totals();
        let ctx = format!("seed {seed} {}: {p:?}", st.name());
        assert!(t.acked(Side::A) > 20 && t.acked(Side::B) > 20, "{ctx}");
        assert!(p.link_dropped > 0, "{ctx}");
        assert_eq!((p.false_acks, p.duplicate_acks, p.malformed), (0, 0, 0), "{ctx}");
    }
}

#[test]
fn a_chunk_asked_of_one_side_goes_out_from_that_side_only() {
    let seed = 12;
    let mut sc = lossy_scenario(seed, 5.0);
    sc.strategy = ackscope_protocol::Strategy::Chunks;
    sc.workload.chunk_kib = 0;
    let mut run = UdpRun::spawn(sc, any_port(), any_port(), || {}).unwrap();
    assert!(run.send(Lanes::All, Action::SendChunk { side: Side::B, kib: 4 }));
    let mut events = Vec::new();
    let until = Instant::now() + Duration::from_secs(4);
    let delivered = |ev: &[ackscope_protocol::Event]| {
        ev.iter().any(|e| matches!(e.kind, EventKind::ChunkDelivered { side: Side::A, bytes: 4096, .. }))
    };
    while Instant::now() < until && !delivered(&events) {
        if let Some(b) = run.recv_batch_timeout(Duration::from_millis(20)) {
            events.extend(b.events);
        }
    }
    run.stop();
    assert!(delivered(&events), "seed {seed}: A reads the chunk B was asked to send");
    let started: Vec<Side> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::ChunkStarted { side, .. } => Some(side),
            _ => None,
        })
        .collect();
    assert_eq!(started, vec![Side::B], "seed {seed}");
}

#[test]
fn udp_run_link_changes_reach_the_receiving_end() {
    let seed = 8;
    let mut run = UdpRun::spawn(lossy_scenario(seed, 0.0), any_port(), any_port(), || {}).unwrap();
    let set = |name: &str, value: &str| Action::Set(ParamChange::parse(name, value));
    assert!(run.send(Lanes::All, set("link.a_to_b.loss_percent", "100")));
    assert!(run.send(Lanes::All, set("link.nope", "1")));
    let mut t = EventTally::new();
    let (mut changes, mut errors) = (Vec::new(), Vec::new());
    let until = Instant::now() + Duration::from_secs(1);
    while Instant::now() < until {
        if let Some(b) = run.recv_batch_timeout(Duration::from_millis(20)) {
            assert_eq!(b.lane, 0);
            t.observe(&b.events);
            changes.extend(b.actions);
            errors.extend(b.error);
        }
    }
    run.stop();
    let ctx = format!("seed {seed}: {:?}", t.totals());
    // Both ends applied the change; it is recorded once, and the bad one refused once.
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].as_set(), Some(&ParamChange::parse("link.a_to_b.loss_percent", "100")));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("link.nope"), "{errors:?}");
    // A->B now drops everything (the very first datagram may have met the old link).
    assert!(t.link_sent(Dir::AtoB) > 30, "{ctx}");
    assert!(t.link_delivered(Dir::AtoB) <= 1, "{ctx}");
    assert_eq!(t.link_dropped(Dir::BtoA), 0, "{ctx}");
    assert!(t.acked(Side::A) <= 1, "{ctx}");
    assert_eq!(t.totals().false_acks, 0, "{ctx}");
}

#[test]
fn stopping_a_udp_run_joins_both_threads_promptly() {
    let mut run = UdpRun::spawn(lossy_scenario(1, 5.0), any_port(), any_port(), || {}).unwrap();
    let addrs = [run.local_addr(Side::A), run.local_addr(Side::B)];
    std::thread::sleep(Duration::from_millis(300));
    assert!(run.is_running());
    assert!(run.send(Lanes::All, Action::Pause));
    let t0 = Instant::now();
    let exits = run.stop();
    let took = t0.elapsed();
    assert!(took < Duration::from_millis(500), "stop took {took:?}");
    assert_eq!(exits.len(), 2, "both threads joined");
    assert!(run.all_threads_finished() && !run.is_running());
    assert!(!run.send(Lanes::All, Action::Resume), "a stopped run takes no commands");
    // The sockets lived on the endpoint threads: they are closed, so their ports are free again.
    for a in addrs {
        UdpSocket::bind(a).unwrap_or_else(|e| panic!("{a} still bound after stop: {e}"));
    }
}

#[test]
fn both_transports_run_behind_one_handle() {
    use ackscope::source::{start, Spec};
    let s = || lossy_scenario(2, 0.0);
    for spec in [Spec::Simulated(vec![(s(), Vec::new())]), Spec::UdpLoopback(Box::new(s()))] {
        let transport = spec.origin();
        let mut run = start(spec, || {}).unwrap();
        let mut t = EventTally::new();
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until && t.acked(Side::B) < 10 {
            for b in run.try_batches() {
                t.observe(&b.events);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(t.acked(Side::A) >= 5 && t.acked(Side::B) >= 10, "{transport:?}: {:?}", t.totals());
        run.stop();
        assert!(!run.is_running() && !run.send(Lanes::All, Action::Pause), "{transport:?}");
    }
}

#[test]
fn an_endpoint_with_an_end_stops_by_itself_even_if_nobody_reads_its_events() {
    use ackscope::runtime::udp::{EndpointOptions, UdpEndpoint};
    let silent = UdpSocket::bind(any_port()).unwrap();
    let opts = |seconds| EndpointOptions {
        side: Side::A,
        scenario: Scenario::default(),
        raw: false,
        bind: any_port(),
        connect: silent.local_addr().unwrap(),
        seconds: Some(seconds),
    };
    // Drained: every batch arrives, then the channel closes.
    let t0 = Instant::now();
    let mut ep = UdpEndpoint::spawn(opts(0.5), || {}).unwrap();
    let mut t = EventTally::new();
    for b in ep.batches_until_end() {
        t.observe(&b.events);
    }
    let exit = ep.stop();
    assert!(exit.ran_to_end, "{exit:?}");
    assert!(t0.elapsed() < Duration::from_secs(3));
    assert!((28..=33).contains(&t.sent(Side::A)), "60 pps for 0.5 s: {}", t.sent(Side::A));
    assert!(!ep.is_running());
    // Never drained, at 1000 pps: far more batches than the event channel holds, so the endpoint
    // reaches its end with a backlog; stop still ends it at once and joins.
    let mut fast = opts(0.5);
    fast.scenario.send_rate_pps = 1000.0;
    let mut ep = UdpEndpoint::spawn(fast, || {}).unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let t1 = Instant::now();
    ep.stop();
    // "At once" on a loaded 2-core machine: well under the seconds a blocked send would hang.
    assert!(t1.elapsed() < Duration::from_secs(2), "stop took {:?}", t1.elapsed());
    assert!(ep.try_batches().count() >= 200, "the channel filled up");
    assert!(!ep.is_running());
}

#[test]
fn lone_endpoints_name_unknown_datagrams_with_small_distinct_ids() {
    use ackscope::runtime::udp::{EndpointOptions, UdpEndpoint};
    let (pa, pb) = (free_port(), free_port());
    let opts = |side, bind, connect| EndpointOptions {
        side,
        scenario: lossy_scenario(6, 30.0),
        raw: false,
        bind,
        connect,
        seconds: Some(1.0),
    };
    let a = UdpEndpoint::spawn(opts(Side::A, pa, pb), || {}).unwrap();
    let b = UdpEndpoint::spawn(opts(Side::B, pb, pa), || {}).unwrap();
    let ea: Vec<_> = a.batches_until_end().flat_map(|b| b.events).collect();
    let eb: Vec<_> = b.batches_until_end().flat_map(|b| b.events).collect();
    let mut uids = std::collections::BTreeSet::new();
    for e in ea.iter().chain(&eb) {
        if let EventKind::PacketSent { uid, .. } | EventKind::LinkSent { uid, .. } = e.kind {
            uids.insert(uid);
        }
    }
    // Each process names its sends and the datagrams it receives: 4 disjoint id spaces.
    let sent =
        |ev: &[ackscope_protocol::Event]| ev.iter().filter(|e| matches!(e.kind, EventKind::PacketSent { .. })).count();
    let arrived =
        |ev: &[ackscope_protocol::Event]| ev.iter().filter(|e| matches!(e.kind, EventKind::LinkSent { .. })).count();
    assert_eq!(uids.len(), sent(&ea) + sent(&eb) + arrived(&ea) + arrived(&eb));
    assert!(*uids.last().unwrap() < 4 * 200, "ids stay small: {:?}", uids.last());
    // So the simulation's own tally can fold a lone endpoint's log (it indexes tables by id).
    let (totals, _) = ackscope_protocol::summarize(&ea);
    assert_eq!(totals.sent as usize, sent(&ea));
    assert!(totals.delivered > 0 && totals.link_dropped > 0, "{totals:?}");
}

/// Real-time precision of the UDP endpoints: how late the peer gets a datagram after the link made
/// it due, and how regular the send ticks are. A measurement, not run by default (timing depends
/// on the machine): `cargo test --test app udp::udp_timing_figures -- --ignored --nocapture`.
#[test]
#[ignore]
fn udp_timing_figures() {
    let mut run = UdpRun::spawn(Scenario::default(), any_port(), any_port(), || {}).unwrap();
    let (mut late_us, mut gap_us) = (Vec::new(), Vec::new());
    let mut last_sent = [None, None];
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        let Some(b) = run.recv_batch_timeout(Duration::from_millis(20)).map(|b| b.events) else { continue };
        let mut due = None;
        for e in &b {
            match e.kind {
                EventKind::LinkDelivered { .. } => due = Some(e.time),
                EventKind::PacketReceived { .. } => {
                    if let Some(t) = due.take() {
                        late_us.push(e.time.0 - t.0);
                    }
                }
                EventKind::PacketSent { side, .. } => {
                    if let Some(p) = last_sent[side.index()].replace(e.time.0) {
                        gap_us.push(e.time.0 - p);
                    }
                }
                _ => {}
            }
        }
    }
    let t0 = Instant::now();
    run.stop();
    let stop = t0.elapsed();
    late_us.sort_unstable();
    gap_us.sort_unstable();
    let q = |v: &[u64], p: f64| v[((v.len() - 1) as f64 * p) as usize];
    eprintln!(
        "delivery lateness us: n {} p50 {} p99 {} max {}",
        late_us.len(),
        q(&late_us, 0.5),
        q(&late_us, 0.99),
        q(&late_us, 1.0)
    );
    eprintln!(
        "send tick gap us (ideal 16667): n {} min {} p50 {} p99 {} max {}",
        gap_us.len(),
        q(&gap_us, 0.0),
        q(&gap_us, 0.5),
        q(&gap_us, 0.99),
        q(&gap_us, 1.0)
    );
    eprintln!("stop took {stop:?}");
    assert!(q(&late_us, 0.5) < 2_000, "deliveries are late by whole kernel ticks");
}
