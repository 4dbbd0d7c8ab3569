//! Exact replay of a recorded link (`link.trace`): every packet meets the fate and delay that the
//! recorded packet nearest in time met, per direction.
//!
//! A [`LinkTrace`] holds, per direction, what the link did to each datagram of a recording (a
//! capture with both sides, or a session's link events): its send time, size and fate (dropped,
//! with the reason when known; delivered after a delay, once or more; or unknown, when the
//! recording ended, or a restart emptied the link, first). The app reads the file (this crate
//! does no I/O) and hands the trace to the scenario ([`Replay`]); the link of each direction then
//! decides each packet by [`LinkTrace::pick`] instead of drawing:
//!
//! - **Time**: the run's time 0 is the trace's time 0 (the recording's start: a session's and an
//!   ackscope export's own clock, or a foreign capture's first packet).
//! - **Nearest send time**: the packet takes the fate of the recorded packet of its direction
//!   whose send time is nearest its own; at equal distance, the earlier one. Of several recorded
//!   at that very instant, the packet that is the `n`-th sent at its instant takes the `n`-th
//!   (the last when there are fewer), as the link's own draws are keyed by the index at an
//!   instant. A recorded packet of unknown fate is taken only by a packet sent at exactly its
//!   instant and index (it stays in flight, as it did); otherwise the nearest known one is.
//! - **Past the end**: the trace loops. Its length is the last recorded send of either
//!   direction plus 1 µs; a packet sent at `t` past it is decided as one sent at `t mod length`,
//!   both directions in step.
//! - A direction the trace holds no known fate for runs on the link's own settings.
//! - The link's MTU still applies (a size limit is the packet's, not the network's state); every
//!   other setting of the direction is the trace's.
//!
//! So a run replayed over its own session's trace sends every packet at a recorded instant and
//! index and meets exactly the recorded fates: the same events (tested). The replay is a pure
//! function of the trace and the send time: deterministic, and the same for every strategy, as
//! the seeded link is.

use std::fmt;
use std::sync::Arc;

use crate::event::{Dir, DropReason, SimTime};

/// What the link did to one recorded datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceFate {
    /// Dropped (the reason when the recording says it; a capture's drops are `Random`).
    Dropped(DropReason),
    /// Delivered, each copy after its delay in µs, in delivery order (more than one: duplicated).
    Delivered(Vec<u32>),
    /// Never seen delivered nor dropped: the recording ended, or a restart emptied the link, while
    /// it was in flight.
    Unknown,
}

/// One recorded datagram as stored: 24 bytes (a capture of 10 M packets is 240 MB of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    sent_us: u64,
    bytes: u32,
    /// First copy's delay (delivered).
    delay_us: u32,
    kind: Kind,
    /// Further copies (duplicates), kept in [`DirTrace::extra`].
    extra: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Delivered,
    Dropped(DropReason),
    Unknown,
}

/// One recorded datagram, as [`DirTrace::get`] gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracePacket {
    /// Send time from the trace's start.
    pub sent: SimTime,
    /// UDP payload bytes.
    pub bytes: u32,
    pub fate: TraceFate,
}

/// The recorded datagrams of one direction, in send order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirTrace {
    records: Vec<Record>,
    /// The delays of duplicate copies: (record index, delay), in record then delivery order.
    extra: Vec<(u32, u32)>,
    /// Records pushed out of send order (sorted when the trace is made).
    unsorted: bool,
}

impl DirTrace {
    /// Adds a datagram sent at `sent` (from the trace's start). Datagrams sent at one instant keep
    /// the order they were pushed in (their index at that instant).
    pub fn push(&mut self, sent: SimTime, bytes: u32, fate: &TraceFate) {
        let index = self.records.len() as u32;
        if self.records.last().is_some_and(|r| r.sent_us > sent.0) {
            self.unsorted = true;
        }
        let (kind, delay_us, extra) = match fate {
            TraceFate::Dropped(reason) => (Kind::Dropped(*reason), 0, 0),
            TraceFate::Unknown => (Kind::Unknown, 0, 0),
            TraceFate::Delivered(copies) if copies.is_empty() => (Kind::Unknown, 0, 0),
            TraceFate::Delivered(copies) => {
                let more = &copies[1..copies.len().min(u16::MAX as usize + 1)];
                self.extra.extend(more.iter().map(|d| (index, *d)));
                (Kind::Delivered, copies[0], more.len() as u16)
            }
        };
        self.records.push(Record { sent_us: sent.0, bytes, delay_us, kind, extra });
    }

    /// Recorded datagrams.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The `i`-th datagram in send order.
    pub fn get(&self, i: usize) -> TracePacket {
        let r = self.records[i];
        let fate = match r.kind {
            Kind::Dropped(reason) => TraceFate::Dropped(reason),
            Kind::Unknown => TraceFate::Unknown,
            Kind::Delivered => {
                let mut copies = vec![r.delay_us];
                copies.extend(self.extra_copies(i, r).iter().map(|(_, d)| *d));
                TraceFate::Delivered(copies)
            }
        };
        TracePacket { sent: SimTime(r.sent_us), bytes: r.bytes, fate }
    }

