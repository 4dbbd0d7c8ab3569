use super::*;

fn ev(t: u64, kind: EventKind) -> Event {
    Event::new(SimTime(t), kind)
}

fn sent(t: u64, side: Side, seq: u32, uid: u64) -> [Event; 2] {
    [
        ev(t, EventKind::PacketSent { side, seq, bytes: 10, uid }),
        ev(t, EventKind::LinkSent { dir: side.outgoing(), uid, bytes: 10 }),
    ]
}

#[test]
fn an_ack_is_false_only_if_its_send_was_not_delivered_before_it_whatever_the_batch_order() {
    let mut l = PacketLedger::new();
    l.observe(&sent(0, Side::A, 0, 0));
    l.observe(&sent(1, Side::A, 1, 1));
    l.observe(&[
        ev(9, EventKind::PacketAcked { side: Side::A, seq: 0 }),
        ev(9, EventKind::PacketAcked { side: Side::A, seq: 1 }),
        ev(9, EventKind::PacketAcked { side: Side::A, seq: 1 }),
    ]);
    assert_eq!(l.false_acks(), 2, "nothing delivered yet (the repeat is a duplicate, not a second false ack)");
    // The receiver's batch is folded after the acks: uid 0 arrived before its ack, uid 1 never.
    l.observe(&[ev(5, EventKind::LinkDelivered { dir: Dir::AtoB, uid: 0, delay_us: 5 })]);
    let t = l.totals();
    assert_eq!((t.sent, t.acked, t.false_acks, t.duplicate_acks), (2, 2, 1, 1));
    assert_eq!(l.mean_delay_ms(Dir::AtoB), Some(0.005));
    assert_eq!(l.repeated_outcomes(), 1);
    // Delivered after the ack claimed it: the ack stays false.
    l.observe(&[ev(20, EventKind::LinkDelivered { dir: Dir::AtoB, uid: 1, delay_us: 19 })]);
    assert_eq!(l.false_acks(), 1);
}

#[test]
fn same_instant_delivery_counts_only_when_folded_before_the_ack() {
    let mut l = PacketLedger::new();
    l.observe(&sent(0, Side::B, 7, 0));
    l.observe(&[
        ev(3, EventKind::PacketAcked { side: Side::B, seq: 7 }),
        ev(3, EventKind::LinkDelivered { dir: Dir::BtoA, uid: 0, delay_us: 3 }),
    ]);
    assert_eq!(l.false_acks(), 1);
    let mut l = PacketLedger::new();
    l.observe(&sent(0, Side::B, 7, 0));
    l.observe(&[
        ev(3, EventKind::LinkDelivered { dir: Dir::BtoA, uid: 0, delay_us: 3 }),
        ev(3, EventKind::PacketAcked { side: Side::B, seq: 7 }),
    ]);
    assert_eq!(l.false_acks(), 0);
}

#[test]
fn acks_name_the_latest_send_of_a_sequence_and_unknown_sequences_are_false() {
    let mut l = PacketLedger::new();
    l.observe(&sent(0, Side::A, 5, 0));
    l.observe(&[ev(1, EventKind::LinkDelivered { dir: Dir::AtoB, uid: 0, delay_us: 1 })]);
    // The sequence wraps: the same number now names uid 1, which is still in flight.
    l.observe(&sent(2, Side::A, 5 + 65536, 1));
    l.observe(&[ev(3, EventKind::PacketAcked { side: Side::A, seq: 5 })]);
    assert_eq!((l.uid_of(Side::A, 5), l.false_acks()), (Some(1), 1));
    l.observe(&[ev(4, EventKind::PacketAcked { side: Side::B, seq: 9 })]);
    assert_eq!((l.unnamed_acks(), l.false_acks(), l.totals().acked), (1, 2, 2));
    assert_eq!(l.acked_at(1), Some(SimTime(3)));
    assert_eq!(l.acked_at(0), None);
}

