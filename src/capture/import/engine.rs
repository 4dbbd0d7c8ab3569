//! The import proper: packets in file order in, ackscope events in time order out (the rules are
//! in [`super`]'s doc).
//!
//! Every input the decoder and the link ledger take (a send, a fate, a duplicate) is queued at
//! its capture time and released once the capture has moved [`MATCH_WINDOW_NS`] past it: by
//! then each send's fate is known (a copy arrived, or the window passed without one), and each
//! direction is known to be two-sided or not. So the events come out in time order, fates at
//! their instants, and the decoder sees each ack when it reached its endpoint.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use ackscope_protocol::decode::{Datagram, DecodeChoice, Decoder, Fate};
use ackscope_protocol::{ClientId, Dir, DropReason, Event, EventKind, SimTime};
use anyhow::Result;

use super::flows::{Flows, Role, StreamKey};
use super::read::{Packets, UdpPacket};
use super::report::{DirTruth, ImportSummary, SummaryParts};
use super::ImportOptions;
use crate::capture::comment::{self, FateHint as Hint};

/// Longest a delivered copy may come after its send; also how long the import holds events back
/// (a drop is known only when this has passed without a copy).
pub const MATCH_WINDOW_NS: u64 = 3_000_000_000;

/// Captures starting before this are on virtual time (ackscope's exports: the epoch stands for
/// the start of the run) and keep their times; any other's time 0 is its first packet.
pub const VIRTUAL_TIME_LIMIT_NS: u64 = 86_400_000_000_000;

/// Datagrams of the capture's start read for the ends they share before the import proper: a
/// moment of reading, enough to see every client of a
/// server that has more than one in the first seconds.
const FIRST_LOOK_DATAGRAMS: usize = 100_000;

/// The ends that exchanged datagrams in a capture's first [`FIRST_LOOK_DATAGRAMS`] datagrams
/// (each pair once, in order of appearance): the evidence of the shared-end rule, read before the
/// first flow is given its server.
///
/// It is read once per file and shared by clones: the window opens a capture twice on its own
/// thread before its first frame (to name the lane, then to start the reader), and each first
/// look read 100,000 datagrams in full (payload and comments copied) where only their ends are
/// needed: the first frame of a 1 GB capture came at 0.125 s instead of 0.025 s before the rule
/// (`examples/capture_open.rs`, README "Opening a 1 GB capture").
#[derive(Debug, Clone, Default)]
pub struct FirstLook(Arc<Mutex<Option<LookedAt>>>);

/// Which file (its path, length and modification time) a first look read, and what it found.
type LookedAt = ((PathBuf, u64, Option<SystemTime>), Arc<[(SocketAddr, SocketAddr)]>);

impl FirstLook {
    /// The pairs of ends in `path`'s first datagrams: read now, or as read before for the same
    /// unchanged file.
    pub fn pairs(&self, path: &Path) -> Result<Arc<[(SocketAddr, SocketAddr)]>> {
        let meta = std::fs::metadata(path).ok();
        let key = (path.to_path_buf(), meta.as_ref().map_or(0, |m| m.len()), meta.and_then(|m| m.modified().ok()));
        let mut held = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((k, pairs)) = held.as_ref() {
            if *k == key {
                return Ok(pairs.clone());
            }
        }
        let mut look = Packets::open(path)?;
        let (mut seen, mut pairs) = (HashSet::new(), Vec::new());
        for _ in 0..FIRST_LOOK_DATAGRAMS {
            let Some((x, y)) = look.next_ends() else { break };
            if seen.insert((x.min(y), x.max(y))) {
                pairs.push((x, y));
            }
        }
        let pairs: Arc<[(SocketAddr, SocketAddr)]> = pairs.into();
        *held = Some((key, pairs.clone()));
        Ok(pairs)
    }
}

/// The decoder's estimates go into the recording this often (as a simulation's stats samples).
const STATS_EVERY_US: u64 = 100_000;

/// A send's uid is its flow's number in the high bits and its place among the flow's sends in
/// the low ones: unique in the capture (the decoder keys its sends by uid), and dense within
/// each client. Each client's ledger and packet index are tables over the uids they see, from
/// the first: with one count over every flow, each of 1,000 flows' tables spanned all the
/// capture's sends (23 GB for a 120 s capture of 1,000 flows, `examples/capture_open.rs
/// --flows`). 32 bits of sends per flow, and uids stay below 2^53 (exact in JSON) up to 2^21
/// flows.
const UID_FLOW_SHIFT: u32 = 32;

/// A datagram's identity for matching copies: its bytes' hash and length.
type Fingerprint = (u64, u32);

