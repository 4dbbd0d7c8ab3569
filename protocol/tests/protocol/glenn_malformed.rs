//! Malformed Glenn payloads are rejected, counted and never acked; arbitrary bytes never panic.

use ackscope_protocol::wire::bits::BitWriter;
use ackscope_protocol::workload::make_payload;
use ackscope_protocol::*;
use proptest::prelude::{any, prop, prop_assert, prop_assert_eq, proptest, ProptestConfig};

fn scenario() -> Scenario {
    Scenario { strategy: Strategy::Glenn, ..Scenario::default() }
}

fn glenn_peer(side: Side) -> GlennPeer {
    let s = scenario();
    GlennPeer::new(side, s.ack, s.glenn, s.workload, s.seed)
}

fn event_msg(side: Side, id: u64, bytes: u32) -> Message {
    MessageFactory::default().wrap(true, make_payload(side, id, bytes)).unwrap()
}

fn valid_payload() -> Vec<u8> {
    let f = MessageFactory::default();
    let mut p = DecodedPayload {
        reliable: vec![(0, event_msg(Side::A, 0, 20)), (1, event_msg(Side::A, 1, 300)), (7, event_msg(Side::A, 2, 9))],
        unreliable: vec![f.wrap(false, make_payload(Side::A, 3, 64)).unwrap()],
    };
    let bytes = encode_payload(&f, &mut p).unwrap();
    assert_eq!(decode_payload(&f, &bytes).unwrap(), p);
    bytes
}

/// A packet from A with sequence `seq` carrying `payload`.
fn packet(seq: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    PacketHeader { sequence: seq, ack: 65535, ack_bits: 0 }.encode(&mut out);
    out.extend_from_slice(payload);
    out
}

/// Feeds `packets` to a fresh B and returns its events and whether its next packet acks each.
fn feed_b(packets: &[Vec<u8>]) -> (Vec<Event>, GlennPeer, PacketHeader) {
    let mut b = glenn_peer(Side::B);
    let mut events = Vec::new();
    for p in packets {
        b.receive(SimTime(1000), p, &mut events);
    }
    b.on_tick(SimTime(2000), &mut events);
    let mut out = Vec::new();
    b.poll_send(SimTime(2000), &mut out, &mut events).unwrap();
    let (h, _) = PacketHeader::decode(&out).unwrap();
    (events, b, h)
}

fn acks(h: &PacketHeader, seq: u16) -> bool {
    let back = h.ack.wrapping_sub(seq) as u32;
    back < 32 && h.ack_bits & (1 << back) != 0
}

fn malformed_count(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Malformed { side: Side::B, reason: MalformedReason::BadPayload }))
        .count()
}

#[test]
fn a_valid_payload_is_delivered_in_order_and_acked() {
    let (events, b, h) = feed_b(&[packet(5, &valid_payload())]);
    let delivered: Vec<u64> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::MessageDelivered { side: Side::B, msg } => Some(msg),
            _ => None,
        })
        .collect();
    // Ids 0 and 1 are in order; 7 waits for 2..6; the snapshot is delivered at once.
    assert_eq!(delivered, vec![0, 1, 3]);
    assert!(acks(&h, 5));
    assert_eq!(b.counters().malformed_payloads, 0);
}