#[test]
fn naks_of_delivered_sends_are_false_and_fates_follow_the_clock() {
    let mut l = PacketLedger::new();
    l.observe(&sent(0, Side::A, 0, 0));
    l.observe(&sent(0, Side::A, 1, 1));
    l.observe(&[ev(0, EventKind::LinkDropped { dir: Dir::AtoB, uid: 1, reason: DropReason::Random })]);
    l.observe(&[ev(9, EventKind::PacketNakked { side: Side::A, seq: 0 })]);
    assert_eq!(l.false_naks(), 0, "not delivered as far as the ledger knows");
    l.observe(&[ev(4, EventKind::LinkDelivered { dir: Dir::AtoB, uid: 0, delay_us: 4 })]);
    l.observe(&[ev(9, EventKind::PacketNakked { side: Side::A, seq: 1 })]);
    assert_eq!((l.false_naks(), l.naks_reported()), (1, 2));
    assert_eq!(l.fate_at(0, SimTime(3)), PacketFate::InFlight);
    assert_eq!(l.fate_at(0, SimTime(4)), PacketFate::Delivered { at: SimTime(4), delay_us: 4, duplicated: false });
    assert_eq!(l.fate_at(1, SimTime(0)), PacketFate::Dropped(DropReason::Random));
    assert_eq!(l.fate_at(2, SimTime(0)), PacketFate::Unknown);
    assert_eq!(l.nakked_at(0), Some(SimTime(9)));
    assert_eq!(l.delivered_at(0), Some(SimTime(4)));
}

#[test]
fn windowed_true_loss_counts_the_sends_in_the_window() {
    let mut l = PacketLedger::new();
    for uid in 0..10u64 {
        l.observe(&sent(uid * 10, Side::A, uid as u32, uid));
        if uid % 5 == 0 {
            let drop = EventKind::LinkDropped { dir: Dir::AtoB, uid, reason: DropReason::QueueFull };
            l.observe(&[ev(uid * 10, drop)]);
        }
    }
    assert_eq!(l.loss_percent_between(Dir::AtoB, SimTime(0), SimTime(50)), Some(20.0));
    assert_eq!(l.loss_percent_between(Dir::AtoB, SimTime(10), SimTime(50)), Some(0.0));
    assert_eq!(l.loss_percent_between(Dir::BtoA, SimTime(0), SimTime(100)), None);
    assert_eq!(l.recent_loss_percent(Dir::AtoB, 5), Some(20.0));
    assert_eq!(l.recent_loss_percent(Dir::AtoB, 100), Some(20.0));
    assert_eq!(l.true_loss_percent(), 20.0);
}

#[test]
fn a_malformed_copy_is_charged_to_the_delivery_of_the_same_instant() {
    let mut l = PacketLedger::new();
    l.observe(&sent(0, Side::A, 0, 0));
    l.observe(&[
        ev(2, EventKind::LinkDelivered { dir: Dir::AtoB, uid: 0, delay_us: 2 }),
        ev(2, EventKind::Malformed { side: Side::B, reason: crate::event::MalformedReason::BadPayload }),
    ]);
    let p = l.packet(0).unwrap();
    assert_eq!((p.malformed_at, p.received_at, l.malformed()), (Some(SimTime(2)), None, 1));
    l.observe(&[ev(5, EventKind::Malformed { side: Side::B, reason: crate::event::MalformedReason::Foreign })]);
    assert_eq!(l.packet(0).unwrap().malformed_at, Some(SimTime(2)));
}

#[test]
fn a_ledger_of_a_late_window_holds_its_own_sends_only_also_when_folded_out_of_order() {
    // A live window rebuilt an hour in: its first send is far beyond any id jump allowed from 0.
    let base = 3 * MAX_UID_JUMP;
    let mut l = PacketLedger::new();
    // Side B's batch comes first (the UDP runtime's order), then side A's earlier id.
    l.observe(&sent(10, Side::B, 7, base + 1));
    l.observe(&sent(10, Side::A, 4, base));
    l.observe(&[ev(15, EventKind::LinkDelivered { dir: Dir::AtoB, uid: base, delay_us: 5 })]);
    l.observe(&[ev(20, EventKind::PacketAcked { side: Side::A, seq: 4 })]);
    assert_eq!(l.table_len(), 2);
    let p = l.packet(base).expect("the first send is known");
    assert_eq!((p.seq, p.delivered_at, p.acked_at), (Some(4), Some(SimTime(15)), Some(SimTime(20))));
    assert_eq!(l.packet(base + 1).and_then(|p| p.dir), Some(Dir::BtoA));
    assert_eq!(l.packets().count(), 2);
    assert_eq!(l.false_acks(), 0);
}

#[test]
fn a_reset_ledger_counts_as_a_new_one() {
    use crate::{Scenario, Simulation};
    let mut sim = Simulation::new(Scenario { seed: 4, ..Scenario::default() });
    sim.run_until(crate::SimTime::from_secs_f64(20.0));
    let events: Vec<Event> = sim.drain_events().collect();
    for mut used in [PacketLedger::counting(), PacketLedger::new()] {
        let counting = used.retired.on;
        used.observe(&events);
        used.reset();
        let (half, all) = (&events[..events.len() / 2], &events[..]);
        for part in [half, all] {
            let mut fresh = if counting { PacketLedger::counting() } else { PacketLedger::new() };
            used.reset();
            used.observe(part);
            fresh.observe(part);
            assert_eq!(used.totals(), fresh.totals());
            assert_eq!(used.table_len(), fresh.table_len());
        }
    }
}

