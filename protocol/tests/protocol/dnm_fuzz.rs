//! Malformed `dnm` and `rellikt` packets never panic: arbitrary bytes and bit-flipped real
//! packets are either accepted as well-formed or counted as malformed, one event each.

use ackscope_protocol::strategies::notify::dnm::wire::{read_packet, write_packet, DnmPacket};
use ackscope_protocol::strategies::notify::dnm::AckRange;
use ackscope_protocol::strategies::notify::rellikt::{self, RelliktHeader};
use ackscope_protocol::workload::make_payload;
use ackscope_protocol::{
    DnmConfig, DnmPeer, Event, EventKind, MalformedReason, PacketHeader, Peer, RelliktConfig, RelliktPeer, Side,
    SimTime, WorkloadConfig,
};
use proptest::prelude::*;

fn peers() -> Vec<Box<dyn Peer>> {
    let w = WorkloadConfig::default();
    vec![
        Box::new(DnmPeer::new(Side::B, DnmConfig::default(), w, 1)),
        Box::new(RelliktPeer::new(Side::B, RelliktConfig::default(), w, 1)),
    ]
}

/// Sends a few packets from each peer (so acks have something to name), then feeds `packet`.
fn feed(packet: &[u8]) -> Vec<Vec<Event>> {
    let mut all = Vec::new();
    for mut p in peers() {
        let mut events = Vec::new();
        for i in 0..5u64 {
            p.on_tick(SimTime(i * 16_000), &mut events);
            let mut out = Vec::new();
            p.poll_send(SimTime(i * 16_000), &mut out, &mut events);
        }
        let mark = events.len();
        p.receive(SimTime(100_000), packet, &mut events);
        p.update(SimTime(2_000_000), &mut events);
        let _ = p.stats();
        all.push(events.split_off(mark));
    }
    all
}

fn check_one_verdict(events: &[Event]) -> Result<(), TestCaseError> {
    let malformed = events.iter().filter(|e| matches!(e.kind, EventKind::Malformed { .. })).count();
    let received = events.iter().filter(|e| matches!(e.kind, EventKind::PacketReceived { .. })).count();
    prop_assert!(malformed + received <= 1, "{events:?}");
    if malformed == 1 {
        // A malformed packet changes nothing: no delivery, no ack.
        let changed =
            events.iter().any(|e| matches!(e.kind, EventKind::MessageDelivered { .. } | EventKind::PacketAcked { .. }));
        prop_assert!(!changed, "a malformed packet delivered or acked something");
    }
    Ok(())
}

fn arb_range() -> impl Strategy<Value = AckRange> {
    (any::<u16>(), 1u32..=256).prop_map(|(start, count)| AckRange { start, count })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic_and_get_one_verdict(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
        prefix in prop_oneof![Just(vec![0xD7u8]), Just(b"TKLR".to_vec()), Just(vec![])],
    ) {
        let mut b = prefix;
        b.extend_from_slice(&bytes);
        let _ = read_packet(&b);
        let _ = rellikt::read_packet(&b, RelliktConfig::default().protocol_id);
        for events in feed(&b) {
            check_one_verdict(&events)?;
        }
    }

    #[test]
    fn dnm_packets_round_trip_and_bit_flips_never_panic(
        sequence in any::<u16>(),
        acks in proptest::collection::vec(arb_range(), 0..=16),
        sizes in proptest::collection::vec(8u32..200, 0..6),
        flip in any::<prop::sample::Index>(),
    ) {
        let messages = sizes.iter().enumerate().map(|(i, &n)| make_payload(Side::A, i as u64, n)).collect();
        let p = DnmPacket { sequence, acks, messages };
        let mut out = Vec::new();
        write_packet(&p, &mut out).unwrap();
        prop_assert_eq!(read_packet(&out), Ok(p));
        let bit = flip.index(out.len() * 8);
        out[bit / 8] ^= 1 << (bit % 8);
        let _ = read_packet(&out);
        for events in feed(&out) {
            check_one_verdict(&events)?;
        }
    }

    #[test]
    fn rellikt_packets_round_trip_and_bit_flips_never_panic(
        sequence in any::<u16>(),
        ack in any::<u16>(),
        ack_bits in any::<u32>(),
        sizes in proptest::collection::vec(8u32..200, 0..6),
        flip in any::<prop::sample::Index>(),
    ) {
        let id = RelliktConfig::default().protocol_id;
        let h = RelliktHeader { protocol_id: id, sequence, ack, ack_bits };
        let msgs: Vec<Vec<u8>> = sizes.iter().enumerate().map(|(i, &n)| make_payload(Side::A, i as u64, n)).collect();
        let mut out = Vec::new();
        rellikt::write_packet(&h, &msgs, &mut out).unwrap();
        prop_assert_eq!(rellikt::read_packet(&out, id), Ok((h, msgs)));
        let bit = flip.index(out.len() * 8);
        out[bit / 8] ^= 1 << (bit % 8);
        let _ = rellikt::read_packet(&out, id);
        for events in feed(&out) {
            check_one_verdict(&events)?;
        }
    }
}

#[test]
fn a_packet_of_another_protocol_is_foreign_to_both() {
    let mut reliable_io = Vec::new();
    PacketHeader { sequence: 1, ack: 0, ack_bits: 1 }.encode(&mut reliable_io);
    reliable_io.extend_from_slice(&[0u8; 20]);
    for events in feed(&reliable_io) {
        let reasons: Vec<_> = events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::Malformed { reason, .. } => Some(reason),
                _ => None,
            })
            .collect();
        assert_eq!(reasons, vec![MalformedReason::Foreign], "{events:?}");
    }
}
