//! No decoder panics, whatever it is fed: random bytes, real datagrams of every format cut short
//! at any length, and real datagrams with bytes flipped; the whole decoder (probing, fates in any
//! order, fragments) included. Malformed datagrams are counted per client.

use std::sync::OnceLock;

use ackscope_protocol::decode::{
    ByteOrder, Datagram, DecodeChoice, Decoder, Fate, FieldSpec, FormatKind, HeaderSpec, ProtocolIdSpec,
};
use ackscope_protocol::Strategy;
use ackscope_protocol::*;
use proptest::prelude::*;

/// Every format, a described header among them.
fn formats() -> Vec<FormatKind> {
    let mut v = FormatKind::auto_candidates();
    v.push(FormatKind::Header(HeaderSpec {
        name: "fuzz".into(),
        byte_order: ByteOrder::Big,
        protocol_id: Some(ProtocolIdSpec { offset: 0, bytes: 1, value: 0x47 }),
        sequence: FieldSpec { offset: 1, bytes: 2 },
        ack: FieldSpec { offset: 3, bytes: 2 },
        ack_bits: Some(FieldSpec { offset: 5, bytes: 4 }),
        ack_bits_skip_ack: false,
        message_id: Some(FieldSpec { offset: 9, bytes: 2 }),
    }));
    v
}

/// A KCP segment, and the same in kcptun's frame.
fn kcp_samples() -> Vec<Vec<u8>> {
    let mut seg = Vec::new();
    seg.extend_from_slice(&9u32.to_le_bytes());
    seg.extend_from_slice(&[81, 0, 32, 0]);
    for v in [1000u32, 4, 2, 3] {
        seg.extend_from_slice(&v.to_le_bytes());
    }
    seg.extend_from_slice(b"abc");
    let mut framed = vec![7; 16];
    framed.extend_from_slice(&0u32.to_le_bytes());
    framed.extend_from_slice(&seg);
    vec![seg, framed]
}

/// Real datagrams of every ackscope strategy (a second of lossless exchange each, fragmented
/// reliable.io packets among them), and hand-made ENet and KCP ones.
fn samples() -> &'static Vec<Vec<u8>> {
    static SAMPLES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let mut out = Vec::new();
        for strategy in Strategy::all() {
            let mut s = Scenario { strategy, payload_bytes: 1500, ..Scenario::default() };
            s.workload.chunk_kib = 8;
            let mut peers = [make_peer(&s, Side::A), make_peer(&s, Side::B)];
            let mut events = Vec::new();
            for t in 0..40u64 {
                let now = SimTime(t * 25_000);
                for side in Side::BOTH {
                    peers[side.index()].on_tick(now, &mut events);
                    let mut buf = Vec::new();
                    while peers[side.index()].poll_send(now, &mut buf, &mut events).is_some() {
                        peers[side.other().index()].receive(now, &buf, &mut events);
                        out.push(std::mem::take(&mut buf));
                    }
                }
            }
        }
        // ENet: a reliable send with a sent time, and an acknowledgement.
        out.push(vec![0x80, 0x00, 0x03, 0xE8, 0x86, 0x00, 0x00, 0x01, 0x00, 0x03, 7, 8, 9]);
        out.push(vec![0x00, 0x00, 0x01, 0x00, 0x00, 0x02, 0x00, 0x01, 0x03, 0xE8]);
        out.extend(kcp_samples());
        out
    })
}

