//! The three integer forms UE4's bunch header uses, bit for bit as `FBitWriter` / `FBitReader`
//! and `FArchive` write them in 4.25: `SerializeInt` (also `WriteIntWrapped` / `ReadInt`),
//! `SerializeIntPacked`, and `UPackageMap::StaticSerializeName` for hard-coded names.
//!
//! Why not the crate's own bounded integers: UE4's `SerializeInt(Value, ValueMax)` does not write
//! a fixed `ceil(log2 ValueMax)` bits. It writes bit after bit from the lowest and stops as soon
//! as the next bit could only produce a value `>= ValueMax`, so for a `ValueMax` that is not a
//! power of two small and large values take different widths (with `ValueMax = 411`, 255 takes 8
//! bits and 102 takes 9). Header sizes only match UE4's when this loop is reproduced exactly.

use crate::wire::bits::{BitError, Stream};

/// `MAX_NETWORKED_HARDCODED_NAME` (4.25): names with an `EName` index up to this are sent as
/// that index, anything else as a string.
pub const MAX_NETWORKED_HARDCODED_NAME: u32 = 410;
/// Most bytes `SerializeIntPacked` may take for a `u32` (5 x 7 bits).
const MAX_PACKED_BYTES: u32 = 5;

/// UE4's `SerializeInt` / `WriteIntWrapped` / `ReadInt` with `ValueMax = max` (at least 2).
///
/// Writing keeps the low bits the loop reaches, which is `WriteIntWrapped` (a value below `max`
/// is written exactly; callers never write larger ones). Reading can never produce a value
/// `>= max`.
pub fn serialize_int<S: Stream>(s: &mut S, value: &mut u32, max: u32) -> Result<(), BitError> {
    debug_assert!(max >= 2);
    let mut new_value: u64 = 0;
    let mut mask: u64 = 1;
    while new_value + mask < max as u64 && mask <= u32::MAX as u64 {
        let mut bit = (!S::IS_READING && *value as u64 & mask != 0) as u32;
        s.serialize_bits(&mut bit, 1)?;
        if bit != 0 {
            new_value |= mask;
        }
        mask <<= 1;
    }
    if S::IS_READING {
        *value = new_value as u32;
    }
    Ok(())
}

/// Bits `serialize_int` takes for `value` (below `max`).
pub fn int_bits(value: u32, max: u32) -> usize {
    let (mut new_value, mut mask, mut bits) = (0u64, 1u64, 0);
    while new_value + mask < max as u64 && mask <= u32::MAX as u64 {
        if value as u64 & mask != 0 {
            new_value |= mask;
        }
        mask <<= 1;
        bits += 1;
    }
    bits
}

/// `FArchive::SerializeIntPacked`: 7 bits per byte, lowest first, each byte shifted up one with
/// a "more follows" flag in bit 0; the bytes are written as 8 plain bits each (unaligned in a
/// bit stream). Reading more than 5 bytes, or a value that does not fit a `u32`, is an error.
pub fn serialize_int_packed<S: Stream>(s: &mut S, value: &mut u32) -> Result<(), BitError> {
    if S::IS_READING {
        let mut out: u64 = 0;
        for count in 0..MAX_PACKED_BYTES {
            let mut byte = 0;
            s.serialize_bits(&mut byte, 8)?;
            out |= ((byte >> 1) as u64) << (7 * count);
            if byte & 1 == 0 {
                return u32::try_from(out).map(|v| *value = v).map_err(|_| BitError::OutOfRange {
                    value: out as i64,
                    min: 0,
                    max: u32::MAX as i64,
                });
            }
        }
        return Err(BitError::OutOfRange { value: out as i64, min: 0, max: u32::MAX as i64 });
    }
    let mut remaining = *value;
    loop {
        let mut byte = (remaining & 0x7F) << 1;
        remaining >>= 7;
        if remaining > 0 {
            byte |= 1;
        }
        s.serialize_bits(&mut byte, 8)?;
        if remaining == 0 {
            return Ok(());
        }
    }
}

/// Bits `serialize_int_packed` takes for `value`.
pub fn int_packed_bits(value: u32) -> usize {
    let mut bytes = 1;
    let mut v = value >> 7;
    while v > 0 {
        bytes += 1;
        v >>= 7;
    }
    bytes * 8
}

