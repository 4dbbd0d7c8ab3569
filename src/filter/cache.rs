//! A filter's matching rows in one recording, kept between frames and extended as the
//! recording grows.
//!
//! A row's facts can change after it was first checked (a live packet is delivered, then
//! acked; a message is resent, then delivered), so appending new rows is not enough: each
//! update reads the events the recording took in since the last one, finds the rows they are
//! about (a link delivery names its send, an ack its sender's sequence, a message event its
//! message) and checks only those again. Anomalies never change once listed. A frame thus
//! costs the new events and rows, not the recording; a new filter or recording starts over,
//! spread over frames by a time budget ([`super::budget`]) so typing a filter never stalls the
//! window.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ackscope_protocol::{Event, EventKind};

use super::budget::Budget;
use super::compile::Compiled;
use super::fields::Row;
use super::matchset::MatchSet;
use super::rows::{events_of, packet_facts, AckTrack, PacketFacts};
use crate::model::anomaly::Anomaly;
use crate::model::index::MessageRecord;
use crate::model::{Connection, Shown};

static NEXT_FILTER: AtomicU64 = AtomicU64::new(1);

/// A compiled filter with an identity, shared by the caches of every lane that use it.
pub struct SharedFilter<R> {
    id: u64,
    pub compiled: Arc<Compiled<R>>,
}

impl<R> Clone for SharedFilter<R> {
    fn clone(&self) -> Self {
        Self { id: self.id, compiled: Arc::clone(&self.compiled) }
    }
}

impl<R> std::fmt::Debug for SharedFilter<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedFilter({}, {:?})", self.id, self.compiled.text)
    }
}

impl<R: Row> SharedFilter<R> {
    pub fn new(compiled: Compiled<R>) -> Self {
        Self { id: NEXT_FILTER.fetch_add(1, Ordering::Relaxed), compiled: Arc::new(compiled) }
    }

    /// Compiles `text`.
    pub fn compile(text: &str) -> Result<Self, super::FilterError> {
        Compiled::new(text).map(Self::new)
    }

    /// Unique per compilation (a cache built for another one starts over).
    pub fn id(&self) -> u64 {
        self.id
    }
}

/// A row kind as read from one client's connection.
pub trait Source: Row {
    /// Rows the recording holds.
    fn len(conn: &Connection) -> usize;
    /// `f` of row `i` (`None` for a row that cannot be read).
    fn read<T>(conn: &Connection, i: usize, acks: Option<&AckTrack>, f: impl FnOnce(&Self) -> T) -> Option<T>;
    /// Whether row `i` passes `test` (false for a row that cannot be read).
    fn eval(conn: &Connection, i: usize, acks: Option<&AckTrack>, test: &dyn Fn(&Self) -> bool) -> bool {
        Self::read(conn, i, acks, test).unwrap_or(false)
    }
    /// Appends the rows `events` are about (they may repeat; rows past the end are ignored).
    fn touched(conn: &Connection, events: &[Event], out: &mut Vec<u32>);
    /// The time of row `i` in seconds (the IO graph's bins), when it exists.
    fn time_of(conn: &Connection, i: usize) -> Option<f64>;
}

/// Row of link send `uid` in the packet log (rows are in send order: a binary search on its
/// send time, then the few rows of that instant).
pub fn packet_row_of_uid(conn: &Connection, uid: u64) -> Option<u32> {
    let sent = conn.ledger.packet(uid)?.sent_at?;
    let rows = conn.packets.rows();
    let from = rows.partition_point(|r| r.time < sent);
    rows[from..].iter().take_while(|r| r.time == sent).position(|r| r.uid == uid).map(|k| (from + k) as u32)
}