fn parse_all(bytes: &[u8]) {
    for k in formats() {
        let mut f = k.make();
        for dir in Dir::BOTH {
            let _ = f.parse(dir, bytes);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic_a_format(bytes in proptest::collection::vec(any::<u8>(), 0..120)) {
        parse_all(&bytes);
    }

    #[test]
    fn truncated_real_datagrams_never_panic_a_format(pick in any::<prop::sample::Index>(), cut in any::<prop::sample::Index>()) {
        let d = pick.get(samples());
        parse_all(&d[..cut.index(d.len() + 1)]);
    }

    #[test]
    fn mutated_real_datagrams_never_panic_a_format(
        pick in any::<prop::sample::Index>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        extra in proptest::collection::vec(any::<u8>(), 0..8),
    ) {
        let mut d = pick.get(samples()).clone();
        for (at, x) in flips {
            if !d.is_empty() {
                let i = at.index(d.len());
                d[i] ^= x | 1;
            }
        }
        d.extend(extra);
        parse_all(&d);
    }

    /// The whole decoder, probing included, with fates in any order (some never told, some
    /// told twice or for unknown ids), never panics and counts what it cannot read.
    #[test]
    fn the_decoder_survives_any_stream(
        choice in 0usize..4,
        stream in proptest::collection::vec((any::<prop::sample::Index>(), any::<bool>(), 0u8..4, 0u32..3, proptest::collection::vec(any::<u8>(), 0..3)), 1..60),
    ) {
        let choice = match choice {
            0 => DecodeChoice::Auto,
            1 => DecodeChoice::Ackscope,
            2 => DecodeChoice::None,
            _ => DecodeChoice::Format(FormatKind::Reliable),
        };
        let mut d = Decoder::new(choice);
        let mut records = 0;
        for (i, (pick, garble, fate, client, junk)) in stream.into_iter().enumerate() {
            let mut bytes = pick.get(samples()).clone();
            if garble {
                bytes.extend(junk);
                if let Some(b) = bytes.first_mut() { *b ^= 0x5A; }
            }
            let uid = i as u64;
            let time = SimTime(i as u64 * 3000);
            let dir = if i % 3 == 0 { Dir::BtoA } else { Dir::AtoB };
            d.datagram(Datagram { uid, time, dir, client, bytes: &bytes });
            match fate {
                0 => d.fate(uid, Fate::Delivered { at: time.plus_micros(40_000) }),
                1 => d.fate(uid, Fate::Dropped),
                2 => d.fate(uid.wrapping_sub(2), Fate::Delivered { at: time }),
                _ => {}
            }
            records += d.take_records().len();
            let _ = d.take_events();
        }
        d.finish_probe();
        records += d.take_records().len();
        let seen: u64 = d.clients().filter_map(|c| d.client_stats(c)).map(|s| s.dirs[0].datagrams + s.dirs[1].datagrams).sum();
        prop_assert_eq!(records as u64, seen, "one record per datagram");
        let _ = d.stats_events(SimTime(1));
    }
}

#[test]
fn garbage_is_counted_malformed_per_client() {
    let mut d = Decoder::new(DecodeChoice::Format(FormatKind::Enet));
    d.set_assume_delivered(true);
    for (i, client) in [1u32, 1, 2, 1].into_iter().enumerate() {
        let bytes = [0xFFu8, 0xFF, 0x00, 0x01, 0x3F];
        d.datagram(Datagram { uid: i as u64, time: SimTime(i as u64), dir: Dir::AtoB, client, bytes: &bytes });
    }
    assert_eq!(d.client_stats(1).unwrap().malformed, 3);
    assert_eq!(d.client_stats(2).unwrap().malformed, 1);
    let records = d.take_records();
    assert!(records.iter().all(|r| r.malformed.is_some() && r.format == "enet"));
    let malformed = d.take_events().iter().filter(|e| matches!(e.kind, EventKind::Malformed { .. })).count();
    assert_eq!(malformed, 4);
}

#[test]
fn unknown_traffic_still_gets_packet_level_records() {
    let mut d = Decoder::new(DecodeChoice::Auto);
    for i in 0..12u64 {
        let bytes = vec![0xEE; 10 + i as usize];
        d.datagram(Datagram { uid: i, time: SimTime(i * 10_000), dir: Dir::AtoB, client: 1, bytes: &bytes });
    }
    let probe = d.probe().expect("decided after the probe datagrams");
    assert!(probe.picked.is_none(), "{}", probe.reason);
    assert!(probe.reason.contains("packet level"), "{}", probe.reason);
    let records = d.take_records();
    assert_eq!(records.len(), 12, "the probed datagrams replayed at packet level, then the rest");
    assert_eq!(records[1].gap_us, Some(10_000));
    assert_eq!(records[3].bytes, 13);
    assert!(records.iter().all(|r| r.format.is_empty() && r.malformed.is_none()));
}
