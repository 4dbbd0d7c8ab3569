//! 16-bit wrap-aware sequence numbers and the rolling [`SequenceBuffer`] from Glenn Fiedler's
//! "Reliable Ordered Messages".
//!
//! Sequence numbers wrap at 65536; "more recent" means ahead by less than half the space, as in
//! rellikt's `sequence_more_recent`. The buffer is indexed by `sequence % size` and tags each slot
//! with the full sequence it holds, so a lookup of a wrapped-away sequence finds nothing.

/// True when `s1` is more recent than `s2` (wrap-aware): Glenn's
/// `((s1 > s2) && (s1 - s2 <= 32768)) || ((s1 < s2) && (s2 - s1 > 32768))`, computed from the
/// wrapped distance with one branch fewer (every buffer lookup makes two of these).
#[inline]
pub fn sequence_greater_than(s1: u16, s2: u16) -> bool {
    let d = s1.wrapping_sub(s2);
    (d != 0 && d < 32768) || (d == 32768 && s1 > s2)
}

/// True when `s1` is older than `s2` (wrap-aware).
#[inline]
pub fn sequence_less_than(s1: u16, s2: u16) -> bool {
    sequence_greater_than(s2, s1)
}

/// Signed distance from `s2` to `s1` in `[-32768, 32768]`: positive exactly when
/// [`sequence_greater_than`]`(s1, s2)`.
///
/// At exactly half the range the two sequences are equally far apart both ways; Glenn's
/// comparison then calls the numerically larger one more recent, and the sign here follows it
/// (a property test found the mismatch at a distance of 32768).
#[inline]
pub fn sequence_difference(s1: u16, s2: u16) -> i32 {
    let d = s1.wrapping_sub(s2) as i32;
    if d > 32768 || (d == 32768 && s1 < s2) {
        d - 65536
    } else {
        d
    }
}

const EMPTY: u32 = u32::MAX;

/// A fixed-size rolling buffer of `T` keyed by 16-bit sequence number.
///
/// Inserting a sequence more recent than the newest so far clears every slot between the previous
/// newest and the new one (the whole buffer when the gap is at least its size), so entries from
/// before a wrap can never be mistaken for new ones — the false-ack bug the seed describes under
/// 99% loss. Inserting a sequence older than `newest - size` is refused: it cannot be held.
#[derive(Debug, Clone)]
pub struct SequenceBuffer<T> {
    /// One past the newest sequence inserted (`sequence` in the seed's code).
    next: u16,
    tags: Vec<u32>,
    entries: Vec<T>,
    /// `size - 1` when the size is a power of two (the usual case), so an index is a mask rather
    /// than a division; 0 otherwise.
    mask: usize,
}

impl<T: Default + Clone> SequenceBuffer<T> {
    /// A buffer of `size` slots (must be non-zero and at most 32768).
    pub fn new(size: usize) -> Self {
        assert!(size > 0 && size <= 32768, "sequence buffer size {size} out of range");
        let mask = if size.is_power_of_two() { size - 1 } else { 0 };
        Self { next: 0, tags: vec![EMPTY; size], entries: vec![T::default(); size], mask }
    }

    /// Number of slots.
    pub fn size(&self) -> usize {
        self.tags.len()
    }

    /// One past the most recent sequence inserted (0 before any insert).
    pub fn next_sequence(&self) -> u16 {
        self.next
    }

    #[inline]
    fn index(&self, sequence: u16) -> usize {
        if self.mask != 0 {
            sequence as usize & self.mask
        } else {
            sequence as usize % self.tags.len()
        }
    }

    /// Inserts `sequence`, returning its (reset to default) slot, or `None` when it is too old.
    #[inline(always)]
    pub fn insert(&mut self, sequence: u16) -> Option<&mut T> {
        let slot = self.insert_reusing(sequence)?;
        *slot = T::default();
        Some(slot)
    }

    /// [`Self::insert`] without resetting the slot: it may still hold an older entry's value,
    /// for callers that overwrite every field anyway and want to keep its allocations (a `Vec`
    /// reset to default frees its buffer, and the caller would allocate a new one).
    // Always inline: every packet sent and received inserts once, and as a call this was 45
    // instructions; the rare range clear stays out of line.
    #[inline(always)]
    pub fn insert_reusing(&mut self, sequence: u16) -> Option<&mut T> {
        let size = self.tags.len();
        if sequence_less_than(sequence, self.next.wrapping_sub(size as u16)) {
            return None;
        }
        if sequence == self.next {
            // The next in order (every send): the one slot to clear is the one written below.
            self.next = sequence.wrapping_add(1);
        } else if sequence_greater_than(sequence.wrapping_add(1), self.next) {
            self.advance_to(sequence);
        }
        let index = self.index(sequence);
        self.tags[index] = sequence as u32;
        Some(&mut self.entries[index])
    }

    /// Whether `sequence` is the next in order and can be held: it is then absent (every
    /// slot a sequence could hold has been cleared or rewritten since it was last inserted) and
    /// [`Self::insert_next`] takes it. A buffer of 32768 refuses half of its next sequences
    /// (`insert_reusing`'s age check), so it never answers true.
    #[inline]
    pub fn is_next(&self, sequence: u16) -> bool {
        sequence == self.next && self.tags.len() < 32768
    }

    /// [`Self::insert_reusing`] of the next sequence, when [`Self::is_next`] said so.
    #[inline(always)]
    pub fn insert_next(&mut self) -> &mut T {
        let index = self.index(self.next);
        self.tags[index] = self.next as u32;
        self.next = self.next.wrapping_add(1);
        &mut self.entries[index]
    }

