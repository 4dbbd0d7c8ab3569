//! A simulated session as a pcapng capture: every datagram, with the bytes its endpoint really
//! wrote, on a sender-side and a receiver-side interface per lane.
//!
//! Recordings keep events, not bytes, but an in-process session re-runs exactly from its header
//! ([`crate::session::rerun`]). The export re-runs each lane with every endpoint in a wire
//! [`Tap`] (also those a restart builds, through the peer factory), checks that the re-run's
//! events equal the recorded ones (refusing the export when they do not: the bytes would not be
//! the recording's), and pairs what the taps saw with the events: the n-th datagram a side sent
//! is its n-th `PacketSent` (same sequence and size, checked), the n-th a side received is the
//! n-th `LinkDelivered` into it. Then every send goes on the lane's *sent* interface at its send
//! time and every delivered copy on its *delivered* interface at its arrival time, each with a
//! packet comment ([`super::comment`]) giving the uid, the link's fate and what ackscope's
//! anomaly list flags on it.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use ackscope_protocol::strategies::ue4::bunch::MIN_PACKET_BYTES;
use ackscope_protocol::{
    make_peer, ClientId, DropReason, Event, EventKind, Peer, PeerFactory, Scenario, SendKind, Side, SimTime,
    Simulation, Step, Strategy, Tap, TapHook,
};
use anyhow::{anyhow, bail, Context, Result};

use super::address::endpoint;
use super::comment::Comment;
use super::pcapng::{CaptureWriter, PcapngSummary, Udp};
use crate::model::anomaly::{AnomalyKind, Target};
use crate::model::Recording;
use crate::report::export::atomic::AtomicFile;
use crate::session::{run_lane_on, Session};

/// Writes `session` to `path` as pcapng; the file appears only when complete.
pub fn write_pcapng(session: &Session, path: &Path) -> Result<PcapngSummary> {
    let mut file = AtomicFile::create(path)?;
    let mut summary = write_capture(session, &mut file).with_context(|| format!("{}", path.display()))?;
    summary.bytes = file.commit()?;
    Ok(summary)
}

/// Writes `session` as pcapng to `out`; `bytes` is left at 0. A simulated recording is re-run
/// with its endpoints tapped (module doc); one whose datagrams crossed real sockets (a peer, a
/// proxy, a UDP run) is written from its events and the bytes it kept
/// ([`super::export_recorded`]).
pub fn write_capture(session: &Session, out: impl Write) -> Result<PcapngSummary> {
    match session.udp_from() {
        Some(at) if at > SimTime::ZERO && session.is_simulated() => bail!(
            "the recording ran in-process and then over real UDP from {:.3} s: the first part's bytes would come \
             from a re-run and the rest from its sockets, and a capture of both is not written (export a \
             recording made on one transport)",
            at.as_secs_f64()
        ),
        Some(_) => return super::export_recorded::write_recorded(session, out),
        None if !session.is_simulated() => return super::export_recorded::write_recorded(session, out),
        None => {}
    }
    let until = SimTime(session.duration_us);
    let recorded = [&session.events, &session.ab_events];
    let mut records = Vec::new();
    let lanes = session.lanes();
    for (i, (scenario, actions)) in lanes.iter().enumerate() {
        let lane = i + 1;
        let (events, seen) = rerun_tapped(scenario, actions, until).with_context(|| format!("lane {lane}"))?;
        check_same(recorded[i], &events).with_context(|| format!("lane {lane}"))?;
        records.extend(lane_records(lane, scenario, &events, seen).with_context(|| format!("lane {lane}"))?);
    }
    // Lanes interleaved in time; within a lane the taps' order (the simulation's) is kept.
    records.sort_by_key(|r| r.time);
    let comment = format!(
        "ackscope session, seed {}, {} lane{}, {:.3} s of virtual time from 1970-01-01 00:00:00 UTC (the epoch \
         stands for the start of the run)",
        session.scenario.seed,
        lanes.len(),
        if lanes.len() == 1 { "" } else { "s" },
        until.as_secs_f64()
    );
    let mut w = CaptureWriter::new(out, &comment)?;
    for (i, (scenario, _)) in lanes.iter().enumerate() {
        let (lane, name) = (i + 1, scenario.strategy.name());
        w.add_interface(
            &format!("lane{lane}-sent"),
            &format!("ackscope lane {lane} ({name}): every datagram as its endpoint sent it, both directions"),
        )?;
        w.add_interface(
            &format!("lane{lane}-delivered"),
            &format!("ackscope lane {lane} ({name}): every copy the link delivered, when it arrived"),
        )?;
    }
    let mut summary = PcapngSummary { lanes: lanes.len(), ..Default::default() };
    for r in &records {
        w.write_udp(r.interface, r.time.0, &r.udp, &r.comment)?;
        if r.interface % 2 == 0 {
            summary.sent += 1;
        } else {
            summary.delivered += 1;
        }
    }
    w.into_inner().flush().context("writing the capture")?;
    Ok(summary)
}

