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

/// `s1 - s2` in a `seq_bits`-bit wrapping sequence space (1..=31 bits; UE4's packet ids have
/// [`super::UE4_SEQ_BITS`]), sign-extended from `seq_bits`: in `-2^(seq_bits-1)..2^(seq_bits-1)`.
/// UE4's `TSequenceNumber::Diff`; at exactly half the space the result is negative, unlike
/// [`sequence_difference`], which follows Glenn's tie rule for 16 bits.
#[inline]
pub const fn sign_extended_difference(s1: u32, s2: u32, seq_bits: u32) -> i32 {
    let shift = 32 - seq_bits;
    // The shifts keep the low `seq_bits` bits of the wrapped difference and sign-extend them:
    // reinterpreting the shifted u32 as i32 is the point, not a truncation.
    #[allow(clippy::cast_possible_wrap)]
    let shifted = (s1.wrapping_sub(s2) << shift) as i32;
    shifted >> shift
}

const EMPTY: u32 = u32::MAX;

/// Half the sequence space: the largest buffer, and the distance from which on a sequence counts
/// as behind rather than ahead.
const HALF: u16 = 32768;

/// A fixed-size rolling buffer of `T` keyed by 16-bit sequence number.
///
/// Inserting a sequence more recent than the newest so far clears every slot between the previous
/// newest and the new one (the whole buffer when the gap is at least its size), so entries from
/// before a wrap can never be mistaken for new ones — the false-ack bug the seed describes under
/// 99% loss. Inserting a sequence older than `newest - size` is refused: it cannot be held.
///
/// Age is judged by distance from the next sequence, not by the half-space comparison: a
/// sequence ahead of the newest by less than half the space is new, one behind the next by
/// `1..=size` is in the window, anything else too old. So a buffer of any size up to 32768
/// (half the space) takes every sequence newer than the oldest it holds; the half-space
/// comparison refused the next sequence of a 32768-slot buffer whenever it was below 32768,
/// and an ack endpoint whose sent buffer had grown that far recorded none of those sends.
#[derive(Debug, Clone)]
pub struct SequenceBuffer<T> {
    /// One past the newest sequence inserted (`sequence` in the seed's code).
    next: u16,
    /// How many sequences behind the next one are held (the size asked for).
    window: usize,
    /// One slot per sequence modulo a power of two at least `window`: a power of two divides
    /// the sequence space, so sequences a window apart never share a slot across a wrap (with
    /// `sequence % 3893`, 65535 and 62288 did, three thousand apart).
    tags: Vec<u32>,
    entries: Vec<T>,
    /// Slots - 1: an index is a mask.
    mask: usize,
}

impl<T: Default + Clone> SequenceBuffer<T> {
    /// A buffer of `size` slots (must be non-zero and at most 32768).
    pub fn new(size: usize) -> Self {
        assert!(size > 0 && size <= 32768, "sequence buffer size {size} out of range");
        let slots = size.next_power_of_two();
        Self { next: 0, window: size, tags: vec![EMPTY; slots], entries: vec![T::default(); slots], mask: slots - 1 }
    }

    /// How many sequences it holds: the size it was made with.
    pub fn size(&self) -> usize {
        self.window
    }

    /// One past the most recent sequence inserted (0 before any insert).
    pub fn next_sequence(&self) -> u16 {
        self.next
    }

    #[inline]
    fn index(&self, sequence: u16) -> usize {
        sequence as usize & self.mask
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
        let ahead = sequence.wrapping_sub(self.next);
        if ahead == 0 {
            // The next in order (every send): the one slot to clear is the one written below.
            self.next = sequence.wrapping_add(1);
        } else if ahead < HALF {
            self.advance_to(sequence);
        } else if ahead.wrapping_neg() as usize > self.window {
            return None;
        }
        let index = self.index(sequence);
        self.tags[index] = sequence as u32;
        Some(&mut self.entries[index])
    }

    /// Whether `sequence` is the next in order: it is then absent (every slot a sequence could
    /// hold has been cleared or rewritten since it was last inserted) and [`Self::insert_next`]
    /// takes it, at any size.
    #[inline]
    pub fn is_next(&self, sequence: u16) -> bool {
        sequence == self.next
    }

