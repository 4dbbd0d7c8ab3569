//! Malformed packets (bad headers, bad bunches, trailing bytes, random bytes) are rejected and
//! counted as `Malformed` events, never a panic, and leave the connection state untouched.

use crate::support::*;
use ackscope_protocol::strategies::ue4::bunch::decode_packet;
use ackscope_protocol::*;
use proptest::prelude::*;

/// Packets A sends at its first ticks, with reliable, unreliable and partial bunches.
fn sample_packets() -> Vec<Vec<u8>> {
    let mut s = ue4_scenario(41);
    s.ue4.net_speed_bytes_per_sec = 0.0;
    s.workload.burst_messages = 20;
    s.workload.reliable_max_bytes = 2000;
    let mut a = ue4_peer(&s, Side::A);
    a.workload_mut().burst();
    let mut out = Vec::new();
    let mut events = Vec::new();
    for t in 0..5u64 {
        a.on_tick(SimTime(t * 16_667), &mut events);
        loop {
            let mut p = Vec::new();
            if a.poll_send(SimTime(t * 16_667), &mut p, &mut events).is_none() {
                break;
            }
            out.push(p);
        }
    }
    assert!(out.len() >= 5);
    out
}

fn malformed_reasons(events: &[Event]) -> Vec<MalformedReason> {
    events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Malformed { reason, .. } => Some(reason),
            _ => None,
        })
        .collect()
}

fn accepted(events: &[Event]) -> usize {
    events.iter().filter(|e| matches!(e.kind, EventKind::PacketReceived { .. })).count()
}

#[test]
fn bad_headers_are_rejected_with_their_reason() {
    let s = ue4_scenario(42);
    let mut b = ue4_peer(&s, Side::B);
    let mut ev = Vec::new();
    b.receive(SimTime(0), &[1, 2, 3], &mut ev);
    // History word count field 0xF means 16 words: more than the 8 a history holds.
    b.receive(SimTime(0), &[0x0F, 0, 0, 0], &mut ev);
    b.receive(SimTime(0), &[], &mut ev);
    assert_eq!(
        malformed_reasons(&ev),
        [MalformedReason::Truncated, MalformedReason::BadHeader, MalformedReason::Truncated]
    );
    assert_eq!(b.counters().malformed, 3);
}

#[test]
fn a_bad_bunch_rejects_the_whole_packet_and_leaves_it_unacked() {
    let s = ue4_scenario(43);
    let packets = sample_packets();
    let good = &packets[0];
    let mut b = ue4_peer(&s, Side::B);
    let mut ev = Vec::new();
    // Cut inside the bunches, and append garbage after the stop bit.
    b.receive(SimTime(0), &good[..good.len() - 3], &mut ev);
    let mut trailing = good.clone();
    trailing.extend_from_slice(&[0xAB, 0xCD]);
    b.receive(SimTime(0), &trailing, &mut ev);
    assert_eq!(malformed_reasons(&ev), [MalformedReason::BadPayload, MalformedReason::BadPayload]);
    assert_eq!(accepted(&ev), 0);
    assert!(!ev.iter().any(|e| matches!(e.kind, EventKind::MessageDelivered { .. })));
    // The intact packet is still the next expected one: nothing was consumed.
    b.receive(SimTime(0), good, &mut ev);
    assert_eq!(accepted(&ev), 1);
    // ... and B's next packet acks it.
    b.on_tick(SimTime(1000), &mut ev);
    let mut reply = Vec::new();
    b.poll_send(SimTime(1000), &mut reply, &mut ev).expect("B acks");
    let header = decode_packet(&reply).unwrap().header;
    assert_eq!(Some(header.acked_seq.get()), ue4_seq(good));
    assert!(header.history.is_delivered(0));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic_and_rejections_are_counted(bytes in proptest::collection::vec(any::<u8>(), 0..1200)) {
        let s = ue4_scenario(44);
        let mut b = ue4_peer(&s, Side::B);
        let mut ev = Vec::new();
        b.receive(SimTime(0), &bytes, &mut ev);
        b.on_tick(SimTime(1000), &mut ev);
        let bad = decode_packet(&bytes).is_err();
        prop_assert_eq!(malformed_reasons(&ev).len(), bad as usize);
        prop_assert_eq!(b.counters().malformed, bad as u64);
    }

    #[test]
    fn corrupted_real_packets_never_panic(which in 0usize..5, flips in proptest::collection::vec((any::<usize>(), 0u8..8), 1..6), cut in any::<usize>()) {
        let packets = sample_packets();
        let mut p = packets[which].clone();
        for (i, bit) in flips {
            let n = p.len();
            p[i % n] ^= 1 << bit;
        }
        p.truncate(p.len() - cut % 4);
        let s = ue4_scenario(45);
        let mut b = ue4_peer(&s, Side::B);
        let mut ev = Vec::new();
        for q in &packets[..which] {
            b.receive(SimTime(0), q, &mut ev);
        }
        b.receive(SimTime(10), &p, &mut ev);
        b.on_tick(SimTime(20), &mut ev);
        let bad = decode_packet(&p).is_err();
        prop_assert_eq!(malformed_reasons(&ev).len() as u64, b.counters().malformed + b.counters().corrupt_payloads);
        prop_assert!(!bad || b.counters().malformed == 1);
    }
}
