//! Link records from a capture that saw each datagram both as sent and as delivered.
//!
//! A *stream* is what one interface saw of one UDP flow in one direction: (interface, source
//! address and port, destination address and port). Reading takes two passes over the file, in
//! file order (Wireshark, tcpdump and mergecap write packets in time order, and so does
//! ackscope's export):
//!
//! 1. **Which stream is whose other side.** A datagram's bytes seen on stream S and later on
//!    stream R make one vote for "R is where S's datagrams were delivered", when R can be S's
//!    other side at all ([`could_be_copy`]: never the reverse direction, and on one interface
//!    only another hop with both ends other than S's, so two clients of one server sending
//!    identical bytes never vote for each other); where one of the streams that carried the
//!    bytes has R's own ends, only it votes (another client's identical datagram does not). A stream most of
//!    whose datagrams (at least half) S sent first is S's receiver side; a sender stream keeps
//!    the receiver with the most votes. So ackscope's export pairs `lane1-sent` with
//!    `lane1-delivered` for each flow and direction, two captures merged pair each host's sends
//!    with the other host's arrivals, and a loopback capture around a conditioning proxy pairs
//!    `client -> proxy` with `proxy -> server`. Streams in no pair are one-sided: they give no
//!    fates (see [`super`]).
//! 2. **Which copy is which datagram.** Every datagram on a sender stream is a record, sent at
//!    its capture time. Each datagram on its receiver stream is a delivered copy of the datagram
//!    with the same bytes (the same 64-bit hash and length) sent on the sender stream at most
//!    [`MATCH_WINDOW_NS`] (10 s) before it: of those, **the earliest not yet delivered; when all
//!    were delivered, the latest of them** (the copy is a duplicate). With unique payloads (every
//!    ackscope format, ENet and KCP carry a sequence or a timestamp) this is exact. With identical
//!    payloads in the window the rule assumes they were not reordered among themselves, so a late
//!    twin and a duplicate look alike; such copies are counted as ambiguous. A copy that matches
//!    nothing is counted as unmatched.
//!
//! A datagram without a delivered copy was dropped, unless the capture cannot tell: sent so late
//! that a copy taking the longest delay seen in its direction would have arrived after the
//! capture's last packet, or so early that it would have arrived before the receiver side's first
//! one. Its fate is then unknown (kept out of the fit; the replay takes it only at its exact
//! instant). An ackscope packet comment, where present, names a drop's reason and an `in_flight`
//! fate; other captures' drops count as random loss.
//!
//! **Which side is A.** For each pair, the original sender and the final receiver are the flow's
//! two ends; the server, side A, is chosen by the import's rule ([`crate::capture::server_end`]):
//! in a capture ackscope wrote, the address it gave the server; else the end with more distinct
//! peers over all pairs; else the end that did not send the flow's first datagram.
//!
//! **Time.** A capture whose first packet is less than a day after the epoch runs on virtual time
//! (ackscope's exports: the epoch stands for the start of the run) and keeps its times; any other
//! capture's time 0 is its first packet.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::BufReader;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;

use ackscope_protocol::{Dir, DirTrace, DropReason, LinkTrace, SimTime, TraceFate};
use anyhow::{anyhow, Result};
use pcap_file::pcap::PcapReader;
use pcap_file::DataLink;

use super::{LinkRecords, RecordsInfo};
use crate::capture::comment::{self, FateHint as Hint};
use crate::capture::pcapng::{CaptureReader, CapturedPacket, Udp};
use crate::capture::server_end::{is_ackscope_application, server_end, FirstDatagram};

/// Longest a delivered copy may come after its datagram was sent (and how long sent datagrams
/// are remembered for matching).
pub const MATCH_WINDOW_NS: u64 = 10_000_000_000;

/// Captures starting before this are on virtual time (module doc).
const VIRTUAL_TIME_LIMIT_NS: u64 = 86_400_000_000_000;

/// A datagram with a delivered copy's bytes, sent on the copy's sender side, as the matching
/// rule sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentCopy {
    /// Capture time of the send.
    pub sent_ns: u64,
    /// Delivered copies matched to it so far.
    pub copies: u32,
}

