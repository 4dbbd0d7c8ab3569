//! Bit-packed streams with one unified serialize function for writing, reading and measuring.
//!
//! Following Glenn Fiedler's "unified serialize" idea, a type describes its wire form once, as a
//! function generic over [`Stream`]; the same function then writes ([`BitWriter`]), reads
//! ([`BitReader`]) or counts the exact number of bits a write would produce ([`MeasureStream`]).
//! Reading never panics: running past the end or decoding a value outside its declared bounds is
//! a [`BitError`], which callers turn into a "malformed packet" event.

use thiserror::Error;

/// Why a bit stream operation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum BitError {
    /// A read needed more bits than the buffer holds.
    #[error("read past the end of the packet (needed {needed} bits at bit {at}, have {total})")]
    Overflow { needed: u32, at: usize, total: usize },
    /// A bounded integer was outside `[min, max]`.
    #[error("value {value} outside its bounds [{min}, {max}]")]
    OutOfRange { value: i64, min: i64, max: i64 },
    /// Padding bits before an aligned section were not zero.
    #[error("non-zero alignment padding")]
    BadPadding,
    /// A writer was asked to write more than its capacity.
    #[error("write exceeds the stream capacity of {capacity_bits} bits")]
    WriteOverflow { capacity_bits: usize },
}

/// Number of bits needed to hold any value in `[0, range]`.
pub const fn bits_required(range: u64) -> u32 {
    if range == 0 {
        0
    } else {
        64 - range.leading_zeros()
    }
}

/// The unified serialize interface: a type's `serialize<S: Stream>` works for all three streams.
///
/// On a writer or measurer, values are read from the `&mut` arguments; on a reader they are
/// overwritten with what was decoded.
pub trait Stream {
    /// True for [`BitReader`]: the `&mut` arguments are outputs.
    const IS_READING: bool;
    /// `bits` (0..=32) raw bits.
    fn serialize_bits(&mut self, value: &mut u32, bits: u32) -> Result<(), BitError>;
    /// Pads with zero bits to the next byte boundary (readers check the padding is zero).
    fn align(&mut self) -> Result<(), BitError>;
    /// Byte-aligned raw bytes; `bytes.len()` is the count (readers fill the slice).
    fn serialize_bytes(&mut self, bytes: &mut [u8]) -> Result<(), BitError>;
    /// Bits consumed or produced so far.
    fn bits_processed(&self) -> usize;

    /// A reader's [`Self::serialize_bytes`] of `len` bytes into `out` (its old content replaced,
    /// its allocation kept). A reader copies straight from the packet; the default sizes `out`
    /// with zeros first.
    fn read_bytes_into(&mut self, out: &mut Vec<u8>, len: usize) -> Result<(), BitError> {
        out.resize(len, 0);
        self.serialize_bytes(out)
    }

    /// An integer in `[min, max]` in exactly `bits_required(max - min)` bits.
    fn serialize_int(&mut self, value: &mut i64, min: i64, max: i64) -> Result<(), BitError> {
        debug_assert!(min <= max);
        let range = (max as i128 - min as i128) as u64;
        let bits = bits_required(range);
        if !Self::IS_READING && (*value < min || *value > max) {
            return Err(BitError::OutOfRange { value: *value, min, max });
        }
        let mut offset = (*value as i128 - min as i128) as u64;
        if bits > 32 {
            let mut lo = offset as u32;
            let mut hi = (offset >> 32) as u32;
            self.serialize_bits(&mut lo, 32)?;
            self.serialize_bits(&mut hi, bits - 32)?;
            offset = (lo as u64) | ((hi as u64) << 32);
        } else {
            let mut v = offset as u32;
            self.serialize_bits(&mut v, bits)?;
            offset = v as u64;
        }
        if Self::IS_READING {
            let decoded = min as i128 + offset as i128;
            if decoded > max as i128 {
                return Err(BitError::OutOfRange { value: decoded as i64, min, max });
            }
            *value = decoded as i64;
        }
        Ok(())
    }

