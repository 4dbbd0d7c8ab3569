//! A `u32` per link send id: send ids are dense, so a `Vec` offset by the lowest id seen.
//!
//! They are not always folded in increasing order: a UDP run folds its two endpoint threads'
//! batches as they come, so a send can arrive after a later id of the other side. The table then
//! grows downwards rather than losing it (the packet log and the filter's ack field each once
//! skipped such a send).

use crate::model::heap;

/// A `u32` per send id, `None` where none was set.
#[derive(Debug, Clone, Default)]
pub struct UidTable {
    base: Option<u64>,
    /// By `uid - base`; `u32::MAX` for none.
    slots: Vec<u32>,
}

impl UidTable {
    /// Sets `uid`'s value (`u32::MAX` clears it).
    pub fn set(&mut self, uid: u64, value: u32) {
        let mut base = *self.base.get_or_insert(uid);
        if uid < base {
            self.slots.splice(0..0, std::iter::repeat_n(u32::MAX, (base - uid) as usize));
            base = uid;
            self.base = Some(uid);
        }
        let k = (uid - base) as usize;
        if self.slots.len() <= k {
            self.slots.resize(k + 1, u32::MAX);
        }
        self.slots[k] = value;
    }

    /// `uid`'s value, if one was set.
    pub fn get(&self, uid: u64) -> Option<u32> {
        let k = uid.checked_sub(self.base?)? as usize;
        self.slots.get(k).copied().filter(|&v| v != u32::MAX)
    }

    /// Bytes held on the heap (the live memory cap's count).
    pub fn heap_bytes(&self) -> usize {
        heap::vec(&self.slots)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_folded_out_of_order_are_each_found() {
        let mut t = UidTable::default();
        for (uid, v) in [(7, 70), (5, 50), (9, 90)] {
            t.set(uid, v);
        }
        let got: Vec<_> = (4..=10).map(|uid| t.get(uid)).collect();
        assert_eq!(got, [None, Some(50), None, Some(70), None, Some(90), None]);
        t.set(7, u32::MAX);
        assert_eq!(t.get(7), None, "cleared");
    }
}
