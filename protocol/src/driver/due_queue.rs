//! When each client's connection is next due, ordered: the simulation of many clients takes the
//! earliest, steps it and puts it back with its next due time, so an instant costs a queue
//! operation (logarithmic in the clients) rather than a look at every client.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::event::SimTime;

/// A priority queue of (due time, connection index), earliest first and, at one time, the lower
/// index first (client order at an instant). It holds one entry per connection; anything that
/// may move several due times at once marks it for a rebuild ([`Self::invalidate`]).
#[derive(Debug, Default)]
pub(super) struct DueQueue {
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    stale: bool,
    built: bool,
}

impl DueQueue {
    /// The due times may have moved: rebuild before the next use.
    pub fn invalidate(&mut self) {
        self.stale = true;
    }

    /// Rebuilds the queue from every connection's due time when it is stale (or new).
    pub fn refresh(&mut self, due: impl Iterator<Item = SimTime>) {
        if self.built && !self.stale {
            return;
        }
        let entries: Vec<Reverse<(u64, u32)>> = due.enumerate().map(|(i, t)| Reverse((t.0, i as u32))).collect();
        self.heap = BinaryHeap::from(entries);
        self.stale = false;
        self.built = true;
    }

    /// The earliest due time and its connection.
    #[inline]
    pub fn first(&self) -> Option<(SimTime, usize)> {
        self.heap.peek().map(|Reverse((t, i))| (SimTime(*t), *i as usize))
    }

    /// Gives the earliest entry's connection its next due time `t` (one sift down).
    #[inline]
    pub fn replace_first(&mut self, t: SimTime) {
        if let Some(mut top) = self.heap.peek_mut() {
            top.0 .0 = t.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earliest_comes_first_and_ties_go_in_index_order() {
        let mut q = DueQueue::default();
        q.refresh([30, 10, 10, 20].into_iter().map(SimTime));
        let mut order = Vec::new();
        for _ in 0..6 {
            let (t, i) = q.first().unwrap();
            order.push((t.0, i));
            // Each connection comes back 25 later.
            q.replace_first(SimTime(t.0 + 25));
        }
        assert_eq!(order, [(10, 1), (10, 2), (20, 3), (30, 0), (35, 1), (35, 2)]);
        q.refresh([5, 6].into_iter().map(SimTime));
        assert_eq!(q.first(), Some((SimTime(45), 3)), "not stale: kept");
        q.invalidate();
        q.refresh([5, 6].into_iter().map(SimTime));
        assert_eq!(q.first(), Some((SimTime(5), 0)));
    }
}