    /// A `u32` in `[min, max]`.
    // Inlined: counts, lengths and type ids of every message, where `min` and `max` are mostly
    // constants the call folds (an outlined copy was 0.4 M instructions per 120 s sweep run).
    #[inline]
    fn serialize_u32(&mut self, value: &mut u32, min: u32, max: u32) -> Result<(), BitError> {
        // `serialize_int` in u32 arithmetic (the hot case: counts and lengths): same bits, same errors.
        debug_assert!(min <= max);
        let bits = bits_required((max - min) as u64);
        if !Self::IS_READING && (*value < min || *value > max) {
            return Err(BitError::OutOfRange { value: *value as i64, min: min as i64, max: max as i64 });
        }
        let mut offset = value.wrapping_sub(min);
        self.serialize_bits(&mut offset, bits)?;
        if Self::IS_READING {
            let decoded = min as u64 + offset as u64;
            if decoded > max as u64 {
                return Err(BitError::OutOfRange { value: decoded as i64, min: min as i64, max: max as i64 });
            }
            *value = decoded as u32;
        }
        Ok(())
    }

    /// A `u16` over its whole range (16 bits).
    fn serialize_u16(&mut self, value: &mut u16) -> Result<(), BitError> {
        let mut v = *value as u32;
        self.serialize_bits(&mut v, 16)?;
        *value = v as u16;
        Ok(())
    }

    /// A `u8` over its whole range (8 bits).
    fn serialize_u8(&mut self, value: &mut u8) -> Result<(), BitError> {
        let mut v = *value as u32;
        self.serialize_bits(&mut v, 8)?;
        *value = v as u8;
        Ok(())
    }

    /// One bit.
    fn serialize_bool(&mut self, value: &mut bool) -> Result<(), BitError> {
        let mut v = *value as u32;
        self.serialize_bits(&mut v, 1)?;
        *value = v != 0;
        Ok(())
    }
}

/// Writes bits least-significant first into little-endian 32-bit words, like yojimbo's BitWriter.
#[derive(Debug, Clone)]
pub struct BitWriter {
    bytes: Vec<u8>,
    scratch: u64,
    scratch_bits: u32,
    bits_written: usize,
    capacity_bits: usize,
}

impl BitWriter {
    /// A writer that refuses to grow beyond `capacity_bytes`.
    pub fn with_capacity(capacity_bytes: usize) -> Self {
        Self {
            bytes: Vec::with_capacity(capacity_bytes),
            scratch: 0,
            scratch_bits: 0,
            bits_written: 0,
            capacity_bits: capacity_bytes * 8,
        }
    }

    /// A writer that appends to `bytes` (kept as a prefix, e.g. a packet header already written),
    /// at most `capacity_bytes` more: the packet is written in place, with no buffer to allocate
    /// and copy per packet.
    pub fn appending(bytes: Vec<u8>, capacity_bytes: usize) -> Self {
        Self { bytes, scratch: 0, scratch_bits: 0, bits_written: 0, capacity_bits: capacity_bytes * 8 }
    }

    /// Flushes partial bits (zero padded to a byte) and returns the bytes written.
    pub fn finish(mut self) -> Vec<u8> {
        while self.scratch_bits > 0 {
            self.bytes.push(self.scratch as u8);
            self.scratch >>= 8;
            self.scratch_bits = self.scratch_bits.saturating_sub(8);
        }
        self.bytes
    }

    /// Bytes the finished buffer will hold.
    pub fn bytes_written(&self) -> usize {
        self.bits_written.div_ceil(8)
    }
}

impl Stream for BitWriter {
    const IS_READING: bool = false;

