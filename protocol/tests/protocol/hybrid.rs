//! The hybrid strategy against ground truth: every reliable message delivered exactly once in
//! order under a terrible link, Naks read from the acks only for packets not acked, redundancy
//! within its limits, and quiet ticks.

use std::collections::HashMap;

use crate::support::{glenn_scenario, run_drained, Ledger};
use ackscope_protocol::*;

fn hybrid_scenario(seed: u64) -> Scenario {
    Scenario { strategy: Strategy::Hybrid, ..glenn_scenario(seed) }
}

/// Loss in bursts, reordering jitter, duplicates and held-back packets, both ways.
fn rough(s: &mut Scenario, jitter_reorders: bool) {
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.latency_ms = 40.0;
        l.jitter_ms = 15.0;
        l.jitter_reorders = jitter_reorders;
        l.loss_percent = 15.0;
        l.burst = BurstLoss { p_percent: 1.0, r_percent: 25.0, loss_in_bad_percent: 100.0 };
        l.duplicate_percent = 5.0;
        l.reorder_percent = if jitter_reorders { 5.0 } else { 0.0 };
        l.reorder_delay_ms = 40.0;
    }
}

fn busy(s: &mut Scenario) {
    s.send_rate_pps = 120.0;
    s.workload.reliable_rate_hz = 150.0;
    s.workload.reliable_max_bytes = 120;
    s.workload.snapshot_rate_hz = 20.0;
}

#[test]
fn every_message_arrives_once_in_order_under_loss_jitter_duplicates_and_reorder() {
    for (seed, copies) in [(0x4B1D, 1), (0x4B1E, 0), (0x4B1F, 3)] {
        let mut s = hybrid_scenario(seed);
        busy(&mut s);
        rough(&mut s, true);
        s.hybrid.redundant_copies = copies;
        s.hybrid.redundancy_budget_bytes = 300;
        let mut naks = 0;
        let r = run_drained(s, 40.0, 60.0, |e| naks += matches!(e.kind, EventKind::PacketNakked { .. }) as u64);
        eprintln!("hybrid soak (seed {seed}, copies {copies}): {:?}\n{:?}", r.metrics, r.totals);
        assert!(r.metrics.sent > 10_000, "seed {seed}: only {} messages", r.metrics.sent);
        r.assert_exactly_once_in_order("hybrid soak");
        assert!(naks > 100, "seed {seed}: only {naks} naks inferred under 15 % loss");
    }
}

/// Runs `s` for `secs` and returns the ledger with every event's ground truth.
fn audited(s: Scenario, secs: f64) -> Ledger {
    let (ledger, _) = crate::support::run_audited(s, secs);
    ledger
}

#[test]
fn a_nak_never_names_a_packet_already_acked_and_only_nakked_copies_are_resent() {
    for (seed, reorders) in [(0x7A1, true), (0x7A2, false)] {
        let mut s = hybrid_scenario(seed);
        busy(&mut s);
        rough(&mut s, reorders);
        s.hybrid.reorder_tolerance_packets = 1;
        let mut sim = Simulation::new(s);
        let mut ledger = Ledger::default();
        // Per sender: each message's latest carrier (sequence) and the carrier before a resend.
        let mut carrier: [HashMap<u64, u32>; 2] = [HashMap::new(), HashMap::new()];
        let (mut nak_resends, mut checked) = (0u64, 0u64);
        for _ in 0..300 {
            sim.run_for_secs(0.1);
            let events: Vec<Event> = sim.drain_events().collect();
            ledger.observe(&events);
            for e in &events {
                let EventKind::MessageSent { side, msg, seq, kind } = e.kind else { continue };
                let previous = carrier[side.index()].insert(msg, seq);
                if kind != SendKind::NakResend {
                    continue;
                }
                nak_resends += 1;
                // The copy before this one rode in a packet the sender nakked, at or before now,
                // and that packet had not been acked when it was nakked.
                let p = previous.expect("a resend follows a send");
                let uid = ledger.packets.uid_of(side, p as u16).expect("the carrier was sent");
                let rec = ledger.packets.packet(uid).expect("a record");
                let nakked = rec.nakked_at.unwrap_or_else(|| panic!("seed {seed}: resent {msg} but {p} not nakked"));
                assert!(nakked <= e.time, "seed {seed}: resend before the nak");
                assert!(
                    rec.acked_at.is_none_or(|a| a > nakked),
                    "seed {seed}: packet {p} nakked after its ack: {rec:?}"
                );
                checked += 1;
            }
        }
        let p = &ledger.packets;
        eprintln!(
            "seed {seed}, reorders {reorders}: {nak_resends} nak resends, naks {} (false {}), acks {}",
            p.naks_reported(),
            p.false_naks(),
            p.acks_reported()
        );
        assert!(checked > 100, "seed {seed}: only {checked} nak resends to check");
        // No send is both acked and then nakked, nor nakked twice.
        for r in p.packets().filter(|r| r.naks > 0) {
            assert_eq!(r.naks, 1, "seed {seed}: nakked twice: {r:?}");
            assert!(r.acked_at.is_none_or(|a| a > r.nakked_at.unwrap()), "seed {seed}: {r:?}");
        }
        if !reorders {
            // Nothing overtakes: a clear ack bit behind the newest ack is a lost packet, always.
            assert_eq!(p.false_naks(), 0, "seed {seed}: a nak named a delivered packet");
        }
        assert_eq!(p.false_acks(), 0, "seed {seed}");
    }
}

#[test]
fn redundancy_stays_within_its_copies_and_budget() {
    let sends = |copies: u32, budget: u32| {
        let mut s = hybrid_scenario(0xC0);
        busy(&mut s);
        s.hybrid.redundant_copies = copies;
        s.hybrid.redundancy_budget_bytes = budget;
        s.hybrid.redundancy_age_rtts = 5.0;
        let r = run_drained(s, 10.0, 10.0, |_| {});
        r.assert_exactly_once_in_order("redundancy");
        (r.metrics.sends_per_message, r.metrics.max_sends_per_message)
    };
    // A clean link: every send beyond the first is a redundant copy.
    assert_eq!(sends(0, 1000), (1.0, 1));
    assert_eq!(sends(3, 0), (1.0, 1), "no budget, no copies");
    let (mean, max) = sends(2, 1000);
    assert_eq!(max, 3, "two copies at most");
    assert!(mean > 2.9, "a large budget copies nearly every message twice: {mean}");
    let (mean, _) = sends(2, 40);
    assert!(mean > 1.0 && mean < 2.5, "a small budget copies only some: {mean}");
}

#[test]
fn quiet_ticks_send_only_messages_and_owed_acks() {
    let packets = |every_tick: bool| {
        let mut s = hybrid_scenario(0x71C);
        s.workload.reliable_rate_hz = 5.0;
        s.hybrid.every_tick = every_tick;
        let ledger = audited(s, 10.0);
        (ledger.packets.sent(Side::A), ledger.packets.sent(Side::B))
    };
    let (a, b) = packets(true);
    assert!(a >= 599 && b >= 599, "60 packets a second each: {a} {b}");
    let (qa, qb) = packets(false);
    // 5 messages a second each way: a packet for each, an ack for each of the peer's.
    assert!(qa < 150 && qb < 150 && qa > 50 && qb > 50, "quiet ticks sent {qa} and {qb}");
}
