//! Many clients through one proxy: each its own source at the server and its own seeded trace,
//! the recording's link decisions re-made exactly from its seed, live and scripted changes, and
//! expiry that keeps the proxy's memory to its live clients.

use std::collections::{BTreeMap, BTreeSet};

use ackscope::proxy::rerun::{fates_of, mismatches, rerun_fates};
use ackscope_protocol::{
    Action, ClientId, Dir, EventKind, LinkPatch, LinkStep, ParamChange, SimTime, StepDirection, RUN_WIDE,
};

use super::*;

const CLIENTS: u32 = 16;
const PER_CLIENT: u32 = 300;

#[test]
fn sixteen_clients_get_their_own_seeded_traces_and_the_recording_reruns_exactly() {
    let server = Server::echo("127.0.0.1:0");
    let mut s = scenario(&[
        "seed=11",
        "link.latency_ms=20",
        "link.jitter_ms=5",
        "link.loss_percent=10",
        "link.duplicate_percent=5",
        "link.burst.p_percent=2",
    ]);
    // A scripted step on the proxy's clock, as in a simulation.
    let set = LinkPatch { loss_percent: Some(30.0), ..LinkPatch::default() };
    s.script = vec![LinkStep { at_s: 0.4, dir: StepDirection::BToA, set }.into()];
    let scenario_used = s.clone();
    let proxy = start(server.addr, s);
    let clients: Vec<Client> = (0..CLIENTS).map(|_| Client::to(proxy.local_addr())).collect();
    let mut rec = recording();

    let t0 = Instant::now();
    for i in 0..PER_CLIENT {
        for (k, c) in clients.iter().enumerate() {
            c.send(&payload(i * CLIENTS + k as u32));
        }
        if i == PER_CLIENT / 2 {
            // A live change for one client, another for all of them.
            let c3 = Action::Set(ParamChange::parse("link.a_to_b.loss_percent", "40"));
            proxy.apply(Some(3), c3).unwrap();
            let all = Action::Set(ParamChange::parse("link.latency_ms", "25"));
            proxy.apply(None, all).unwrap();
            let refused = Action::Set(ParamChange::parse("link.loss_percent", "300"));
            assert!(proxy.apply(None, refused).is_err());
            assert!(proxy.apply(None, Action::Restart).is_err(), "a proxy has no endpoints to restart");
        }
        let due = t0 + Duration::from_millis(2 * (i as u64 + 1));
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        drain(&proxy, &mut rec);
    }
    let sent = (CLIENTS * PER_CLIENT) as u64;
    let done = until(&proxy, &mut rec, 15.0, |r| {
        let up = counts(r, None, Dir::BtoA);
        let down = counts(r, None, Dir::AtoB);
        up.sent == sent && settled(r) && down.sent == up.delivered
    });
    assert!(done, "not settled: {:?} {:?}", counts(&rec, None, Dir::BtoA), counts(&rec, None, Dir::AtoB));
    let end = rec.events.last().unwrap().time;
    let outcome = proxy.stop().unwrap();

    // Sixteen clients, numbered in order of arrival, each its own source address at the server.
    let ids: Vec<ClientId> = rec.clients.iter().map(|c| c.0).collect();
    assert_eq!(ids, (1..=CLIENTS).collect::<Vec<_>>());
    let sources: BTreeSet<_> = server.log().iter().map(|(from, _)| *from).collect();
    assert_eq!(sources.len(), CLIENTS as usize);
    assert_eq!(outcome.clients.len(), CLIENTS as usize);
    // Events are in time order, and each names its client.
    assert!(rec.events.windows(2).all(|w| w[0].time <= w[1].time));
    let changed: BTreeSet<(ClientId, &str, u64)> = rec
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ParamChanged { name, .. } => Some((e.client, name.as_str(), e.time.0)),
            _ => None,
        })
        .collect();
    let names: Vec<(ClientId, &str)> = changed.iter().map(|c| (c.0, c.1)).collect();
    assert_eq!(
        names,
        vec![(RUN_WIDE, "link.b_to_a.loss_percent"), (RUN_WIDE, "link.latency_ms"), (3, "link.a_to_b.loss_percent")]
    );
    assert!(changed.contains(&(RUN_WIDE, "link.b_to_a.loss_percent", 400_000)), "the step at its instant: {changed:?}");

    // The recording re-runs exactly: every datagram's fate from the seed and the events.
    let recorded = fates_of(&rec.events);
    let rerun = rerun_fates(&scenario_used, &rec.events).unwrap();
    let wrong = mismatches(&recorded, &rerun, end);
    assert!(wrong.is_empty(), "{} of {} fates differ, first: {}", wrong.len(), recorded.len(), wrong[0]);
    assert!(recorded.values().any(|f| f.duplicated) && recorded.values().any(|f| f.dropped.is_some()));

    // Each client has its own trace: which of its sends were dropped, by its send order, differs
    // from every other client's.
    let mut drops: BTreeMap<ClientId, Vec<bool>> = BTreeMap::new();
    for ((client, _), f) in &recorded {
        if f.dir == Some(Dir::BtoA) {
            drops.entry(*client).or_default().push(f.dropped.is_some());
        }
    }
    let patterns: BTreeSet<&Vec<bool>> = drops.values().collect();
    assert_eq!(patterns.len(), CLIENTS as usize, "two clients share a loss trace");
    // The scripted 30 % from 0.4 s on shows in what clients sent after it.
    let late_up: Vec<_> =
        recorded.values().filter(|f| f.dir == Some(Dir::BtoA) && f.sent_at > SimTime(450_000)).collect();
    let share = late_up.iter().filter(|f| f.dropped.is_some()).count() as f64 / late_up.len() as f64;
    assert!(share > 0.3, "loss after the step {share}");
}