/// The wire format an endpoint speaks and the settings its fields are bounded by (a restart
/// may change both: each endpoint's is taken from the scenario it was built under).
#[derive(Debug)]
struct Wire {
    strategy: Strategy,
    fields: String,
}

impl Wire {
    fn of(s: &Scenario) -> Self {
        let fields = match s.strategy {
            Strategy::Chunks | Strategy::Fragments => {
                format!("slice_bytes={} max_slices={}", s.chunk.slice_size(), s.chunk.slice_limit())
            }
            Strategy::Ue4 => format!("max_packet={}", (s.ue4.max_packet_bytes as usize).max(MIN_PACKET_BYTES)),
            Strategy::Rellikt => format!("protocol_id={:#010x}", s.rellikt.protocol_id),
            _ => String::new(),
        };
        Self { strategy: s.strategy, fields }
    }
}

/// One datagram a tap saw.
struct Seen {
    client: ClientId,
    side: Side,
    time: SimTime,
    /// The sequence `poll_send` returned; `None` for an arrival.
    sent: Option<u32>,
    bytes: Vec<u8>,
    wire: Arc<Wire>,
}

type SeenLog = Arc<Mutex<Vec<Seen>>>;

/// Appends what one endpoint (of client `client`) sends and receives to the lane's log.
struct ExportHook {
    client: ClientId,
    side: Side,
    wire: Arc<Wire>,
    log: SeenLog,
}

impl ExportHook {
    fn push(&self, time: SimTime, sent: Option<u32>, bytes: &[u8]) {
        let seen =
            Seen { client: self.client, side: self.side, time, sent, bytes: bytes.to_vec(), wire: self.wire.clone() };
        self.log.lock().unwrap_or_else(PoisonError::into_inner).push(seen);
    }
}

impl TapHook for ExportHook {
    fn sent(&mut self, now: SimTime, seq: u32, bytes: &[u8]) {
        self.push(now, Some(seq), bytes);
    }
    fn received(&mut self, now: SimTime, bytes: &[u8]) -> ackscope_protocol::Inject {
        self.push(now, None, bytes);
        ackscope_protocol::Inject::Deliver
    }
}

fn tapped(log: &SeenLog, scenario: &Scenario, client: ClientId, side: Side) -> Box<dyn Peer> {
    let hook = ExportHook { client, side, wire: Arc::new(Wire::of(scenario)), log: log.clone() };
    Box::new(Tap::new(make_peer(scenario, side), hook))
}

/// Re-runs one lane with every endpoint of every client tapped: its events and the datagrams the
/// taps saw.
fn rerun_tapped(scenario: &Scenario, actions: &[Step], until: SimTime) -> Result<(Vec<Event>, Vec<Seen>)> {
    let mut scenario = scenario.clone();
    crate::fit::links::resolve(&mut scenario)?;
    let scenario = &scenario;
    let log: SeenLog = Arc::default();
    let mut sim = Simulation::with_client_peers(scenario.clone(), |k, s, side| tapped(&log, s, k, side));
    // The factory is asked for client by client, side A before B (`set_peer_factory`).
    let mut asked: ClientId = 0;
    sim.set_peer_factory(|| -> PeerFactory {
        let log = log.clone();
        let client = asked / 2 + 1;
        asked += 1;
        Box::new(move |s: &Scenario, side: Side| tapped(&log, s, client, side))
    });
    let (sim, events, _) = run_lane_on(sim, actions, until)?;
    drop(sim);
    let seen = std::mem::take(&mut *log.lock().unwrap_or_else(PoisonError::into_inner));
    Ok((events, seen))
}

