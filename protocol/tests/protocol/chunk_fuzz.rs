//! Malformed slice, ack and fragment packets never panic: arbitrary bytes and arbitrary
//! well-encoded but inconsistent slices are counted and dropped.

use ackscope_protocol::strategies::chunks::{
    decode_packet, write_ack, write_slice, AckPacket, ChunkPacket, SlicePacket,
};
use ackscope_protocol::strategies::fragments::decode_fragment_packet;
use ackscope_protocol::{ChunkConfig, ChunkPeer, Event, EventKind, FragmentPeer, Peer, Side, SimTime};
use proptest::prelude::*;

fn small_config(slice_bytes: u32, max_slices: u32) -> ChunkConfig {
    ChunkConfig { slice_bytes, max_slices, ..ChunkConfig::default() }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic_the_decoders_or_the_peers(
        bytes in proptest::collection::vec(any::<u8>(), 0..1200),
        tag in prop_oneof![Just(0xC5u8), Just(0xCAu8), Just(0x01u8), Just(0xCBu8), any::<u8>()],
        slice_bytes in 1u32..64,
        max_slices in 1u32..300,
    ) {
        let mut b = bytes;
        if let Some(first) = b.first_mut() {
            *first = tag;
        }
        for cfg in [ChunkConfig::default(), small_config(slice_bytes, max_slices)] {
            let _ = decode_packet(&b, &cfg);
            let _ = decode_fragment_packet(&b, &cfg);
            let mut events: Vec<Event> = Vec::new();
            let mut a = ChunkPeer::new(Side::A, cfg, 3000);
            let mut r = ChunkPeer::new(Side::B, cfg, 0);
            let mut f = FragmentPeer::new(Side::B, cfg, 0);
            a.on_tick(SimTime(0), &mut events);
            a.receive(SimTime(1), &b, &mut events);
            r.receive(SimTime(1), &b, &mut events);
            f.receive(SimTime(1), &b, &mut events);
            // Whatever arrived, a receiver only ever answers with a well-formed ack.
            r.on_tick(SimTime(2), &mut events);
            let mut out = Vec::new();
            while r.poll_send(SimTime(2), &mut out, &mut events).is_some() {
                prop_assert!(matches!(decode_packet(&out, &cfg), Ok(ChunkPacket::Ack(_))));
                out.clear();
            }
        }
    }

    #[test]
    fn inconsistent_but_well_encoded_slices_are_ignored_not_trusted(
        slices in proptest::collection::vec((0u16..3, 0u32..40, 1u32..40, 1usize..=16), 1..60),
    ) {
        let cfg = small_config(16, 40);
        let mut peer = ChunkPeer::new(Side::B, cfg, 0);
        let mut events: Vec<Event> = Vec::new();
        for (k, (chunk_id, slice_id, num_slices, len)) in slices.into_iter().enumerate() {
            let last = slice_id + 1 == num_slices;
            let len = if last { len } else { 16 };
            let p = SlicePacket { seq: k as u16, chunk_id, slice_id, num_slices, data: vec![k as u8; len] };
            let mut out = Vec::new();
            if write_slice(&p, &cfg, &mut out).is_ok() {
                peer.receive(SimTime(k as u64 * 1000), &out, &mut events);
            }
        }
        // No delivered chunk may claim to be intact: none of these is a real payload (an 8-byte
        // chunk is nothing but its id, so any 8 bytes are one).
        for e in &events {
            if let EventKind::ChunkDelivered { payload_id, bytes, .. } = e.kind {
                prop_assert!(bytes <= 8 || payload_id.is_none());
            }
        }
        let c = peer.receiver().counters();
        prop_assert!(c.slices_stored + c.duplicates + c.wrong_chunk + c.inconsistent + c.out_of_range + c.after_complete > 0);
    }

    #[test]
    fn acks_round_trip_for_any_bitfield(chunk_id in any::<u16>(), bits in proptest::collection::vec(any::<bool>(), 1..=256)) {
        let cfg = ChunkConfig::default();
        let a = AckPacket { seq: 9, chunk_id, num_slices: bits.len() as u32, acked: bits };
        let mut out = Vec::new();
        write_ack(&a, &cfg, &mut out).unwrap();
        prop_assert_eq!(decode_packet(&out, &cfg), Ok(ChunkPacket::Ack(a)));
        // Any truncation is an error, never a panic or a shorter ack.
        for n in 0..out.len() {
            prop_assert!(decode_packet(&out[..n], &cfg).is_err());
        }
    }
}

#[test]
fn malformed_packets_become_malformed_events() {
    let cfg = ChunkConfig::default();
    let mut peer = ChunkPeer::new(Side::B, cfg, 0);
    let mut events = Vec::new();
    for b in [&[][..], &[0xC5][..], &[0x77, 1, 2][..], &[0xCA, 0, 0, 0, 0, 0xFF, 0xFF][..]] {
        peer.receive(SimTime(0), b, &mut events);
    }
    let malformed = events.iter().filter(|e| matches!(e.kind, EventKind::Malformed { side: Side::B, .. })).count();
    assert_eq!(malformed, 4);
    assert_eq!(peer.malformed(), 4);
}