    /// True when `sequence` is behind the next one by more than the buffer holds, so
    /// [`Self::insert`] would refuse it (a sequence ahead by less than half the space is new).
    #[inline]
    pub fn is_too_old(&self, sequence: u16) -> bool {
        let ahead = sequence.wrapping_sub(self.next);
        ahead >= HALF && ahead.wrapping_neg() as usize > self.window
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
        let back = self.next.wrapping_sub(sequence) as usize;
        back >= 1 && back <= self.window
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
            assert!(nexts > 10_000, "size {size}: {nexts}");
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

    /// A reference buffer on unbounded sequence numbers: sequences ahead of the next are new,
    /// `1..=size` behind are in the window, anything further behind is refused.
    struct Reference {
        size: u64,
        next: u64,
        held: std::collections::BTreeMap<u64, u32>,
    }

    impl Reference {
        fn insert(&mut self, abs: u64, value: u32) -> bool {
            if abs >= self.next {
                self.next = abs + 1;
                let oldest = self.next.saturating_sub(self.size);
                self.held.retain(|&k, _| k >= oldest);
            } else if self.next - abs > self.size {
                return false;
            }
            self.held.insert(abs, value);
            true
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]
        /// At every size up to half the sequence space (exactly half included), and across
        /// wraps, the buffer takes exactly what the reference takes and holds the same entries:
        /// it never refuses a sequence newer than the oldest it holds.
        #[test]
        fn buffer_matches_an_unbounded_reference_at_every_size(
            size in proptest::prop_oneof![1usize..=64, 1usize..=32768, proptest::strategy::Just(32768usize), proptest::strategy::Just(32767usize), proptest::strategy::Just(16384usize)],
            start in 0u64..65536,
            steps in proptest::collection::vec((0u8..10, 0u64..32768), 1..400),
        ) {
            let mut b: SequenceBuffer<u32> = SequenceBuffer::new(size);
            b.reset_to(start as u16);
            let mut r = Reference { size: size as u64, next: start + 65536, held: Default::default() };
            for (i, (kind, amount)) in steps.into_iter().enumerate() {
                let abs = match kind {
                    // Mostly the next in order, in runs (a sender's own sequence).
                    0..=4 => r.next,
                    5 => r.next + amount % 4000,
                    6 => r.next + amount,
                    // Behind the next by up to half the space (late packets, duplicates).
                    7 | 8 => r.next - 1 - amount % (size as u64 + 2).min(32768),
                    _ => r.next - 1 - amount,
                };
                let too_old = b.is_too_old(abs as u16);
                let taken = b.insert(abs as u16).map(|e| *e = i as u32).is_some();
                proptest::prop_assert_eq!(too_old, !taken, "is_too_old agrees with insert");
                proptest::prop_assert_eq!(taken, r.insert(abs, i as u32), "size {} step {} sequence {}", size, i, abs);
                proptest::prop_assert_eq!(b.next_sequence(), r.next as u16);
                // Everything the reference holds, the buffer holds with the same value; and
                // nothing else near either end of the window.
                for (&abs, &v) in &r.held {
                    proptest::prop_assert_eq!(b.get(abs as u16).copied(), Some(v), "size {} sequence {}", size, abs);
                }
                let near_ends = (1..=size as u64).take(200).chain((1..=size as u64).rev().take(200));
                for back in near_ends {
                    let abs = r.next - back;
                    proptest::prop_assert_eq!(b.get(abs as u16).copied(), r.held.get(&abs).copied(), "size {} back {}", size, back);
                }
            }
        }
    }

    #[test]
    fn a_half_space_buffer_takes_its_next_sequences() {
        // The bug behind ignored acks: 32768 slots refused every next sequence below 32768.
        let mut b: SequenceBuffer<u32> = SequenceBuffer::new(32768);
        for s in 0..200_000u32 {
            let seq = s as u16;
            assert!(b.is_next(seq));
            assert!(!b.is_too_old(seq));
            *b.insert(seq).expect("the next sequence is always taken") = s;
            assert_eq!(b.get(seq), Some(&s));
            assert!(b.in_window(seq));
            if s >= 32768 {
                let oldest = seq.wrapping_sub(32767);
                assert!(b.exists(oldest), "the oldest of 32768 is still held");
                // One before the oldest is half the space ahead as well: read as new, never old.
                assert!(!b.is_too_old(oldest.wrapping_sub(1)));
            }
        }
    }
}