impl Source for PacketFacts {
    fn len(conn: &Connection) -> usize {
        conn.packets.len()
    }
    fn read<T>(conn: &Connection, i: usize, acks: Option<&AckTrack>, f: impl FnOnce(&Self) -> T) -> Option<T> {
        packet_facts(conn, i, acks).map(|p| f(&p))
    }
    fn touched(conn: &Connection, events: &[Event], out: &mut Vec<u32>) {
        for e in events {
            let uid = match e.kind {
                EventKind::LinkDropped { uid, .. }
                | EventKind::LinkDuplicated { uid, .. }
                | EventKind::LinkDelivered { uid, .. } => Some(uid),
                EventKind::PacketReceived { side, seq, .. } => conn.ledger.uid_of(side.other(), seq as u16),
                EventKind::PacketAcked { side, seq } | EventKind::PacketNakked { side, seq } => {
                    conn.ledger.uid_of(side, seq as u16)
                }
                // A malformed copy is charged to the delivery of its instant, touched above.
                _ => None,
            };
            if let Some(row) = uid.and_then(|u| packet_row_of_uid(conn, u)) {
                out.push(row);
            }
        }
    }
    fn time_of(conn: &Connection, i: usize) -> Option<f64> {
        conn.packets.rows().get(i).map(|r| r.time.as_secs_f64())
    }
}

impl Source for MessageRecord {
    fn len(conn: &Connection) -> usize {
        conn.messages.len()
    }
    fn read<T>(conn: &Connection, i: usize, _: Option<&AckTrack>, f: impl FnOnce(&Self) -> T) -> Option<T> {
        conn.messages.messages().get(i).map(f)
    }
    fn touched(conn: &Connection, events: &[Event], out: &mut Vec<u32>) {
        for e in events {
            let key = match e.kind {
                EventKind::MessageQueued { side, msg, .. }
                | EventKind::MessageSent { side, msg, .. }
                | EventKind::MessageAcked { side, msg, .. }
                | EventKind::MessageRefused { side, msg, .. } => (side, msg),
                EventKind::MessageDelivered { side, msg } => (side.other(), msg),
                _ => continue,
            };
            if let Some(i) = conn.messages.index_of(key) {
                out.push(i as u32);
            }
        }
    }
    fn time_of(conn: &Connection, i: usize) -> Option<f64> {
        conn.messages.messages().get(i).map(|m| m.queued_at.as_secs_f64())
    }
}

impl Source for Anomaly {
    fn len(conn: &Connection) -> usize {
        conn.anomalies.len()
    }
    fn read<T>(conn: &Connection, i: usize, _: Option<&AckTrack>, f: impl FnOnce(&Self) -> T) -> Option<T> {
        conn.anomalies.get(i).map(f)
    }
    fn touched(_: &Connection, _: &[Event], _: &mut Vec<u32>) {
        // Anomalies are immutable once listed.
    }
    fn time_of(conn: &Connection, i: usize) -> Option<f64> {
        conn.anomalies.get(i).map(|a| a.time.as_secs_f64())
    }
}

/// A view's own extra test of a row (its checkboxes), with an identity that changes with it.
pub type Extra<'a, R> = (u64, &'a dyn Fn(&R) -> bool);

/// What an update did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Updated {
    /// Every row of the recording has been checked.
    pub complete: bool,
    /// Rows checked by this update (new and re-checked).
    pub checked: usize,
}

/// One filter's matches in one client's connection of a lane, extended as it grows.
pub struct Matches<R> {
    /// (filter, lane and client, extra test) the set was built for.
    key: Option<(u64, u64, u64)>,
    set: MatchSet,
    events_seen: usize,
    acks: Option<AckTrack>,
    scratch: Vec<u32>,
    /// Rows below the previous end that were checked again by the last update (the IO graph
    /// recomputes their bins).
    pub rechecked: Vec<u32>,
    /// Full rebuilds so far (tests check the cache is kept).
    pub rebuilds: u64,
    _row: std::marker::PhantomData<fn(&R)>,
}

impl<R> Default for Matches<R> {
    fn default() -> Self {
        Self {
            key: None,
            set: MatchSet::new(),
            events_seen: 0,
            acks: None,
            scratch: Vec::new(),
            rechecked: Vec::new(),
            rebuilds: 0,
            _row: std::marker::PhantomData,
        }
    }
}