    /// Every datagram in send order.
    pub fn iter(&self) -> impl Iterator<Item = TracePacket> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Send time of the last datagram.
    pub fn last_sent(&self) -> Option<SimTime> {
        self.records.last().map(|r| SimTime(r.sent_us))
    }

    /// The (record, delay) entries of record `i`'s further copies.
    fn extra_copies(&self, i: usize, r: Record) -> &[(u32, u32)] {
        if r.extra == 0 {
            return &[];
        }
        let start = self.extra.partition_point(|(k, _)| (*k as usize) < i);
        &self.extra[start..start + r.extra as usize]
    }

    /// Sorts by send time, keeping the order at each instant (and the duplicates with their
    /// datagrams).
    fn sort(&mut self) {
        if !self.unsorted {
            return;
        }
        let mut order: Vec<usize> = (0..self.records.len()).collect();
        order.sort_by_key(|&i| self.records[i].sent_us);
        let old = std::mem::take(self);
        for i in order {
            old.push_into(i, self);
        }
    }

    fn push_into(&self, i: usize, out: &mut DirTrace) {
        let p = self.get(i);
        out.push(p.sent, p.bytes, &p.fate);
    }

    /// The record the `n`-th packet sent at `at` takes (module doc), `None` when none is known.
    fn pick(&self, at: u64, n: u64, exact_allowed: bool) -> Option<usize> {
        let first = self.records.partition_point(|r| r.sent_us < at);
        let same = self.records[first..].partition_point(|r| r.sent_us == at);
        if exact_allowed && (n as usize) < same {
            return Some(first + n as usize);
        }
        let known = |i: usize| self.records[i].kind != Kind::Unknown;
        // The nearest known send time at or after `at`, and before it.
        let after = (first..self.records.len()).find(|&i| known(i));
        let before = (0..first).rev().find(|&i| known(i));
        let chosen = match (before, after) {
            (None, None) => return None,
            (Some(b), None) => b,
            (None, Some(a)) => a,
            (Some(b), Some(a)) => {
                if self.records[a].sent_us - at < at - self.records[b].sent_us {
                    a
                } else {
                    b
                }
            }
        };
        // The n-th known record at the chosen instant (the last when there are fewer).
        let t = self.records[chosen].sent_us;
        let start = self.records.partition_point(|r| r.sent_us < t);
        let end = start + self.records[start..].partition_point(|r| r.sent_us == t);
        (start..end).filter(|&i| known(i)).nth(n as usize).or_else(|| (start..end).rev().find(|&i| known(i)))
    }
}

/// A recorded link, both directions (module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkTrace {
    /// Where it was read from (the `link.trace` value), for messages.
    pub source: String,
    dirs: [DirTrace; 2],
    /// The loop length: the last recorded send of either direction plus 1 µs.
    period_us: u64,
}

impl LinkTrace {
    /// A trace of `a_to_b` and `b_to_a` (each sorted by send time here), read from `source`.
    pub fn new(source: impl Into<String>, mut a_to_b: DirTrace, mut b_to_a: DirTrace) -> Self {
        a_to_b.sort();
        b_to_a.sort();
        let last = [&a_to_b, &b_to_a].iter().filter_map(|d| d.last_sent()).max().unwrap_or(SimTime::ZERO);
        Self { source: source.into(), dirs: [a_to_b, b_to_a], period_us: last.0 + 1 }
    }

    pub fn dir(&self, dir: Dir) -> &DirTrace {
        &self.dirs[dir.index()]
    }

    /// The loop length (module doc).
    pub fn period(&self) -> SimTime {
        SimTime(self.period_us)
    }

    /// The record of `dir` whose fate the `n`-th packet sent at `now` meets, `None` when the
    /// direction has no known fate (module doc).
    pub fn pick(&self, dir: Dir, now: SimTime, n: u64) -> Option<usize> {
        let looped = now.0 >= self.period_us;
        self.dirs[dir.index()].pick(now.0 % self.period_us, n, !looped)
    }

    /// The delays of the copies record `i` of `dir` delivered, or what else became of it.
    pub(crate) fn outcome(&self, dir: Dir, i: usize) -> Outcome<'_> {
        let d = &self.dirs[dir.index()];
        let r = d.records[i];
        match r.kind {
            Kind::Dropped(reason) => Outcome::Dropped(reason),
            Kind::Unknown => Outcome::InFlight,
            Kind::Delivered => Outcome::Delivered(r.delay_us, d.extra_copies(i, r)),
        }
    }
}