    fn serialize_bits(&mut self, value: &mut u32, bits: u32) -> Result<(), BitError> {
        debug_assert!(bits <= 32);
        if bits == 0 {
            return Ok(());
        }
        if self.bits_written + bits as usize > self.capacity_bits {
            return Err(BitError::WriteOverflow { capacity_bits: self.capacity_bits });
        }
        let masked = if bits == 32 { *value as u64 } else { (*value as u64) & ((1u64 << bits) - 1) };
        self.scratch |= masked << self.scratch_bits;
        self.scratch_bits += bits;
        self.bits_written += bits as usize;
        // A whole 32-bit word goes out at once (a push per byte was most of a field's cost); the
        // bytes come out the same, only later.
        if self.scratch_bits >= 32 {
            self.bytes.extend_from_slice(&(self.scratch as u32).to_le_bytes());
            self.scratch >>= 32;
            self.scratch_bits -= 32;
        }
        Ok(())
    }

    fn align(&mut self) -> Result<(), BitError> {
        let rem = (self.bits_written % 8) as u32;
        if rem != 0 {
            let mut zero = 0;
            self.serialize_bits(&mut zero, 8 - rem)?;
        }
        Ok(())
    }

    fn serialize_bytes(&mut self, bytes: &mut [u8]) -> Result<(), BitError> {
        self.align()?;
        if self.bits_written + bytes.len() * 8 > self.capacity_bits {
            return Err(BitError::WriteOverflow { capacity_bits: self.capacity_bits });
        }
        // The whole bytes still held go first (aligned: no partial byte is left).
        while self.scratch_bits >= 8 {
            self.bytes.push(self.scratch as u8);
            self.scratch >>= 8;
            self.scratch_bits -= 8;
        }
        self.bytes.extend_from_slice(bytes);
        self.bits_written += bytes.len() * 8;
        Ok(())
    }

    fn bits_processed(&self) -> usize {
        self.bits_written
    }
}

/// The bytes of `rest` (fewer than eight) as a little-endian `u64`, the missing high bytes zero.
/// Two loads that may overlap (of four bytes, or of one byte each for three or fewer) cover them
/// all; an overlapping byte is the same byte at the same place, so OR-ing is exact.
#[inline]
fn load_tail(rest: &[u8]) -> u64 {
    let n = rest.len();
    debug_assert!(n < 8);
    if n >= 4 {
        let lo = u32::from_le_bytes(rest[..4].try_into().expect("four bytes")) as u64;
        let hi = u32::from_le_bytes(rest[n - 4..].try_into().expect("four bytes")) as u64;
        lo | hi << ((n - 4) * 8)
    } else if n > 0 {
        rest[0] as u64 | (rest[n / 2] as u64) << (8 * (n / 2)) | (rest[n - 1] as u64) << (8 * (n - 1))
    } else {
        0
    }
}

/// Reads what a [`BitWriter`] wrote; every failure is a [`BitError`].
#[derive(Debug, Clone)]
pub struct BitReader<'a> {
    data: &'a [u8],
    bit_pos: usize,
}

impl<'a> BitReader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, bit_pos: 0 }
    }

    /// Bits left to read.
    pub fn bits_remaining(&self) -> usize {
        self.data.len() * 8 - self.bit_pos
    }

    /// True when every remaining bit is padding inside the final byte.
    pub fn at_end(&self) -> bool {
        self.bits_remaining() < 8
    }
}