#[test]
fn bad_type_truncated_and_out_of_range_payloads_are_rejected_counted_and_not_acked() {
    let valid = valid_payload();
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    // Bad type id: one reliable message, id 0, type id 3 of 3 types.
    let mut w = BitWriter::with_capacity(16);
    w.serialize_u32(&mut 1, 0, 256).unwrap();
    w.serialize_u16(&mut 0).unwrap();
    w.serialize_bits(&mut 3, 2).unwrap();
    w.serialize_bits(&mut 0, 16).unwrap();
    cases.push(("bad type id", w.finish()));
    // A message count beyond the wire limit.
    let mut w = BitWriter::with_capacity(16);
    w.serialize_bits(&mut 300, 9).unwrap();
    cases.push(("count out of range", w.finish()));
    // A large event whose 12-bit length exceeds 4096.
    let mut w = BitWriter::with_capacity(16);
    w.serialize_u32(&mut 1, 0, 256).unwrap();
    w.serialize_u16(&mut 0).unwrap();
    w.serialize_bits(&mut 2, 2).unwrap();
    w.serialize_bits(&mut 4000, 12).unwrap();
    cases.push(("length out of range", w.finish()));
    // Trailing garbage and non-zero padding.
    let mut t = valid.clone();
    t.push(0);
    cases.push(("trailing byte", t));
    let mut w = BitWriter::with_capacity(4);
    w.serialize_bits(&mut 0, 18).unwrap();
    w.serialize_bits(&mut 1, 1).unwrap();
    cases.push(("non-zero padding", w.finish()));
    // Every strict prefix of a valid payload.
    for n in 0..valid.len() {
        cases.push(("truncated", valid[..n].to_vec()));
    }
    let f = MessageFactory::default();
    for (what, payload) in &cases {
        assert!(decode_payload(&f, payload).is_err(), "{what}: {payload:?} decoded");
        let (events, b, h) = feed_b(&[packet(9, payload)]);
        assert_eq!(malformed_count(&events), 1, "{what}");
        assert_eq!(b.counters().malformed_payloads, 1, "{what}");
        assert_eq!(b.endpoint().counters().malformed, 1, "{what}");
        assert!(!acks(&h, 9), "{what}: a malformed packet was acked");
        assert!(!events.iter().any(|e| matches!(e.kind, EventKind::MessageDelivered { .. })), "{what}");
    }
}

#[test]
fn a_message_id_beyond_the_receive_window_is_a_desync_and_the_packet_is_not_acked() {
    let f = MessageFactory::default();
    let mut p = DecodedPayload {
        reliable: vec![(0, event_msg(Side::A, 0, 8)), (1024, event_msg(Side::A, 1, 8))],
        ..Default::default()
    };
    let bytes = encode_payload(&f, &mut p).unwrap();
    let (events, b, h) = feed_b(&[packet(3, &bytes)]);
    assert!(events
        .iter()
        .any(|e| matches!(e.kind, EventKind::MessageDesync { side: Side::B, message_id: 1024, expected: 0 })));
    assert_eq!(b.counters().desyncs, 1);
    assert!(!acks(&h, 3));
    assert!(!events.iter().any(|e| matches!(e.kind, EventKind::MessageDelivered { .. })), "nothing of it is kept");
}

#[test]
fn damaged_content_that_still_decodes_is_reported_as_corrupted() {
    let f = MessageFactory::default();
    let mut m = event_msg(Side::A, 0, 40);
    m.payload[30] ^= 0x55;
    let mut p = DecodedPayload { reliable: vec![(0, m)], ..Default::default() };
    let bytes = encode_payload(&f, &mut p).unwrap();
    let (events, _, _) = feed_b(&[packet(0, &bytes)]);
    assert!(events.iter().any(|e| matches!(e.kind, EventKind::MessageCorrupted { side: Side::B, msg: 0 })));
    assert_eq!(reliable_metrics(&events).corrupted, 1);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_payload_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let f = MessageFactory::default();
        let decoded = decode_payload(&f, &bytes);
        let mut b = glenn_peer(Side::B);
        let mut events = Vec::new();
        b.receive(SimTime(0), &packet(0, &bytes), &mut events);
        b.receive(SimTime(0), &bytes, &mut events);
        // A payload that decodes is accepted; one that does not is counted as malformed.
        let rejected = malformed_count(&events[..]) > 0;
        prop_assert_eq!(rejected || decoded.is_ok(), true);
        if let Ok(mut d) = decoded {
            // Decoding is canonical: re-encoding gives the same bytes.
            prop_assert_eq!(encode_payload(&f, &mut d).unwrap(), bytes);
        }
    }

    #[test]
    fn mutated_valid_packets_never_panic(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6)) {
        let mut p = packet(0, &valid_payload());
        for (i, x) in flips {
            let i = i.index(p.len());
            p[i] ^= x;
        }
        let mut b = glenn_peer(Side::B);
        let mut events = Vec::new();
        b.receive(SimTime(0), &p, &mut events);
        b.on_tick(SimTime(1), &mut events);
        let mut out = Vec::new();
        prop_assert!(b.poll_send(SimTime(1), &mut out, &mut events).is_some());
    }
}