/// Which sent datagram a delivered copy is ([`match_delivered_copy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// No datagram with its bytes was sent before it (within the window).
    Unmatched,
    /// The `index`-th candidate; `ambiguous` when more than one datagram with these bytes was
    /// sent before the copy (the rule picked one).
    Sent { index: usize, ambiguous: bool },
}

/// **The sent-to-delivered matching rule** (module doc, pass 2), in one place for every reader
/// of captures: `candidates` are the datagrams with the delivered copy's bytes (same
/// [`fingerprint`]) sent on its sender stream within [`MATCH_WINDOW_NS`] before it, in send
/// order; the copy arrived at `copy_ns`. Of those sent at or before `copy_ns`, it is the earliest
/// not yet delivered; when every one was delivered already, the latest of them (the copy is a
/// duplicate). The caller counts the copy on the datagram it names.
pub fn match_delivered_copy(candidates: &[SentCopy], copy_ns: u64) -> Match {
    let before = candidates.iter().take_while(|c| c.sent_ns <= copy_ns).count();
    if before == 0 {
        return Match::Unmatched;
    }
    let index = candidates[..before].iter().position(|c| c.copies == 0).unwrap_or(before - 1);
    Match::Sent { index, ambiguous: before > 1 }
}

/// pcapng's section header block type, and classic pcap's magic numbers in either byte order
/// (microsecond and nanosecond variants).
pub fn is_capture(magic: [u8; 4]) -> bool {
    matches!(u32::from_le_bytes(magic), 0x0A0D_0D0A | 0xA1B2_C3D4 | 0xD4C3_B2A1 | 0xA1B2_3C4D | 0x4D3C_B2A1)
}

type Endpoint = (Ipv4Addr, u16);

/// (interface, source, destination).
type StreamKey = (u32, Endpoint, Endpoint);

/// A datagram's identity for matching: its bytes' hash and length.
pub type Fingerprint = (u64, u32);

/// A datagram's identity for matching: a 64-bit hash of its UDP payload and its length.
pub fn fingerprint(payload: &[u8]) -> Fingerprint {
    let mut h = DefaultHasher::new();
    payload.hash(&mut h);
    (h.finish(), payload.len() as u32)
}

/// A packet of either format.
struct Packet {
    interface: u32,
    time_ns: u64,
    comment: String,
    udp: Option<Udp>,
}

enum Source {
    Ng(CaptureReader<BufReader<File>>),
    Classic(PcapReader<BufReader<File>>, DataLink),
}

/// The packets of a capture file in file order, counting what cannot be read.
struct Packets {
    source: Source,
    info: RecordsInfo,
    /// The last error met; when reading ends right after it, the file was damaged there.
    last_error: Option<String>,
    origin: String,
}

impl Packets {
    fn open(path: &Path) -> Result<Self> {
        let origin = path.display().to_string();
        let file = || -> Result<BufReader<File>> {
            Ok(BufReader::new(File::open(path).map_err(|e| anyhow!("cannot open {origin}: {e}"))?))
        };
        let mut magic = [0u8; 4];
        std::io::Read::read_exact(&mut File::open(path)?, &mut magic).map_err(|e| anyhow!("{origin}: {e}"))?;
        let (source, format) = if u32::from_le_bytes(magic) == 0x0A0D_0D0A {
            (Source::Ng(CaptureReader::new(file()?, &origin)?), "pcapng")
        } else {
            let r = PcapReader::new(file()?).map_err(|e| anyhow!("{origin}: not a pcap file ({e})"))?;
            let link = r.header().datalink;
            (Source::Classic(r, link), "pcap")
        };
        Ok(Self { source, info: RecordsInfo { format: format.into(), ..Default::default() }, last_error: None, origin })
    }

    /// Whether ackscope wrote the section being read (its header names the writing application).
    fn written_by_ackscope(&self) -> bool {
        matches!(&self.source, Source::Ng(r) if is_ackscope_application(r.application()))
    }