fn fingerprint(payload: &[u8]) -> Fingerprint {
    let mut h = DefaultHasher::new();
    payload.hash(&mut h);
    (h.finish(), payload.len() as u32)
}

/// A send while its fate is open and until it is released.
struct Send {
    flow: usize,
    dir: Dir,
    stream: StreamKey,
    time_ns: u64,
    fp: Fingerprint,
    payload: Vec<u8>,
    copies: u32,
    /// What an ackscope comment said of it: a drop's reason, or still in flight.
    hint: Option<Hint>,
}

/// A queued input.
enum Input {
    Send(u64),
    /// The send's fate for the decoder, and the link's truth when the direction is two-sided.
    Fate {
        uid: u64,
        client: ClientId,
        fate: Fate,
        link: Option<EventKind>,
    },
    Link {
        client: ClientId,
        kind: EventKind,
    },
}

/// Reads a capture and turns it into events, a batch at a time.
pub struct Importer {
    packets: Packets,
    flows: Flows,
    decoder: Decoder,
    sends: HashMap<u64, Send>,
    /// Open sends by fingerprint, in send order.
    open: HashMap<Fingerprint, VecDeque<u64>>,
    /// Open sends by send time, for closing them when the window passes.
    closing: VecDeque<u64>,
    queue: BTreeMap<(u64, u64), Input>,
    queued: u64,
    /// Per flow: its sends so far (the low bits of the next uid).
    sends_of_flow: Vec<u64>,
    /// Per client: when an input of it was last released (µs). A client's estimates change only
    /// with its inputs, so its samples go in only around them ([`Self::stats_until`]).
    last_input_us: HashMap<ClientId, u64>,
    origin_ns: Option<u64>,
    /// Latest capture time read, and the latest released.
    now_ns: u64,
    released_ns: u64,
    next_stats_us: u64,
    /// Per flow and direction: the link's truth.
    truth: Vec<[DirTruth; 2]>,
    filtered: u64,
    unmatched_copies: u64,
    ambiguous_copies: u64,
    out: Vec<Event>,
    done: bool,
    /// Where each send's payload is kept for the bytes pane (None: nowhere).
    payloads: Option<crate::model::payloads::SharedPayloads>,
}

impl Importer {
    /// Opens `path` (pcapng or pcap) for importing under `opts`.
    pub fn open(path: &Path, opts: &ImportOptions) -> Result<Self> {
        let packets = Packets::open(path)?;
        let mut flows = Flows::new(opts.port, opts.client_filter);
        // A first look at the capture's start: which ends many flows share (the server-end rule,
        // [`super::flows`]) before the first flow must be given its server.
        for &(x, y) in opts.first_look.pairs(path)?.iter() {
            flows.learn(x, y);
        }
        Ok(Self {
            packets,
            flows,
            decoder: Decoder::new(opts.decode.clone()),
            sends: HashMap::new(),
            open: HashMap::new(),
            closing: VecDeque::new(),
            queue: BTreeMap::new(),
            queued: 0,
            sends_of_flow: Vec::new(),
            last_input_us: HashMap::new(),
            origin_ns: None,
            now_ns: 0,
            released_ns: 0,
            next_stats_us: 0,
            truth: Vec::new(),
            filtered: 0,
            unmatched_copies: 0,
            ambiguous_copies: 0,
            out: Vec::new(),
            done: false,
            payloads: None,
        })
    }

    /// Keeps every send's payload in `store`, by client and send id, as it is released.
    pub fn keep_payloads(&mut self, store: crate::model::payloads::SharedPayloads) {
        self.payloads = Some(store);
    }

    /// The clients (flows) found so far, with their ends.
    pub fn flows(&self) -> &[super::flows::Flow] {
        &self.flows.flows
    }

    /// Sends and inputs held now (the matching window's open sends, the release queue): what the
    /// import's memory grows with besides a fixed entry per flow, bounded by the traffic of
    /// [`MATCH_WINDOW_NS`] of capture time however long the file is.
    pub fn held(&self) -> usize {
        self.sends.len() + self.queue.len()
    }

    /// Reads until at least `min_events` events are ready or the file ends; the events, in time
    /// order. An empty batch means the end.
    pub fn next_batch(&mut self, min_events: usize) -> Vec<Event> {
        while (self.out.len() < min_events || self.probing()) && !self.done {
            match self.packets.next_udp() {
                Some(p) => self.packet(p),
                None => self.finish(),
            }
        }
        // The decoder's events for the datagrams it probed come when it decides, after link
        // events of later instants: a stable sort puts them back in place (the batch is held
        // until the probe decided, so no earlier batch has later events).
        self.out.sort_by_key(|e| e.time);
        std::mem::take(&mut self.out)
    }

