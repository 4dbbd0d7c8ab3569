//! UE4's `TSequenceNumber<14, uint16>`: packet sequence numbers that wrap at 2^14.
//!
//! The packet notify header packs two of these plus a 4-bit history word count into one `u32`,
//! which is why UE4 keeps them at 14 bits. Comparisons are only meaningful while two numbers are
//! less than half the range (8192) apart, which the sender guarantees by never letting more than
//! [`SeqNum::HALF`] packets go unacknowledged.

use serde::{Deserialize, Serialize};

use crate::wire::{sign_extended_difference, UE4_SEQ_BITS};

/// A 14-bit wrapping packet sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct SeqNum(u16);

impl SeqNum {
    pub const BITS: u32 = UE4_SEQ_BITS;
    pub const MASK: u16 = (1 << Self::BITS) - 1;
    /// Half the sequence space: the largest distance comparisons can judge.
    pub const HALF: u16 = 1 << (Self::BITS - 1);
    /// Number of distinct values (16384).
    pub const SPACE: u32 = 1 << Self::BITS;

    /// Keeps the low 14 bits, like UE4's constructor.
    pub const fn new(v: u16) -> Self {
        SeqNum(v & Self::MASK)
    }

    pub const fn get(self) -> u16 {
        self.0
    }

    /// `self + n`, wrapping.
    pub const fn plus(self, n: u16) -> Self {
        SeqNum::new(self.0.wrapping_add(n))
    }

    /// `self - n`, wrapping.
    pub const fn minus(self, n: u16) -> Self {
        SeqNum::new(self.0.wrapping_sub(n))
    }

    /// The next number (UE4's `++`).
    pub const fn next(self) -> Self {
        self.plus(1)
    }

    /// `self > other` in wrap-around order: true when `(self - other) mod 2^14` is in `1..HALF`.
    pub const fn gt(self, other: SeqNum) -> bool {
        self.0 != other.0 && (self.0.wrapping_sub(other.0) & Self::MASK) < Self::HALF
    }

    /// `self >= other` in wrap-around order.
    pub const fn ge(self, other: SeqNum) -> bool {
        self.0 == other.0 || self.gt(other)
    }

    /// UE4's `Diff(A, B)`: `(A - B)` sign-extended from 14 bits, in `-8192..8192`.
    pub const fn diff(a: SeqNum, b: SeqNum) -> i32 {
        sign_extended_difference(a.0 as u32, b.0 as u32, Self::BITS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wraps_at_fourteen_bits() {
        assert_eq!(SeqNum::new(16383).next(), SeqNum::new(0));
        assert!(SeqNum::new(0).gt(SeqNum::new(16383)));
        assert_eq!(SeqNum::diff(SeqNum::new(2), SeqNum::new(16382)), 4);
        assert_eq!(SeqNum::diff(SeqNum::new(16382), SeqNum::new(2)), -4);
        assert_eq!(SeqNum::new(0xFFFF).get(), 0x3FFF);
    }

    proptest! {
        #[test]
        fn diff_and_order_agree_within_half_range(a in 0u16..16384, d in 1i32..8192) {
            let a = SeqNum::new(a);
            let b = a.plus(d as u16);
            prop_assert_eq!(SeqNum::diff(b, a), d);
            prop_assert_eq!(SeqNum::diff(a, b), -d);
            prop_assert!(b.gt(a));
            prop_assert!(!a.gt(b));
            prop_assert!(b.ge(a) && a.ge(a));
        }
    }
}