    fn next(&mut self) -> Option<Packet> {
        loop {
            let read = match &mut self.source {
                Source::Ng(r) => r.next_packet().map(|p| {
                    p.map(|p| {
                        let link = r.interfaces().get(p.interface as usize).map(|i| i.linktype);
                        (link, p)
                    })
                }),
                Source::Classic(r, link) => {
                    let link = *link;
                    r.next_packet().map(|p| {
                        p.map(|p| {
                            let time_ns = p.timestamp.as_nanos().min(u128::from(u64::MAX)) as u64;
                            let data = p.data.into_owned();
                            (Some(link), CapturedPacket { interface: 0, time_ns, comment: String::new(), data })
                        })
                        .map_err(|e| anyhow!("{}: damaged pcap record: {e}", self.origin))
                    })
                }
            };
            match read {
                None => {
                    if let Some(e) = self.last_error.take() {
                        self.info.skipped_malformed -= 1;
                        self.info.damaged = Some(format!("{e} (reading stopped after {} packets)", self.info.packets));
                    }
                    return None;
                }
                Some(Err(e)) => {
                    self.info.skipped_malformed += 1;
                    self.last_error = Some(format!("{e:#}"));
                    // A classic pcap reader cannot find the next record after a damaged one.
                    if matches!(self.source, Source::Classic(..)) {
                        self.info.skipped_malformed -= 1;
                        self.info.damaged =
                            Some(format!("{e:#} (reading stopped after {} packets)", self.info.packets));
                        self.last_error = None;
                        return None;
                    }
                }
                Some(Ok((link, p))) => {
                    self.last_error = None;
                    self.info.packets += 1;
                    let udp = link.and_then(|l| p.udp(l));
                    if udp.is_none() {
                        self.info.skipped_not_udp += 1;
                    }
                    return Some(Packet { interface: p.interface, time_ns: p.time_ns, comment: p.comment, udp });
                }
            }
        }
    }
}

/// Streams whose bytes are remembered per fingerprint in pass 1: more carry the same bytes only
/// where many flows send identical datagrams, and the first few are the candidates that matter.
const MAX_SIGHTINGS: usize = 8;

/// Whether a datagram on stream `to` can be a delivered copy of one sent on `from`: never the
/// other direction between the same ends (both sides may send identical bytes); on another
/// interface, any ends (a capture at each end, or around a NAT); on the same interface only with
/// both ends other than the send's (another hop of one path, such as a proxy's: two clients of
/// one server share an end with each other and may send identical bytes, and are never each
/// other's copies). The import's matching keeps the same rule.
fn could_be_copy(from: &StreamKey, to: &StreamKey) -> bool {
    from != to && (from.1, from.2) != (to.2, to.1) && (from.0 != to.0 || (from.1 != to.1 && from.2 != to.2))
}

/// The same source and destination (on another interface): a sighting that, where there is one,
/// is preferred over other ends carrying the same bytes (another client's identical datagram).
fn same_path(from: &StreamKey, to: &StreamKey) -> bool {
    (from.1, from.2) == (to.1, to.2)
}

/// What pass 1 learns about a stream.
struct Stream {
    key: StreamKey,
    packets: u64,
    /// Whether the section it was first seen in was written by ackscope.
    by_ackscope: bool,
}

/// A sender stream and its receiver stream, and the direction they carry.
#[derive(Debug, Clone, Copy)]
struct Pair {
    sender: u32,
    receiver: u32,
    dir: Dir,
}

/// Pass 1: the streams, and which stream is whose receiver side.
struct Layout {
    ids: HashMap<StreamKey, u32>,
    streams: Vec<Stream>,
    pairs: Vec<Pair>,
    /// By stream: the pair it sends in, the pair it receives in.
    sends_in: HashMap<u32, usize>,
    receives_in: HashMap<u32, usize>,
    side_a: Option<Endpoint>,
    first_ns: Option<u64>,
}

