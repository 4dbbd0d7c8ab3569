//! The `dnm` packet format, written with the unified bit streams.
//!
//! `tag (8) | sequence (16) | has_acks (1) | [range_count - 1 (4) | ranges...] | messages`, where
//! a range is the seed's `AckRange::Write`: `start (16) | has_count (1) | [count - 1 (8)]`, and
//! the message block is `reliability::outbox::serialize_messages`. Beyond the seed: a leading tag
//! byte so a packet of another protocol is recognised as foreign, several ranges per packet (the
//! seed writes one and keeps the rest for later packets), and long runs split into ranges of at
//! most 256 instead of the seed's silent clamp to 256 (which would drop acks). Decoding is strict:
//! a range with `has_count` must count at least 2, and no bytes may trail.

use thiserror::Error;

use crate::event::MalformedReason;
use crate::reliability::outbox::serialize_messages;
use crate::wire::bits::{BitError, BitReader, BitWriter, Stream};

/// First byte of every `dnm` packet.
pub const DNM_TAG: u8 = 0xD7;
/// Most ack ranges one packet carries.
pub const MAX_WIRE_RANGES: usize = 16;
/// Most packets one wire range acks.
pub const MAX_RANGE_COUNT: u32 = 256;

/// `count` consecutive sequences from `start` that arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckRange {
    pub start: u16,
    pub count: u32,
}

impl AckRange {
    /// The seed's `ExtendIfShould` (with `==`, where the book's listing has a typo'd `=`); a range
    /// stops at the 256 packets one wire range can carry and the next one starts a new range.
    pub(super) fn extend_if_should(&mut self, seq: u16) -> bool {
        if seq == self.start.wrapping_add(self.count as u16) && self.count < MAX_RANGE_COUNT {
            self.count += 1;
            true
        } else {
            false
        }
    }
}

/// One decoded packet.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DnmPacket {
    pub sequence: u16,
    pub acks: Vec<AckRange>,
    pub messages: Vec<Vec<u8>>,
}

/// Why bytes are not a `dnm` packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum WireError {
    #[error("empty packet")]
    Empty,
    #[error("not a dnm packet (tag {0:#04x})")]
    Foreign(u8),
    #[error(transparent)]
    Bits(#[from] BitError),
    #[error("ack range with has_count must count at least 2")]
    NonCanonicalRange,
    #[error("{0} trailing bytes")]
    Trailing(usize),
}

impl WireError {
    pub fn reason(&self) -> MalformedReason {
        match self {
            WireError::Empty | WireError::Bits(BitError::Overflow { .. }) => MalformedReason::Truncated,
            WireError::Foreign(_) => MalformedReason::Foreign,
            _ => MalformedReason::BadPayload,
        }
    }
}

fn serialize_range<S: Stream>(s: &mut S, r: &mut AckRange) -> Result<(), WireError> {
    s.serialize_u16(&mut r.start)?;
    let mut has_count = r.count > 1;
    s.serialize_bool(&mut has_count)?;
    if has_count {
        let mut minus_one = r.count.saturating_sub(1).min(255) as u8;
        s.serialize_u8(&mut minus_one)?;
        if S::IS_READING && minus_one == 0 {
            return Err(WireError::NonCanonicalRange);
        }
        r.count = minus_one as u32 + 1;
    } else {
        r.count = 1;
    }
    Ok(())
}

fn serialize_packet<S: Stream>(s: &mut S, p: &mut DnmPacket) -> Result<(), WireError> {
    s.serialize_u16(&mut p.sequence)?;
    let mut has_acks = !p.acks.is_empty();
    s.serialize_bool(&mut has_acks)?;
    if has_acks {
        let mut n = p.acks.len() as u32;
        s.serialize_u32(&mut n, 1, MAX_WIRE_RANGES as u32)?;
        if S::IS_READING {
            p.acks = vec![AckRange::default(); n as usize];
        }
        for r in &mut p.acks {
            serialize_range(s, r)?;
        }
    } else if S::IS_READING {
        p.acks.clear();
    }
    serialize_messages(s, &mut p.messages)?;
    s.align()?;
    Ok(())
}

/// Appends the encoded packet to `out`. Ranges must count 1..=256 and be at most 16.
pub fn write_packet(p: &DnmPacket, out: &mut Vec<u8>) -> Result<(), WireError> {
    write_parts(p.sequence, &p.acks, &p.messages, out)
}

/// [`write_packet`] from a packet's parts.
pub fn write_parts(sequence: u16, acks: &[AckRange], messages: &[Vec<u8>], out: &mut Vec<u8>) -> Result<(), WireError> {
    debug_assert!(acks.len() <= MAX_WIRE_RANGES);
    debug_assert!(acks.iter().all(|r| (1..=MAX_RANGE_COUNT).contains(&r.count)));
    let mut w = BitWriter::with_capacity(65536);
    let mut tag = DNM_TAG;
    w.serialize_u8(&mut tag)?;
    let mut p = DnmPacket { sequence, acks: acks.to_vec(), messages: messages.to_vec() };
    serialize_packet(&mut w, &mut p)?;
    out.extend_from_slice(&w.finish());
    Ok(())
}

/// Decodes any bytes into a packet, or says why not; never panics.
pub fn read_packet(bytes: &[u8]) -> Result<DnmPacket, WireError> {
    match bytes.first() {
        None => return Err(WireError::Empty),
        Some(&t) if t != DNM_TAG => return Err(WireError::Foreign(t)),
        _ => {}
    }
    let mut r = BitReader::new(bytes);
    let mut tag = 0u8;
    r.serialize_u8(&mut tag)?;
    let mut p = DnmPacket::default();
    serialize_packet(&mut r, &mut p)?;
    if !r.at_end() {
        return Err(WireError::Trailing(r.bits_remaining() / 8));
    }
    Ok(p)
}

/// Bytes of a packet with `ranges` ack ranges (each counted at its largest) and no messages.
pub fn header_bytes_max(ranges: usize) -> usize {
    (8 + 16 + 1 + 4 + ranges * 25 + 7).div_ceil(8) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_round_trip_and_foreign_tags_are_told_apart() {
        let p = DnmPacket {
            sequence: 65535,
            acks: vec![AckRange { start: 65530, count: 1 }, AckRange { start: 3, count: 256 }],
            messages: vec![crate::workload::make_payload(crate::event::Side::A, 1, 12)],
        };
        let mut out = Vec::new();
        write_packet(&p, &mut out).unwrap();
        assert!(out.len() <= header_bytes_max(2) + 12 + crate::reliability::outbox::MESSAGE_OVERHEAD_BYTES);
        assert_eq!(read_packet(&out), Ok(p));
        assert_eq!(read_packet(&[0x01, 0, 0]).unwrap_err().reason(), MalformedReason::Foreign);
        assert_eq!(read_packet(&out[..3]).unwrap_err().reason(), MalformedReason::Truncated);
        let mut trailing = out.clone();
        trailing.push(0);
        assert!(read_packet(&trailing).is_err());
    }
}