/// A send of `side` delivered at `t` (uid, seq), with the receiver's verdict event.
fn delivered(t: u64, side: Side, uid: u64, verdict: EventKind) -> [Event; 2] {
    [ev(t, EventKind::LinkDelivered { dir: side.outgoing(), uid, delay_us: 1 }), ev(t, verdict)]
}

#[test]
fn a_send_is_effectively_lost_when_the_receiver_never_accepted_a_copy_whatever_the_fold_order() {
    use crate::event::{DiscardReason, MalformedReason};
    let b = Side::B;
    let received = |seq| EventKind::PacketReceived { side: b, seq, bytes: 10 };
    let discarded = |seq, reason| EventKind::PacketDiscarded { side: b, seq, reason };
    let mut batches: Vec<Vec<Event>> = Vec::new();
    for (seq, uid) in (0..6).zip(10..) {
        batches.push(sent(seq as u64, Side::A, seq, uid).to_vec());
    }
    // 10: accepted, then a duplicate copy discarded: delivered.
    batches.push(delivered(20, Side::A, 10, received(0)).to_vec());
    batches.push(delivered(21, Side::A, 10, discarded(0, DiscardReason::Duplicate)).to_vec());
    // 11: late, discarded: lost. 12: malformed: lost. 13: dropped by the link.
    batches.push(delivered(22, Side::A, 11, discarded(1, DiscardReason::Late)).to_vec());
    batches.push(
        delivered(23, Side::A, 12, EventKind::Malformed { side: b, reason: MalformedReason::BadPayload }).to_vec(),
    );
    batches.push(vec![ev(4, EventKind::LinkDropped { dir: Dir::AtoB, uid: 13, reason: DropReason::Random })]);
    // 14: accepted, then refused (UE4's bSkipAck): lost. 15: discarded, then a copy accepted.
    batches.push(delivered(24, Side::A, 14, received(4)).to_vec());
    batches.push(vec![ev(24, EventKind::Ue4SkipAck { side: b, seq: 4 })]);
    batches.push(delivered(25, Side::A, 15, discarded(5, DiscardReason::Stale)).to_vec());
    batches.push(delivered(26, Side::A, 15, received(5)).to_vec());
    for order in [false, true] {
        let mut l = PacketLedger::counting();
        let mut b = batches.clone();
        if order {
            // The sends first, then the receiver's batches newest first (a UDP consumer's order).
            b[6..].reverse();
        }
        for batch in &b {
            l.observe(batch);
        }
        let dirs = [Dir::AtoB];
        assert_eq!(l.discarded_sends(Dir::AtoB), 3, "reversed: {order}");
        assert_eq!(l.loss_percent_of(&dirs), 100.0 / 6.0);
        assert_eq!(l.effective_loss_percent(&dirs), 400.0 / 6.0, "reversed: {order}");
        let d = l.discards(&dirs);
        assert_eq!((d.duplicate, d.late, d.malformed, d.skip_ack, d.stale, d.total()), (1, 1, 1, 1, 1, 5));
        assert_eq!(l.discards(&[Dir::BtoA]).total(), 0);
    }
}

#[test]
fn a_receiver_that_knows_no_send_judges_the_copy_delivered_at_the_same_instant() {
    // `ackscope peer`: only the incoming link's events and the receiver's verdicts, no PacketSent.
    use crate::event::DiscardReason;
    let mut l = PacketLedger::new();
    for uid in 0..4 {
        l.observe(&[ev(uid, EventKind::LinkSent { dir: Dir::BtoA, uid, bytes: 10 })]);
    }
    let a = Side::A;
    l.observe(&delivered(10, Side::B, 0, EventKind::PacketReceived { side: a, seq: 7, bytes: 10 }));
    l.observe(&delivered(11, Side::B, 1, EventKind::PacketDiscarded { side: a, seq: 8, reason: DiscardReason::Late }));
    l.observe(&[ev(12, EventKind::LinkDropped { dir: Dir::BtoA, uid: 2, reason: DropReason::Random })]);
    assert_eq!(l.effective_loss_percent(&[Dir::BtoA]), 50.0);
    assert_eq!(l.recent_effective_loss_percent(Dir::BtoA, 4), Some(50.0));
    assert_eq!(l.recent_loss_percent(Dir::BtoA, 4), Some(25.0));
}