fn layout(path: &Path) -> Result<(Layout, RecordsInfo)> {
    let mut packets = Packets::open(path)?;
    let mut ids: HashMap<StreamKey, u32> = HashMap::new();
    let mut streams: Vec<Stream> = Vec::new();
    // Per fingerprint, the streams that carried it within the window (the first sighting of each).
    let mut seen: HashMap<Fingerprint, Vec<(u32, u64)>> = HashMap::new();
    let mut expiry: VecDeque<(u64, Fingerprint, u32)> = VecDeque::new();
    let mut votes: HashMap<(u32, u32), u64> = HashMap::new();
    let mut first_ns = None;
    let mut latest = 0u64;
    while let Some(p) = packets.next() {
        first_ns.get_or_insert(p.time_ns);
        latest = latest.max(p.time_ns);
        let Some(udp) = p.udp else { continue };
        let key = (p.interface, udp.src, udp.dst);
        let sid = *ids.entry(key).or_insert_with(|| {
            streams.push(Stream { key, packets: 0, by_ackscope: packets.written_by_ackscope() });
            streams.len() as u32 - 1
        });
        streams[sid as usize].packets += 1;
        let fp = fingerprint(&udp.payload);
        let sightings = seen.entry(fp).or_default();
        // Only streams that carried the bytes before this one first did (with identical bytes
        // sent again and again, the receiver side must not vote for its sender).
        let own = sightings.iter().find(|(s, _)| *s == sid).map_or(u64::MAX, |(_, t)| *t);
        let earlier = |(s, t): &(u32, u64)| *t < own && could_be_copy(&streams[*s as usize].key, &key);
        let same_ends = sightings.iter().any(|x| earlier(x) && same_path(&streams[x.0 as usize].key, &key));
        for x in sightings.iter().filter(|x| earlier(x)) {
            let (s, from) = (x.0, &streams[x.0 as usize].key);
            if !same_ends || same_path(from, &key) {
                *votes.entry((s, sid)).or_default() += 1;
            }
        }
        if !sightings.iter().any(|(s, _)| *s == sid) && sightings.len() < MAX_SIGHTINGS {
            sightings.push((sid, p.time_ns));
            expiry.push_back((p.time_ns, fp, sid));
        }
        while expiry.front().is_some_and(|(t, ..)| t.saturating_add(MATCH_WINDOW_NS) < latest) {
            let (t, fp, s) = expiry.pop_front().expect("checked");
            if let Some(list) = seen.get_mut(&fp) {
                list.retain(|(s0, t0)| (*s0, *t0) != (s, t));
                if list.is_empty() {
                    seen.remove(&fp);
                }
            }
        }
    }
    // Each receiver stream's best sender (ties: the lower stream id), if it sent at least half.
    let mut best: BTreeMap<u32, (u64, u32)> = BTreeMap::new();
    for (&(s, r), &n) in &votes {
        let e = best.entry(r).or_insert((0, u32::MAX));
        if n > e.0 || (n == e.0 && s < e.1) {
            *e = (n, s);
        }
    }
    let receivers: BTreeSet<u32> =
        best.iter().filter(|(r, (n, _))| 2 * n >= streams[**r as usize].packets).map(|(r, _)| *r).collect();
    // Each sender keeps the receiver with the most votes (a sender that is itself a receiver
    // is a middle hop: its own sender pairs directly).
    let mut by_sender: BTreeMap<u32, (u64, u32)> = BTreeMap::new();
    for r in &receivers {
        let (n, s) = best[r];
        if receivers.contains(&s) {
            continue;
        }
        let e = by_sender.entry(s).or_insert((0, u32::MAX));
        if n > e.0 {
            *e = (n, *r);
        }
    }
    let ends: Vec<(Endpoint, Endpoint, u32, u32)> =
        by_sender.iter().map(|(s, (_, r))| (streams[*s as usize].key.1, streams[*r as usize].key.2, *s, *r)).collect();
    let mut peers: HashMap<Endpoint, BTreeSet<Endpoint>> = HashMap::new();
    for (x, y, ..) in &ends {
        peers.entry(*x).or_default().insert(*y);
        peers.entry(*y).or_default().insert(*x);
    }
    // The server end by the import's rule; a flow's first datagram is its earliest sender
    // stream's (streams are numbered in order of appearance).
    let flow_of = |x: Endpoint, y: Endpoint| (x.min(y), x.max(y));
    let mut first_of: HashMap<(Endpoint, Endpoint), (u32, Endpoint)> = HashMap::new();
    for (x, y, s, _) in &ends {
        let e = first_of.entry(flow_of(*x, *y)).or_insert((*s, *x));
        if *s < e.0 {
            *e = (*s, *x);
        }
    }
    let server_first = |x: &Endpoint, y: &Endpoint| {
        let (first_stream, from) = first_of[&flow_of(*x, *y)];
        let to = if from == *x { *y } else { *x };
        let first = FirstDatagram { from: from.into(), to: to.into() };
        let peers_of = |e: SocketAddr| match e {
            SocketAddr::V4(v) => peers.get(&(*v.ip(), v.port())).map_or(0, BTreeSet::len),
            SocketAddr::V6(_) => 0,
        };
        let by_ackscope = streams[first_stream as usize].by_ackscope;
        server_end(first, None, by_ackscope, peers_of).is_none_or(|(server, _)| server == SocketAddr::from(*x))
    };
    let mut side_a = None;
    let pairs: Vec<Pair> = ends
        .iter()
        .map(|(x, y, s, r)| {
            let dir = if server_first(x, y) { Dir::AtoB } else { Dir::BtoA };
            side_a.get_or_insert(if dir == Dir::AtoB { *x } else { *y });
            Pair { sender: *s, receiver: *r, dir }
        })
        .collect();
    let sends_in = pairs.iter().enumerate().map(|(i, p)| (p.sender, i)).collect();
    let receives_in = pairs.iter().enumerate().map(|(i, p)| (p.receiver, i)).collect();
    let info = packets.info;
    Ok((Layout { ids, streams, pairs, sends_in, receives_in, side_a, first_ns }, info))
}