/// Refuses a re-run whose events differ from the recording's, naming the first difference.
fn check_same(recorded: &[Event], rerun: &[Event]) -> Result<()> {
    if let Some(i) = (0..recorded.len().min(rerun.len())).find(|&i| recorded[i] != rerun[i]) {
        bail!(
            "the re-run differs from the recording at event {i} ({:.6} s): recorded {:?}, re-run {:?}; the packet \
             bytes would not be the recording's (was it recorded by another version of ackscope, or edited?)",
            recorded[i].time.as_secs_f64(),
            recorded[i].kind,
            rerun[i].kind
        );
    }
    if recorded.len() != rerun.len() {
        bail!(
            "the re-run has {} events where the recording has {}: the packet bytes would not be the recording's",
            rerun.len(),
            recorded.len()
        );
    }
    Ok(())
}

/// A packet to write.
struct Record {
    time: SimTime,
    interface: u32,
    udp: Udp,
    comment: String,
}

/// What the events say about one send.
#[derive(Default)]
struct SendTruth {
    side: Option<Side>,
    client: ClientId,
    seq: u32,
    sent_at: SimTime,
    dropped: Option<DropReason>,
    copies: u32,
    first_delay_us: Option<u32>,
    resends: Vec<String>,
    spurious: Vec<u64>,
    nak_at: Option<SimTime>,
}

impl SendTruth {
    fn fate(&self) -> &'static str {
        super::comment::fate_name(self.dropped, self.first_delay_us, self.copies)
    }
}

fn ms(us: u64) -> String {
    format!("{:.3}", us as f64 / 1000.0)
}

/// What each send met, by client and uid (send ids count from 0 in each connection).
type Truths = HashMap<(ClientId, u64), SendTruth>;

/// Folds the lane's events into what each send met, with the anomaly list's flags.
fn truths(scenario: &Scenario, events: &[Event]) -> Truths {
    let mut by_uid = Truths::new();
    // Resends named by (client, side, instant, sequence) until their packet's `PacketSent`;
    // slices and fragments (which name no sequence) by client and side until the next one.
    let mut pending_msgs: HashMap<(ClientId, Side, SimTime, u32), Vec<String>> = HashMap::new();
    let mut pending_slices: HashMap<(ClientId, Side), Vec<String>> = HashMap::new();
    let mut uid_of: HashMap<(ClientId, Side, SimTime, u32), u64> = HashMap::new();
    for e in events {
        match e.kind {
            EventKind::MessageSent { side, msg, seq, kind } if kind != SendKind::First => {
                let resend = format!("msg:{msg}:{}", kind.name());
                pending_msgs.entry((e.client, side, e.time, seq)).or_default().push(resend);
            }
            EventKind::SliceSent { side, chunk, slice, resend: true } => {
                let what = if scenario.strategy == Strategy::Fragments { "fragment" } else { "slice" };
                pending_slices.entry((e.client, side)).or_default().push(format!("{what}:{chunk}/{slice}"));
            }
            EventKind::PacketSent { side, seq, uid, .. } => {
                let t = by_uid.entry((e.client, uid)).or_default();
                (t.side, t.client, t.seq, t.sent_at) = (Some(side), e.client, seq, e.time);
                t.resends = pending_msgs.remove(&(e.client, side, e.time, seq)).unwrap_or_default();
                t.resends.extend(pending_slices.remove(&(e.client, side)).unwrap_or_default());
                uid_of.insert((e.client, side, e.time, seq), uid);
            }
            EventKind::LinkDropped { uid, reason, .. } => {
                by_uid.entry((e.client, uid)).or_default().dropped = Some(reason);
            }
            EventKind::LinkDelivered { uid, delay_us, .. } => {
                let t = by_uid.entry((e.client, uid)).or_default();
                t.copies += 1;
                t.first_delay_us.get_or_insert(delay_us);
            }
            _ => {}
        }
    }
    let mut rec = Recording::new(scenario.clone());
    rec.ingest(events.to_vec());
    let flagged = rec.clients().iter().flat_map(|c| c.anomalies.list().iter().map(move |a| (c.client, a)));
    for (client, a) in flagged {
        match (a.kind, a.target) {
            (AnomalyKind::Nak { .. }, Target::Packet(uid)) => {
                if let Some(t) = by_uid.get_mut(&(client, uid)) {
                    t.nak_at.get_or_insert(a.time);
                }
            }
            (AnomalyKind::Spurious { msg, seq, .. }, _) => {
                let uid = uid_of.get(&(client, a.side, a.time, seq));
                if let Some(t) = uid.and_then(|u| by_uid.get_mut(&(client, *u))) {
                    t.spurious.push(msg);
                }
            }
            _ => {}
        }
    }
    by_uid
}

