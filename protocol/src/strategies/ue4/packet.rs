//! The packet wire format: a notify header, bunches back to back, then UE4's termination bit.
//!
//! `FlushNet` writes a single 1 bit after the last bunch (`SendBuffer.WriteBit(1)`) and pads
//! with zeros to a byte; the receiver finds the packet's exact bit length from the highest set
//! bit of the last byte (`ReceivedRawPacket`: "Packet missing trailing 1" when that byte is
//! zero) and reads bunches until it gets there. There is no per-bunch presence bit. Decoding
//! validates the whole packet before the connection acts on any of it, so a bad bunch never
//! leaves half a packet applied. Bunch payloads hold the workload's messages, each with a
//! LEB128 length prefix so several can share a bunch.

use thiserror::Error;

use crate::event::MalformedReason;
use crate::wire::bits::{BitError, BitReader, BitWriter, Stream};

use super::bunch::{Bunch, DEFAULT_MAX_PACKET_BYTES};
use super::notify::NotificationHeader;

/// Appends `msg` with its length as a LEB128 prefix, so several messages can share a bunch.
pub fn frame_message(msg: &[u8], out: &mut Vec<u8>) {
    let mut n = msg.len();
    loop {
        let byte = (n & 0x7F) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            break;
        }
        out.push(byte | 0x80);
    }
    out.extend_from_slice(msg);
}

/// A bunch payload that is not a sequence of framed messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("bad message framing at byte {at}")]
pub struct FrameError {
    pub at: usize,
}

/// Splits a (reassembled) bunch payload into its messages; empty or overlong frames are errors.
pub fn split_messages(payload: &[u8]) -> Result<Vec<&[u8]>, FrameError> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < payload.len() {
        let start = at;
        let mut len = 0usize;
        let mut shift = 0;
        loop {
            let byte = *payload.get(at).ok_or(FrameError { at: start })?;
            at += 1;
            len |= ((byte & 0x7F) as usize) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                break;
            }
            if shift > 21 {
                return Err(FrameError { at: start });
            }
        }
        let end = at.checked_add(len).filter(|e| len > 0 && *e <= payload.len()).ok_or(FrameError { at: start })?;
        out.push(&payload[at..end]);
        at = end;
    }
    Ok(out)
}

/// UE4's `MakeRelative`: the full sequence nearest to `reference` whose low bits are `value`.
pub fn make_relative(value: u32, reference: u32, max: u32) -> u32 {
    let half = max / 2;
    let diff = (value.wrapping_sub(reference).wrapping_add(half) & (max - 1)) as i64 - half as i64;
    (reference as i64 + diff).max(0) as u32
}

/// Why a received packet was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum PacketError {
    #[error("notify header: {0}")]
    Header(BitError),
    #[error("bunch {index}: {error}")]
    Bunch { index: usize, error: BitError },
    /// No termination bit after the header: the last byte is zero, or its highest set bit lies
    /// inside the header.
    #[error("bytes after the end-of-bunches marker")]
    Trailing,
}

impl PacketError {
    pub fn malformed_reason(&self) -> MalformedReason {
        match self {
            PacketError::Header(BitError::Overflow { .. }) => MalformedReason::Truncated,
            PacketError::Header(_) => MalformedReason::BadHeader,
            PacketError::Bunch { .. } | PacketError::Trailing => MalformedReason::BadPayload,
        }
    }
}

/// A whole packet, decoded and validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedPacket {
    pub header: NotificationHeader,
    pub bunches: Vec<Bunch>,
}

/// Decodes a packet of a connection with 1024-byte `MaxPacket`; see [`decode_packet_with`].
pub fn decode_packet(bytes: &[u8]) -> Result<DecodedPacket, PacketError> {
    decode_packet_with(bytes, DEFAULT_MAX_PACKET_BYTES)
}

/// Decodes and validates a packet (`max_packet_bytes` sets the width of each bunch's data
/// length); any byte sequence gives `Ok` or `Err`, never a panic.
pub fn decode_packet_with(bytes: &[u8], max_packet_bytes: u32) -> Result<DecodedPacket, PacketError> {
    let mut r = BitReader::new(bytes);
    let header = NotificationHeader::read(&mut r).map_err(PacketError::Header)?;
    let last = *bytes.last().ok_or(PacketError::Trailing)?;
    if last == 0 {
        return Err(PacketError::Trailing);
    }
    let end_bits = (bytes.len() - 1) * 8 + (7 - last.leading_zeros() as usize);
    if end_bits < r.bits_processed() {
        return Err(PacketError::Trailing);
    }
    let mut bunches = Vec::new();
    while r.bits_processed() < end_bits {
        let index = bunches.len();
        let bunch = Bunch::read(&mut r, max_packet_bytes).map_err(|error| PacketError::Bunch { index, error })?;
        if r.bits_processed() > end_bits {
            let error = BitError::Overflow { needed: 1, at: r.bits_processed(), total: end_bits };
            return Err(PacketError::Bunch { index, error });
        }
        bunches.push(bunch);
    }
    Ok(DecodedPacket { header, bunches })
}

