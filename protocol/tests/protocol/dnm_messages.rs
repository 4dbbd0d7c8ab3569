//! The message layer of `dnm` and `rellikt`: determinism, explicit refusals, no head-of-line
//! blocking by an oversized message, reliable messages through a long outage.

use crate::support::*;
use ackscope_protocol::*;

const BOTH: [Strategy; 2] = [Strategy::Dnm, Strategy::Rellikt];

#[test]
fn the_same_seed_gives_the_same_events() {
    for strategy in BOTH {
        let mut s = scenario(strategy, 41, 15.0);
        s.link.a_to_b.duplicate_percent = 3.0;
        s.workload.snapshot_mode = SnapshotMode::Newest;
        let run = || {
            let mut sim = Simulation::new(s.clone());
            sim.run_for_secs(20.0);
            sim.drain_events().collect::<Vec<_>>()
        };
        let (a, b) = (run(), run());
        assert!(a.len() > 5000);
        assert!(a == b, "{strategy:?} (seed 41): runs differ");
    }
}

#[test]
fn messages_too_large_for_a_packet_are_refused_and_block_nothing() {
    for strategy in BOTH {
        let seed = 42;
        let mut s = scenario(strategy, seed, 0.0);
        s.dnm.max_packet_bytes = 300;
        s.rellikt.max_packet_bytes = 300;
        s.workload.reliable_min_bytes = 100;
        s.workload.reliable_max_bytes = 600;
        let mut sim = Simulation::new(s);
        sim.run_for_secs(30.0);
        let mut a = Ledger::default();
        a.observe(sim.events());
        assert_truthful(&format!("{strategy:?} small packets"), seed, &a, &sim, 1017.0);
        let mut refused = std::collections::HashSet::new();
        let mut queued = Vec::new();
        let mut delivered = [std::collections::HashSet::new(), std::collections::HashSet::new()];
        for e in sim.events() {
            match e.kind {
                EventKind::MessageRefused { side, msg, reason } => {
                    assert_eq!(reason, RefuseReason::TooLarge, "{strategy:?} (seed {seed})");
                    refused.insert((side, msg));
                }
                EventKind::MessageQueued { side, msg, bytes, reliable: true } if e.time.as_secs_f64() < 25.0 => {
                    queued.push((side, msg, bytes));
                }
                EventKind::MessageDelivered { side, msg } => {
                    delivered[side.index()].insert(msg);
                }
                _ => {}
            }
        }
        assert!(!refused.is_empty(), "{strategy:?} (seed {seed}): nothing refused");
        for (side, msg, bytes) in queued {
            let got = delivered[side.other().index()].contains(&msg);
            assert_eq!(
                got,
                !refused.contains(&(side, msg)),
                "{strategy:?} (seed {seed}): message {msg} of {bytes} bytes"
            );
        }
    }
}

#[test]
fn reliable_messages_survive_an_outage_and_a_full_queue_is_refused_explicitly() {
    for strategy in BOTH {
        let seed = 43;
        let mut s = scenario(strategy, seed, 5.0);
        s.dnm.send_queue_messages = 50;
        s.rellikt.send_queue_messages = 50;
        let mut sim = Simulation::new(s.clone());
        sim.run_for_secs(5.0);
        let mut dead = s.link.a_to_b;
        dead.loss_percent = 100.0;
        sim.set_link(Dir::AtoB, dead);
        sim.run_for_secs(10.0);
        sim.set_link(Dir::AtoB, s.link.a_to_b);
        sim.run_for_secs(20.0);
        let mut a = Ledger::default();
        a.observe(sim.events());
        assert_truthful(&format!("{strategy:?} outage"), seed, &a, &sim, 1017.0);
        let refused: Vec<u64> = sim
            .events()
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::MessageRefused { side: Side::A, msg, reason: RefuseReason::SendQueueFull } => Some(msg),
                _ => None,
            })
            .collect();
        assert!(!refused.is_empty(), "{strategy:?} (seed {seed}): queue never filled during the outage");
        let lost: Vec<u64> = a
            .queued_reliable(Side::A)
            .filter(|(id, t)| t.as_secs_f64() < 30.0 && !refused.contains(id))
            .map(|(id, _)| id)
            .filter(|id| !a.was_delivered(Side::B, *id))
            .collect();
        assert!(lost.is_empty(), "{strategy:?} (seed {seed}): accepted reliable messages lost: {lost:?}");
    }
}
