//! Short forms of UE4's part of the issue-15 soak (the long forms are
//! `cargo run -p ackscope-protocol --release --example ue4_soak`): heavy reliable traffic at 20 %
//! loss, 50 ms jitter, 5 % duplicates and 5 % reordering arrives exactly once and in order within
//! each actor's channel; a 700 s one-way outage makes UE4 close the connection, and the summary
//! says why, when and what it abandoned.

use crate::support::*;
use ackscope_protocol::strategies::ue4::{RELIABLE_OVERFLOW_REASON, TIMEOUT_REASON};
use ackscope_protocol::*;

fn soak_scenario(seed: u64, actors: u32) -> Scenario {
    let mut s = ue4_scenario(seed);
    s.workload.reliable_rate_hz = 500.0;
    s.workload.actors = actors;
    s.ue4.net_speed_bytes_per_sec = 1_000_000.0;
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.loss_percent = 20.0;
        l.jitter_ms = 50.0;
        l.duplicate_percent = 5.0;
        l.reorder_percent = 5.0;
    }
    s
}

#[test]
fn heavy_traffic_on_a_rough_link_arrives_once_and_in_order_per_actor() {
    let seed = 1;
    for actors in [1, 16] {
        let s = soak_scenario(seed, actors);
        let workloads = [Workload::new(Side::A, s.workload, seed), Workload::new(Side::B, s.workload, seed)];
        let mut sim = Simulation::new(s);
        let mut ledger = Ledger::default();
        run(&mut sim, 60.0, &mut ledger);
        let cutoff = sim.now();
        let clean = LinkConfig { latency_ms: 50.0, loss_percent: 0.0, ..Default::default() };
        sim.set_link(Dir::AtoB, clean);
        sim.set_link(Dir::BtoA, clean);
        let d = drain(&mut sim, 30.0);
        let ev: Vec<Event> = sim.drain_events().collect();
        ledger.observe(&ev);
        assert!(d.drained, "seed {seed}, {actors} actors: {d:?}");
        let mut across = 0;
        for side in Side::BOTH {
            across += check_reliable_exactly_once_per_actor(&ledger, side, cutoff, &workloads[side.index()], seed);
            assert!(ledger.reliable_queued(side) > 25_000, "seed {seed}: too little traffic");
        }
        let m = ledger.metrics.finish();
        assert_eq!((m.lost, m.duplicated, m.corrupted), (0, 0, 0), "seed {seed}, {actors} actors: {m:?}");
        assert_eq!(sim.totals().false_acks, 0, "seed {seed}, {actors} actors");
        assert_eq!(ledger.malformed(), 0, "seed {seed}, {actors} actors");
        assert!(ledger.closed.is_empty(), "seed {seed}, {actors} actors: {:?}", ledger.closed);
        // One actor is one ordered stream; with 16 only each actor's messages keep their order.
        assert_eq!(across == 0, actors == 1, "seed {seed}, {actors} actors: {across} across actors");
    }
}

#[test]
fn a_700_s_one_way_outage_closes_the_connection_and_says_why_when_and_what_was_abandoned() {
    let seed = 1;
    for (actors, reason) in [(1, RELIABLE_OVERFLOW_REASON), (16, TIMEOUT_REASON)] {
        let mut s = ue4_scenario(seed);
        s.workload.actors = actors;
        s.script = vec![LinkStep {
            at_s: 10.0,
            dir: StepDirection::AToB,
            set: LinkPatch { loss_percent: Some(100.0), ..Default::default() },
        }
        .into()];
        let mut sim = Simulation::new(s);
        let mut ledger = Ledger::default();
        let mut summary = Ue4SummaryAccumulator::default();
        for _ in 0..142 {
            sim.run_for_secs(5.0);
            let ev: Vec<Event> = sim.drain_events().collect();
            ledger.observe(&ev);
            summary.observe_all(&ev);
        }
        let u = summary.finish();
        assert_eq!(sim.totals().false_acks, 0, "{actors} actors");
        assert!(u.connection_closed, "{actors} actors: {u:?}");
        assert_eq!(u.close_reason.as_deref(), Some(reason), "{actors} actors: {u:?}");
        let at = u.closed_at_s.expect("a close time");
        // One channel overflows 256 unacked bunches about half a minute into the outage; spread
        // over 16 channels none does before B, hearing nothing, times out after 60 s.
        let window = if actors == 1 { 20.0..50.0 } else { 70.0..71.0 };
        assert!(window.contains(&at), "{actors} actors: closed at {at} s");
        // Abandoned: reliable messages queued and never acked, on both sides, at their close.
        let unacked: usize = Side::BOTH
            .iter()
            .map(|&side| {
                assert!(ledger.closed.iter().any(|(s, _)| *s == side), "{actors} actors: {side:?} never closed");
                ledger.queued_reliable(side).filter(|(id, _)| !ledger.acked_msgs[side.index()].contains(id)).count()
            })
            .sum();
        assert_eq!(u.abandoned_messages as usize, unacked, "{actors} actors: {u:?}");
        assert!(u.abandoned_messages > 100 && u.refused_after_close > 10_000, "{actors} actors: {u:?}");
    }
}