/// The lane's packets: the taps' datagrams paired with the events (module doc).
fn lane_records(lane: usize, scenario: &Scenario, events: &[Event], seen: Vec<Seen>) -> Result<Vec<Record>> {
    let truths = truths(scenario, events);
    // Per client and side: each connection's endpoints are tapped apart.
    let mut sends: BTreeMap<(ClientId, Side), VecDeque<u64>> = BTreeMap::new();
    let mut arrivals: BTreeMap<(ClientId, Side), VecDeque<(u64, u32)>> = BTreeMap::new();
    for e in events {
        match e.kind {
            EventKind::PacketSent { side, uid, .. } => sends.entry((e.client, side)).or_default().push_back(uid),
            EventKind::LinkDelivered { dir, uid, delay_us } => {
                arrivals.entry((e.client, dir.receiver())).or_default().push_back((uid, delay_us))
            }
            _ => {}
        }
    }
    let mut copies_seen: HashMap<(ClientId, u64), u32> = HashMap::new();
    let truth_of = |client: ClientId, uid: u64| -> Result<&SendTruth> {
        truths.get(&(client, uid)).ok_or_else(|| anyhow!("client {client}'s send {uid} has no PacketSent"))
    };
    let (sent_if, delivered_if) = ((lane as u32 - 1) * 2, (lane as u32 - 1) * 2 + 1);
    let mut out = Vec::with_capacity(seen.len());
    for s in seen {
        let side = s.side;
        let (uid, interface, comment) = match s.sent {
            Some(seq) => {
                let uid = sends.get_mut(&(s.client, side)).and_then(VecDeque::pop_front).ok_or_else(|| {
                    anyhow!("client {} {side:?} sent more datagrams than its PacketSent events", s.client)
                })?;
                let t = truth_of(s.client, uid)?;
                if t.seq != seq || t.sent_at != s.time {
                    bail!(
                        "client {} {side:?}'s datagram at {:.6} s is seq {seq}, its PacketSent says seq {} at {:.6} s",
                        s.client,
                        s.time.as_secs_f64(),
                        t.seq,
                        t.sent_at.as_secs_f64()
                    );
                }
                let spurious: Vec<String> = t.spurious.iter().map(u64::to_string).collect();
                let comment = Comment::new()
                    .field("uid", uid)
                    .field("side", format!("{side:?}"))
                    .field("client", t.client)
                    .field("seq", seq)
                    .field("fate", t.fate())
                    .field("delay_ms", t.first_delay_us.map(|d| ms(d.into())).unwrap_or_default())
                    .field("resend", t.resends.join(","))
                    .field("spurious", spurious.join(","))
                    .field("nak_at", t.nak_at.map(|n| format!("{:.6}", n.as_secs_f64())).unwrap_or_default())
                    .raw(&s.wire.fields)
                    .finish();
                (uid, sent_if, comment)
            }
            None => {
                let (uid, delay_us) =
                    arrivals.get_mut(&(s.client, side)).and_then(VecDeque::pop_front).ok_or_else(|| {
                        anyhow!("client {} {side:?} received more datagrams than LinkDelivered events", s.client)
                    })?;
                let t = truth_of(s.client, uid)?;
                let copy = copies_seen.entry((s.client, uid)).or_default();
                *copy += 1;
                let copy = if t.copies > 1 { format!("{copy}/{}", t.copies) } else { String::new() };
                let comment = Comment::new()
                    .field("uid", uid)
                    .field("side", format!("{:?}", side.other()))
                    .field("client", t.client)
                    .field("seq", t.seq)
                    .field("delay_ms", ms(delay_us.into()))
                    .field("copy", copy)
                    .raw(&s.wire.fields)
                    .finish();
                (uid, delivered_if, comment)
            }
        };
        let t = truth_of(s.client, uid)?;
        let sender = t.side.unwrap_or(side);
        let src = endpoint(sender, t.client, lane, s.wire.strategy);
        let dst = endpoint(sender.other(), t.client, lane, s.wire.strategy);
        out.push(Record { time: s.time, interface, udp: Udp { src, dst, payload: s.bytes }, comment });
    }
    if let Some(((client, side), _)) = sends.iter().find(|(_, q)| !q.is_empty()) {
        bail!("client {client} {side:?} has PacketSent events its tap never saw sent");
    }
    Ok(out)
}
