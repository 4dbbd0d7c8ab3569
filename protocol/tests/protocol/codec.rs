//! Header codec and sequence arithmetic properties.

use ackscope_protocol::*;
use proptest::prelude::*;
use std::collections::HashMap;

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn header_round_trips(sequence in any::<u16>(), ack in any::<u16>(), ack_bits in any::<u32>()) {
        let h = PacketHeader { sequence, ack, ack_bits };
        let mut out = Vec::new();
        let n = h.encode(&mut out);
        prop_assert!((4..=9).contains(&n));
        prop_assert_eq!(PacketHeader::decode(&out), Ok((h, n)));
        // Every strict prefix is refused as truncated.
        for cut in 0..n {
            let is_truncated = matches!(PacketHeader::decode(&out[..cut]), Err(HeaderError::Truncated { .. }));
            prop_assert!(is_truncated);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_accepted_headers_are_canonical(bytes in proptest::collection::vec(any::<u8>(), 0..24)) {
        if let Ok((h, n)) = PacketHeader::decode(&bytes) {
            let mut out = Vec::new();
            h.encode(&mut out);
            prop_assert_eq!(&out[..], &bytes[..n]);
        }
    }

    #[test]
    fn endpoint_survives_arbitrary_packets(packets in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 1..50)) {
        let mut p = AckPeer::new(Side::A, AckConfig::default(), 8);
        let mut events = Vec::new();
        for (i, pk) in packets.iter().enumerate() {
            p.receive(SimTime(i as u64 * 1000), pk, &mut events);
        }
        let _ = p.stats();
    }

    #[test]
    fn sequence_difference_matches_comparison(a in any::<u16>(), b in any::<u16>()) {
        let d = sequence_difference(a, b);
        prop_assert_eq!(d > 0, sequence_greater_than(a, b));
        prop_assert_eq!(d < 0, sequence_less_than(a, b));
        prop_assert_eq!(b.wrapping_add(d as u16), a);
    }

    /// Half the range apart, both orders: the case random draws rarely hit.
    #[test]
    fn sequence_difference_agrees_at_exactly_half_the_range(a in any::<u16>()) {
        let b = a.wrapping_add(32768);
        for (x, y) in [(a, b), (b, a)] {
            let d = sequence_difference(x, y);
            prop_assert_eq!(d > 0, sequence_greater_than(x, y));
            prop_assert_eq!(d < 0, sequence_less_than(x, y));
            prop_assert_eq!(y.wrapping_add(d as u16), x);
        }
    }

    /// The sequence buffer behaves like a map restricted to the window (newest - size, newest].
    #[test]
    fn sequence_buffer_matches_a_windowed_map(start in any::<u16>(), steps in proptest::collection::vec((0u16..600, any::<bool>()), 1..400)) {
        const SIZE: u16 = 64;
        let mut buf: SequenceBuffer<u16> = SequenceBuffer::new(SIZE as usize);
        buf.reset_to(start);
        let mut model: HashMap<u16, u16> = HashMap::new();
        let mut newest = start.wrapping_sub(1);
        let mut s = start;
        for (jump, back) in steps {
            let seq = if back { s.wrapping_sub(jump % 80) } else { s.wrapping_add(jump) };
            let too_old = sequence_less_than(seq, newest.wrapping_add(1).wrapping_sub(SIZE));
            match buf.insert(seq) {
                None => prop_assert!(too_old, "seq {} refused, newest {}", seq, newest),
                Some(v) => {
                    prop_assert!(!too_old, "seq {} accepted, newest {}", seq, newest);
                    *v = seq ^ 0x5A5A;
                    model.insert(seq, seq ^ 0x5A5A);
                    if sequence_greater_than(seq, newest) {
                        newest = seq;
                        s = seq;
                    }
                }
            }
            prop_assert_eq!(buf.next_sequence(), newest.wrapping_add(1));
            model.retain(|k, _| (0..SIZE as i32).contains(&sequence_difference(newest, *k)));
            for off in 0..SIZE * 2 {
                let q = newest.wrapping_sub(off);
                prop_assert_eq!(buf.get(q), model.get(&q), "seq {} (newest - {})", q, off);
            }
        }
    }
}

#[test]
fn non_canonical_headers_are_rejected() {
    // Reserved bits.
    assert_eq!(PacketHeader::decode(&[0x40 | 0x20, 0, 0, 0]), Err(HeaderError::ReservedBits));
    // Fragment prefix.
    assert_eq!(PacketHeader::decode(&[0x01, 0, 0, 0, 0]), Err(HeaderError::Fragment));
    // ack_bits byte 0 present but 0xFF.
    assert!(matches!(
        PacketHeader::decode(&[0x20 | 0x02, 5, 0, 1, 0xFF]),
        Err(HeaderError::NonCanonicalAckBits { byte: 0 })
    ));
    // ack as u16 whose difference (5 - 4 = 1) fits a byte.
    assert_eq!(PacketHeader::decode(&[0x00, 5, 0, 4, 0]), Err(HeaderError::NonCanonicalAck));
}
