//! Packet bytes for a recording that keeps only events: re-encoded by re-running the lane.
//!
//! A simulated lane re-runs to identical events from its scenario and its action log
//! ([`crate::session::rerun`]), so its endpoints write the very bytes they wrote the first time. The
//! [`Reencoder`] re-runs a lane with every endpoint in a wire [`Tap`] (those a restart or a
//! strategy change builds too, through the peer factory, as the pcapng export does) and keeps each
//! send's bytes by `(client, uid)`: the n-th datagram a side's tap saw is that side's n-th
//! `PacketSent` (same instant and sequence, checked). Every re-run send is also checked against
//! the recorded packet of that uid (instant, sequence, size); from the first difference on,
//! nothing is re-encoded, so the pane never shows bytes that are not the recording's.
//!
//! The re-run is kept and extended: the first request runs the lane to its current end (a live
//! lane later runs on from there), and every later request is a lookup. Only in-process
//! simulated lanes re-run; a lane that ran over real UDP (from its start or from a transport
//! switch), a stream, a capture or a proxy recording is refused with the reason.
//!
//! A re-run of a long lane takes a while (267 ms for 600 s of glenn, `examples/reencode_bench.rs`),
//! so the window does not run it on its own thread: [`ReencodeWorker`] owns a [`Reencoder`] on a
//! thread of its own and answers requests that carry a [`LaneSnapshot`], what a re-run needs of
//! the lane taken at no cost (the event log is shared, not copied).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use ackscope_protocol::{
    make_peer, Action, ClientId, Event, EventKind, Peer, PeerFactory, Scenario, Side, SimTime, Simulation, Step, Tap,
    TapHook, Transport,
};
use crossbeam_channel::{unbounded, Receiver, Sender};

use crate::model::Recording;
use crate::runtime::action::apply_and_record;

/// Datagrams the taps saw sent, per (client, side), in send order: (instant, sequence, bytes).
type Sent = Arc<Mutex<HashMap<(ClientId, Side), VecDeque<(SimTime, u32, Vec<u8>)>>>>;

/// Keeps what one endpoint sends.
struct KeepSent {
    client: ClientId,
    side: Side,
    sent: Sent,
}

impl TapHook for KeepSent {
    fn sent(&mut self, now: SimTime, seq: u32, bytes: &[u8]) {
        let mut sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        sent.entry((self.client, self.side)).or_default().push_back((now, seq, bytes.to_vec()));
    }
}

fn tapped(sent: &Sent, scenario: &Scenario, client: ClientId, side: Side) -> Box<dyn Peer> {
    Box::new(Tap::new(make_peer(scenario, side), KeepSent { client, side, sent: sent.clone() }))
}

/// A lane being re-run.
struct Run {
    sim: Simulation,
    sent: Sent,
    /// Actions of the lane applied so far (in time order).
    applied: usize,
    /// The action log the re-run writes (unused beyond applying them as the live path does).
    log: Vec<Step>,
}

/// Why a lane's packets cannot be re-encoded, or `None` when they can (up to the instant given).
pub fn refusal(rec: &Recording) -> Option<String> {
    if !rec.info.origin.is_simulated() || rec.scenario.is_none() {
        return Some(format!(
            "a {} lane keeps no packet bytes and has no scenario to re-run",
            rec.info.origin.describe()
        ));
    }
    if rec.transport == Transport::Udp {
        return Some(
            "this lane ran over real UDP sockets: its bytes were not kept and a re-run would not be it".into(),
        );
    }
    None
}

/// The instant a lane switched to real UDP, when it did: its later packets were never simulated.
fn udp_from(rec: &Recording) -> Option<SimTime> {
    rec.actions.iter().filter(|s| s.action == Action::Transport(Transport::Udp)).map(|s| s.at).min()
}

/// What a re-run needs of a lane: its identity, why it cannot re-run (if so), its scenario and
/// actions, how far it goes and its event log (shared with the recording, not copied).
#[derive(Clone)]
pub struct LaneSnapshot {
    id: u64,
    refusal: Option<String>,
    scenario: Option<Scenario>,
    /// In time order.
    actions: Vec<Step>,
    udp_from: Option<SimTime>,
    end: SimTime,
    events: Arc<Vec<Event>>,
}

impl LaneSnapshot {
    /// `rec` as it stands now.
    pub fn of(rec: &Recording) -> Self {
        let mut actions = rec.actions.clone();
        actions.sort_by_key(|a| a.at);
        Self {
            id: rec.id(),
            refusal: refusal(rec),
            scenario: rec.scenario.clone(),
            actions,
            udp_from: udp_from(rec),
            end: rec.end_time(),
            events: rec.shared_events(),
        }
    }

