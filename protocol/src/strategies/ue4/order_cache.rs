//! The packet order cache (`PacketOrderCache`): holds packets that arrive after a small gap so a
//! late packet of the same tick can still be processed in order.
//!
//! Why: UE4 never accepts a packet older than the last one processed (it is simply dropped and
//! its data recovered by a Nak-driven resend), so a packet merely overtaken by the next one
//! would otherwise cost a whole resend round trip. When a packet arrives with 1..=`max_missing`
//! sequences missing, it and every following packet are cached at their offset; the cache is
//! drained in order as the gap fills, and flushed whole at the end of the tick, at which point
//! whatever is still missing counts as lost. A packet too far ahead lands in the last slot,
//! which forces a whole flush.

/// A circular buffer of packets indexed by their distance from the next expected sequence.
#[derive(Debug, Clone)]
pub struct PacketOrderCache<T> {
    slots: Vec<Option<T>>,
    start: usize,
    count: usize,
}

impl<T> PacketOrderCache<T> {
    /// `capacity` slots (at least 2).
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(2);
        Self { slots: (0..capacity).map(|_| None).collect(), start: 0, count: 0 }
    }

    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether a packet `delta` ahead of the last processed one should be cached rather than
    /// processed now (UE4: start caching on a small gap, keep caching while non-empty).
    pub fn should_cache(&self, delta: i32, max_missing: u32) -> bool {
        let missing = delta - 1;
        self.count > 0 || (missing > 0 && missing as u32 <= max_missing)
    }

    /// Caches `item`; returns it back when its slot is already taken (a duplicate or an
    /// out-of-range packet beyond the one already in the last slot).
    pub fn insert(&mut self, delta: i32, item: T) -> Result<(), T> {
        let cap = self.slots.len();
        let linear = ((delta.max(1) - 1) as usize).min(cap - 1);
        let idx = (self.start + linear) % cap;
        if self.slots[idx].is_some() {
            return Err(item);
        }
        self.slots[idx] = Some(item);
        self.count += 1;
        Ok(())
    }

    /// True when the last slot is used: the next flush must be a whole flush.
    pub fn end_is_set(&self) -> bool {
        let cap = self.slots.len();
        self.slots[(self.start + cap - 1) % cap].is_some()
    }

    /// The next packet to process while flushing: in order up to the first hole, or past holes
    /// when `whole`.
    pub fn next_to_flush(&mut self, whole: bool) -> Option<T> {
        let cap = self.slots.len();
        while self.count > 0 {
            let idx = self.start;
            if let Some(p) = self.slots[idx].take() {
                self.count -= 1;
                self.start = (idx + 1) % cap;
                return Some(p);
            }
            if !whole {
                return None;
            }
            self.start = (idx + 1) % cap;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed's example: after 3, packets 8 then 6 arrive; with 5 allowed missing both are
    /// cached and come out as 6, 8.
    #[test]
    fn packets_come_out_in_sequence_order() {
        let mut c = PacketOrderCache::new(32);
        assert!(c.should_cache(5, 5));
        c.insert(5, 8).unwrap();
        assert!(c.should_cache(3, 0), "keeps caching while non-empty");
        c.insert(3, 6).unwrap();
        assert_eq!(c.insert(3, 6), Err(6));
        assert_eq!(c.next_to_flush(false), None, "4 is still missing");
        assert_eq!(c.next_to_flush(true), Some(6));
        assert_eq!(c.next_to_flush(true), Some(8));
        assert_eq!(c.count(), 0);
    }

    #[test]
    fn filling_the_gap_drains_without_a_whole_flush() {
        let mut c = PacketOrderCache::new(4);
        c.insert(2, "b").unwrap();
        c.insert(1, "a").unwrap();
        assert_eq!(c.next_to_flush(false), Some("a"));
        assert_eq!(c.next_to_flush(false), Some("b"));
        c.insert(10, "far").unwrap();
        assert!(c.end_is_set());
        assert_eq!(c.insert(12, "farther"), Err("farther"));
    }
}
