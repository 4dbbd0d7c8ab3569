//! Glenn reliable-ordered messages: redundancy rules (resend delay, every-packet mode, RTT-derived
//! delay), the receive-window rule, back-pressure and delivery under extreme loss.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::support::{glenn_scenario, run_drained};
use ackscope_protocol::workload::Senders;
use ackscope_protocol::*;

fn lossy(s: &mut Scenario, loss: f64) {
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.latency_ms = 50.0;
        l.jitter_ms = 20.0;
        l.loss_percent = loss;
    }
}

#[test]
fn sixty_four_messages_get_through_ninety_percent_loss_within_a_thousand_steps() {
    for seed in 90..96 {
        let mut s = glenn_scenario(seed);
        s.send_rate_pps = 10.0; // one step = 100 ms
        s.workload.senders = Senders::AOnly;
        s.workload.burst_messages = 64;
        lossy(&mut s, 90.0);
        let mut sim = Simulation::new(s);
        sim.burst(Side::A);
        sim.run_for_secs(100.0); // 1,000 steps
        let events: Vec<Event> = sim.drain_events().collect();
        let m = reliable_metrics(&events);
        let last = events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::MessageDelivered { side: Side::B, .. }))
            .map(|e| e.time)
            .max();
        eprintln!("90% loss (seed {seed}): {m:?}, last delivery at {last:?}");
        assert_eq!(m.sent, 64, "seed {seed}");
        assert_eq!((m.delivered, m.duplicated, m.out_of_order, m.corrupted), (64, 0, 0, 0), "seed {seed}: {m:?}");
        assert_eq!(sim.totals().false_acks, 0, "seed {seed}");
    }
}

/// Per message on side A: its send times and kinds, in order.
fn sends_by_message(events: &[Event]) -> BTreeMap<u64, Vec<(SimTime, SendKind, u32)>> {
    let mut out: BTreeMap<u64, Vec<(SimTime, SendKind, u32)>> = BTreeMap::new();
    for e in events {
        if let EventKind::MessageSent { side: Side::A, msg, kind, seq } = e.kind {
            out.entry(msg).or_default().push((e.time, kind, seq));
        }
    }
    out
}

fn resend_scenario(seed: u64, delay_ms: f64) -> Scenario {
    let mut s = glenn_scenario(seed);
    s.send_rate_pps = 60.0;
    s.workload.senders = Senders::AOnly;
    s.workload.reliable_rate_hz = 40.0;
    s.glenn.resend_delay_ms = delay_ms;
    lossy(&mut s, 20.0);
    s
}

#[test]
fn no_message_is_included_twice_within_the_resend_delay() {
    for (i, delay_ms) in [30.0, 100.0, 250.0].into_iter().enumerate() {
        let seed = 300 + i as u64;
        let mut events = Vec::new();
        let r = run_drained(resend_scenario(seed, delay_ms), 30.0, 20.0, |e| events.push(e.clone()));
        r.assert_exactly_once_in_order("resend delay");
        let mut resends = 0;
        for (msg, sends) in sends_by_message(&events) {
            assert_eq!(sends[0].1, SendKind::First, "seed {seed}: msg {msg}");
            for w in sends.windows(2) {
                let gap_ms = w[1].0.saturating_since(w[0].0).as_millis_f64();
                assert!(gap_ms >= delay_ms, "seed {seed}: msg {msg} resent after {gap_ms} ms < {delay_ms} ms");
                assert_eq!(w[1].1, SendKind::DelayResend, "seed {seed}: msg {msg}");
                resends += 1;
            }
        }
        eprintln!("delay {delay_ms} ms (seed {seed}): {:?}", r.metrics);
        assert!(resends > 0, "seed {seed}: no resend at all, the rule was never exercised");
    }
}

