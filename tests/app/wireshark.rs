//! The Wireshark dissector (`contrib/wireshark/ackscope.lua`) run by the real `tshark` over an
//! exported session of every strategy, its fields compared one by one with what ackscope
//! recorded (the session's events) and with ackscope's own codecs decoding the same bytes, its
//! expert items with ackscope's anomaly list, and no malformed packet on valid traffic.
//!
//! Needs `tshark` (Debian package `tshark`; `.ci/run` installs it). As root, Debian's tshark
//! runs a script given with `-X lua_script:` (its init.lua sets `run_user_scripts_when_superuser`)
//! after a "Running as user root" warning on stderr; no flag is needed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use ackscope::capture::{comment, write_pcapng, CapturedPacket};
use ackscope::model::anomaly::{AnomalyKind, Target};
use ackscope::model::Recording;
use ackscope_protocol::strategies::chunks::{decode_packet as decode_chunk, ChunkPacket};
use ackscope_protocol::strategies::fragments::{decode_fragment_packet, FragmentPacket};
use ackscope_protocol::strategies::notify::dnm::wire::read_packet as read_dnm;
use ackscope_protocol::strategies::notify::rellikt::read_packet as read_rellikt;
use ackscope_protocol::strategies::ue4::bunch::{decode_packet_with, MIN_PACKET_BYTES};
use ackscope_protocol::wire::PacketHeader;
use ackscope_protocol::{decode_payload, EventKind, MessageFactory, Side, SimTime, Strategy};
use serde_json::Value;

use crate::pcapng_export::{lossy, read_all, recorded};

const LUA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/contrib/wireshark/ackscope.lua");

/// Every value of `key` under `v`, in document order (arrays of repeated keys flattened).
fn values<'a>(v: &'a Value, key: &str, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == key {
                    match x {
                        Value::Array(a) => out.extend(a.iter()),
                        _ => out.push(x),
                    }
                } else {
                    values(x, key, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| values(x, key, out)),
        _ => {}
    }
}

fn strs(v: &Value, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    values(v, key, &mut out);
    out.iter().map(|x| x.as_str().map(String::from).unwrap_or_else(|| x.to_string())).collect()
}

/// Numbers of `key` (decimal or `0x` hex as tshark prints them).
fn nums(v: &Value, key: &str) -> Vec<u64> {
    strs(v, key)
        .iter()
        .map(|s| match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).unwrap(),
            None => s.parse().unwrap_or_else(|_| panic!("{key}: {s} is not a number")),
        })
        .collect()
}

fn one(v: &Value, key: &str) -> u64 {
    let n = nums(v, key);
    assert_eq!(n.len(), 1, "{key}: {n:?}");
    n[0]
}

fn flag(v: &Value, key: &str) -> bool {
    one(v, key) == 1
}

/// The expansion of a 32-bit ack field: `ack - i` for every bit `i` set.
fn acked(ack: u64, bits: u32, modulo: u64) -> Vec<u64> {
    (0..32).filter(|i| bits & (1 << i) != 0).map(|i| (ack + modulo - i) % modulo).collect()
}

fn sorted(mut v: Vec<u64>) -> Vec<u64> {
    v.sort_unstable();
    v
}

