//! Heap bytes a recording's structures hold, reckoned from their lengths and capacities.
//!
//! A live run keeps its recording under a memory cap ([`crate::app::live_log`]). One figure per
//! event for every lane missed by far when a lane had many clients (64 clients: every event kept
//! twice, in the lane's log and its client's store, plus 64 sets of indexes, series and ledger
//! tables), so each structure reports what it holds instead. The figures count what the
//! allocator was asked for (a counting allocator in `examples/live_memory.rs` checks them), not
//! the allocator's own slack.

use std::collections::{HashMap, VecDeque};
use std::mem::size_of;

/// Bytes of a vector's buffer (its capacity, not its length: the slack is held too).
pub fn vec<T>(v: &Vec<T>) -> usize {
    v.capacity() * size_of::<T>()
}

/// Bytes of a deque's buffer.
pub fn deque<T>(v: &VecDeque<T>) -> usize {
    v.capacity() * size_of::<T>()
}

/// Bytes of a hash map's table: its buckets (a power of two, 7/8 of them usable once there are
/// eight or more) of one entry and one control byte each, and a group of trailing control bytes.
pub fn map<K, V>(m: &HashMap<K, V>) -> usize {
    let cap = m.capacity();
    if cap == 0 {
        return 0;
    }
    let buckets = if cap < 7 { cap + 1 } else { cap / 7 * 8 };
    buckets * (size_of::<(K, V)>() + 1) + 16
}

/// Adds `x` to `v` and the growth of `v`'s buffer, if any, to `bytes` (a counter kept beside
/// vectors nested in records, which are too many to walk at every check).
pub fn push_counted<T>(v: &mut Vec<T>, x: T, bytes: &mut usize) {
    let before = v.capacity();
    v.push(x);
    *bytes += (v.capacity() - before) * size_of::<T>();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_maps_table_is_reckoned_from_its_capacity() {
        let mut m: HashMap<u64, u64> = HashMap::new();
        assert_eq!(map(&m), 0);
        for i in 0..1000 {
            m.insert(i, i);
        }
        // 1000 entries need 2048 buckets (7/8 of 1024 is 896): 16 bytes and a control byte each.
        assert_eq!(m.capacity(), 1792);
        assert_eq!(map(&m), 2048 * 17 + 16);
        let mut v = Vec::new();
        let mut bytes = 0;
        for i in 0..100u32 {
            push_counted(&mut v, i, &mut bytes);
        }
        assert_eq!(bytes, vec(&v));
    }
}
