//! The chunk slice map's index: every chunk a sender started, and for each of its slices the
//! times it was sent, acked at the sender and received, so its state at any cursor is a lookup.
//!
//! Fed by the chunk system (`ChunkStarted`, `SliceSent`, `SliceAcked`, `SliceReceived`,
//! `ChunkCompleted`, `ChunkDelivered`, `SliceIgnored`) and by the fragmentation baseline, which
//! has no per-slice acks: there `FragmentReassembled` marks every slice of the attempt's block
//! received and `ChunkCompleted` marks them all acked.

use std::collections::HashMap;

use ackscope_protocol::{Event, EventKind, Side, SimTime};

use crate::model::heap;

/// What one slice's sender and receiver knew at some instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SliceState {
    /// Never sent yet.
    NotSent,
    /// Sent at least once; neither stored by the receiver nor acked.
    InFlight,
    /// Stored by the receiver; the sender does not know yet.
    Received,
    /// The sender learned it arrived (final).
    Acked,
}

impl SliceState {
    pub const ALL: [SliceState; 4] =
        [SliceState::NotSent, SliceState::InFlight, SliceState::Received, SliceState::Acked];

    pub fn label(self) -> &'static str {
        match self {
            SliceState::NotSent => "not sent",
            SliceState::InFlight => "in flight",
            SliceState::Received => "received",
            SliceState::Acked => "acked at sender",
        }
    }
}

/// One slice's history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SliceRecord {
    /// Every send, in time order.
    pub sends: Vec<SimTime>,
    pub acked_at: Option<SimTime>,
    pub received_at: Option<SimTime>,
}

impl SliceRecord {
    /// Sends made at or before `t`.
    pub fn sends_at(&self, t: SimTime) -> usize {
        self.sends.partition_point(|&s| s <= t)
    }

    pub fn state_at(&self, t: SimTime) -> SliceState {
        if self.acked_at.is_some_and(|a| a <= t) {
            SliceState::Acked
        } else if self.received_at.is_some_and(|r| r <= t) {
            SliceState::Received
        } else if self.sends.first().is_some_and(|&s| s <= t) {
            SliceState::InFlight
        } else {
            SliceState::NotSent
        }
    }
}

/// One chunk (or fragmented block) a sender put on the network.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkRecord {
    pub side: Side,
    /// Wire id (wraps: the chunk system's ids are 16 bits).
    pub chunk: u32,
    pub bytes: u32,
    pub started_at: SimTime,
    pub slices: Vec<SliceRecord>,
    /// The sender learned every slice arrived.
    pub completed_at: Option<SimTime>,
    /// The receiving application read it (`Some(false)` in `delivered_ok` when corrupt).
    pub delivered_at: Option<SimTime>,
    pub delivered_ok: Option<bool>,
    /// Slices of this chunk the receiver ignored (time of each).
    pub ignored: Vec<SimTime>,
    /// Fragmentation baseline: each attempt's packet sequence and the time its last fragment left.
    pub attempts: Vec<(u32, SimTime)>,
}

/// Counts of slices per state at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SliceCounts {
    pub not_sent: usize,
    pub in_flight: usize,
    pub received: usize,
    pub acked: usize,
    /// Sends (first sends and resends) made by then.
    pub sends: usize,
}

impl ChunkRecord {
    pub fn num_slices(&self) -> usize {
        self.slices.len()
    }

    /// Bytes carried by slice `i` (all but the last are the same size; estimated from the chunk).
    pub fn slice_bytes(&self, i: usize) -> f64 {
        let n = self.slices.len().max(1);
        let size = (self.bytes as usize).div_ceil(n);
        if i + 1 == n {
            (self.bytes as usize).saturating_sub(size * (n - 1)) as f64
        } else {
            size as f64
        }
    }