    /// Makes `sequence` the newest, clearing the slots from the previous newest to it.
    #[inline(never)]
    fn advance_to(&mut self, sequence: u16) {
        self.remove_range(self.next, sequence);
        self.next = sequence.wrapping_add(1);
    }

    /// Clears every slot for sequences `start..=end` (wrap-aware, capped at the buffer size).
    fn remove_range(&mut self, start: u16, end: u16) {
        let count = end.wrapping_sub(start) as usize + 1;
        if count >= self.tags.len() {
            self.tags.fill(EMPTY);
        } else {
            for i in 0..count {
                let idx = self.index(start.wrapping_add(i as u16));
                self.tags[idx] = EMPTY;
            }
        }
    }

    /// Removes `sequence` if present.
    pub fn remove(&mut self, sequence: u16) {
        let idx = self.index(sequence);
        if self.tags[idx] == sequence as u32 {
            self.tags[idx] = EMPTY;
        }
    }

    /// True when `sequence` is held.
    #[inline]
    pub fn exists(&self, sequence: u16) -> bool {
        self.tags[self.index(sequence)] == sequence as u32
    }

    /// The entry for `sequence`, if held.
    #[inline]
    pub fn get(&self, sequence: u16) -> Option<&T> {
        let idx = self.index(sequence);
        (self.tags[idx] == sequence as u32).then(|| &self.entries[idx])
    }

    /// The entry for `sequence`, if held, mutably.
    #[inline]
    pub fn get_mut(&mut self, sequence: u16) -> Option<&mut T> {
        let idx = self.index(sequence);
        if self.tags[idx] == sequence as u32 {
            Some(&mut self.entries[idx])
        } else {
            None
        }
    }

    /// True when `sequence` is within the window a buffer of this size can hold relative to the
    /// newest insert (it may or may not be present).
    pub fn in_window(&self, sequence: u16) -> bool {
        !sequence_less_than(sequence, self.next.wrapping_sub(self.tags.len() as u16))
            && sequence_less_than(sequence, self.next)
    }

    /// Empties the buffer and restarts at sequence 0.
    pub fn reset(&mut self) {
        self.reset_to(0);
    }

    /// Empties the buffer so that `next` is the next sequence expected.
    pub fn reset_to(&mut self, next: u16) {
        self.next = next;
        self.tags.fill(EMPTY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_wraps() {
        let glenn = |s1: u16, s2: u16| ((s1 > s2) && (s1 - s2 <= 32768)) || ((s1 < s2) && (s2 - s1 > 32768));
        for s2 in [0u16, 1, 2, 100, 16384, 32767, 32768, 32769, 49152, 65534, 65535] {
            for s1 in 0..=u16::MAX {
                assert_eq!(sequence_greater_than(s1, s2), glenn(s1, s2), "{s1} vs {s2}");
            }
        }
        assert!(sequence_greater_than(1, 0));
        assert!(sequence_greater_than(0, 65535));
        assert!(sequence_less_than(65535, 0));
        assert!(sequence_greater_than(32768, 0));
        assert!(!sequence_greater_than(32769, 0));
        assert_eq!(sequence_difference(0, 65535), 1);
        assert_eq!(sequence_difference(65535, 0), -1);
        assert_eq!(sequence_difference(10, 65530), 16);
    }

    #[test]
    fn insert_clears_stale_entries_between_newest_and_new() {
        let mut b: SequenceBuffer<u32> = SequenceBuffer::new(16);
        for s in 0..4u16 {
            *b.insert(s).unwrap() = s as u32;
        }
        // Jump ahead by 20: every slot is stale, including those aliasing 0..4.
        b.insert(24).unwrap();
        for s in 0..4u16 {
            assert!(!b.exists(s));
        }
        // Sequence 8 (older than 24 - 16) is too old to hold.
        assert!(b.insert(8).is_none());
        assert!(b.insert(9).is_some());
    }

    #[test]
    fn the_next_sequence_is_absent_and_taken_as_insert_would() {
        // Sizes power of two or not, in-order runs, jumps, late inserts, all the way round the
        // sequence space twice: whenever is_next says so, the sequence is absent and
        // insert_next leaves the buffer as insert would.
        for size in [16usize, 100, 256, 1000, 32768] {
            let mut a: SequenceBuffer<u32> = SequenceBuffer::new(size);
            let mut s: u16 = 65_000;
            let mut nexts = 0;
            for i in 0..140_000u32 {
                // Mostly one at a time; now and then a jump ahead or a step back.
                let step = match i % 97 {
                    0 => 500,
                    1 => 40_000,
                    2 | 3 => 0u16.wrapping_sub(30),
                    _ => 1,
                };
                s = s.wrapping_add(step);
                if a.is_next(s) {
                    nexts += 1;
                    let mut b = a.clone();
                    assert!(!a.exists(s), "size {size} sequence {s}");
                    *a.insert_next() = i;
                    *b.insert(s).unwrap() = i;
                    assert_eq!((a.next, &a.tags, &a.entries), (b.next, &b.tags, &b.entries), "size {size}");
                } else if let Some(e) = a.insert(s) {
                    *e = i;
                }
            }
            assert_eq!(nexts > 10_000, size < 32768, "size {size}: {nexts}");
        }
    }

    #[test]
    fn entries_from_before_a_wrap_never_alias() {
        let mut b: SequenceBuffer<u8> = SequenceBuffer::new(256);
        b.insert(100).unwrap();
        // Sequence 100 + 65536 - 256*k would alias slot 100; after wrapping around the whole
        // space in big jumps, the old tag must be gone.
        let mut s: u16 = 100;
        for _ in 0..300 {
            s = s.wrapping_add(1000);
            b.insert(s);
        }
        let stale = 100u16;
        if !b.in_window(stale) {
            assert!(!b.exists(stale));
        }
    }
}