    /// Why the lane cannot be re-encoded, when it cannot.
    pub fn refusal(&self) -> Option<&str> {
        self.refusal.as_deref()
    }
}

impl std::fmt::Debug for LaneSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaneSnapshot").field("id", &self.id).field("end", &self.end).finish()
    }
}

/// A recorded send: instant, sequence, size.
type RecordedSend = (SimTime, u32, u32);

/// The re-encoded bytes of one lane's packets, kept and extended as the lane grows.
#[derive(Default)]
pub struct Reencoder {
    /// The recording whose run this is ([`Recording::id`]).
    rec_id: Option<u64>,
    run: Option<Run>,
    bytes: HashMap<(ClientId, u64), Vec<u8>>,
    /// Every recorded send of the lane's log read so far, by (client, uid).
    recorded: HashMap<(ClientId, u64), RecordedSend>,
    /// Events of the lane's log read into `recorded`.
    indexed: usize,
    /// The re-run has reached this instant.
    covered: SimTime,
    /// Set at the first re-run send that differs from the recording.
    diverged: Option<String>,
}

impl std::fmt::Debug for Reencoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reencoder")
            .field("rec_id", &self.rec_id)
            .field("packets", &self.bytes.len())
            .field("covered", &self.covered)
            .field("diverged", &self.diverged)
            .finish()
    }
}

impl Reencoder {
    /// The bytes client `client` of `rec` sent as link send `uid`, re-encoded by the re-run; an
    /// error in words when the lane cannot be re-run or the re-run is not the recording.
    pub fn bytes_of(&mut self, rec: &Recording, client: ClientId, uid: u64) -> Result<&[u8], String> {
        // A lookup needs no snapshot.
        if self.rec_id == Some(rec.id()) && self.bytes.contains_key(&(client, uid)) {
            return Ok(&self.bytes[&(client, uid)]);
        }
        self.bytes_of_lane(&LaneSnapshot::of(rec), client, uid)
    }

    /// [`Self::bytes_of`] for a lane taken as a [`LaneSnapshot`] (on another thread than the
    /// recording's).
    pub fn bytes_of_lane(&mut self, lane: &LaneSnapshot, client: ClientId, uid: u64) -> Result<&[u8], String> {
        if self.rec_id != Some(lane.id) {
            *self = Self { rec_id: Some(lane.id), ..Self::default() };
        }
        if let Some(why) = &lane.refusal {
            return Err(why.clone());
        }
        for e in lane.events.get(self.indexed..).unwrap_or_default() {
            if let EventKind::PacketSent { seq, bytes, uid, .. } = e.kind {
                self.recorded.insert((e.client, uid), (e.time, seq, bytes));
            }
        }
        self.indexed = self.indexed.max(lane.events.len());
        let &(time, _, _) = self
            .recorded
            .get(&(client, uid))
            .ok_or_else(|| format!("no packet with link send {uid} of client {client}"))?;
        if let Some(at) = lane.udp_from.filter(|at| *at <= time) {
            return Err(format!(
                "sent over real UDP (the lane switched at {:.3} s): its bytes were not kept",
                at.as_secs_f64()
            ));
        }
        if !self.bytes.contains_key(&(client, uid)) && self.diverged.is_none() && time >= self.covered {
            self.run_to(lane, lane.end.max(time))?;
        }
        if let Some(b) = self.bytes.get(&(client, uid)) {
            return Ok(b);
        }
        Err(match &self.diverged {
            Some(why) => why.clone(),
            None => format!("the re-run sent no link send {uid} of client {client}"),
        })
    }

