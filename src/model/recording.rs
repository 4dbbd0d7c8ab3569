//! One strategy's recording: the scenario it started from, its live changes, its events and the
//! indexes the panels read, all fed from the same events in one place.

use std::sync::atomic::{AtomicU64, Ordering};

use ackscope_protocol::{Event, PacketLedger, Scenario};

use super::index::{ChunkIndex, MessageIndex, PacketIndex};
use super::store::Store;
use crate::session::{Change, Phase, Progress, Session};

/// Gives every recording its own identity, so view state kept beside it notices a replacement.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Events ingested between two progress reports while a loaded session is indexed.
const INDEX_STEP: usize = 16 * 1024;

/// A recording and its indexes (no view state: that lives with the views).
pub struct Recording {
    id: u64,
    pub scenario: Scenario,
    pub changes: Vec<Change>,
    /// Ground truth per send (what the link did, what the sender reported), the one source the
    /// store's true-loss series and the indexes' packet fates read.
    pub ledger: PacketLedger,
    pub store: Store,
    pub messages: MessageIndex,
    pub chunks: ChunkIndex,
    pub packets: PacketIndex,
}

impl Recording {
    /// An empty recording of `scenario`.
    pub fn new(scenario: Scenario) -> Self {
        Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            scenario,
            changes: Vec::new(),
            ledger: PacketLedger::new(),
            store: Store::new(),
            messages: MessageIndex::new(),
            chunks: ChunkIndex::new(),
            packets: PacketIndex::new(),
        }
    }

    /// A loaded session's recording with every index built; reports progress (phase
    /// [`Phase::Indexing`]) and stops early, returning `None`, when `progress` is cancelled.
    pub fn from_session(s: Session, progress: &Progress) -> Option<Self> {
        let mut rec = Recording::new(s.scenario);
        rec.changes = s.changes;
        progress.start(Phase::Indexing, s.events.len() as u64);
        let mut events = s.events.into_iter();
        let mut done = 0;
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

    /// Unique per recording (a restart or an opened file makes a new one).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Appends events (in time order) to the ledger, every index and the store.
    ///
    /// Each event goes through all of them before the next, the ledger first: an index or a
    /// series sample taken at an event sees the ground truth exactly as of that event.
    pub fn ingest(&mut self, events: Vec<Event>) {
        for e in events {
            self.ledger.observe_event(&e);
            self.messages.ingest(&e);
            self.chunks.ingest(&e);
            self.packets.ingest(&e, &self.ledger);
            self.store.push(e, &self.ledger);
        }
    }

    /// The session header of this recording (scenario, changes, duration), without events.
    pub fn header(&self) -> Session {
        let mut s = Session::scenario_only(self.scenario.clone());
        s.changes = self.changes.clone();
        s.duration_us = self.store.end_time().0;
        s
    }

    /// The recording as a session file.
    pub fn to_session(&self) -> Session {
        Session { events: self.store.events().to_vec(), ..self.header() }
    }
}
