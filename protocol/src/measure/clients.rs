//! Folds keyed by client: one fold of a single connection's events per client, each event given
//! to its client's (see [`crate::event::ClientId`]).
//!
//! Every fold here was written for one connection: message ids, sequences and send ids count
//! per connection, so two clients' events in one fold would collide. [`PerClient`] keeps one per
//! client, grown as clients appear; an event of the whole run ([`RUN_WIDE`]: a parameter change,
//! a restart marker) goes to every client's fold that exists (a client seen later starts fresh
//! anyway). A run of one client has one fold, fed exactly what it was fed before clients.

use crate::event::{ClientId, Event, RUN_WIDE};
use crate::scenario::MAX_CLIENTS;

/// A fold of one client's events, made for its client.
pub trait ClientFold {
    /// A new fold of client `client`'s events.
    fn for_client(client: ClientId) -> Self;
}

/// One fold per client, client k's at `k - 1`.
#[derive(Debug, Clone)]
pub struct PerClient<T> {
    folds: Vec<T>,
}

impl<T: ClientFold> Default for PerClient<T> {
    /// Client 1's fold exists from the start: the common case takes no growth.
    fn default() -> Self {
        Self { folds: vec![T::for_client(1)] }
    }
}

impl<T: ClientFold> PerClient<T> {
    /// Hands `e` to its client's fold (`fold` called once), or to every fold for an event of
    /// the whole run. Events of a client beyond [`MAX_CLIENTS`] (a corrupt log) are left out.
    #[inline]
    pub fn observe(&mut self, e: &Event, mut fold: impl FnMut(&mut T, &Event)) {
        match self.folds.get_mut((e.client as usize).wrapping_sub(1)) {
            Some(f) => fold(f, e),
            None => self.observe_rare(e, fold),
        }
    }

    /// [`Self::observe`] of an event of the whole run or of a client not seen yet.
    #[cold]
    fn observe_rare(&mut self, e: &Event, mut fold: impl FnMut(&mut T, &Event)) {
        if e.client == RUN_WIDE {
            for f in &mut self.folds {
                fold(f, e);
            }
        } else if e.client <= MAX_CLIENTS {
            let have = self.folds.len() as ClientId;
            self.folds.extend((have + 1..=e.client).map(T::for_client));
            fold(&mut self.folds[e.client as usize - 1], e);
        }
    }
}

impl<T> PerClient<T> {
    /// Client 1's fold `first`, the others' made as clients appear.
    pub fn with_first(first: T) -> Self {
        Self { folds: vec![first] }
    }

    /// Client `k`'s fold, if any event of it was seen (client 1's always exists).
    pub fn get(&self, k: ClientId) -> Option<&T> {
        self.folds.get((k as usize).checked_sub(1)?)
    }

    /// Clients seen so far (at least 1): the highest client number.
    pub fn count(&self) -> u32 {
        self.folds.len() as u32
    }

    /// Every client's fold, client 1's first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.folds.iter()
    }

    /// Client 1's fold.
    pub fn first_mut(&mut self) -> &mut T {
        &mut self.folds[0]
    }

    /// Forgets every client's fold but client 1's.
    pub fn keep_first(&mut self) {
        self.folds.truncate(1);
    }

    /// Every client's fold, mutably.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.folds.iter_mut()
    }
}

/// The mean of the values given (0 for none): a figure of the whole run from each client's.
/// With one value it is that value exactly.
pub fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0u64);
    for v in values {
        sum += v;
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventKind, SimTime};

    impl ClientFold for Vec<u32> {
        fn for_client(_: ClientId) -> Self {
            Vec::new()
        }
    }

    #[test]
    fn events_go_to_their_clients_fold_and_run_wide_ones_to_every_fold() {
        let mut p: PerClient<Vec<u32>> = PerClient::default();
        let ev = |client| {
            Event::for_client(SimTime(0), client, EventKind::ParamChanged { name: "x".into(), value: "1".into() })
        };
        for c in [1, 3, RUN_WIDE, 2, MAX_CLIENTS + 1] {
            p.observe(&ev(c), |f, e| f.push(e.client));
        }
        assert_eq!(p.count(), 3);
        assert_eq!(p.get(1).unwrap(), &vec![1, RUN_WIDE]);
        assert_eq!(p.get(2).unwrap(), &vec![RUN_WIDE, 2]);
        assert_eq!(p.get(3).unwrap(), &vec![3, RUN_WIDE]);
        assert!(p.get(0).is_none() && p.get(4).is_none());
        assert_eq!(mean([2.5]), 2.5);
        assert_eq!(mean([]), 0.0);
    }
}
