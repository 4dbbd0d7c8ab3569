//! The deliveries due across every client's links, earliest first.
//!
//! Each link keeps its own queue ordered by `(deliver_at, send order)`; this heap holds, per link,
//! the instant of its next delivery, so the relay learns the next deadline in O(1) and serves
//! links in time order without a scan over 10,000 clients. A link has at most one live entry
//! (its `scheduled` instant): an entry whose instant no longer matches it, or whose client has
//! gone, is stale and skipped when it comes up.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use ackscope_protocol::{ClientId, Dir, SimTime};

/// One link's next delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Due {
    pub at: SimTime,
    /// The client's slot and id (a slot is reused by later clients: the id tells them apart).
    pub slot: usize,
    pub client: ClientId,
    /// 0: A->B (server to client), 1: B->A (client to server), as `Dir::index`.
    pub dir: usize,
}

impl Due {
    pub fn dir(&self) -> Dir {
        Dir::BOTH[self.dir]
    }
}

/// Every link's next delivery, earliest first (ties in slot and direction order).
#[derive(Debug, Default)]
pub struct Schedule {
    heap: BinaryHeap<Reverse<Due>>,
}

impl Schedule {
    /// Notes that a link's next delivery is `due.at`; `scheduled` is that link's earliest live
    /// entry (`SimTime(u64::MAX)` for none), updated when the new one is earlier.
    pub fn note(&mut self, due: Due, scheduled: &mut SimTime) {
        if due.at < *scheduled {
            *scheduled = due.at;
            self.heap.push(Reverse(due));
        }
    }

    /// The earliest entry (possibly stale).
    pub fn peek(&self) -> Option<&Due> {
        self.heap.peek().map(|r| &r.0)
    }

    pub fn pop(&mut self) -> Option<Due> {
        self.heap.pop().map(|r| r.0)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_has_one_live_entry_and_the_earliest_comes_first() {
        let mut s = Schedule::default();
        let mut sched = [SimTime(u64::MAX); 2];
        let d = |at, dir| Due { at: SimTime(at), slot: 0, client: 1, dir };
        s.note(d(50, 0), &mut sched[0]);
        s.note(d(70, 0), &mut sched[0]); // later than the live entry: nothing new
        s.note(d(30, 1), &mut sched[1]);
        s.note(d(20, 0), &mut sched[0]); // earlier: a new entry, the old one goes stale
        assert_eq!(s.len(), 3);
        assert_eq!(sched, [SimTime(20), SimTime(30)]);
        let order: Vec<u64> = std::iter::from_fn(|| s.pop()).map(|d| d.at.0).collect();
        assert_eq!(order, vec![20, 30, 50]);
    }
}
