//! One strategy's recording: the scenario it started from, its action log, its events and the
//! indexes the panels read, all fed from the same events in one place.

use std::sync::atomic::{AtomicU64, Ordering};

use ackscope_protocol::{Event, PacketLedger, Scenario, Step};

use super::anomaly::AnomalyIndex;
use super::index::{ChunkIndex, MessageIndex, PacketIndex};
use super::store::Store;
use crate::runtime::udp::Transport;
use crate::session::{Phase, Progress, Session};

/// Gives every recording its own identity, so view state kept beside it notices a replacement.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Events ingested between two progress reports while a loaded session is indexed.
const INDEX_STEP: usize = 16 * 1024;

/// A recording and its indexes (no view state: that lives with the views).
pub struct Recording {
    id: u64,
    pub scenario: Scenario,
    /// The user's actions on this lane, each at the virtual instant it was applied.
    pub actions: Vec<Step>,
    /// How it was recorded (in-process recordings re-run exactly).
    pub transport: Transport,
    /// Ground truth per send (what the link did, what the sender reported), the one source the
    /// store's true-loss series and the indexes' packet fates read.
    pub ledger: PacketLedger,
    pub store: Store,
    pub messages: MessageIndex,
    pub chunks: ChunkIndex,
    pub packets: PacketIndex,
    /// Drops, naks, stalls... in time order, for the anomaly list and the strip under the scrubber.
    pub anomalies: AnomalyIndex,
}

