//! `ackscope peer --raw` with reliable.io's fragments: a reliable.io-format peer written here from
//! the format's description (facts.md; none of ackscope's codecs) exchanges 2000- and
//! 16000-byte payloads with it over loopback. Every payload ackscope sends arrives whole and
//! intact; ackscope acks every packet the test peer sent whole and none it left a fragment out
//! of (0 false acks); a stream of malformed fragments leaves it running and counting.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{SocketAddr, UdpSocket};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;

const FRAGMENT_SIZE: usize = 1024;

/// reliable.io's regular header (facts.md), written from its description.
fn write_header(seq: u16, ack: u16, ack_bits: u32, out: &mut Vec<u8>) {
    let bytes = ack_bits.to_le_bytes();
    let diff = seq.wrapping_sub(ack);
    let mut prefix = 0u8;
    for (k, b) in bytes.iter().enumerate() {
        if *b != 0xFF {
            prefix |= 1 << (1 + k);
        }
    }
    if diff <= 255 {
        prefix |= 1 << 5;
    }
    out.push(prefix);
    out.extend_from_slice(&seq.to_le_bytes());
    if diff <= 255 {
        out.push(diff as u8);
    } else {
        out.extend_from_slice(&ack.to_le_bytes());
    }
    out.extend(bytes.iter().filter(|b| **b != 0xFF));
}

/// Reads a regular header: (sequence, ack, ack_bits, length), or None.
fn read_header(b: &[u8]) -> Option<(u16, u16, u32, usize)> {
    let prefix = *b.first()?;
    if prefix & 1 != 0 {
        return None;
    }
    let seq = u16::from_le_bytes([*b.get(1)?, *b.get(2)?]);
    let (ack, mut n) = if prefix & (1 << 5) != 0 {
        (seq.wrapping_sub(*b.get(3)? as u16), 4)
    } else {
        (u16::from_le_bytes([*b.get(3)?, *b.get(4)?]), 5)
    };
    let mut bits = [0xFFu8; 4];
    for (k, slot) in bits.iter_mut().enumerate() {
        if prefix & (1 << (1 + k)) != 0 {
            *slot = *b.get(n)?;
            n += 1;
        }
    }
    Some((seq, ack, u32::from_le_bytes(bits), n))
}

/// The test's reliable.io endpoint: sends a packet per tick as fragments, reassembles and acks.
struct SpecPeer {
    socket: UdpSocket,
    to: SocketAddr,
    next_seq: u16,
    /// Packets received whole (sequence -> payload), for the ack state and the checks.
    received: BTreeMap<u16, Vec<u8>>,
    newest: Option<u16>,
    /// Reassembly: sequence -> (count, fragments by id).
    partial: BTreeMap<u16, (usize, BTreeMap<u8, Vec<u8>>)>,
    /// Sequences ackscope acked, and the ones sent whole / with a fragment left out.
    acked: BTreeSet<u16>,
    whole: BTreeSet<u16>,
    incomplete: BTreeSet<u16>,
    malformed_seen: u64,
}

impl SpecPeer {
    fn ack_state(&self) -> (u16, u32) {
        let Some(newest) = self.newest else { return (65535, 0) };
        let mut bits = 0u32;
        for i in 0..32u16 {
            if self.received.contains_key(&newest.wrapping_sub(i)) {
                bits |= 1 << i;
            }
        }
        (newest, bits)
    }

    /// Sends one packet of `payload` bytes as fragments, leaving out the last one if `cut`.
    fn send(&mut self, payload: usize, cut: bool) {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        let (ack, ack_bits) = self.ack_state();
        let data: Vec<u8> = (0..payload).map(|i| (i as u8) ^ seq as u8).collect();
        let count = payload.div_ceil(FRAGMENT_SIZE);
        for (id, piece) in data.chunks(FRAGMENT_SIZE).enumerate() {
            if cut && id + 1 == count {
                break;
            }
            let mut d = vec![1u8];
            d.extend_from_slice(&seq.to_le_bytes());
            d.push(id as u8);
            d.push((count - 1) as u8);
            if id == 0 {
                write_header(seq, ack, ack_bits, &mut d);
            }
            d.extend_from_slice(piece);
            self.socket.send_to(&d, self.to).unwrap();
        }
        if cut {
            self.incomplete.insert(seq)
        } else {
            self.whole.insert(seq)
        };
    }

    fn take_acks(&mut self, ack: u16, bits: u32) {
        for i in 0..32u16 {
            if bits & (1 << i) != 0 {
                self.acked.insert(ack.wrapping_sub(i));
            }
        }
    }

    /// Takes one datagram from ackscope: a regular packet or a fragment.
    fn receive(&mut self, d: &[u8]) {
        if d.first() == Some(&1) && d.len() >= 5 {
            let seq = u16::from_le_bytes([d[1], d[2]]);
            let (id, count) = (d[3], d[4] as usize + 1);
            let entry = self.partial.entry(seq).or_insert((count, BTreeMap::new()));
            entry.1.insert(id, d[5..].to_vec());
            if entry.1.len() == entry.0 {
                let (_, frags) = self.partial.remove(&seq).unwrap();
                let first = &frags[&0];
                let Some((hseq, ack, bits, n)) = read_header(first) else {
                    self.malformed_seen += 1;
                    return;
                };
                assert_eq!(hseq, seq, "fragment 0's header names its packet");
                let mut payload = first[n..].to_vec();
                for (_, f) in frags.range(1..) {
                    payload.extend_from_slice(f);
                }
                self.accept(seq, ack, bits, payload);
            }
        } else if let Some((seq, ack, bits, n)) = read_header(d) {
            self.accept(seq, ack, bits, d[n..].to_vec());
        } else {
            self.malformed_seen += 1;
        }
    }