    pub fn counts_at(&self, t: SimTime) -> SliceCounts {
        let mut c = SliceCounts::default();
        for s in &self.slices {
            match s.state_at(t) {
                SliceState::NotSent => c.not_sent += 1,
                SliceState::InFlight => c.in_flight += 1,
                SliceState::Received => c.received += 1,
                SliceState::Acked => c.acked += 1,
            }
            c.sends += s.sends_at(t);
        }
        c
    }

    pub fn completed_by(&self, t: SimTime) -> Option<SimTime> {
        self.completed_at.filter(|&c| c <= t)
    }

    /// Share of slices acked at the sender by `t`, 0..=1.
    pub fn progress_at(&self, t: SimTime) -> f64 {
        if self.completed_by(t).is_some() {
            return 1.0;
        }
        let n = self.slices.len();
        if n == 0 {
            return 0.0;
        }
        self.slices.iter().filter(|s| s.acked_at.is_some_and(|a| a <= t)).count() as f64 / n as f64
    }

    /// Acked goodput over the second before `t` in kbit/s (slice bytes newly acked).
    pub fn acked_kbps_at(&self, t: SimTime) -> f64 {
        let from = SimTime(t.0.saturating_sub(1_000_000));
        let bytes: f64 = (self.slices.iter().enumerate())
            .filter(|(_, s)| s.acked_at.is_some_and(|a| a > from && a <= t))
            .map(|(i, _)| self.slice_bytes(i))
            .sum();
        bytes * 8.0 / 1000.0 / window_secs(from, t)
    }

    /// Slice payload sent (first sends and resends) over the second before `t` in kbit/s.
    pub fn sent_kbps_at(&self, t: SimTime) -> f64 {
        let from = SimTime(t.0.saturating_sub(1_000_000));
        let bytes: f64 = (self.slices.iter().enumerate())
            .map(|(i, s)| {
                let k = s.sends.partition_point(|&x| x <= t) - s.sends.partition_point(|&x| x <= from);
                k as f64 * self.slice_bytes(i)
            })
            .sum();
        bytes * 8.0 / 1000.0 / window_secs(from, t)
    }

    /// When the chunk would complete if acks kept coming at their average pace since the start
    /// (linear extrapolation of progress); `None` before any slice was acked or once complete.
    pub fn expected_completion_at(&self, t: SimTime) -> Option<SimTime> {
        if self.completed_by(t).is_some() || t < self.started_at {
            return None;
        }
        let p = self.progress_at(t);
        if p <= 0.0 {
            return None;
        }
        let elapsed = t.saturating_since(self.started_at).0 as f64;
        Some(self.started_at.plus_micros((elapsed / p).round() as u64))
    }
}

/// Length of the rate window ending at `t` (shorter at the very start of a run), in seconds.
fn window_secs(from: SimTime, t: SimTime) -> f64 {
    (t.saturating_since(from).as_secs_f64()).max(1e-3)
}

/// Every chunk of a run, in start order.
#[derive(Debug, Clone, Default)]
pub struct ChunkIndex {
    chunks: Vec<ChunkRecord>,
    /// The latest chunk each sender started under each wire id.
    latest: HashMap<(Side, u32), usize>,
    /// Fragmentation baseline: the block each sender's attempt sequence belongs to.
    attempt_seq: HashMap<(Side, u32), usize>,
    /// Slice events naming a chunk that was never started (should stay 0).
    pub unmatched: u64,
    /// Bytes of the chunks' nested buffers (slices, their sends, ignored copies, attempts).
    nested_bytes: usize,
}