#[test]
fn silent_clients_expire_and_the_proxy_reuses_their_room() {
    let server = Server::echo("127.0.0.1:0");
    let mut cfg = ProxyConfig::new("127.0.0.1:0".parse().unwrap(), server.addr, scenario(&["link.latency_ms=2"]));
    cfg.expire_after = Duration::from_millis(300);
    let proxy = Proxy::start(cfg).unwrap();
    let mut rec = recording();
    // A wave of clients at once, each sending three datagrams and getting them back, then silent.
    let wave = |n: usize, rec: &mut Recording| {
        let clients: Vec<Client> = (0..n).map(|_| Client::to(proxy.local_addr())).collect();
        for c in &clients {
            for i in 0..3 {
                c.send(&payload(i));
            }
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while clients.iter().any(|c| c.count() < 3) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(
            clients.iter().all(|c| c.count() == 3),
            "echoes through the proxy: {:?} {:?} {:?}",
            clients.iter().map(|c| c.count()).collect::<Vec<_>>(),
            proxy.status(),
            server.received()
        );
        let expected = rec.expired.len() + n;
        assert!(until(&proxy, rec, 10.0, |r| r.expired.len() >= expected), "{} expired", rec.expired.len());
        // Freed once their links are empty: wait for the relay to say so.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let st = proxy.status().unwrap();
            if (st.live_clients == 0 && st.schedule_entries == 0) || Instant::now() > deadline {
                return st;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    let first = wave(100, &mut rec);
    assert_eq!(
        (first.live_clients, first.addresses, first.in_flight, first.schedule_entries),
        (0, 0, 0, 0),
        "{first:?}"
    );
    assert_eq!((first.expired_summaries, first.slots), (100, 100));
    let second = wave(100, &mut rec);
    assert_eq!((second.live_clients, second.addresses, second.in_flight, second.schedule_entries), (0, 0, 0, 0));
    // The second wave took the slots the first left: the proxy's room follows its live clients.
    assert_eq!((second.expired_summaries, second.slots), (200, 100), "{second:?}");
    let outcome = proxy.stop().unwrap();
    assert_eq!(outcome.clients.len(), 200);
    assert!(outcome.clients.iter().all(|c| c.expired && c.client_to_server.datagrams == 3));
    let ids: BTreeSet<ClientId> = outcome.clients.iter().map(|c| c.client).collect();
    assert_eq!(ids.len(), 200, "a client that comes back after expiring is a new client");
}

/// Client groups and `client.K.link...` settings apply to clients in their order of arrival, as
/// in a simulation of the same scenario, and the recording re-runs exactly.
#[test]
fn client_groups_and_per_client_settings_apply_in_order_of_arrival() {
    use ackscope_protocol::{ClientGroup, Clients};
    let server = Server::echo("127.0.0.1:0");
    let mut s = scenario(&["seed=5", "link.latency_ms=0"]);
    let group = |loss: f64, latency: f64, count: u32| ClientGroup {
        count,
        preset: None,
        link: LinkPatch { loss_percent: Some(loss), latency_ms: Some(latency), ..LinkPatch::default() },
        set: Vec::new(),
    };
    // Clients 1 and 2: no loss, 10 ms; client 3: everything lost. Client 2 alone: 40 ms.
    s.clients = Clients::Groups(vec![group(0.0, 10.0, 2), group(100.0, 0.0, 1)]);
    s.set("client.2.link.latency_ms", "40").unwrap();
    ackscope::params::validate::scenario(&s).unwrap();
    let scenario_used = s.clone();
    let proxy = start(server.addr, s);
    let mut rec = recording();
    let clients: Vec<Client> = (0..3).map(|_| Client::to(proxy.local_addr())).collect();
    // Arrival order is client order: each starts once the one before it is a client.
    for (k, c) in clients.iter().enumerate() {
        c.send(&payload(k as u32));
        assert!(until(&proxy, &mut rec, 10.0, |r| r.clients.len() > k), "client {} arrived", k + 1);
    }
    for i in 1..40u32 {
        for (k, c) in clients.iter().enumerate() {
            c.send(&payload(i * 3 + k as u32));
        }
    }
    let up = |r: &Recording, k: ClientId| counts(r, Some(k), Dir::BtoA);
    assert!(until(&proxy, &mut rec, 15.0, |r| (1..=3).all(|k| up(r, k).sent == 40) && settled(r)), "all settled");
    assert_eq!(up(&rec, 1).dropped, 0);
    assert_eq!(up(&rec, 2).dropped, 0);
    assert_eq!(up(&rec, 3).dropped, 40, "the second group loses everything");
    let delay_ms = |k: ClientId| {
        rec.events
            .iter()
            .filter(|e| e.client == k)
            .find_map(|e| match e.kind {
                EventKind::LinkDelivered { dir: Dir::BtoA, delay_us, .. } => Some(delay_us as f64 / 1000.0),
                _ => None,
            })
            .unwrap()
    };
    assert!((delay_ms(1) - 10.0).abs() < 0.01, "group 1's link: {}", delay_ms(1));
    assert!((delay_ms(2) - 40.0).abs() < 0.01, "client 2's own setting over its group's: {}", delay_ms(2));
    let outcome = proxy.stop().unwrap();
    let end = SimTime::from_secs_f64(outcome.seconds);
    let rerun = rerun_fates(&scenario_used, &rec.events).unwrap();
    assert!(mismatches(&fates_of(&rec.events), &rerun, end).is_empty(), "the recording re-runs exactly");
}