/// What the link does with a replayed packet.
pub(crate) enum Outcome<'a> {
    Dropped(DropReason),
    /// Stays in flight: never delivered, never reported dropped.
    InFlight,
    /// Delivered after the first delay (µs), and again after the delay of each further copy
    /// (the second of each pair).
    Delivered(u32, &'a [(u32, u32)]),
}

/// The trace the app loaded for `link.trace`: part of the scenario in memory, never in a file
/// (the file names the trace; the app reads it again when a run starts).
///
/// Scenarios compare by their settings, so two scenarios naming the same trace are equal whether
/// or not it was loaded into either.
#[derive(Clone, Default)]
pub struct Replay(pub Option<Arc<LinkTrace>>);

impl Replay {
    pub fn trace(&self) -> Option<&Arc<LinkTrace>> {
        self.0.as_ref()
    }
}

impl PartialEq for Replay {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl fmt::Debug for Replay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            None => write!(f, "Replay(none)"),
            Some(t) => {
                write!(f, "Replay({}: {} + {} datagrams)", t.source, t.dir(Dir::AtoB).len(), t.dir(Dir::BtoA).len())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(sends: &[(u64, TraceFate)]) -> LinkTrace {
        let mut d = DirTrace::default();
        for (t, f) in sends {
            d.push(SimTime(*t), 100, f);
        }
        LinkTrace::new("test", d, DirTrace::default())
    }

    fn ok(d: u32) -> TraceFate {
        TraceFate::Delivered(vec![d])
    }

    #[test]
    fn the_nearest_send_time_decides_and_ties_go_to_the_earlier() {
        let t = trace(&[(1000, ok(1)), (2000, TraceFate::Dropped(DropReason::Burst)), (3000, ok(3))]);
        let pick = |now: u64| t.pick(Dir::AtoB, SimTime(now), 0);
        assert_eq!(pick(0), Some(0), "before the first: the first");
        assert_eq!(pick(1499), Some(0));
        assert_eq!(pick(1500), Some(0), "a tie goes to the earlier");
        assert_eq!(pick(1501), Some(1));
        assert_eq!(pick(2500), Some(1));
        assert_eq!(pick(2501), Some(2));
        assert_eq!(t.period(), SimTime(3001));
        assert_eq!(pick(3001 + 1000), Some(0), "past the end it loops");
        assert_eq!(pick(3001 + 2600), Some(2));
        assert_eq!(t.pick(Dir::BtoA, SimTime(5), 0), None, "a direction without records");
    }

    #[test]
    fn packets_at_one_instant_take_the_records_at_their_index_and_unknown_fates_only_exactly() {
        let t = trace(&[
            (1000, ok(1)),
            (1000, TraceFate::Dropped(DropReason::Random)),
            (2000, TraceFate::Unknown),
            (2000, ok(7)),
        ]);
        let pick = |now: u64, n: u64| t.pick(Dir::AtoB, SimTime(now), n);
        assert_eq!((pick(1000, 0), pick(1000, 1), pick(1000, 2)), (Some(0), Some(1), Some(1)));
        assert_eq!(pick(2000, 0), Some(2), "the very instant and index: in flight, as recorded");
        assert_eq!(pick(2000, 1), Some(3));
        assert_eq!(pick(1990, 0), Some(3), "elsewhere only known fates count");
        assert_eq!(pick(1400, 1), Some(1));
        assert_eq!(pick(1400, 5), Some(1), "fewer at that instant: the last");
        assert_eq!(pick(2001 + 2000, 0), Some(3), "a looped packet never takes an unknown fate");
    }

    #[test]
    fn out_of_order_pushes_are_sorted_and_duplicates_stay_with_their_datagram() {
        let mut d = DirTrace::default();
        d.push(SimTime(30), 3, &TraceFate::Delivered(vec![5, 9, 11]));
        d.push(SimTime(10), 1, &ok(1));
        d.push(SimTime(20), 2, &TraceFate::Delivered(vec![2, 4]));
        d.push(SimTime(10), 4, &TraceFate::Dropped(DropReason::QueueFull));
        let t = LinkTrace::new("x", d, DirTrace::default());
        let got: Vec<TracePacket> = t.dir(Dir::AtoB).iter().collect();
        let sent: Vec<(u64, u32)> = got.iter().map(|p| (p.sent.0, p.bytes)).collect();
        assert_eq!(sent, [(10, 1), (10, 4), (20, 2), (30, 3)]);
        assert_eq!(got[2].fate, TraceFate::Delivered(vec![2, 4]));
        assert_eq!(got[3].fate, TraceFate::Delivered(vec![5, 9, 11]));
        assert_eq!(got[1].fate, TraceFate::Dropped(DropReason::QueueFull));
        match t.outcome(Dir::AtoB, 3) {
            Outcome::Delivered(first, more) => assert_eq!((first, more), (5, &[(3, 9), (3, 11)][..])),
            _ => panic!("delivered"),
        }
    }
}
