//! Bunches and the packet wire format: a notify header, then bunches, then a stop bit.
//!
//! A bunch is the unit a channel sends: reliable ones carry the channel's 10-bit `ChSequence`
//! (UE4's `MAX_CHSEQUENCE` = 1024, resolved against the last received one as `MakeRelative`
//! does), partial ones carry the `PartialInitial` / `PartialFinal` flags so the receiver can
//! reassemble bunches larger than [`MAX_SINGLE_BUNCH_SIZE_BITS`]. Each bunch is preceded by a
//! 1 bit, the list ends with a 0 bit and zero padding; anything else is malformed. Decoding
//! validates the whole packet before the connection acts on any of it, so a bad bunch never
//! leaves half a packet applied.

use thiserror::Error;

use crate::event::MalformedReason;
use crate::wire::bits::{BitError, BitReader, Stream};

use super::notify::{NotificationHeader, MAX_NOTIFY_HEADER_BYTES};

/// Channels per connection in this model: 0 control, 1 reliable messages, 2 unreliable messages.
pub const MAX_CHANNELS: u32 = 8;
/// Carries the close message (UE4's control channel, `NMT_Failure`).
pub const CONTROL_CHANNEL: u8 = 0;
/// Reliable bunch sequence space on the wire (`MAX_CHSEQUENCE`).
pub const MAX_CHSEQUENCE: u32 = 1024;
/// Bunches above this are split into partial bunches (UE4: 7625 bits).
pub const MAX_SINGLE_BUNCH_SIZE_BITS: usize = 7625;
/// Size of each partial bunch but the last (UE4: 7624 bits).
pub const MAX_PARTIAL_BUNCH_SIZE_BITS: usize = 7624;
/// Payload bytes one bunch may carry: this model's bunches are whole bytes (953).
pub const MAX_BUNCH_PAYLOAD_BYTES: usize = MAX_PARTIAL_BUNCH_SIZE_BITS / 8;
/// Largest whole bunch, before splitting or after reassembly (UE4's `IsBunchTooLarge`: 64 KiB).
pub const MAX_CONSTRUCTED_BUNCH_BYTES: usize = 64 * 1024;
/// Fixed bits of a bunch header beyond the flags: see [`Bunch::max_bits`].
const CHANNEL_BITS: usize = 3;
const CHSEQ_BITS: u32 = 10;
const LEN_BITS: usize = 10;
/// Smallest packet that can hold a full notify header and one largest bunch.
pub const MIN_PACKET_BYTES: usize = MAX_NOTIFY_HEADER_BYTES
    + (1 + CHANNEL_BITS + 1 + CHSEQ_BITS as usize + 3 + LEN_BITS + 7 + 1 + 7).div_ceil(8)
    + MAX_BUNCH_PAYLOAD_BYTES;

/// One bunch as sent and received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bunch {
    pub channel: u8,
    pub reliable: bool,
    /// Reliable only: the channel's bunch sequence (full width when sending; the 10 wire bits
    /// when freshly decoded, until the channel resolves it).
    pub ch_sequence: u32,
    pub partial: bool,
    pub partial_initial: bool,
    pub partial_final: bool,
    pub payload: Vec<u8>,
}

impl Bunch {
    /// Upper bound on the bits this bunch takes in a packet, including its presence bit and
    /// the alignment before its payload.
    pub fn max_bits(&self) -> usize {
        1 + CHANNEL_BITS
            + 1
            + if self.reliable { CHSEQ_BITS as usize } else { 0 }
            + 1
            + if self.partial { 2 } else { 0 }
            + LEN_BITS
            + 7
            + self.payload.len() * 8
    }

    /// Writes (or measures) the bunch.
    pub fn write<S: Stream>(&self, s: &mut S) -> Result<(), BitError> {
        let mut channel = self.channel as u32;
        s.serialize_u32(&mut channel, 0, MAX_CHANNELS - 1)?;
        let mut reliable = self.reliable;
        s.serialize_bool(&mut reliable)?;
        if self.reliable {
            let mut seq = self.ch_sequence % MAX_CHSEQUENCE;
            s.serialize_bits(&mut seq, CHSEQ_BITS)?;
        }
        let mut partial = self.partial;
        s.serialize_bool(&mut partial)?;
        if self.partial {
            let (mut i, mut f) = (self.partial_initial, self.partial_final);
            s.serialize_bool(&mut i)?;
            s.serialize_bool(&mut f)?;
        }
        let mut len = self.payload.len() as u32;
        s.serialize_u32(&mut len, 0, MAX_BUNCH_PAYLOAD_BYTES as u32)?;
        let mut payload = self.payload.clone();
        s.serialize_bytes(&mut payload)
    }