#[test]
fn resend_delay_zero_includes_every_unacked_message_in_every_packet() {
    let seed = 400;
    let mut events = Vec::new();
    let r = run_drained(resend_scenario(seed, 0.0), 20.0, 20.0, |e| events.push(e.clone()));
    r.assert_exactly_once_in_order("delay 0");
    let mut packets: Vec<SimTime> = Vec::new();
    let mut acked_at: HashMap<u64, SimTime> = HashMap::new();
    for e in &events {
        match e.kind {
            EventKind::PacketSent { side: Side::A, .. } => packets.push(e.time),
            EventKind::MessageAcked { side: Side::A, msg, .. } => {
                acked_at.entry(msg).or_insert(e.time);
            }
            _ => {}
        }
    }
    for (msg, sends) in sends_by_message(&events) {
        let first = sends[0].0;
        let acked = acked_at[&msg];
        let expected = packets.iter().filter(|t| **t >= first && **t < acked).count();
        assert_eq!(sends.len(), expected, "seed {seed}: msg {msg} missed packets before its ack");
        assert!(sends[1..].iter().all(|s| s.1 == SendKind::Redundant), "seed {seed}: msg {msg}");
    }
    eprintln!("delay 0 (seed {seed}): {:?}", r.metrics);
    assert!(r.metrics.sends_per_message > 3.0, "seed {seed}: {:?}", r.metrics);
}

#[test]
fn rtt_derived_resend_delay_waits_at_least_factor_times_measured_rtt() {
    let seed = 500;
    let mut s = resend_scenario(seed, 30.0);
    s.glenn.rtt_resend = true;
    s.glenn.rtt_resend_factor = 1.25;
    let mut events = Vec::new();
    let r = run_drained(s, 30.0, 20.0, |e| events.push(e.clone()));
    r.assert_exactly_once_in_order("rtt resend");
    // The delay in force is 1.25 x a smoothed RTT, never below 1.25 x the smallest sample so far.
    let mut min_rtt: Option<f64> = None;
    let mut last_sent: HashMap<u64, SimTime> = HashMap::new();
    let mut checked = 0;
    for e in &events {
        match e.kind {
            EventKind::RttSample { side: Side::A, rtt_ms } => {
                min_rtt = Some(min_rtt.map_or(rtt_ms as f64, |m| m.min(rtt_ms as f64)));
            }
            EventKind::MessageSent { side: Side::A, msg, .. } => {
                if let (Some(prev), Some(rtt)) = (last_sent.get(&msg), min_rtt) {
                    let gap = e.time.saturating_since(*prev).as_millis_f64();
                    assert!(
                        gap + 1e-6 >= 1.25 * rtt - 1.0,
                        "seed {seed}: msg {msg} resent after {gap} ms, rtt >= {rtt}"
                    );
                    checked += 1;
                }
                last_sent.insert(msg, e.time);
            }
            _ => {}
        }
    }
    eprintln!("rtt resend (seed {seed}): {:?}", r.metrics);
    assert!(checked > 0, "seed {seed}: no resend to check");
    let fixed = run_drained(resend_scenario(seed, 30.0), 30.0, 20.0, |_| {});
    assert!(
        r.metrics.sends_per_message < fixed.metrics.sends_per_message,
        "seed {seed}: RTT-derived delay {} sends/msg, fixed 30 ms {}",
        r.metrics.sends_per_message,
        fixed.metrics.sends_per_message
    );
}

#[test]
fn sender_never_runs_past_the_receive_window_under_a_burst_larger_than_it() {
    let seed = 600;
    let mut s = glenn_scenario(seed);
    s.send_rate_pps = 100.0;
    s.workload.senders = Senders::AOnly;
    s.workload.burst_messages = 3000;
    s.workload.reliable_min_bytes = 8;
    s.workload.reliable_max_bytes = 16;
    s.glenn.send_queue_size = 4096;
    s.glenn.receive_queue_size = 256;
    s.glenn.resend_delay_ms = 50.0;
    lossy(&mut s, 20.0);
    let mut sim = Simulation::new(s);
    sim.burst(Side::A);
    let mut unacked: BTreeSet<u64> = BTreeSet::new();
    let mut widest = 0;
    let mut check = |e: &Event| match e.kind {
        EventKind::MessageQueued { side: Side::A, msg, .. } => {
            unacked.insert(msg);
        }
        EventKind::MessageAcked { side: Side::A, msg, .. } => {
            unacked.remove(&msg);
        }
        EventKind::MessageSent { side: Side::A, msg, .. } => {
            // Reliable-only workload: message id == workload id (no wrap below 65536).
            let oldest = *unacked.first().expect("a sent message is unacked");
            assert!(msg < oldest + 256, "seed {seed}: sent id {msg} with oldest unacked {oldest}");
            widest = widest.max(msg - oldest);
        }
        _ => {}
    };
    let r = crate::support::run_sim_drained(&mut sim, seed, 60.0, 30.0, &mut check);
    r.assert_exactly_once_in_order("receive window");
    assert_eq!(r.metrics.sent, 3000, "seed {seed}");
    assert_eq!(widest, 255, "seed {seed}: the window was never filled");
}