/// `UPackageMap::StaticSerializeName` for a hard-coded name: one bit (1 = hard-coded), then
/// the `EName` index as `SerializeInt(.., MAX_NETWORKED_HARDCODED_NAME + 1)`. Names sent as
/// strings (bit 0) are not used by this model and are a read error.
pub fn serialize_hardcoded_name<S: Stream>(s: &mut S, ename: &mut u32) -> Result<(), BitError> {
    let mut hardcoded = 1;
    s.serialize_bits(&mut hardcoded, 1)?;
    if hardcoded == 0 {
        return Err(BitError::OutOfRange { value: 0, min: 1, max: 1 });
    }
    serialize_int(s, ename, MAX_NETWORKED_HARDCODED_NAME + 1)
}

/// Bits `serialize_hardcoded_name` takes for `ename`.
pub fn hardcoded_name_bits(ename: u32) -> usize {
    1 + int_bits(ename, MAX_NETWORKED_HARDCODED_NAME + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::bits::{BitReader, BitWriter};
    use proptest::prelude::*;

    fn write(f: impl FnOnce(&mut BitWriter)) -> (Vec<u8>, usize) {
        let mut w = BitWriter::with_capacity(16);
        f(&mut w);
        let bits = w.bits_processed();
        (w.finish(), bits)
    }

    /// Widths UE4's loop gives: a power-of-two max is fixed width, others depend on the value.
    #[test]
    fn serialize_int_width_depends_on_the_value_unless_max_is_a_power_of_two() {
        assert_eq!(int_bits(0, 1024), 10);
        assert_eq!(int_bits(1023, 1024), 10);
        assert_eq!(int_bits(7624, 8192), 13);
        assert_eq!(int_bits(255, 411), 8, "NAME_Control");
        assert_eq!(int_bits(256, 411), 9, "NAME_Voice");
        assert_eq!(int_bits(102, 411), 9, "NAME_Actor");
        assert_eq!(int_bits(3, 15), 4, "EChannelCloseReason::Relevancy");
        assert_eq!(int_bits(7, 15), 3);
        assert_eq!(int_bits(0, 2), 1);
    }

    #[test]
    fn packed_ints_take_whole_bytes_of_seven_bits() {
        assert_eq!(int_packed_bits(0), 8);
        assert_eq!(int_packed_bits(127), 8);
        assert_eq!(int_packed_bits(128), 16);
        assert_eq!(int_packed_bits(16_383), 16);
        assert_eq!(int_packed_bits(16_384), 24);
        assert_eq!(int_packed_bits(u32::MAX), 40);
        let (bytes, bits) = write(|w| serialize_int_packed(w, &mut 300).unwrap());
        // 300 = 0b10_0101100: low 7 bits 0101100 with "more", then 10.
        assert_eq!((bytes, bits), (vec![0b0101_1001, 0b0000_0100], 16));
    }

    #[test]
    fn overlong_packed_ints_are_errors() {
        let mut v = 0;
        assert!(serialize_int_packed(&mut BitReader::new(&[0xFF; 6]), &mut v).is_err());
        assert!(serialize_int_packed(&mut BitReader::new(&[0xFF, 0xFF, 0xFF, 0xFF, 0x7F]), &mut v).is_err());
    }

    proptest! {
        #[test]
        fn ints_round_trip_in_the_bits_measured(value in any::<u32>(), max in 2u32..100_000) {
            let value = value % max;
            let (bytes, bits) = write(|w| serialize_int(w, &mut value.clone(), max).unwrap());
            prop_assert_eq!(bits, int_bits(value, max));
            let mut back = 0;
            serialize_int(&mut BitReader::new(&bytes), &mut back, max).unwrap();
            prop_assert_eq!(back, value);
            let (bytes, bits) = write(|w| serialize_int_packed(w, &mut value.clone()).unwrap());
            prop_assert_eq!(bits, int_packed_bits(value));
            serialize_int_packed(&mut BitReader::new(&bytes), &mut back).unwrap();
            prop_assert_eq!(back, value);
        }

        #[test]
        fn reads_never_exceed_the_max(bytes in proptest::collection::vec(any::<u8>(), 4), max in 2u32..5000) {
            let mut v = 0;
            serialize_int(&mut BitReader::new(&bytes), &mut v, max).unwrap();
            prop_assert!(v < max);
        }
    }
}