    /// Reads a bunch; the `ch_sequence` is the raw 10-bit value.
    pub fn read(r: &mut BitReader<'_>) -> Result<Self, BitError> {
        let mut channel = 0;
        r.serialize_u32(&mut channel, 0, MAX_CHANNELS - 1)?;
        let mut reliable = false;
        r.serialize_bool(&mut reliable)?;
        let mut ch_sequence = 0;
        if reliable {
            r.serialize_bits(&mut ch_sequence, CHSEQ_BITS)?;
        }
        let mut partial = false;
        r.serialize_bool(&mut partial)?;
        let (mut partial_initial, mut partial_final) = (false, false);
        if partial {
            r.serialize_bool(&mut partial_initial)?;
            r.serialize_bool(&mut partial_final)?;
        }
        let mut len = 0;
        r.serialize_u32(&mut len, 0, MAX_BUNCH_PAYLOAD_BYTES as u32)?;
        let mut payload = vec![0u8; len as usize];
        r.serialize_bytes(&mut payload)?;
        Ok(Self { channel: channel as u8, reliable, ch_sequence, partial, partial_initial, partial_final, payload })
    }
}

/// Splits a payload into bunches for `channel`: one whole bunch up to
/// `MAX_SINGLE_BUNCH_SIZE_BITS`, else `PartialInitial`, `Partial`..., `PartialFinal` pieces of
/// `MAX_PARTIAL_BUNCH_SIZE_BITS`. `ch_sequence` is left for `PrepBunch`.
pub fn split_into_bunches(channel: u8, reliable: bool, payload: &[u8]) -> Vec<Bunch> {
    let bunch = |payload: Vec<u8>, partial, partial_initial, partial_final| Bunch {
        channel,
        reliable,
        ch_sequence: 0,
        partial,
        partial_initial,
        partial_final,
        payload,
    };
    if payload.len() * 8 <= MAX_SINGLE_BUNCH_SIZE_BITS {
        return vec![bunch(payload.to_vec(), false, false, false)];
    }
    let n = bunches_needed(payload.len());
    payload
        .chunks(MAX_BUNCH_PAYLOAD_BYTES)
        .enumerate()
        .map(|(i, c)| bunch(c.to_vec(), true, i == 0, i + 1 == n))
        .collect()
}

/// How many bunches [`split_into_bunches`] makes of `payload_bytes`.
pub fn bunches_needed(payload_bytes: usize) -> usize {
    if payload_bytes * 8 <= MAX_SINGLE_BUNCH_SIZE_BITS {
        1
    } else {
        payload_bytes.div_ceil(MAX_BUNCH_PAYLOAD_BYTES)
    }
}

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

/// Decodes and validates a packet; any byte sequence gives `Ok` or `Err`, never a panic.
pub fn decode_packet(bytes: &[u8]) -> Result<DecodedPacket, PacketError> {
    let mut r = BitReader::new(bytes);
    let header = NotificationHeader::read(&mut r).map_err(PacketError::Header)?;
    let mut bunches = Vec::new();
    loop {
        let index = bunches.len();
        let mut more = false;
        r.serialize_bool(&mut more).map_err(|error| PacketError::Bunch { index, error })?;
        if !more {
            break;
        }
        bunches.push(Bunch::read(&mut r).map_err(|error| PacketError::Bunch { index, error })?);
    }
    r.align().map_err(|_| PacketError::Trailing)?;
    if r.bits_remaining() != 0 {
        return Err(PacketError::Trailing);
    }
    Ok(DecodedPacket { header, bunches })
}

/// Encodes a packet from its header and bunches.
pub fn encode_packet<'a>(
    header: &NotificationHeader,
    bunches: impl IntoIterator<Item = &'a Bunch>,
    capacity_bytes: usize,
) -> Result<Vec<u8>, BitError> {
    let mut w = crate::wire::bits::BitWriter::with_capacity(capacity_bytes);
    header.write(&mut w)?;
    for b in bunches {
        let mut one = 1;
        w.serialize_bits(&mut one, 1)?;
        b.write(&mut w)?;
    }
    let mut zero = 0;
    w.serialize_bits(&mut zero, 1)?;
    Ok(w.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
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
                channel: 1,
                reliable: true,
                ch_sequence: 1500,
                partial: false,
                partial_initial: false,
                partial_final: false,
                payload: vec![1, 2, 3],
            },
            Bunch {
                channel: 2,
                reliable: false,
                ch_sequence: 0,
                partial: true,
                partial_initial: true,
                partial_final: false,
                payload: vec![9; 953],
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
}