#[test]
fn a_full_send_queue_pushes_back_but_keeps_every_message() {
    let seed = 700;
    let mut s = glenn_scenario(seed);
    s.send_rate_pps = 60.0;
    s.workload.senders = Senders::AOnly;
    s.workload.burst_messages = 3000;
    s.glenn.send_queue_size = 1024;
    lossy(&mut s, 10.0);
    let mut sim = Simulation::new(s);
    sim.burst(Side::A);
    let mut refused = BTreeSet::new();
    let mut check = |e: &Event| {
        if let EventKind::MessageRefused { side: Side::A, msg, reason } = e.kind {
            assert_eq!(reason, RefuseReason::SendQueueFull, "seed {seed}");
            assert!(refused.insert(msg), "seed {seed}: msg {msg} refused twice");
        }
    };
    let r = crate::support::run_sim_drained(&mut sim, seed, 20.0, 60.0, &mut check);
    r.assert_exactly_once_in_order("back-pressure");
    assert_eq!(refused.len(), 3000 - 1024, "seed {seed}");
    assert_eq!(r.metrics.refused_queue_full, 3000 - 1024, "seed {seed}");
}

#[test]
fn messages_larger_than_the_packet_budget_are_refused_explicitly() {
    let seed = 800;
    let mut s = glenn_scenario(seed);
    s.send_rate_pps = 60.0;
    s.workload.senders = Senders::AOnly;
    s.workload.reliable_rate_hz = 50.0;
    s.workload.reliable_min_bytes = 8;
    s.workload.reliable_max_bytes = 200;
    s.glenn.packet_budget_bytes = 100;
    let mut too_large = BTreeSet::new();
    let r = run_drained(s, 10.0, 10.0, |e| {
        if let EventKind::MessageRefused { side: Side::A, msg, reason: RefuseReason::TooLarge } = e.kind {
            too_large.insert(msg);
        }
    });
    let m = r.metrics;
    assert!(m.refused_too_large > 0, "seed {seed}: {m:?}");
    assert_eq!(m.refused_too_large, too_large.len() as u64, "seed {seed}");
    assert_eq!(m.delivered + m.refused_too_large, m.sent, "seed {seed}: {m:?}");
    assert!(r.delivered[0].iter().all(|id| !too_large.contains(id)), "seed {seed}");
    assert!(m.max_packet_bytes <= 100 + 9, "seed {seed}: packet of {} bytes", m.max_packet_bytes);
}

#[test]
fn resend_delay_and_budget_change_live() {
    let seed = 900;
    let mut sim = Simulation::new(resend_scenario(seed, 250.0));
    let mut before = Vec::new();
    let mut check = |e: &Event| before.push(e.clone());
    crate::support::run_sim_drained(&mut sim, seed, 10.0, 0.0, &mut check);
    assert!(!before.iter().any(|e| matches!(e.kind, EventKind::MessageSent { kind: SendKind::Redundant, .. })));
    let switch = sim.now();
    sim.reconfigure(|s| {
        s.glenn.resend_delay_ms = 0.0;
        s.glenn.packet_budget_bytes = 200;
        s.workload.reliable_rate_hz = 40.0; // the helper's drain stopped it
    });
    let mut after = Vec::new();
    let mut check = |e: &Event| after.push(e.clone());
    let r = crate::support::run_sim_drained(&mut sim, seed, 10.0, 20.0, &mut check);
    let redundant = after.iter().filter(|e| matches!(e.kind, EventKind::MessageSent { kind: SendKind::Redundant, .. }));
    assert!(redundant.count() > 100, "seed {seed}: delay 0 did not take effect after {switch:?}");
    let m = reliable_metrics(&after);
    assert!(m.max_packet_bytes <= 200 + 9, "seed {seed}: budget 200 not honoured: {m:?}");
    assert_eq!((m.lost, m.duplicated, m.out_of_order), (0, 0, 0), "seed {seed}: {m:?}");
    assert!(r.drain.drained, "seed {seed}");
}
