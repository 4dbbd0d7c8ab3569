//! More than RELIABLE_BUFFER unacked reliable bunches close the connection with UE4's reason,
//! as events, without a panic; the remote learns why from the control channel.

use crate::support::*;
use ackscope_protocol::strategies::ue4::{RELIABLE_BUFFER, RELIABLE_OVERFLOW_REASON};
use ackscope_protocol::workload::Senders;
use ackscope_protocol::*;

fn closes(events: &[Event]) -> Vec<(SimTime, Side, String)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ConnectionClosed { side, reason } => Some((e.time, *side, reason.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn acks_that_never_come_back_overflow_the_reliable_buffer_and_close() {
    let seed = 31;
    let mut s = ue4_scenario(seed);
    s.workload.senders = Senders::AOnly;
    s.workload.reliable_rate_hz = 60.0;
    // One message per bunch, so the count of queued messages is the count of bunches.
    s.ue4.merge_bunches = false;
    s.link.a_to_b = LinkConfig { loss_percent: 0.0, ..Default::default() };
    s.link.b_to_a = LinkConfig { loss_percent: 100.0, ..Default::default() };
    let mut sim = Simulation::new(s);
    sim.run_for_secs(10.0);
    let events: Vec<Event> = sim.drain_events().collect();
    let c = closes(&events);
    assert_eq!(c.len(), 2, "seed {seed}: {c:?}");
    let (closed_at, side, reason) = c[0].clone();
    assert_eq!((side, reason.as_str()), (Side::A, RELIABLE_OVERFLOW_REASON), "seed {seed}");
    assert_eq!(c[1].1, Side::B, "seed {seed}");
    assert_eq!(c[1].2, format!("remote closed: {RELIABLE_OVERFLOW_REASON}"), "seed {seed}");

    let mut ledger = Ledger::default();
    ledger.observe(&events);
    assert_eq!(ledger.reliable_queued(Side::A), RELIABLE_BUFFER - 1, "seed {seed}: queued before the overflow");
    assert_eq!(ledger.delivered[1].iter().filter(|m| ledger.queued[0][m]).count(), RELIABLE_BUFFER - 1, "seed {seed}");
    // Everything after the close is refused explicitly.
    let refused_after = events
        .iter()
        .filter(|e| {
            e.time >= closed_at
                && matches!(e.kind, EventKind::MessageRefused { side: Side::A, reason: RefuseReason::Closed, .. })
        })
        .count();
    assert!(refused_after > 100, "seed {seed}: {refused_after} refused after close");
    assert!(
        events.iter().all(|e| !matches!(e.kind, EventKind::MessageQueued { side: Side::A, .. }) || e.time <= closed_at),
        "seed {seed}: queued after close"
    );
    // The failure message is the last thing A sends: one tick's packets and then silence.
    let last_sent = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::PacketSent { side: Side::A, .. }))
        .map(|e| e.time)
        .max()
        .unwrap();
    assert!(last_sent.saturating_since(closed_at).as_millis_f64() < 20.0, "seed {seed}: A kept sending");
}

#[test]
fn a_burst_larger_than_the_buffer_closes_at_once_after_sending_what_fit() {
    let seed = 32;
    let mut s = ue4_scenario(seed);
    // The first tick at time zero.
    s.tick_phase = TickPhase::Lockstep;
    s.workload.senders = Senders::AOnly;
    s.workload.reliable_rate_hz = 0.0;
    s.workload.snapshot_rate_hz = 0.0;
    s.workload.burst_messages = 300;
    s.ue4.merge_bunches = false;
    s.link.a_to_b = LinkConfig { loss_percent: 0.0, ..Default::default() };
    s.link.b_to_a = LinkConfig { loss_percent: 0.0, ..Default::default() };
    let mut a = ue4_peer(&s, Side::A);
    a.workload_mut().burst();
    let b = ue4_peer(&s, Side::B);
    let mut sim = Simulation::with_peers(s, [Box::new(a), Box::new(b)]);
    sim.run_for_secs(2.0);
    let events: Vec<Event> = sim.drain_events().collect();
    let c = closes(&events);
    assert_eq!(c[0], (SimTime::ZERO, Side::A, RELIABLE_OVERFLOW_REASON.to_string()), "seed {seed}");
    let mut ledger = Ledger::default();
    ledger.observe(&events);
    assert_eq!(ledger.refused[0].len(), 300 - (RELIABLE_BUFFER - 1), "seed {seed}");
    // B gets the 255 that fit, in order, then the reason.
    ledger.check_reliable_exactly_once_in_order(Side::A, SimTime::ZERO, seed);
    assert_eq!(ledger.delivered[1].len(), RELIABLE_BUFFER - 1, "seed {seed}");
    assert_eq!(c.len(), 2, "seed {seed}: {c:?}");
    assert_eq!(c[1].1, Side::B, "seed {seed}");
}

#[test]
fn merging_small_messages_into_bunches_lets_the_same_burst_through() {
    let seed = 33;
    let mut s = ue4_scenario(seed);
    s.workload.senders = Senders::AOnly;
    s.workload.reliable_rate_hz = 0.0;
    s.workload.snapshot_rate_hz = 0.0;
    s.workload.burst_messages = 300;
    s.link.a_to_b = LinkConfig { loss_percent: 5.0, ..Default::default() };
    s.link.b_to_a = LinkConfig { loss_percent: 5.0, ..Default::default() };
    let mut a = ue4_peer(&s, Side::A);
    a.workload_mut().burst();
    let b = ue4_peer(&s, Side::B);
    let mut sim = Simulation::with_peers(s, [Box::new(a), Box::new(b)]);
    sim.run_for_secs(5.0);
    let events: Vec<Event> = sim.drain_events().collect();
    assert!(closes(&events).is_empty(), "seed {seed}: {:?}", closes(&events));
    let mut ledger = Ledger::default();
    ledger.observe(&events);
    assert_eq!(ledger.reliable_queued(Side::A), 300, "seed {seed}");
    ledger.check_reliable_exactly_once_in_order(Side::A, SimTime::ZERO, seed);
    // 300 messages of 8..64 bytes fit in about a dozen bunches of at most 953 bytes.
    let first_sends: std::collections::BTreeSet<u32> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::MessageSent { side: Side::A, seq, kind: SendKind::First, .. } => Some(seq),
            _ => None,
        })
        .collect();
    assert!(first_sends.len() <= 12, "seed {seed}: first sends spread over {} packets", first_sends.len());
}