impl Recording {
    /// An empty recording of `scenario`.
    pub fn new(scenario: Scenario) -> Self {
        Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            scenario,
            actions: Vec::new(),
            transport: Transport::InProcess,
            ledger: PacketLedger::new(),
            store: Store::new(),
            messages: MessageIndex::new(),
            chunks: ChunkIndex::new(),
            packets: PacketIndex::new(),
            anomalies: AnomalyIndex::new(),
        }
    }

    /// The settings in force at `upto_s` seconds: the scenario it started from with every
    /// change recorded up to then (live edits, scripted link steps, strategy changes) applied in
    /// order, as `--set` applies them; a change this build cannot apply (a restart marker, a
    /// name it does not know) is skipped.
    pub fn scenario_at(&self, upto_s: f64) -> Scenario {
        let changes = &self.store.changes;
        let mut s = self.scenario.clone();
        for (_, change) in &changes[..changes.partition_point(|(t, _)| *t <= upto_s)] {
            let _ = crate::params::overrides::apply(&mut s, change);
        }
        s
    }

    /// A loaded session's recording (its first lane) with every index built; reports progress
    /// (phase [`Phase::Indexing`]) and stops early, returning `None`, when `progress` is cancelled.
    pub fn from_session(s: Session, progress: &Progress) -> Option<Self> {
        progress.start(Phase::Indexing, s.events.len() as u64);
        let transport = s.transport;
        let mut rec = Self::indexed(s.scenario, s.actions, s.events, progress, 0)?;
        rec.transport = transport;
        Some(rec)
    }

    /// Every lane of a loaded session (two for A/B), each with its indexes built; `None` when
    /// `progress` is cancelled.
    pub fn lanes_from_session(mut s: Session, progress: &Progress) -> Option<Vec<Self>> {
        progress.start(Phase::Indexing, (s.events.len() + s.ab_events.len()) as u64);
        let transport = s.transport;
        let b = s.ab.map(|strategy| {
            let scenario = Scenario { strategy, ..s.scenario.clone() };
            (scenario, std::mem::take(&mut s.ab_actions), std::mem::take(&mut s.ab_events))
        });
        let done = s.events.len();
        let mut lanes = vec![Self::indexed(s.scenario, s.actions, s.events, progress, 0)?];
        if let Some((scenario, actions, events)) = b {
            lanes.push(Self::indexed(scenario, actions, events, progress, done)?);
        }
        for lane in &mut lanes {
            lane.transport = transport;
        }
        Some(lanes)
    }

    /// A recording of `events` with every index built, reporting progress from `done`.
    fn indexed(
        scenario: Scenario,
        actions: Vec<Step>,
        events: Vec<Event>,
        progress: &Progress,
        mut done: usize,
    ) -> Option<Self> {
        let mut rec = Recording::new(scenario);
        rec.actions = actions;
        let mut events = events.into_iter();
        loop {
            if progress.is_cancelled() {
                return None;
            }
            let step: Vec<Event> = events.by_ref().take(INDEX_STEP).collect();
            if step.is_empty() {
                return Some(rec);
            }
            done += step.len();
            rec.ingest(step);
            progress.advance_to(done as u64);
        }
    }

    /// An empty recording of a session's header (its first lane), for events that follow
    /// ([`crate::session::load_streaming`]).
    pub fn from_header(s: &Session) -> Self {
        let mut rec = Recording::new(s.scenario.clone());
        rec.actions = s.actions.clone();
        rec.transport = s.transport;
        rec
    }

    /// Unique per recording (a restart or an opened file makes a new one).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Appends events (in time order) to the ledger, every index and the store.
    ///
    /// Each event goes through all of them before the next, the ledger first: an index or a
    /// series sample taken at an event sees the ground truth exactly as of that event.
    pub fn ingest(&mut self, events: Vec<Event>) {
        self.ingest_iter(events);
    }

    /// [`Self::ingest`] of events taken from an iterator (an opening file's block, a slice of
    /// it per frame).
    pub fn ingest_iter(&mut self, events: impl IntoIterator<Item = Event>) {
        for e in events {
            self.ledger.observe_event(&e);
            self.messages.ingest(&e);
            self.chunks.ingest(&e);
            self.packets.ingest(&e, &self.ledger);
            self.anomalies.ingest(&e, &self.ledger, &self.messages);
            self.store.push(e, &self.ledger);
        }
    }

    /// The session header of this recording (scenario, action log, duration), without events.
    pub fn header(&self) -> Session {
        let mut s = Session::scenario_only(self.scenario.clone());
        s.actions = self.actions.clone();
        s.transport = self.transport;
        s.duration_us = self.store.end_time().0;
        s
    }

    /// The recording as a session file.
    pub fn to_session(&self) -> Session {
        Session { events: self.store.events().to_vec(), ..self.header() }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use ackscope_protocol::{Dir, DropReason, EventKind, PacketFate, Side, SimTime, Simulation, Strategy};

    use super::*;
    use crate::model::index::Fate;

    /// What the link and the sender had done with one send by some instant, replayed from the log.
    #[derive(Debug, Default, Clone, Copy)]
    struct Replayed {
        sent_at: Option<SimTime>,
        dropped: Option<DropReason>,
        delivered: Option<(SimTime, u32)>,
        duplicated: bool,
        acked_at: Option<SimTime>,
        nakked_at: Option<SimTime>,
    }

    /// Every send's fate from the events at or before `cursor` alone.
    fn replay(events: &[Event], cursor: SimTime) -> HashMap<u64, Replayed> {
        let mut out: HashMap<u64, Replayed> = HashMap::new();
        let mut latest: HashMap<(Side, u32), u64> = HashMap::new();
        for e in events.iter().take_while(|e| e.time <= cursor) {
            let t = e.time;
            match e.kind {
                EventKind::PacketSent { side, seq, uid, .. } => {
                    out.entry(uid).or_default().sent_at = Some(t);
                    latest.insert((side, seq), uid);
                }
                EventKind::LinkDropped { uid, reason, .. } => out.entry(uid).or_default().dropped = Some(reason),
                EventKind::LinkDuplicated { uid, .. } => out.entry(uid).or_default().duplicated = true,
                EventKind::LinkDelivered { uid, delay_us, .. } => {
                    out.entry(uid).or_default().delivered.get_or_insert((t, delay_us));
                }
                EventKind::PacketAcked { side, seq } => {
                    out.entry(latest[&(side, seq)]).or_default().acked_at.get_or_insert(t);
                }
                EventKind::PacketNakked { side, seq } => {
                    out.entry(latest[&(side, seq)]).or_default().nakked_at.get_or_insert(t);
                }
                _ => {}
            }
        }
        out
    }

    #[test]
    fn packet_log_and_message_timeline_agree_with_the_ledger_on_every_fate() {
        for strategy in [Strategy::Glenn, Strategy::Ue4] {
            let mut s = Scenario { seed: 5, strategy, ..Scenario::default() };
            for d in Dir::BOTH {
                let l = s.link.get_mut(d);
                l.loss_percent = 15.0;
                l.duplicate_percent = 5.0;
                l.jitter_ms = 25.0;
                l.reorder_percent = 10.0;
                l.reorder_delay_ms = 60.0;
            }
            let mut sim = Simulation::new(s.clone());
            sim.run_for_secs(20.0);
            let events: Vec<Event> = sim.drain_events().collect();
            let mut rec = Recording::new(s);
            for batch in events.chunks(1009) {
                rec.ingest(batch.to_vec());
            }
            let (ledger, packets, messages) = (&rec.ledger, &rec.packets, &rec.messages);
            assert_eq!(packets.unmatched, 0, "{strategy:?} (seed 5)");
            let end = rec.store.end_time();
            let (mut rows_checked, mut sends_checked, mut dropped_sends) = (0, 0, 0);
            for cursor in [SimTime(end.0 / 4), SimTime(end.0 / 2 - 1), end] {
                let truth = replay(&events, cursor);
                let want_fate = |uid: u64| {
                    let r = truth.get(&uid).copied().unwrap_or_default();
                    match (r.sent_at, r.dropped, r.delivered) {
                        (None, _, _) => PacketFate::Unknown,
                        (_, Some(reason), _) => PacketFate::Dropped(reason),
                        (_, None, Some((at, delay_us))) => {
                            PacketFate::Delivered { at, delay_us, duplicated: r.duplicated }
                        }
                        _ => PacketFate::InFlight,
                    }
                };
                // The packet log's rows up to the cursor, as shown.
                for i in 0..packets.sent_by(cursor) {
                    let row = packets.row(i, ledger).unwrap();
                    let r = truth[&row.uid];
                    let want = match want_fate(row.uid) {
                        PacketFate::Dropped(reason) => Fate::Dropped(reason),
                        PacketFate::Delivered { at, duplicated, .. } => {
                            Fate::Delivered { delay_us: at.saturating_since(row.time).0, duplicated }
                        }
                        _ => Fate::InFlight,
                    };
                    let at = format!("uid {} at {cursor:?} ({strategy:?}, seed 5)", row.uid);
                    assert_eq!(row.fate_at(cursor), want, "{at}");
                    assert_eq!(row.acked_by(cursor), r.acked_at, "{at}");
                    assert_eq!(row.nakked_by(cursor), r.nakked_at, "{at}");
                    rows_checked += 1;
                }
                // The timeline's sends: each tied to its packet's row, its fate the ledger's.
                for m in messages.messages() {
                    for send in m.sends_by(cursor) {
                        let Some(uid) = send.uid else { continue };
                        let row = packets.row_by_uid(uid, ledger).unwrap();
                        assert_eq!((row.dir, row.seq), (m.side.outgoing(), send.seq), "uid {uid}");
                        let fate = ledger.fate_at(uid, cursor);
                        assert_eq!(fate, want_fate(uid), "uid {uid} at {cursor:?} ({strategy:?}, seed 5)");
                        dropped_sends += matches!(fate, PacketFate::Dropped(_)) as usize;
                        sends_checked += 1;
                    }
                }
            }
            assert!(rows_checked > 1000 && sends_checked > 1000, "{rows_checked} rows, {sends_checked} sends");
            assert!(dropped_sends > 50, "{strategy:?}: {dropped_sends} sends in dropped packets");
            let dups = (0..packets.len()).filter(|&i| packets.row(i, ledger).unwrap().duplicated).count();
            assert!(dups > 20, "{strategy:?}: {dups} duplicated packets");
        }
    }
}