    fn accept(&mut self, seq: u16, ack: u16, bits: u32, payload: Vec<u8>) {
        self.take_acks(ack, bits);
        if self.newest.is_none_or(|n| seq.wrapping_sub(n) < 32768) {
            self.newest = Some(seq);
        }
        self.received.insert(seq, payload);
    }
}

fn run_exchange(payload: usize) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let me = socket.local_addr().unwrap();
    let theirs = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let payload_set = format!("payload_bytes={payload}");
    let args = [
        "peer",
        "--raw",
        "--json",
        "--seconds",
        "3",
        "--bind",
        &theirs.to_string(),
        "--connect",
        &me.to_string(),
        "--set",
        &payload_set,
        "--set",
        "link.loss_percent=0",
        "--set",
        "link.latency_ms=5",
    ];
    let child = Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ackscope peer --raw");
    socket.set_read_timeout(Some(Duration::from_millis(2))).unwrap();
    let mut peer = SpecPeer {
        socket,
        to: theirs,
        next_seq: 0,
        received: BTreeMap::new(),
        newest: None,
        partial: BTreeMap::new(),
        acked: BTreeSet::new(),
        whole: BTreeSet::new(),
        incomplete: BTreeSet::new(),
        malformed_seen: 0,
    };
    let start = Instant::now();
    let mut next_tick = Duration::ZERO;
    let mut buf = vec![0u8; 65_536];
    let mut tick = 0u32;
    while start.elapsed() < Duration::from_millis(3500) {
        if start.elapsed() >= next_tick && start.elapsed() < Duration::from_millis(2700) {
            // Every fifth packet goes out with its last fragment left out: never whole.
            peer.send(payload, tick % 5 == 4);
            tick += 1;
            next_tick += Duration::from_millis(20);
        }
        if let Ok(n) = peer.socket.recv(&mut buf) {
            peer.receive(&buf[..n]);
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "ackscope peer failed: {}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Every payload ackscope sent arrived whole and intact, in an unbroken run of sequences.
    let seqs: Vec<u16> = peer.received.keys().copied().collect();
    assert!(seqs.len() > 100, "{payload} bytes: {} packets reassembled", seqs.len());
    assert_eq!(seqs, (0..seqs.len() as u16).collect::<Vec<_>>(), "{payload} bytes: every payload delivered");
    for (seq, p) in &peer.received {
        assert_eq!(p.len(), payload, "packet {seq}");
        assert!(p.iter().all(|b| *b == *seq as u8), "packet {seq}: ackscope's filler is the sequence's low byte");
    }
    // ackscope acked every packet sent whole (but the last few in flight) and none cut short.
    let false_acks: Vec<_> = peer.acked.intersection(&peer.incomplete).collect();
    assert!(false_acks.is_empty(), "{payload} bytes: acks of packets never whole: {false_acks:?}");
    let unacked = peer.whole.difference(&peer.acked).count();
    assert!(unacked <= 3, "{payload} bytes: {unacked} whole packets never acked (of {})", peer.whole.len());
    assert_eq!(peer.malformed_seen, 0);
    assert_eq!(json["packets"]["malformed"], 0, "{json}");
    println!(
        "{payload} B: ackscope sent {} packets, all reassembled; acked {} of {} whole, 0 of {} cut short",
        seqs.len(),
        peer.acked.intersection(&peer.whole).count(),
        peer.whole.len(),
        peer.incomplete.len()
    );
}

#[test]
fn raw_mode_exchanges_2000_byte_payloads_as_fragments() {
    run_exchange(2000);
}

#[test]
fn raw_mode_exchanges_16000_byte_payloads_as_fragments() {
    run_exchange(16000);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Fragment streams of any shape (wrong counts, ids past the count, short middles, empty
    /// lasts, mismatched headers, repeats) never panic the raw endpoint and never get a
    /// packet acked that was not whole and canonical.
    #[test]
    fn malformed_fragment_streams_never_panic(stream in proptest::collection::vec((0u16..8, 0u8..20, 0u8..20, 0usize..1100, any::<bool>(), any::<u8>()), 1..80)) {
        use ackscope_protocol::{AckPeer, AckConfig, Peer, Side, SimTime, EventKind};
        let mut p = AckPeer::new(Side::A, AckConfig::default(), 2000);
        let mut events = Vec::new();
        // Per sequence, the canonical fragments sent: (count, id) of those with a right size and
        // a header exactly on fragment 0.
        let mut canonical: std::collections::BTreeMap<u16, BTreeSet<(u8, u8)>> = Default::default();
        for (i, (seq, id, count, len, with_header, fill)) in stream.into_iter().enumerate() {
            let mut d = vec![1u8];
            d.extend_from_slice(&seq.to_le_bytes());
            d.push(id);
            d.push(count);
            if with_header {
                write_header(seq, 0, 0, &mut d);
            }
            d.resize(d.len() + len, fill);
            let last = id == count;
            let sized = if last { (1..=FRAGMENT_SIZE).contains(&len) } else { len == FRAGMENT_SIZE };
            if id <= count && count < 16 && sized && with_header == (id == 0) {
                canonical.entry(seq).or_default().insert((count, id));
            }
            p.receive(SimTime(i as u64 * 1000), &d, &mut events);
        }
        for e in &events {
            if let EventKind::PacketReceived { seq, .. } = e.kind {
                let frags = canonical.get(&(seq as u16)).cloned().unwrap_or_default();
                let whole = frags.iter().any(|&(c, _)| (0..=c).all(|id| frags.contains(&(c, id))));
                prop_assert!(whole, "packet {} received without every canonical fragment: {:?}", seq, frags);
            }
        }
    }
}