/// A sent datagram while matching.
#[derive(Debug, Clone, Copy)]
struct Sent {
    sent_ns: u64,
    bytes: u32,
    /// First copy's delay, ns (`u64::MAX`: none yet).
    first_ns: u64,
    copies: u32,
    /// What an ackscope comment said: a drop's reason, or in flight.
    hint: Option<Hint>,
}

/// The records of a capture with both sides (module doc).
pub fn from_capture(path: &Path) -> Result<LinkRecords> {
    let (layout, mut info) = layout(path)?;
    let origin_ns = match layout.first_ns {
        Some(t) if t >= VIRTUAL_TIME_LIMIT_NS => t,
        _ => 0,
    };
    let mut sent: [Vec<Sent>; 2] = Default::default();
    let mut extra: [Vec<(u32, u64)>; 2] = Default::default();
    // Per pair: datagrams by fingerprint (indices into their direction's list), in send order.
    let mut pending: Vec<HashMap<Fingerprint, VecDeque<u32>>> = vec![HashMap::new(); layout.pairs.len()];
    let mut expiry: VecDeque<(u64, usize, Fingerprint)> = VecDeque::new();
    let mut rx_first: [Option<u64>; 2] = [None; 2];
    let mut last_ns = 0u64;
    let mut packets = Packets::open(path)?;
    while let Some(p) = packets.next() {
        last_ns = last_ns.max(p.time_ns);
        let Some(udp) = p.udp else { continue };
        let Some(&sid) = layout.ids.get(&(p.interface, udp.src, udp.dst)) else { continue };
        let fp = fingerprint(&udp.payload);
        if let Some(&pi) = layout.sends_in.get(&sid) {
            let dir = layout.pairs[pi].dir.index();
            let hint = if p.comment.is_empty() { None } else { comment::fate_hint(&p.comment) };
            let s = Sent { sent_ns: p.time_ns, bytes: fp.1, first_ns: u64::MAX, copies: 0, hint };
            pending[pi].entry(fp).or_default().push_back(sent[dir].len() as u32);
            sent[dir].push(s);
            expiry.push_back((p.time_ns, pi, fp));
        } else if let Some(&pi) = layout.receives_in.get(&sid) {
            let dir = layout.pairs[pi].dir.index();
            rx_first[dir].get_or_insert(p.time_ns);
            let candidates: Vec<u32> = pending[pi].get(&fp).map(|l| l.iter().copied().collect()).unwrap_or_default();
            let seen: Vec<SentCopy> = candidates
                .iter()
                .map(|&i| SentCopy { sent_ns: sent[dir][i as usize].sent_ns, copies: sent[dir][i as usize].copies })
                .collect();
            match match_delivered_copy(&seen, p.time_ns) {
                Match::Unmatched => info.unmatched_copies += 1,
                Match::Sent { index, ambiguous } => {
                    let i = candidates[index];
                    if ambiguous {
                        info.ambiguous_copies += 1;
                    }
                    let s = &mut sent[dir][i as usize];
                    let delay = p.time_ns - s.sent_ns;
                    if s.copies == 0 {
                        s.first_ns = delay;
                    } else {
                        extra[dir].push((i, delay));
                    }
                    s.copies += 1;
                }
            }
        }
        while expiry.front().is_some_and(|(t, ..)| t.saturating_add(MATCH_WINDOW_NS) < last_ns) {
            let (_, pi, fp) = expiry.pop_front().expect("checked");
            if let Some(l) = pending[pi].get_mut(&fp) {
                l.pop_front();
                if l.is_empty() {
                    pending[pi].remove(&fp);
                }
            }
        }
    }
    drop(pending);
    info.damaged = packets.info.damaged.take().or(info.damaged);
    // Streams in no pair: one-sided.
    for (i, s) in layout.streams.iter().enumerate() {
        let i = i as u32;
        if !layout.sends_in.contains_key(&i) && !layout.receives_in.contains_key(&i) {
            info.one_sided_flows += 1;
            info.one_sided_packets += s.packets;
        }
    }
    info.paired_flows = layout.pairs.len() as u64;
    info.side_a = layout.side_a.map(|(a, p)| format!("{a}:{p}"));
    info.origin_s = origin_ns as f64 / 1e9;
    let [ab, ba] = [0, 1].map(|d| dir_trace(&sent[d], &extra[d], origin_ns, last_ns, rx_first[d]));
    Ok(LinkRecords { trace: LinkTrace::new(path.display().to_string(), ab, ba), info })
}

