//! The packet log's index: one row per packet an endpoint sent, in send order, with a short
//! summary of what it carried.
//!
//! The index keeps only what the recording's [`PacketLedger`] does not know: the log's order
//! (with each send's time, its sort key) and each packet's contents. The link's verdict (dropped
//! and why, duplicated, delivered when), the receiver's acceptance and the sender's ack or nak
//! are the ledger's, kept once per send for every view; [`PacketIndex::row`] joins the two into a
//! [`PacketRow`] for the few rows a frame shows. Everything is stored as times, so a row can be
//! shown as it was at the cursor.
//!
//! Rows are pushed in send order, which is time order. A filtered view ([`FilteredRows`]) caches
//! the matching row numbers and only extends them as rows arrive, so a frame never re-filters the
//! whole log; the rows visible at the cursor are then a prefix found by binary search.

use std::collections::HashMap;

use ackscope_protocol::{Dir, DropReason, Event, EventKind, PacketLedger, PacketRecord, SendKind, Side, SimTime};

use super::uid_table::UidTable;

/// What a packet carried, gathered from the endpoint's events of the same instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowContents {
    /// Messages included (first sends and resends).
    pub msgs: u16,
    /// Of which resends.
    pub resends: u16,
    /// A chunk slice (or fragment): (chunk, slice, slices in the chunk).
    pub slice: Option<(u32, u32, u32)>,
    /// The slice was sent before.
    pub slice_resend: bool,
}

impl RowContents {
    /// A one-line summary such as `3 msgs (1 resend)` or `slice 12/256 of chunk 4` (all lower case).
    pub fn summary(&self) -> String {
        let mut s = String::new();
        self.write_summary(&mut s);
        s
    }

    /// Appends the summary to `s` (reusing its buffer: filtering formats every row).
    pub fn write_summary(&self, s: &mut String) {
        use std::fmt::Write;
        let start = s.len();
        if self.msgs > 0 {
            let _ = write!(s, "{} msg{}", self.msgs, if self.msgs == 1 { "" } else { "s" });
            if self.resends > 0 {
                let _ = write!(s, " ({} resend{})", self.resends, if self.resends == 1 { "" } else { "s" });
            }
        }
        if let Some((chunk, slice, n)) = self.slice {
            if s.len() > start {
                s.push_str(", ");
            }
            let _ = write!(s, "slice {slice}/{n} of chunk {chunk}");
            if self.slice_resend {
                s.push_str(" (resend)");
            }
        }
        if s.len() == start {
            s.push_str("acks only");
        }
    }
}

/// One packet send as the log keeps it: when (the log's sort key), which link send, and what it
/// carried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PacketSend {
    pub time: SimTime,
    pub uid: u64,
    pub contents: RowContents,
}

/// One packet send with the ledger's facts about it: what a row of the log shows.
///
/// Built on demand by [`PacketIndex::row`] (never stored: the ledger holds the facts).
#[derive(Debug, Clone, PartialEq)]
pub struct PacketRow {
    pub time: SimTime,
    pub dir: Dir,
    pub seq: u32,
    pub bytes: u32,
    pub uid: u64,
    pub contents: RowContents,
    /// Ground truth: the link dropped it (at `time`, the link decides on send).
    pub dropped: Option<DropReason>,
    /// Ground truth: the link made an extra copy.
    pub duplicated: bool,
    /// First copy delivered to the receiving endpoint.
    pub delivered_at: Option<SimTime>,
    /// The receiving endpoint accepted it (first time).
    pub received_at: Option<SimTime>,
    /// The receiver rejected a delivered copy as malformed.
    pub malformed_at: Option<SimTime>,
    pub acked_at: Option<SimTime>,
    pub nakked_at: Option<SimTime>,
}

/// The link's verdict on a packet as known at some instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Not dropped and not delivered yet.
    InFlight,
    Dropped(DropReason),
    /// Delivered (`duplicated` when the link made an extra copy), `delay_us` after the send.
    Delivered {
        delay_us: u64,
        duplicated: bool,
    },
}

