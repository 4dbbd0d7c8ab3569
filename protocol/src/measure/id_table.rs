//! A map from a connection's message ids to a time, and a set of ids, for ids that count up from
//! zero: a vector indexed by id, with a hash map beside it for an id far past the others (a
//! corrupt log must not make a fold allocate gigabytes, and must not lose the id either).
//!
//! Why: the snapshot fold looked every message event up in a `HashMap` and a `HashSet` (SipHash
//! per lookup; about 40 bytes per snapshot held for the whole run). Ids come nearly in order, so
//! a vector answers the same in a load and a few bytes.

use std::collections::{HashMap, HashSet};

use crate::event::SimTime;

/// Ids further than this beyond the table's end go to the hash map instead.
const MAX_ID_JUMP: u64 = 1 << 20;

/// No time recorded for the id (times are virtual microseconds: never `u64::MAX`).
const NONE: u64 = u64::MAX;

/// Id -> time, the first insert of an id replaced by later ones as a `HashMap` would.
#[derive(Debug, Clone, Default)]
pub struct IdTimes {
    dense: Vec<u64>,
    far: HashMap<u64, SimTime>,
}

impl IdTimes {
    pub fn insert(&mut self, id: u64, t: SimTime) {
        match self.slot(id) {
            Some(i) => {
                if i >= self.dense.len() {
                    self.dense.resize(i + 1, NONE);
                }
                self.dense[i] = t.0;
            }
            None => {
                self.far.insert(id, t);
            }
        }
    }

    pub fn get(&self, id: u64) -> Option<SimTime> {
        match usize::try_from(id).ok().and_then(|i| self.dense.get(i)) {
            Some(&t) if t != NONE => Some(SimTime(t)),
            _ if self.far.is_empty() => None,
            _ => self.far.get(&id).copied(),
        }
    }

    /// Where `id` goes in the vector, or None for the map: an id the map holds stays there (one
    /// place per id), and one far past the vector's end goes there.
    fn slot(&self, id: u64) -> Option<usize> {
        if !self.far.is_empty() && self.far.contains_key(&id) {
            return None;
        }
        let len = self.dense.len() as u64;
        (id < len || id - len <= MAX_ID_JUMP).then_some(id as usize)
    }
}

/// A set of ids, one bit each.
#[derive(Debug, Clone, Default)]
pub struct IdSet {
    bits: Vec<u64>,
    far: HashSet<u64>,
}

impl IdSet {
    /// Adds `id`; true when it was not in the set.
    pub fn insert(&mut self, id: u64) -> bool {
        let (word, bit) = (id / 64, 1u64 << (id % 64));
        let len = self.bits.len() as u64;
        // An id the map holds stays there (one place per id), and one far past the end goes there.
        if (!self.far.is_empty() && self.far.contains(&id)) || (word >= len && word - len > MAX_ID_JUMP / 64) {
            return self.far.insert(id);
        }
        if word >= len {
            self.bits.resize(word as usize + 1, 0);
        }
        let w = &mut self.bits[word as usize];
        let new = *w & bit == 0;
        *w |= bit;
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_answer_as_a_hash_map_and_set_do_near_and_far_ids_alike() {
        let (mut times, mut map) = (IdTimes::default(), HashMap::new());
        let (mut set, mut hash_set) = (IdSet::default(), HashSet::new());
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for i in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly in order, some repeats and gaps, some ids far away (and those again later,
            // once the table has grown past them).
            let id = match x % 10 {
                0 => x % 50,
                1 => (i / 3) + (1 << 30) * (x % 3),
                2 => i + MAX_ID_JUMP + 5,
                _ => i / 2,
            };
            times.insert(id, SimTime(i));
            map.insert(id, SimTime(i));
            assert_eq!(set.insert(id ^ 1), hash_set.insert(id ^ 1), "id {id}");
        }
        for id in map.keys().copied().chain(0..30_000).chain([u64::MAX, 1 << 30]) {
            assert_eq!(times.get(id), map.get(&id).copied(), "id {id}");
            assert_eq!(set.insert(id ^ 1), hash_set.insert(id ^ 1), "id {id}");
        }
    }
}