/// Runs tshark with the dissector: one JSON object per packet.
fn tshark(file: &Path) -> Vec<Value> {
    let lua = format!("lua_script:{LUA}");
    let out = Command::new("tshark")
        .args(["-n", "-X", &lua, "-r", file.to_str().unwrap(), "-T", "json", "--no-duplicate-keys"])
        .output()
        .unwrap_or_else(|e| panic!("tshark: {e}: install it (apt-get install tshark; .ci/run does)"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tshark failed: {stderr}");
    assert!(!stderr.contains("Lua: Error") && !stderr.contains("lua_script"), "{stderr}");
    serde_json::from_slice(&out.stdout).expect("tshark's JSON")
}

/// What the session's events say about each send: uid -> (seq, workload ids sent in it, the
/// chunk slice or fragment it carried).
struct Recorded {
    seq: HashMap<u64, u32>,
    msgs: HashMap<u64, Vec<u64>>,
    slice: HashMap<u64, (u32, u32)>,
}

fn recorded_sends(events: &[ackscope_protocol::Event]) -> Recorded {
    let mut r = Recorded { seq: HashMap::new(), msgs: HashMap::new(), slice: HashMap::new() };
    let mut pending: HashMap<(Side, SimTime, u32), Vec<u64>> = HashMap::new();
    let mut slices: [Option<(u32, u32)>; 2] = [None, None];
    for e in events {
        match e.kind {
            EventKind::MessageSent { side, msg, seq, .. } => pending.entry((side, e.time, seq)).or_default().push(msg),
            EventKind::SliceSent { side, chunk, slice, .. } => slices[side.index()] = Some((chunk, slice)),
            EventKind::PacketSent { side, seq, uid, .. } => {
                r.seq.insert(uid, seq);
                r.msgs.insert(uid, pending.remove(&(side, e.time, seq)).unwrap_or_default());
                if let Some(s) = slices[side.index()].take() {
                    r.slice.insert(uid, s);
                }
            }
            _ => {}
        }
    }
    r
}

/// One packet's dissection checked against the codec and the events; returns how many fields
/// were compared.
fn check_packet(strategy: Strategy, d: &Value, p: &CapturedPacket, sent: bool, rec: &Recorded) -> usize {
    let bytes = p.udp(pcap_file::DataLink::RAW).unwrap().payload;
    let uid: u64 = comment::parse(&p.comment).unwrap()["uid"].parse().unwrap();
    let ctx = format!("{strategy:?} uid {uid}");
    assert_eq!(strs(d, "ackscope.format"), [strategy.name()], "{ctx}");
    assert_eq!(one(d, "ackscope.uid"), uid, "{ctx}");
    assert_eq!(one(d, "ackscope.seq"), u64::from(rec.seq[&uid]), "{ctx}: the recorded sequence");
    let ids = sorted(nums(d, "ackscope.msg.workload_id"));
    let sent_ids = sorted(rec.msgs[&uid].clone());
    let mut compared = 2;
    match strategy {
        Strategy::Glenn | Strategy::Hybrid | Strategy::Acks => {
            let (h, n) = PacketHeader::decode(&bytes).unwrap();
            assert_eq!(
                (one(d, "ackscope.ack"), one(d, "ackscope.ack_bits")),
                (h.ack.into(), h.ack_bits.into()),
                "{ctx}"
            );
            assert_eq!(nums(d, "ackscope.acked"), acked(h.ack.into(), h.ack_bits, 65536), "{ctx}");
            compared += 3;
            if strategy != Strategy::Acks {
                let payload = decode_payload(&MessageFactory::default(), &bytes[n..]).unwrap();
                let wire: Vec<u64> = payload.reliable.iter().map(|(id, _)| u64::from(*id)).collect();
                assert_eq!(nums(d, "ackscope.msg.id"), wire, "{ctx}: reliable message ids");
                assert_eq!(ids, sent_ids, "{ctx}: the messages MessageSent put in it");
                assert_eq!(nums(d, "ackscope.msg.size").len(), payload.reliable.len() + payload.unreliable.len());
                compared += 3;
            }
        }
        Strategy::Rellikt => {
            let (h, _) = read_rellikt(&bytes, ackscope_protocol::RelliktConfig::default().protocol_id).unwrap();
            assert_eq!(
                (one(d, "ackscope.ack"), one(d, "ackscope.ack_bits")),
                (h.ack.into(), h.ack_bits.into()),
                "{ctx}"
            );
            assert_eq!(nums(d, "ackscope.acked"), acked(h.ack.into(), h.ack_bits, 65536), "{ctx}");
            assert_eq!(ids, sent_ids, "{ctx}: messages");
            compared += 4;
        }
        Strategy::Dnm => {
            let pk = read_dnm(&bytes).unwrap();
            let want: Vec<u64> = pk
                .acks
                .iter()
                .flat_map(|r| (0..r.count).map(move |i| u64::from(r.start.wrapping_add(i as u16))))
                .collect();
            assert_eq!(nums(d, "ackscope.acked"), want, "{ctx}: ack ranges");
            assert_eq!(ids, sent_ids, "{ctx}: messages");
            compared += 2;
        }
        Strategy::Ue4 => {
            let max_packet = (ackscope_protocol::Ue4Config::default().max_packet_bytes as usize).max(MIN_PACKET_BYTES);
            let pk = decode_packet_with(&bytes, max_packet as u32).unwrap();
            assert_eq!(one(d, "ackscope.ack"), u64::from(pk.header.acked_seq.get()), "{ctx}");
            assert_eq!(one(d, "ackscope.ue4.history_words"), pk.header.history_word_count as u64, "{ctx}");
            let n = pk.header.history_word_count * 32;
            let at = |i: usize| u64::from(pk.header.acked_seq.get() as u32 + 16384 - i as u32) % 16384;
            let want_acked: Vec<u64> = (0..n).filter(|i| pk.header.history.is_delivered(*i)).map(at).collect();
            let want_nakked: Vec<u64> = (0..n).filter(|i| !pk.header.history.is_delivered(*i)).map(at).collect();
            assert_eq!(nums(d, "ackscope.acked"), want_acked, "{ctx}");
            assert_eq!(nums(d, "ackscope.nakked"), want_nakked, "{ctx}");
            let mut trees = Vec::new();
            values(d, "ackscope.bunch", &mut trees);
            assert_eq!(trees.len(), pk.bunches.len(), "{ctx}: bunches");
            for (t, b) in trees.iter().zip(&pk.bunches) {
                let bctx = format!("{ctx} bunch ch {}", b.ch_index);
                assert_eq!(one(t, "ackscope.bunch.ch_index"), u64::from(b.ch_index), "{bctx}");
                assert_eq!(flag(t, "ackscope.bunch.reliable"), b.reliable, "{bctx}");
                assert_eq!(flag(t, "ackscope.bunch.open_or_close"), b.open || b.close, "{bctx}");
                if b.open || b.close {
                    assert_eq!((flag(t, "ackscope.bunch.open"), flag(t, "ackscope.bunch.close")), (b.open, b.close));
                }
                assert_eq!(flag(t, "ackscope.bunch.partial"), b.partial, "{bctx}");
                if b.partial {
                    let pf = (flag(t, "ackscope.bunch.partial_initial"), flag(t, "ackscope.bunch.partial_final"));
                    assert_eq!(pf, (b.partial_initial, b.partial_final), "{bctx}");
                }
                let ch_seq = nums(t, "ackscope.bunch.ch_sequence");
                assert_eq!(ch_seq, b.reliable.then_some(u64::from(b.ch_sequence)).into_iter().collect::<Vec<_>>());
                assert_eq!(one(t, "ackscope.bunch.data_bits"), b.payload.len() as u64 * 8, "{bctx}");
                assert_eq!(flag(t, "ackscope.bunch.replication_paused"), b.is_replication_paused, "{bctx}");
                compared += 8;
            }
            // Ids of the messages that start in this packet: all were sent in it (a message split
            // over partial bunches starts in one packet only).
            assert!(ids.iter().all(|i| sent_ids.contains(i)), "{ctx}: {ids:?} not all in {sent_ids:?}");
            if pk.bunches.iter().all(|b| !b.partial) {
                assert_eq!(ids, sent_ids, "{ctx}: messages");
            }
            compared += 4;
        }
        Strategy::Chunks => {
            let cfg = ackscope_protocol::ChunkConfig::default();
            match decode_chunk(&bytes, &cfg).unwrap() {
                ChunkPacket::Slice(s) => {
                    let got = (
                        one(d, "ackscope.chunk.id"),
                        one(d, "ackscope.chunk.slice"),
                        one(d, "ackscope.chunk.num_slices"),
                    );
                    assert_eq!(got, (s.chunk_id.into(), s.slice_id.into(), s.num_slices.into()), "{ctx}");
                    if sent {
                        let (chunk, slice) = rec.slice[&uid];
                        assert_eq!((got.0, got.1), (u64::from(chunk), u64::from(slice)), "{ctx}: SliceSent");
                    }
                    compared += 4;
                }
                ChunkPacket::Ack(a) => {
                    let want: Vec<u64> = (0..a.num_slices as u64).filter(|i| a.acked[*i as usize]).collect();
                    assert_eq!(nums(d, "ackscope.chunk.acked_slice"), want, "{ctx}");
                    assert_eq!(one(d, "ackscope.chunk.id"), u64::from(a.chunk_id), "{ctx}");
                    compared += 2;
                }
            }
        }
        Strategy::Fragments => {
            let cfg = ackscope_protocol::ChunkConfig::default();
            match decode_fragment_packet(&bytes, &cfg).unwrap() {
                FragmentPacket::Fragment { id, count, .. } => {
                    assert_eq!((one(d, "ackscope.frag.id"), one(d, "ackscope.frag.count")), (id.into(), count.into()));
                    if sent {
                        assert_eq!(u64::from(rec.slice[&uid].1), u64::from(id), "{ctx}: SliceSent's fragment");
                    }
                    compared += 2;
                }
                FragmentPacket::BlockAck { seq } => {
                    assert_eq!(one(d, "ackscope.frag.block_ack"), u64::from(seq), "{ctx}");
                    compared += 1;
                }
            }
        }
    }
    compared
}

fn temp_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("ackscope-wireshark-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn tshark_with_the_dissector_reads_every_format_as_ackscope_recorded_it() {
    let dir = temp_dir();
    let mut report = Vec::new();
    for strategy in Strategy::all() {
        let session = recorded(lossy(strategy, 17), Vec::new(), 3.0);
        let file = dir.join(format!("{}.pcapng", strategy.name()));
        write_pcapng(&session, &file).unwrap();
        let (packets, _) = read_all(&std::fs::read(&file).unwrap());
        let dissected = tshark(&file);
        assert_eq!(dissected.len(), packets.len(), "{strategy:?}: tshark read every packet");
        let rec = recorded_sends(&session.events);
        let mut fields = 0;
        let mut experts: HashMap<&str, usize> = HashMap::new();
        for (d, p) in dissected.iter().zip(&packets) {
            let layers = &d["_source"]["layers"];
            assert_eq!(one(layers, "frame.interface_id"), u64::from(p.interface));
            fields += check_packet(strategy, layers, p, p.interface == 0, &rec);
            let mut malformed = Vec::new();
            values(layers, "_ws.malformed", &mut malformed);
            let messages = strs(layers, "_ws.expert.message");
            assert!(
                malformed.is_empty() && messages.iter().all(|m| !m.to_lowercase().contains("malformed")),
                "{strategy:?}: a valid packet dissected as malformed: {messages:?}"
            );
            for (prefix, key) in
                [("Resend", "resend"), ("Spurious", "spurious"), ("Nak", "nak_at"), ("Dropped", "fate")]
            {
                let shown = messages.iter().filter(|m| m.starts_with(prefix)).count();
                let f = comment::parse(&p.comment).unwrap();
                let said = usize::from(f.get(key).is_some_and(|v| key != "fate" || v.starts_with("dropped_")));
                assert_eq!(shown, said, "{strategy:?}: {prefix} items follow the comment {}", p.comment);
                *experts.entry(prefix).or_default() += shown;
            }
        }
        // The comments, and so the expert items, carry exactly the anomaly list's naks and
        // spurious resends.
        let mut lane = Recording::new(session.scenario.clone());
        lane.ingest(session.events.clone());
        let naks: std::collections::BTreeSet<u64> = lane
            .anomalies
            .list()
            .iter()
            .filter_map(|a| match (a.kind, a.target) {
                (AnomalyKind::Nak { .. }, Target::Packet(uid)) => Some(uid),
                _ => None,
            })
            .collect();
        let spurious_packets: std::collections::BTreeSet<(SimTime, Side, u32)> = lane
            .anomalies
            .list()
            .iter()
            .filter_map(|a| match a.kind {
                AnomalyKind::Spurious { seq, .. } => Some((a.time, a.side, seq)),
                _ => None,
            })
            .collect();
        assert_eq!(experts.get("Nak").copied().unwrap_or(0), naks.len(), "{strategy:?}: naks");
        assert_eq!(experts.get("Spurious").copied().unwrap_or(0), spurious_packets.len(), "{strategy:?}: spurious");
        report.push(format!("{strategy:?}: {} packets, {fields} fields, experts {experts:?}", packets.len()));
    }
    println!("{}", report.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}