/// Encodes a packet of a connection with 1024-byte `MaxPacket`; see [`encode_packet_with`].
pub fn encode_packet<'a>(
    header: &NotificationHeader,
    bunches: impl IntoIterator<Item = &'a Bunch>,
    capacity_bytes: usize,
) -> Result<Vec<u8>, BitError> {
    encode_packet_with(header, bunches, capacity_bytes, DEFAULT_MAX_PACKET_BYTES)
}

/// Encodes a packet from its header and bunches, then the termination bit.
pub fn encode_packet_with<'a>(
    header: &NotificationHeader,
    bunches: impl IntoIterator<Item = &'a Bunch>,
    capacity_bytes: usize,
    max_packet_bytes: u32,
) -> Result<Vec<u8>, BitError> {
    let mut w = BitWriter::with_capacity(capacity_bytes);
    header.write(&mut w)?;
    for b in bunches {
        b.write(&mut w, max_packet_bytes)?;
    }
    w.serialize_bits(&mut 1, 1)?;
    Ok(w.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::ue4::bunch::{ChName, MAX_CHSEQUENCE};
    use crate::strategies::ue4::notify::SequenceHistory;
    use crate::strategies::ue4::sequence::SeqNum;

    #[test]
    fn packet_round_trips() {
        let header = NotificationHeader {
            seq: SeqNum::new(77),
            acked_seq: SeqNum::new(9000),
            history_word_count: 2,
            history: SequenceHistory::default(),
        };
        let bunches = vec![
            Bunch {
                ch_index: 1,
                ch_name: ChName::Actor,
                reliable: true,
                ch_sequence: 1500,
                partial: false,
                partial_initial: false,
                partial_final: false,
                payload: vec![1, 2, 3],
                ..Default::default()
            },
            Bunch {
                ch_index: 2,
                reliable: false,
                ch_sequence: 0,
                partial: true,
                partial_initial: true,
                partial_final: false,
                payload: vec![9; 953],
                ..Default::default()
            },
        ];
        let bytes = encode_packet(&header, &bunches, 2048).unwrap();
        let max: usize = 32 + 64 + bunches.iter().map(Bunch::max_bits).sum::<usize>() + 1;
        assert!(bytes.len() * 8 <= max + 7, "final byte padding only");
        let d = decode_packet(&bytes).unwrap();
        assert_eq!(d.header, header);
        assert_eq!(d.bunches[0].ch_sequence, 1500 % 1024);
        assert_eq!(d.bunches[1], bunches[1]);
        assert_eq!(make_relative(d.bunches[0].ch_sequence, 1499, MAX_CHSEQUENCE), 1500);
    }

    #[test]
    fn framed_messages_split_back_and_bad_frames_are_errors() {
        let mut p = Vec::new();
        frame_message(&[1, 2, 3], &mut p);
        frame_message(&vec![7; 300], &mut p);
        let parts = split_messages(&p).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], &[1, 2, 3]);
        assert_eq!(parts[1].len(), 300);
        assert!(split_messages(&p[..p.len() - 1]).is_err());
        assert!(split_messages(&[0]).is_err());
        assert!(split_messages(&[0x80, 0x80, 0x80, 0x80]).is_err());
    }

    #[test]
    fn make_relative_picks_the_nearest() {
        assert_eq!(make_relative(1, 1023, 1024), 1025);
        assert_eq!(make_relative(1020, 1025, 1024), 1020);
        assert_eq!(make_relative(5, 3, 1024), 5);
    }

    #[test]
    fn trailing_bytes_and_truncation_are_rejected() {
        let header = NotificationHeader {
            seq: SeqNum::new(1),
            acked_seq: SeqNum::new(0),
            history_word_count: 1,
            history: SequenceHistory::default(),
        };
        let mut bytes = encode_packet(&header, &[], 64).unwrap();
        assert!(decode_packet(&bytes).is_ok());
        bytes.push(0);
        assert_eq!(decode_packet(&bytes), Err(PacketError::Trailing));
        assert!(matches!(decode_packet(&bytes[..3]), Err(PacketError::Header(_))));
    }

    /// A header-only packet is the header, the termination bit and seven bits of padding.
    #[test]
    fn the_termination_bit_ends_every_packet() {
        let header = NotificationHeader {
            seq: SeqNum::new(1),
            acked_seq: SeqNum::new(0),
            history_word_count: 1,
            history: SequenceHistory::default(),
        };
        let bytes = encode_packet(&header, &[], 64).unwrap();
        assert_eq!((bytes.len(), bytes[8]), (9, 1));
        let b = Bunch { ch_index: 2, payload: vec![0; 3], ..Default::default() };
        let bytes = encode_packet(&header, [&b], 64).unwrap();
        // 64 + 27 header bits + 24 data bits + 1 = 116 bits: 15 bytes, terminator at bit 115.
        assert_eq!(bytes.len(), 15);
        assert_eq!(bytes[14], 1 << 3);
        assert_eq!(decode_packet(&bytes).unwrap().bunches, vec![b]);
    }
}