fn us(ns: u64) -> u64 {
    (ns + 500) / 1000
}

/// One direction's datagrams as records, with the capture's edges made unknown (module doc).
fn dir_trace(sent: &[Sent], extra: &[(u32, u64)], origin_ns: u64, last_ns: u64, rx_first: Option<u64>) -> DirTrace {
    let longest = sent.iter().filter(|s| s.copies > 0).map(|s| s.first_ns).max().unwrap_or(0);
    let mut extra_by: HashMap<u32, Vec<u32>> = HashMap::new();
    for (i, d) in extra {
        extra_by.entry(*i).or_default().push(us(*d).min(u64::from(u32::MAX)) as u32);
    }
    let mut out = DirTrace::default();
    for (i, s) in sent.iter().enumerate() {
        let fate = if s.copies > 0 {
            let mut copies = vec![us(s.first_ns).min(u64::from(u32::MAX)) as u32];
            copies.extend(extra_by.remove(&(i as u32)).unwrap_or_default());
            TraceFate::Delivered(copies)
        } else {
            match s.hint {
                Some(Hint::Dropped(reason)) => TraceFate::Dropped(reason),
                Some(Hint::InFlight) => TraceFate::Unknown,
                None => {
                    let too_late = s.sent_ns.saturating_add(longest) > last_ns;
                    let too_early = rx_first.is_none_or(|f| s.sent_ns.saturating_add(longest) < f);
                    if too_late || too_early {
                        TraceFate::Unknown
                    } else {
                        TraceFate::Dropped(DropReason::Random)
                    }
                }
            }
        };
        out.push(SimTime(us(s.sent_ns.saturating_sub(origin_ns))), s.bytes, &fate);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(sent_ns: u64, copies: u32) -> SentCopy {
        SentCopy { sent_ns, copies }
    }

    #[test]
    fn a_copy_is_the_earliest_undelivered_twin_else_the_latest_a_duplicate() {
        assert_eq!(match_delivered_copy(&[], 5), Match::Unmatched);
        assert_eq!(match_delivered_copy(&[sent(10, 0)], 5), Match::Unmatched, "sent after the copy");
        assert_eq!(match_delivered_copy(&[sent(10, 0)], 10), Match::Sent { index: 0, ambiguous: false });
        let twins = [sent(10, 1), sent(20, 0), sent(30, 0), sent(99, 0)];
        assert_eq!(match_delivered_copy(&twins, 50), Match::Sent { index: 1, ambiguous: true });
        let delivered = [sent(10, 1), sent(20, 1), sent(99, 0)];
        assert_eq!(
            match_delivered_copy(&delivered, 50),
            Match::Sent { index: 1, ambiguous: true },
            "a duplicate of the latest"
        );
        assert_eq!(match_delivered_copy(&[sent(10, 1)], 50), Match::Sent { index: 0, ambiguous: false });
    }
}