impl<R> std::fmt::Debug for Matches<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Matches({} of {} rows, key {:?})", self.set.count(), self.set.rows(), self.key)
    }
}

impl<R: Source> Matches<R> {
    /// Brings the set up to date with `view`'s connection under `filter` and an optional `extra` test (the
    /// view's own checkboxes, identified by `extra.0` so a change starts over), checking the new
    /// rows `budget` allows (rows whose facts changed are always checked).
    pub fn update(
        &mut self,
        view: Shown,
        filter: &SharedFilter<R>,
        extra: Option<Extra<R>>,
        budget: Budget,
    ) -> Updated {
        let conn = view.conn;
        let key = (filter.id, view.id(), extra.as_ref().map_or(0, |e| e.0));
        if self.key != Some(key) {
            self.key = Some(key);
            self.set.clear();
            self.events_seen = 0;
            self.acks = filter.compiled.uses("ack").then(|| AckTrack::new(view.rec.info.first().strategy));
            self.rebuilds += 1;
        }
        let events = events_of(conn);
        if self.events_seen > events.len() {
            // The log shrank: not the recording this set was built from.
            self.key = None;
            return self.update(view, filter, extra, budget);
        }
        if let Some(a) = &mut self.acks {
            a.feed(events);
        }
        let pred = &filter.compiled.pred;
        let client = conn.client;
        let test = |r: &R| pred(r, client) && extra.as_ref().is_none_or(|(_, e)| e(r));
        let acks = self.acks.as_ref();
        self.rechecked.clear();
        let mut checked = 0;
        if self.set.rows() > 0 {
            self.scratch.clear();
            R::touched(conn, &events[self.events_seen..], &mut self.scratch);
            self.scratch.sort_unstable();
            self.scratch.dedup();
            for &i in &self.scratch {
                if (i as usize) < self.set.rows() {
                    self.set.set(i as usize, R::eval(conn, i as usize, acks, &test));
                    self.rechecked.push(i);
                    checked += 1;
                }
            }
        }
        self.events_seen = events.len();
        let len = R::len(conn);
        let from = self.set.rows();
        let set = &mut self.set;
        let to = budget.run(from, len, |i| set.push(R::eval(conn, i, acks, &test)));
        checked += to - from;
        Updated { complete: self.set.rows() >= len, checked }
    }

    /// The matching rows as a bit set.
    pub fn set(&self) -> &MatchSet {
        &self.set
    }

    /// Rows checked so far (all of them once an update was complete).
    pub fn rows_checked(&self) -> usize {
        self.set.rows()
    }

    /// Matching rows in total.
    pub fn count(&self) -> usize {
        self.set.count()
    }

    /// Matching rows among rows `0..n` (n: rows sent by the cursor, say).
    pub fn count_below(&self, n: usize) -> usize {
        self.set.count_below(n)
    }

    /// The `k`-th matching row.
    pub fn get(&self, k: usize) -> Option<u32> {
        self.set.select(k).map(|i| i as u32)
    }

    pub fn contains(&self, i: usize) -> bool {
        self.set.get(i)
    }

    /// The header-ack follower, when the filter names `ack`.
    pub fn acks(&self) -> Option<&AckTrack> {
        self.acks.as_ref()
    }

    /// Forgets everything (the next update starts over).
    pub fn reset(&mut self) {
        self.key = None;
    }
}

/// Every row of `view`'s connection that `filter` matches, ascending (what `export --filter`
/// writes and `summary --filter` counts: the same cache, run to completion).
pub fn matching_rows<R: Source>(view: Shown, filter: &SharedFilter<R>) -> Vec<u32> {
    let mut m = Matches::<R>::default();
    m.update(view, filter, None, Budget::UNLIMITED);
    m.set.iter().map(|i| i as u32).collect()
}