impl PacketRow {
    /// The row of `send`, whose ledger record is `p`.
    fn join(send: &PacketSend, p: &PacketRecord) -> Option<Self> {
        Some(Self {
            time: send.time,
            dir: p.dir?,
            seq: p.seq? as u32,
            bytes: p.bytes,
            uid: send.uid,
            contents: send.contents,
            dropped: p.dropped,
            duplicated: p.duplicates > 0,
            delivered_at: p.delivered_at,
            received_at: p.received_at,
            malformed_at: p.malformed_at,
            acked_at: p.acked_at,
            nakked_at: p.nakked_at,
        })
    }

    pub fn fate_at(&self, t: SimTime) -> Fate {
        if let Some(r) = self.dropped {
            // The link drops on send, so a visible row's drop is always known.
            return Fate::Dropped(r);
        }
        match self.delivered_at {
            Some(d) if d <= t => {
                Fate::Delivered { delay_us: d.saturating_since(self.time).0, duplicated: self.duplicated }
            }
            _ => Fate::InFlight,
        }
    }

    pub fn acked_by(&self, t: SimTime) -> Option<SimTime> {
        self.acked_at.filter(|&a| a <= t)
    }

    pub fn nakked_by(&self, t: SimTime) -> Option<SimTime> {
        self.nakked_at.filter(|&a| a <= t)
    }
}

/// Which directions the log shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DirFilter {
    #[default]
    Both,
    Only(Dir),
}

/// Which link fates the log shows (the link decides drop and duplication on send, so a row's
/// class is known as soon as it exists).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FateFilter {
    #[default]
    All,
    Dropped,
    /// Not dropped (delivered or still in flight at the cursor).
    Delivered,
    Duplicated,
}

/// The log's filter.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PacketFilter {
    pub dir: DirFilter,
    pub fate: FateFilter,
    /// Case-insensitive substring of the contents summary; empty matches all.
    pub text: String,
}

impl PacketFilter {
    pub fn is_all(&self) -> bool {
        self.dir == DirFilter::Both && self.fate == FateFilter::All && self.text.trim().is_empty()
    }

    pub fn matches(&self, row: &PacketRow) -> bool {
        self.link_matches(row.dir, row.dropped.is_some(), row.duplicated)
            && Self::text_matches(&row.contents, &self.text.trim().to_lowercase(), &mut String::new())
    }

    /// [`Self::matches`] for a stored send, with the lower-case needle computed once and a reused
    /// buffer; the ledger is asked only when the direction or the fate is filtered.
    fn matches_send(&self, send: &PacketSend, ledger: &PacketLedger, needle: &str, buf: &mut String) -> bool {
        if self.dir != DirFilter::Both || self.fate != FateFilter::All {
            let Some(p) = ledger.packet(send.uid) else { return false };
            let Some(dir) = p.dir else { return false };
            if !self.link_matches(dir, p.dropped.is_some(), p.duplicates > 0) {
                return false;
            }
        }
        Self::text_matches(&send.contents, needle, buf)
    }

    fn link_matches(&self, dir: Dir, dropped: bool, duplicated: bool) -> bool {
        if let DirFilter::Only(d) = self.dir {
            if dir != d {
                return false;
            }
        }
        match self.fate {
            FateFilter::All => true,
            FateFilter::Dropped => dropped,
            FateFilter::Delivered => !dropped,
            FateFilter::Duplicated => duplicated,
        }
    }

    fn text_matches(contents: &RowContents, needle: &str, buf: &mut String) -> bool {
        if needle.is_empty() {
            return true;
        }
        buf.clear();
        contents.write_summary(buf);
        buf.contains(needle)
    }
}

/// What the endpoint said about the packet it is about to send (events before its `PacketSent`).
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    time: SimTime,
    seq: Option<u32>,
    contents: RowContents,
}