impl ChunkIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// Heap bytes the index holds (see [`heap`]).
    pub fn heap_bytes(&self) -> usize {
        heap::vec(&self.chunks) + self.nested_bytes + heap::map(&self.latest) + heap::map(&self.attempt_seq)
    }

    pub fn ingest_all<'a>(&mut self, events: impl IntoIterator<Item = &'a Event>) {
        for e in events {
            self.ingest(e);
        }
    }

    /// Adds one event (events must come in time order).
    pub fn ingest(&mut self, e: &Event) {
        let t = e.time;
        match e.kind {
            EventKind::ChunkStarted { side, chunk, bytes, slices } => {
                self.latest.insert((side, chunk), self.chunks.len());
                self.nested_bytes += slices as usize * std::mem::size_of::<SliceRecord>();
                self.chunks.push(ChunkRecord {
                    side,
                    chunk,
                    bytes,
                    started_at: t,
                    slices: vec![SliceRecord::default(); slices as usize],
                    completed_at: None,
                    delivered_at: None,
                    delivered_ok: None,
                    ignored: Vec::new(),
                    attempts: Vec::new(),
                });
            }
            EventKind::SliceSent { side, chunk, slice, .. } => {
                let mut grown = 0;
                if let Some(s) = self.slice_mut(side, chunk, slice) {
                    heap::push_counted(&mut s.sends, t, &mut grown);
                }
                self.nested_bytes += grown;
            }
            EventKind::SliceAcked { side, chunk, slice } => {
                if let Some(s) = self.slice_mut(side, chunk, slice) {
                    s.acked_at.get_or_insert(t);
                }
            }
            // The receiver reports; the chunk belongs to the other side.
            EventKind::SliceReceived { side, chunk, slice } => {
                if let Some(s) = self.slice_mut(side.other(), chunk, slice) {
                    s.received_at.get_or_insert(t);
                }
            }
            EventKind::SliceIgnored { side, chunk, .. } => {
                let mut grown = 0;
                if let Some(c) = self.chunk_mut(side.other(), chunk) {
                    heap::push_counted(&mut c.ignored, t, &mut grown);
                }
                self.nested_bytes += grown;
            }
            EventKind::ChunkCompleted { side, chunk, .. } => {
                if let Some(c) = self.chunk_mut(side, chunk) {
                    c.completed_at.get_or_insert(t);
                    // The fragmentation baseline acks the whole block at once.
                    for s in &mut c.slices {
                        s.acked_at.get_or_insert(t);
                    }
                }
            }
            EventKind::ChunkDelivered { side, chunk, payload_id, .. } => {
                if let Some(c) = self.chunk_mut(side.other(), chunk) {
                    c.delivered_at.get_or_insert(t);
                    c.delivered_ok.get_or_insert(payload_id.is_some());
                }
            }
            EventKind::FragmentBlockSent { side, chunk, seq, .. } => {
                if let Some(&i) = self.latest.get(&(side, chunk)) {
                    heap::push_counted(&mut self.chunks[i].attempts, (seq, t), &mut self.nested_bytes);
                    self.attempt_seq.insert((side, seq), i);
                } else {
                    self.unmatched += 1;
                }
            }
            EventKind::FragmentReassembled { side, seq } => {
                if let Some(&i) = self.attempt_seq.get(&(side.other(), seq)) {
                    for s in &mut self.chunks[i].slices {
                        s.received_at.get_or_insert(t);
                    }
                }
            }
            _ => {}
        }
    }

    fn chunk_mut(&mut self, side: Side, chunk: u32) -> Option<&mut ChunkRecord> {
        match self.latest.get(&(side, chunk)) {
            Some(&i) => Some(&mut self.chunks[i]),
            None => {
                self.unmatched += 1;
                None
            }
        }
    }

    fn slice_mut(&mut self, side: Side, chunk: u32, slice: u32) -> Option<&mut SliceRecord> {
        let c = self.chunk_mut(side, chunk)?;
        c.slices.get_mut(slice as usize)
    }

    /// Every chunk, in start order.
    pub fn chunks(&self) -> &[ChunkRecord] {
        &self.chunks
    }

    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&ChunkRecord> {
        self.chunks.get(i)
    }

    /// Chunks started at or before `t` (a prefix of [`Self::chunks`]).
    pub fn started_by(&self, t: SimTime) -> usize {
        self.chunks.partition_point(|c| c.started_at <= t)
    }

    /// The newest chunk started at or before `t`.
    pub fn latest_at(&self, t: SimTime) -> Option<usize> {
        self.started_by(t).checked_sub(1)
    }
}