    /// Reads the whole capture: every event and the summary.
    pub fn run(mut self, file: &Path) -> (Vec<Event>, ImportSummary) {
        let mut events = Vec::new();
        loop {
            let batch = self.next_batch(1 << 16);
            if batch.is_empty() {
                break;
            }
            events.extend(batch);
        }
        let summary = self.summary(file);
        (events, summary)
    }

    /// The format the decoder reads (`none` when none, or while it still probes).
    pub fn decoder_name(&self) -> &'static str {
        self.decoder.format().map_or("none", |f| f.name())
    }

    /// True while `auto` (or `ackscope`) is still probing the first datagrams.
    fn probing(&self) -> bool {
        matches!(self.decoder.choice(), DecodeChoice::Auto | DecodeChoice::Ackscope) && self.decoder.probe().is_none()
    }

    fn time_us(&self, ns: u64) -> SimTime {
        let ns = ns.saturating_sub(self.origin_ns.unwrap_or(0));
        SimTime((ns + 500) / 1000)
    }

    fn push(&mut self, time_ns: u64, input: Input) {
        // A packet stamped before what was already released (a file slightly out of order)
        // goes at the release point: events leave in time order.
        self.queue.insert((time_ns.max(self.released_ns), self.queued), input);
        self.queued += 1;
    }

    fn packet(&mut self, p: UdpPacket) {
        self.origin_ns.get_or_insert(if p.time_ns < VIRTUAL_TIME_LIMIT_NS { 0 } else { p.time_ns });
        self.now_ns = self.now_ns.max(p.time_ns);
        self.close_until(self.now_ns.saturating_sub(MATCH_WINDOW_NS));
        let key: StreamKey = (p.interface, p.src, p.dst);
        let fp = fingerprint(&p.payload);
        match self.flows.role(&key) {
            Some(Role::Sender { flow, dir }) => self.send(flow, dir, key, fp, p),
            Some(Role::Delivered { flow, dir }) => {
                if !self.copy(Some((flow, dir)), key, fp, p.time_ns) {
                    self.unmatched_copies += 1;
                }
            }
            Some(Role::Filtered) => self.filtered += 1,
            None => {
                if !self.copy(None, key, fp, p.time_ns) {
                    match self.flows.set_sender(key, self.packets.written_by_ackscope()) {
                        Some((flow, dir)) => self.send(flow, dir, key, fp, p),
                        None => self.filtered += 1,
                    }
                }
            }
        }
        self.release(self.now_ns.saturating_sub(MATCH_WINDOW_NS));
    }

    fn send(&mut self, flow: usize, dir: Dir, stream: StreamKey, fp: Fingerprint, p: UdpPacket) {
        if self.truth.len() <= flow {
            self.truth.resize_with(flow + 1, Default::default);
        }
        if self.sends_of_flow.len() <= flow {
            self.sends_of_flow.resize(flow + 1, 0);
        }
        let uid = ((flow as u64) << UID_FLOW_SHIFT) | self.sends_of_flow[flow];
        self.sends_of_flow[flow] += 1;
        let hint = if p.comment.is_empty() { None } else { comment::fate_hint(&p.comment) };
        let send = Send { flow, dir, stream, time_ns: p.time_ns, fp, payload: p.payload, copies: 0, hint };
        self.sends.insert(uid, send);
        self.open.entry(fp).or_default().push_back(uid);
        self.closing.push_back(uid);
        self.push(p.time_ns, Input::Send(uid));
    }

    /// A datagram that may be a copy of an open send (of `want`'s flow and direction when the
    /// stream is known to be a delivered side): matched by the rule in [`super`]; false when it
    /// matches none.
    fn copy(&mut self, want: Option<(usize, Dir)>, key: StreamKey, fp: Fingerprint, time_ns: u64) -> bool {
        let Some(list) = self.open.get(&fp) else { return false };
        // Never a send going the other way between the same ends (two sides can send identical
        // bytes: reliable.io's first packets); the same ends seen on another interface first.
        // On the same interface a copy is another hop (a proxy's), with both ends other than
        // the send's: two clients of one server send identical bytes too (their first packets),
        // and share one end with each other.
        let (interface, src, dst) = key;
        let fits = |s: &Send| {
            s.stream != key
                && (s.stream.1, s.stream.2) != (dst, src)
                && (s.stream.0 != interface || (s.stream.1 != src && s.stream.2 != dst))
                && s.time_ns <= time_ns
                && want.is_none_or(|(f, d)| (s.flow, s.dir) == (f, d))
        };
        let same_ends = |u: &u64| self.sends.get(u).is_some_and(|s| (s.stream.1, s.stream.2) == (src, dst));
        let mut candidates: Vec<u64> = list.iter().copied().filter(|u| self.sends.get(u).is_some_and(fits)).collect();
        if candidates.iter().any(same_ends) {
            candidates.retain(same_ends);
        }
        let Some(&uid) = candidates.iter().find(|u| self.sends[*u].copies == 0).or(candidates.last()) else {
            return false;
        };
        if candidates.len() > 1 {
            self.ambiguous_copies += 1;
        }
        let s = self.sends.get_mut(&uid).expect("open sends are kept");
        let (flow, dir, sent_ns) = (s.flow, s.dir, s.time_ns);
        s.copies += 1;
        let first = s.copies == 1;
        if want.is_none() {
            self.flows.set_delivered(key, flow, dir);
        }
        let client = self.flows.flows[flow].client;
        let delay_us = ((time_ns - sent_ns + 500) / 1000).min(u64::from(u32::MAX)) as u32;
        let t = &mut self.truth[flow][dir.index()];
        t.two_sided = true;
        t.copy(first, delay_us);
        let delivered = EventKind::LinkDelivered { dir, uid, delay_us };
        if first {
            let at = self.time_us(time_ns);
            self.push(time_ns, Input::Fate { uid, client, fate: Fate::Delivered { at }, link: Some(delivered) });
        } else {
            self.push(sent_ns, Input::Link { client, kind: EventKind::LinkDuplicated { dir, uid } });
            self.push(time_ns, Input::Link { client, kind: delivered });
        }
        true
    }

    /// Closes the sends made at or before `until_ns`: no copy can match them any more.
    fn close_until(&mut self, until_ns: u64) {
        while let Some(&uid) = self.closing.front() {
            if self.sends.get(&uid).is_some_and(|s| s.time_ns > until_ns) {
                break;
            }
            self.closing.pop_front();
            self.close(uid, false);
        }
    }

    /// Decides the fate of a send with no copy, and stops matching it. At the end of the
    /// capture (`at_end`) a send of a two-sided direction that a copy taking the direction's
    /// longest delay would reach after the last packet is in flight, not dropped.
    fn close(&mut self, uid: u64, at_end: bool) {
        let Some(s) = self.sends.get(&uid) else { return };
        let (flow, dir, fp, time_ns, copies, hint) = (s.flow, s.dir, s.fp, s.time_ns, s.copies, s.hint);
        if let Some(list) = self.open.get_mut(&fp) {
            list.retain(|u| *u != uid);
            if list.is_empty() {
                self.open.remove(&fp);
            }
        }
        if copies > 0 {
            return;
        }
        let client = self.flows.flows[flow].client;
        let at = self.time_us(time_ns);
        let t = &mut self.truth[flow][dir.index()];
        let longest_ns = u64::from(t.delay_max_us) * 1000;
        let in_flight = match hint {
            Some(h) => h == Hint::InFlight,
            None => at_end && time_ns + longest_ns > self.now_ns,
        };
        let input = if !t.two_sided {
            match hint {
                // ackscope's own export says what the link did where no copy was captured (a
                // direction whose every datagram was dropped has no delivered side): a resend of
                // a dropped send is not spurious. The truth still needs both sides.
                Some(Hint::Dropped(_)) => Input::Fate { uid, client, fate: Fate::Dropped, link: None },
                Some(Hint::InFlight) => return,
                // One side only: the capture saw the datagram once; it counts as delivered when seen.
                None => Input::Fate { uid, client, fate: Fate::Delivered { at }, link: None },
            }
        } else if in_flight {
            t.in_flight += 1;
            return;
        } else {
            t.dropped += 1;
            let reason = match hint {
                Some(Hint::Dropped(r)) => r,
                _ => DropReason::Random,
            };
            Input::Fate { uid, client, fate: Fate::Dropped, link: Some(EventKind::LinkDropped { dir, uid, reason }) }
        };
        // A drop stands at the send's instant, as the link decides it.
        self.push(time_ns, input);
    }

    /// Hands every input at or before `until_ns` to the decoder and the ledger, in time order.
    fn release(&mut self, until_ns: u64) {
        while let Some(entry) = self.queue.first_entry() {
            let (time_ns, _) = *entry.key();
            if time_ns > until_ns {
                break;
            }
            let input = entry.remove();
            self.released_ns = time_ns;
            let at = self.time_us(time_ns);
            let client = match &input {
                Input::Send(uid) => self.sends.get(uid).map(|s| self.flows.flows[s.flow].client),
                Input::Fate { client, .. } | Input::Link { client, .. } => Some(*client),
            };
            self.stats_until(at, client);
            match input {
                Input::Send(uid) => {
                    // Released after the window passed, so closed (a packet stamped before what was
                    // released, in a file out of time order, is closed now): nothing refers to
                    // it any more.
                    if self.open.get(&self.sends.get(&uid).map_or((0, 0), |s| s.fp)).is_some_and(|l| l.contains(&uid)) {
                        self.close(uid, false);
                    }
                    let Some(s) = self.sends.remove(&uid) else { continue };
                    let client = self.flows.flows[s.flow].client;
                    self.last_input_us.insert(client, at.0);
                    let t = &mut self.truth[s.flow][s.dir.index()];
                    t.sent += 1;
                    if t.two_sided {
                        let (dir, bytes) = (s.dir, s.payload.len() as u32);
                        self.out.push(Event::for_client(at, client, EventKind::LinkSent { dir, uid, bytes }));
                    }
                    if let Some(p) = &self.payloads {
                        p.keep(client, uid, at, &s.payload);
                    }
                    self.decoder.datagram(Datagram { uid, time: at, dir: s.dir, client, bytes: &s.payload });
                }
                Input::Fate { uid, client, fate, link } => {
                    self.last_input_us.insert(client, at.0);
                    self.decoder.fate(uid, fate);
                    if let Some(kind) = link {
                        self.out.push(Event::for_client(at, client, kind));
                    }
                }
                Input::Link { client, kind } => self.out.push(Event::for_client(at, client, kind)),
            }
            self.out.extend(self.decoder.take_events());
        }
        // The decoder keeps a record of every packet it decoded (the proxy's bytes pane reads
        // them); the import has no use for them, and kept they grew with the file (4 GB for a
        // 1 GB capture, `examples/capture_open.rs`).
        drop(self.decoder.take_records());
    }

    /// The decoder's estimates every [`STATS_EVERY_US`] up to `at`, for the clients whose
    /// estimates may have moved: those with an input in the two periods before the sample (the
    /// second sample repeats the first), and `next`, whose input at `at` comes next, at the last
    /// sample before it: so a plot holds each value flat until it changes, as with a sample
    /// every period. A client without inputs keeps the estimates it had: sampling every client
    /// every period made 20,000 events a second for a capture of 1,000 quiet flows, five times
    /// its traffic.
    fn stats_until(&mut self, at: SimTime, next: Option<ClientId>) {
        // Nothing changed the estimates in a stretch without traffic: one sample at its end.
        if at.0 >= self.next_stats_us + STATS_EVERY_US {
            self.next_stats_us = at.0 - at.0 % STATS_EVERY_US;
        }
        while self.next_stats_us <= at.0 {
            let t = SimTime(self.next_stats_us);
            if self.decoder.clients().next().is_some() {
                let since = t.0.saturating_sub(2 * STATS_EVERY_US);
                let last = t.0 + STATS_EVERY_US > at.0;
                let keep =
                    |c: &ClientId| (last && next == Some(*c)) || self.last_input_us.get(c).is_some_and(|&u| u >= since);
                let events = self.decoder.stats_events(t).into_iter().filter(|e| keep(&e.client));
                self.out.extend(events);
            }
            self.next_stats_us += STATS_EVERY_US;
        }
    }

    /// The end of the file: every open send closed, everything released.
    fn finish(&mut self) {
        let open: Vec<u64> = self.closing.drain(..).collect();
        for uid in open {
            self.close(uid, true);
        }
        self.release(u64::MAX);
        self.decoder.finish_probe();
        self.out.extend(self.decoder.take_events());
        let end = self.time_us(self.now_ns);
        if self.decoder.clients().next().is_some() {
            self.out.extend(self.decoder.stats_events(end));
        }
        self.sends.clear();
        self.done = true;
    }

    /// What the import found, per client and direction.
    pub fn summary(&self, file: &Path) -> ImportSummary {
        ImportSummary::new(self.parts(), file)
    }

    fn parts(&self) -> SummaryParts<'_> {
        SummaryParts {
            format: self.packets.format,
            skipped: &self.packets.skipped,
            flows: &self.flows.flows,
            decoder: &self.decoder,
            truth: &self.truth,
            filtered: self.filtered,
            unmatched_copies: self.unmatched_copies,
            ambiguous_copies: self.ambiguous_copies,
            seconds: self.time_us(self.now_ns).as_secs_f64(),
            origin_s: self.origin_ns.unwrap_or(0) as f64 / 1e9,
        }
    }
}