/// Gives every index its own identity, so a cached filter notices when the app swaps indexes.
static NEXT_INSTANCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Every packet send of a run (the facts about each are in the recording's [`PacketLedger`]).
#[derive(Debug, Clone)]
pub struct PacketIndex {
    instance: u64,
    rows: Vec<PacketSend>,
    /// Row of each link uid.
    uid_row: UidTable,
    pending: [Pending; 2],
    /// Slice count of each side's current chunk, for "slice i/n".
    chunk_slices: [HashMap<u32, u32>; 2],
    end: SimTime,
    /// Events that named a packet this index never saw (should stay 0 for a whole run).
    pub unmatched: u64,
}

impl Default for PacketIndex {
    fn default() -> Self {
        Self {
            instance: NEXT_INSTANCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            rows: Vec::new(),
            uid_row: UidTable::default(),
            pending: Default::default(),
            chunk_slices: Default::default(),
            end: SimTime::ZERO,
            unmatched: 0,
        }
    }
}

impl PacketIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// Heap bytes the index holds (see [`crate::model::heap`]).
    pub fn heap_bytes(&self) -> usize {
        use crate::model::heap;
        heap::vec(&self.rows) + self.uid_row.heap_bytes() + self.chunk_slices.iter().map(heap::map).sum::<usize>()
    }

    /// Adds one event (events must come in time order) that `ledger` has just folded, after
    /// every event before it: whether an ack names a packet sent is asked of the ledger as of then.
    pub fn ingest(&mut self, e: &Event, ledger: &PacketLedger) {
        let t = e.time;
        self.end = self.end.max(t);
        match e.kind {
            EventKind::MessageSent { side, seq, kind, .. } => {
                let p = self.pending_for(side, t);
                if p.seq.is_some_and(|s| s != seq) {
                    p.contents.msgs = 0;
                    p.contents.resends = 0;
                }
                p.seq = Some(seq);
                p.contents.msgs = p.contents.msgs.saturating_add(1);
                if kind != SendKind::First {
                    p.contents.resends = p.contents.resends.saturating_add(1);
                }
            }
            EventKind::ChunkStarted { side, chunk, slices, .. } => {
                self.chunk_slices[side.index()].insert(chunk, slices);
            }
            EventKind::SliceSent { side, chunk, slice, resend } => {
                let n = self.chunk_slices[side.index()].get(&chunk).copied().unwrap_or(0);
                let p = self.pending_for(side, t);
                p.contents.slice = Some((chunk, slice, n));
                p.contents.slice_resend = resend;
            }
            EventKind::PacketSent { side, seq, uid, .. } => {
                let p = std::mem::take(&mut self.pending[side.index()]);
                let mut contents = if p.time == t { p.contents } else { RowContents::default() };
                if p.seq.is_some_and(|s| s != seq) {
                    contents.msgs = 0;
                    contents.resends = 0;
                }
                if ledger.packet(uid).is_none() {
                    // An id the ledger refused (a corrupt log): no row without its facts.
                    self.unmatched += 1;
                    return;
                }
                let row = self.rows.len() as u32;
                self.rows.push(PacketSend { time: t, uid, contents });
                self.uid_row.set(uid, row);
            }
            EventKind::LinkDropped { uid, .. }
            | EventKind::LinkDuplicated { uid, .. }
            | EventKind::LinkDelivered { uid, .. } => {
                self.unmatched += self.uid_row_index(uid).is_none() as u64;
            }
            EventKind::PacketReceived { side, seq, .. } => {
                self.unmatched += ledger.uid_of(side.other(), seq as u16).is_none() as u64;
            }
            EventKind::PacketAcked { side, seq } | EventKind::PacketNakked { side, seq } => {
                self.unmatched += ledger.uid_of(side, seq as u16).is_none() as u64;
            }
            _ => {}
        }
    }

    fn pending_for(&mut self, side: Side, t: SimTime) -> &mut Pending {
        let p = &mut self.pending[side.index()];
        if p.time != t {
            *p = Pending { time: t, ..Pending::default() };
        }
        p
    }

    fn uid_row_index(&self, uid: u64) -> Option<u32> {
        self.uid_row.get(uid)
    }

    /// Every send, in send (time) order.
    pub fn rows(&self) -> &[PacketSend] {
        &self.rows
    }

    /// Row `i` as the log shows it: the send joined with `ledger`'s record of it (the ledger the
    /// index was fed beside). `None` past the end.
    pub fn row(&self, i: usize, ledger: &PacketLedger) -> Option<PacketRow> {
        let send = self.rows.get(i)?;
        PacketRow::join(send, &ledger.packet(send.uid)?)
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The row of link send `uid`.
    pub fn row_by_uid(&self, uid: u64, ledger: &PacketLedger) -> Option<PacketRow> {
        self.row(self.uid_row_index(uid)? as usize, ledger)
    }

    /// Rows sent at or before `t` (a prefix of [`Self::rows`]).
    pub fn sent_by(&self, t: SimTime) -> usize {
        self.rows.partition_point(|r| r.time <= t)
    }

    /// Time of the latest event ingested.
    pub fn end_time(&self) -> SimTime {
        self.end
    }
}

/// The row numbers matching a filter, cached and extended as rows arrive.
///
/// A row's filter class is settled once every event of its send instant is in: rows sent before
/// the index's latest instant are added for good; rows of the latest instant are checked again
/// each time (there are only a few).
#[derive(Debug, Clone, Default)]
pub struct FilteredRows {
    filter: PacketFilter,
    /// The index the rows were taken from.
    instance: u64,
    /// Settled matching rows, ascending.
    rows: Vec<u32>,
    /// Rows below this were checked for good.
    checked: usize,
    /// Matching rows of the latest instant (not settled yet).
    tail: Vec<u32>,
    /// How many full rebuilds happened (tests check the cache is kept).
    pub rebuilds: u64,
}

impl FilteredRows {
    /// Brings the cache up to date with `index` (and the `ledger` fed beside it) and `filter`;
    /// cheap when neither changed.
    pub fn update(&mut self, index: &PacketIndex, ledger: &PacketLedger, filter: &PacketFilter) {
        if *filter != self.filter || self.instance != index.instance || self.checked > index.len() {
            self.filter = filter.clone();
            self.instance = index.instance;
            self.rows.clear();
            self.checked = 0;
            self.rebuilds += 1;
        }
        let all = index.rows();
        let settled = all.partition_point(|r| r.time < index.end_time());
        let needle = self.filter.text.trim().to_lowercase();
        let mut buf = String::new();
        if self.checked < settled {
            let passes = self.filter.is_all();
            for (i, r) in all.iter().enumerate().take(settled).skip(self.checked) {
                if passes || self.filter.matches_send(r, ledger, &needle, &mut buf) {
                    self.rows.push(i as u32);
                }
            }
            self.checked = settled;
        }
        self.tail.clear();
        for (i, r) in all.iter().enumerate().skip(self.checked) {
            if self.filter.matches_send(r, ledger, &needle, &mut buf) {
                self.tail.push(i as u32);
            }
        }
    }

    /// Matching rows sent at or before `t`.
    pub fn count_at(&self, index: &PacketIndex, t: SimTime) -> usize {
        let rows = index.rows();
        let settled = self.rows.partition_point(|&i| rows[i as usize].time <= t);
        if settled < self.rows.len() {
            return settled;
        }
        settled + self.tail.iter().filter(|&&i| rows[i as usize].time <= t).count()
    }

    /// The `k`-th matching row (in time order).
    pub fn get(&self, k: usize) -> Option<u32> {
        if k < self.rows.len() {
            Some(self.rows[k])
        } else {
            self.tail.get(k - self.rows.len()).copied()
        }
    }

    /// Matching rows in total (whatever the cursor).
    pub fn len(&self) -> usize {
        self.rows.len() + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends folded out of uid order (a UDP run's two endpoint threads) are each found by their
    /// uid, the one below the first row's too.
    #[test]
    fn a_send_folded_after_a_later_uid_is_found_by_its_uid() {
        let (mut ledger, mut index) = (PacketLedger::default(), PacketIndex::new());
        for (t, side, seq, uid) in [(1_000, Side::B, 0, 7), (1_000, Side::A, 0, 5), (2_000, Side::A, 1, 8)] {
            let e = Event::new(SimTime(t), EventKind::PacketSent { side, seq, bytes: 100, uid });
            ledger.observe_event(&e);
            index.ingest(&e, &ledger);
        }
        for uid in [5, 7, 8] {
            assert_eq!(index.row_by_uid(uid, &ledger).map(|r| r.uid), Some(uid), "uid {uid}");
        }
        assert_eq!(index.row_by_uid(6, &ledger), None, "no send had uid 6");
    }
}