    /// Runs the lane on to `until`, keeping every send's bytes.
    fn run_to(&mut self, lane: &LaneSnapshot, until: SimTime) -> Result<(), String> {
        if self.run.is_none() {
            let mut scenario = lane.scenario.clone().expect("refusal checked the scenario");
            crate::fit::links::resolve(&mut scenario).map_err(|e| format!("cannot re-run the lane: {e:#}"))?;
            let sent: Sent = Arc::default();
            let mut sim = Simulation::with_client_peers(scenario.clone(), |k, s, side| tapped(&sent, s, k, side));
            // The factory is asked for client by client, side A before B (`set_peer_factory`).
            let mut asked: ClientId = 0;
            let factory_sent = sent.clone();
            sim.set_peer_factory(move || -> PeerFactory {
                let sent = factory_sent.clone();
                let client = asked / 2 + 1;
                asked += 1;
                Box::new(move |s: &Scenario, side: Side| tapped(&sent, s, client, side))
            });
            self.run = Some(Run { sim, sent, applied: 0, log: Vec::new() });
        }
        let run = self.run.as_mut().expect("made above");
        let mut events = Vec::new();
        for step in lane.actions.iter().skip(run.applied).take_while(|a| a.at <= until) {
            run.sim.run_until(step.at);
            apply_and_record(&mut run.sim, &mut run.log, step.action.clone())
                .map_err(|e| format!("re-run: action at {:.6} s ({}): {e:#}", step.at.as_secs_f64(), step.action))?;
            run.applied += 1;
            events.extend(run.sim.drain_events());
        }
        run.sim.run_until(until);
        events.extend(run.sim.drain_events());
        self.covered = until;
        let mut sent = run.sent.lock().unwrap_or_else(PoisonError::into_inner);
        for e in &events {
            let EventKind::PacketSent { side, seq, bytes, uid } = e.kind else { continue };
            let Some((at, tap_seq, data)) = sent.get_mut(&(e.client, side)).and_then(VecDeque::pop_front) else {
                self.diverged =
                    Some(format!("re-run: client {} {side:?} sent more packets than its tap saw", e.client));
                return Ok(());
            };
            if (at, tap_seq, data.len() as u32) != (e.time, seq, bytes) {
                self.diverged = Some(format!(
                    "re-run: client {} {side:?}'s datagram at {:.6} s (seq {tap_seq}) is not its PacketSent",
                    e.client,
                    at.as_secs_f64()
                ));
                return Ok(());
            }
            if let Some(&(r_time, r_seq, r_bytes)) = self.recorded.get(&(e.client, uid)) {
                if (r_time, r_seq, r_bytes) != (e.time, seq, bytes) {
                    self.diverged = Some(format!(
                        "the re-run differs from the recording at link send {uid} ({:.6} s: recorded seq {r_seq} of \
                         {r_bytes} bytes, re-run seq {seq} of {bytes}): not re-encoded (recorded by another version \
                         of ackscope, or edited?)",
                        e.time.as_secs_f64(),
                    ));
                    return Ok(());
                }
            }
            self.bytes.insert((e.client, uid), data);
        }
        Ok(())
    }

    /// Packets re-encoded so far.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// A re-encoded packet's bytes, or why there are none.
#[derive(Debug)]
pub struct Reply {
    pub lane_id: u64,
    pub client: ClientId,
    pub uid: u64,
    pub result: Result<Vec<u8>, String>,
}

/// A [`Reencoder`] on its own thread, so a long re-run never holds the window's frame.
///
/// Requests are answered in order; the thread keeps the re-run between them (a later packet of
/// the same lane is a lookup). Dropping the worker closes its queue and joins the thread.
pub struct ReencodeWorker {
    requests: Option<Sender<(LaneSnapshot, ClientId, u64)>>,
    replies: Receiver<Reply>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ReencodeWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReencodeWorker").finish_non_exhaustive()
    }
}

impl ReencodeWorker {
    /// Starts the thread; `None` when the system refuses one.
    pub fn spawn() -> Option<Self> {
        let (req_tx, req_rx) = unbounded::<(LaneSnapshot, ClientId, u64)>();
        let (rep_tx, rep_rx) = unbounded();
        let thread = std::thread::Builder::new()
            .name("ackscope-reencode".into())
            .spawn(move || {
                let mut r = Reencoder::default();
                for (lane, client, uid) in req_rx {
                    let result = r.bytes_of_lane(&lane, client, uid).map(<[u8]>::to_vec);
                    // The log is the recording's: not held past the request.
                    let lane_id = lane.id;
                    drop(lane);
                    if rep_tx.send(Reply { lane_id, client, uid, result }).is_err() {
                        return;
                    }
                }
            })
            .ok()?;
        Some(Self { requests: Some(req_tx), replies: rep_rx, thread: Some(thread) })
    }

    /// Asks for the bytes of `client`'s send `uid` of `lane`; false once the thread has gone.
    pub fn request(&self, lane: LaneSnapshot, client: ClientId, uid: u64) -> bool {
        self.requests.as_ref().is_some_and(|r| r.send((lane, client, uid)).is_ok())
    }

    /// The next reply ready, without waiting.
    pub fn try_reply(&self) -> Option<Reply> {
        self.replies.try_recv().ok()
    }
}

impl Drop for ReencodeWorker {
    fn drop(&mut self) {
        self.requests = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