impl Stream for BitReader<'_> {
    const IS_READING: bool = true;

    fn serialize_bits(&mut self, value: &mut u32, bits: u32) -> Result<(), BitError> {
        debug_assert!(bits <= 32);
        if bits as usize > self.bits_remaining() {
            return Err(BitError::Overflow { needed: bits, at: self.bit_pos, total: self.data.len() * 8 });
        }
        if bits == 0 {
            *value = 0;
            return Ok(());
        }
        // The (at most 5) bytes holding the value, little-endian, in one load: bits are packed
        // least significant first, so the value is the window shifted by the bit offset.
        let (start, offset) = (self.bit_pos / 8, (self.bit_pos % 8) as u32);
        // Eight whole bytes where the packet has them (a fixed-size load), else the shorter tail
        // in two overlapping loads (a copy of variable length was a `memcpy` call per field, and
        // the last fields of almost every packet were one).
        let window = match self.data.get(start..start + 8) {
            Some(eight) => u64::from_le_bytes(eight.try_into().expect("eight bytes")),
            None => load_tail(&self.data[start..]),
        };
        let out = (window >> offset) & ((1u64 << bits) - 1);
        self.bit_pos += bits as usize;
        *value = out as u32;
        Ok(())
    }

    fn align(&mut self) -> Result<(), BitError> {
        let rem = (self.bit_pos % 8) as u32;
        if rem != 0 {
            let mut pad = 0;
            self.serialize_bits(&mut pad, 8 - rem)?;
            if pad != 0 {
                return Err(BitError::BadPadding);
            }
        }
        Ok(())
    }

    fn serialize_bytes(&mut self, bytes: &mut [u8]) -> Result<(), BitError> {
        self.align()?;
        let start = self.bit_pos / 8;
        let end = start + bytes.len();
        if end > self.data.len() {
            return Err(BitError::Overflow {
                needed: (bytes.len() * 8) as u32,
                at: self.bit_pos,
                total: self.data.len() * 8,
            });
        }
        bytes.copy_from_slice(&self.data[start..end]);
        self.bit_pos = end * 8;
        Ok(())
    }

    fn bits_processed(&self) -> usize {
        self.bit_pos
    }

    /// Copied once from the packet (resizing with zeros first wrote every byte twice).
    fn read_bytes_into(&mut self, out: &mut Vec<u8>, len: usize) -> Result<(), BitError> {
        self.align()?;
        let start = self.bit_pos / 8;
        let end = start + len;
        if end > self.data.len() {
            return Err(BitError::Overflow { needed: (len * 8) as u32, at: self.bit_pos, total: self.data.len() * 8 });
        }
        out.clear();
        out.extend_from_slice(&self.data[start..end]);
        self.bit_pos = end * 8;
        Ok(())
    }
}

/// Counts the bits a write would produce, without writing anything.
#[derive(Debug, Clone, Default)]
pub struct MeasureStream {
    bits: usize,
}

impl MeasureStream {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes a [`BitWriter`] would finish with.
    pub fn bytes(&self) -> usize {
        self.bits.div_ceil(8)
    }
}

impl Stream for MeasureStream {
    const IS_READING: bool = false;

    fn serialize_bits(&mut self, _value: &mut u32, bits: u32) -> Result<(), BitError> {
        self.bits += bits as usize;
        Ok(())
    }

    fn align(&mut self) -> Result<(), BitError> {
        self.bits = self.bits.div_ceil(8) * 8;
        Ok(())
    }

    fn serialize_bytes(&mut self, bytes: &mut [u8]) -> Result<(), BitError> {
        self.align()?;
        self.bits += bytes.len() * 8;
        Ok(())
    }

    fn bits_processed(&self) -> usize {
        self.bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq, Clone)]
    struct Sample {
        a: i64,
        flag: bool,
        raw: u32,
        blob: [u8; 3],
        small: u32,
    }

    impl Sample {
        fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<(), BitError> {
            s.serialize_int(&mut self.a, -100, 1000)?;
            s.serialize_bool(&mut self.flag)?;
            s.serialize_bits(&mut self.raw, 32)?;
            s.serialize_bytes(&mut self.blob)?;
            s.serialize_u32(&mut self.small, 3, 9)
        }
    }

    #[test]
    fn round_trip_and_measure_agree() {
        let mut v = Sample { a: -42, flag: true, raw: 0xDEAD_BEEF, blob: [1, 2, 3], small: 7 };
        let mut m = MeasureStream::new();
        v.serialize(&mut m).unwrap();
        let mut w = BitWriter::with_capacity(64);
        v.serialize(&mut w).unwrap();
        assert_eq!(m.bits_processed(), w.bits_processed());
        let bytes = w.finish();
        assert_eq!(bytes.len(), m.bytes());
        let mut back = Sample::default();
        back.serialize(&mut BitReader::new(&bytes)).unwrap();
        assert_eq!(back, v);
    }

    /// Every field of every width at every bit position of packets of 0 to 17 bytes reads what a
    /// bit-by-bit reference reads: the eight-byte load, the last-eight-bytes path and the
    /// overlapping loads of a tail shorter than eight bytes all agree with it.
    #[test]
    fn fields_read_at_every_position_of_short_packets_match_a_bit_by_bit_reference() {
        let data: Vec<u8> = (0..17u32).map(|i| (i.wrapping_mul(0x9D) ^ 0x5A) as u8).collect();
        for len in 0..=data.len() {
            let packet = &data[..len];
            let bit = |i: usize| (packet[i / 8] >> (i % 8)) & 1;
            for pos in 0..=len * 8 {
                for bits in 0..=32u32 {
                    let mut r = BitReader::new(packet);
                    let mut skip = pos;
                    while skip > 0 {
                        let step = skip.min(32) as u32;
                        r.serialize_bits(&mut 0, step).unwrap();
                        skip -= step as usize;
                    }
                    let mut got = 0u32;
                    let read = r.serialize_bits(&mut got, bits);
                    if pos + bits as usize > len * 8 {
                        assert!(read.is_err(), "len {len} pos {pos} bits {bits}");
                        continue;
                    }
                    read.unwrap();
                    let want = (0..bits as usize).fold(0u64, |v, k| v | (bit(pos + k) as u64) << k) as u32;
                    assert_eq!(got, want, "len {len} pos {pos} bits {bits}");
                }
            }
        }
    }

    /// A reader's `read_bytes_into` gives what `serialize_bytes` into a zeroed buffer gives, with
    /// the buffer's old content gone, and the same error when the packet is short.
    #[test]
    fn read_bytes_into_matches_serialize_bytes() {
        let mut w = BitWriter::with_capacity(64);
        w.serialize_bits(&mut 5, 3).unwrap();
        w.serialize_bytes(&mut [9, 8, 7, 6, 5]).unwrap();
        let bytes = w.finish();
        for len in 0..=7 {
            let (mut a, mut b) = (BitReader::new(&bytes), BitReader::new(&bytes));
            a.serialize_bits(&mut 0, 3).unwrap();
            b.serialize_bits(&mut 0, 3).unwrap();
            let mut zeroed = vec![0u8; len];
            let mut reused = vec![0xEE; 40];
            let (ra, rb) = (a.serialize_bytes(&mut zeroed), b.read_bytes_into(&mut reused, len));
            assert_eq!(ra, rb, "len {len}");
            if ra.is_ok() {
                assert_eq!(reused, zeroed);
                assert_eq!(a.bits_processed(), b.bits_processed());
            }
        }
    }

    #[test]
    fn reading_past_end_is_an_error() {
        let mut r = BitReader::new(&[0xFF]);
        let mut v = 0;
        assert!(r.serialize_bits(&mut v, 8).is_ok());
        assert!(matches!(r.serialize_bits(&mut v, 1), Err(BitError::Overflow { .. })));
    }

    #[test]
    fn out_of_bounds_value_is_refused_on_read_and_write() {
        // [0, 5] takes 3 bits; 7 is representable but out of bounds.
        let mut r = BitReader::new(&[0b111]);
        let mut v = 0i64;
        assert!(matches!(r.serialize_int(&mut v, 0, 5), Err(BitError::OutOfRange { value: 7, .. })));
        let mut w = BitWriter::with_capacity(4);
        let mut big = 6i64;
        assert!(w.serialize_int(&mut big, 0, 5).is_err());
    }

    #[test]
    fn bits_required_matches_ranges() {
        assert_eq!(bits_required(0), 0);
        assert_eq!(bits_required(1), 1);
        assert_eq!(bits_required(255), 8);
        assert_eq!(bits_required(256), 9);
        assert_eq!(bits_required(u64::MAX), 64);
    }

    #[test]
    fn writer_respects_capacity() {
        let mut w = BitWriter::with_capacity(1);
        let mut v = 0;
        assert!(w.serialize_bits(&mut v, 8).is_ok());
        assert!(w.serialize_bits(&mut v, 1).is_err());
    }
}
