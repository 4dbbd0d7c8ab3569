//! The chunk system's two packet types, serialized with the unified bit streams.
//!
//! Slice packet: tag, packet sequence, chunk id (16 bits), slice id in `[0, max_slices)`, slice
//! count in `[1, max_slices]`, the last slice's size in `[1, slice_bytes]` (only on the last
//! slice: all others are exactly `slice_bytes`, as in the seed), then the aligned data.
//! Ack packet: tag, packet sequence, chunk id, slice count, one bit per slice.
//! The tag byte keeps the two apart and lets the chunk system share a socket later; the 16-bit
//! sequence only names the datagram in events (the chunk protocol's reliability is the bitfield).

use thiserror::Error;

use super::ChunkConfig;
use crate::link::IP_UDP_OVERHEAD_BYTES;
use crate::wire::bits::{bits_required, BitError, BitReader, BitWriter, Stream};

/// First byte of a slice packet.
pub const SLICE_TAG: u8 = 0xC5;
/// First byte of an ack packet.
pub const ACK_TAG: u8 = 0xCA;

/// One slice of a chunk.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SlicePacket {
    pub seq: u16,
    pub chunk_id: u16,
    pub slice_id: u32,
    pub num_slices: u32,
    pub data: Vec<u8>,
}

/// The receiver's whole view of one chunk: a bit per slice, received or not.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AckPacket {
    pub seq: u16,
    pub chunk_id: u16,
    pub num_slices: u32,
    pub acked: Vec<bool>,
}

/// A decoded chunk-system packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkPacket {
    Slice(SlicePacket),
    Ack(AckPacket),
}

/// Why bytes are not a valid chunk packet (or a packet cannot be written).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum PacketError {
    #[error("empty packet")]
    Empty,
    #[error("unknown packet tag {0:#04x}")]
    UnknownTag(u8),
    #[error(transparent)]
    Bits(#[from] BitError),
    #[error("{0} trailing bytes after the packet")]
    Trailing(usize),
    #[error("slice data or ack bitfield length does not match the header")]
    Layout,
}

fn serialize_slice<S: Stream>(s: &mut S, p: &mut SlicePacket, cfg: &ChunkConfig) -> Result<(), PacketError> {
    let max = cfg.slice_limit() as u32;
    let size = cfg.slice_size() as u32;
    s.serialize_u16(&mut p.seq)?;
    s.serialize_u16(&mut p.chunk_id)?;
    s.serialize_u32(&mut p.slice_id, 0, max - 1)?;
    s.serialize_u32(&mut p.num_slices, 1, max)?;
    let mut len = p.data.len() as u32;
    if p.slice_id + 1 == p.num_slices {
        s.serialize_u32(&mut len, 1, size)?;
    } else {
        if !S::IS_READING && len != size {
            return Err(PacketError::Layout);
        }
        len = size;
    }
    if S::IS_READING {
        p.data.resize(len as usize, 0);
    }
    s.serialize_bytes(&mut p.data)?;
    Ok(())
}

fn serialize_ack<S: Stream>(s: &mut S, p: &mut AckPacket, cfg: &ChunkConfig) -> Result<(), PacketError> {
    let max = cfg.slice_limit() as u32;
    s.serialize_u16(&mut p.seq)?;
    s.serialize_u16(&mut p.chunk_id)?;
    s.serialize_u32(&mut p.num_slices, 1, max)?;
    if S::IS_READING {
        p.acked.resize(p.num_slices as usize, false);
    } else if p.acked.len() != p.num_slices as usize {
        return Err(PacketError::Layout);
    }
    for a in &mut p.acked {
        s.serialize_bool(a)?;
    }
    Ok(())
}

fn writer(cfg: &ChunkConfig) -> BitWriter {
    BitWriter::with_capacity(cfg.slice_size() + cfg.slice_limit() / 8 + 32)
}

/// Appends the encoded slice packet to `out`.
pub fn write_slice(p: &SlicePacket, cfg: &ChunkConfig, out: &mut Vec<u8>) -> Result<(), PacketError> {
    let mut w = writer(cfg);
    let mut tag = SLICE_TAG;
    w.serialize_u8(&mut tag)?;
    serialize_slice(&mut w, &mut p.clone(), cfg)?;
    out.extend_from_slice(&w.finish());
    Ok(())
}

/// Appends the encoded ack packet to `out`.
pub fn write_ack(p: &AckPacket, cfg: &ChunkConfig, out: &mut Vec<u8>) -> Result<(), PacketError> {
    let mut w = writer(cfg);
    let mut tag = ACK_TAG;
    w.serialize_u8(&mut tag)?;
    serialize_ack(&mut w, &mut p.clone(), cfg)?;
    w.align()?;
    out.extend_from_slice(&w.finish());
    Ok(())
}

/// Decodes any bytes: a packet, or why not. Never panics; trailing bytes are an error so that
/// each packet has exactly one encoding.
pub fn decode_packet(bytes: &[u8], cfg: &ChunkConfig) -> Result<ChunkPacket, PacketError> {
    let Some(&tag) = bytes.first() else {
        return Err(PacketError::Empty);
    };
    let mut r = BitReader::new(bytes);
    let mut t = 0u8;
    r.serialize_u8(&mut t)?;
    let packet = match tag {
        SLICE_TAG => {
            let mut p = SlicePacket::default();
            serialize_slice(&mut r, &mut p, cfg)?;
            ChunkPacket::Slice(p)
        }
        ACK_TAG => {
            let mut p = AckPacket::default();
            serialize_ack(&mut r, &mut p, cfg)?;
            r.align()?;
            ChunkPacket::Ack(p)
        }
        other => return Err(PacketError::UnknownTag(other)),
    };
    if !r.at_end() {
        return Err(PacketError::Trailing(r.bits_remaining() / 8));
    }
    Ok(packet)
}

/// Encoded size of a slice packet carrying `data_bytes`, without writing it.
pub fn slice_packet_bytes(cfg: &ChunkConfig, data_bytes: usize, is_last: bool) -> usize {
    let max = cfg.slice_limit() as u64;
    let mut bits = 8 + 16 + 16 + bits_required(max - 1) as usize + bits_required(max - 1) as usize;
    if is_last {
        bits += bits_required(cfg.slice_size() as u64 - 1) as usize;
    }
    bits.div_ceil(8) + data_bytes
}

/// Bytes a chunk of `bytes` takes on the wire when every slice is sent once, IP+UDP included.
pub fn chunk_wire_bytes(config: &ChunkConfig, bytes: usize) -> usize {
    let n = config.slices_for(bytes);
    let size = config.slice_size();
    let last_len = bytes.saturating_sub((n - 1) * size).max(1);
    (n - 1) * (slice_packet_bytes(config, size, false) + IP_UDP_OVERHEAD_BYTES as usize)
        + slice_packet_bytes(config, last_len, true)
        + IP_UDP_OVERHEAD_BYTES as usize
}

/// Encoded size of an ack packet for `num_slices`.
pub fn ack_packet_bytes(cfg: &ChunkConfig, num_slices: usize) -> usize {
    let max = cfg.slice_limit() as u64;
    (8 + 16 + 16 + bits_required(max - 1) as usize + num_slices).div_ceil(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_and_ack_round_trip_with_their_predicted_sizes() {
        let cfg = ChunkConfig::default();
        for (slice_id, num_slices, len) in [(0u32, 3u32, 1024usize), (2, 3, 17), (0, 1, 1), (255, 256, 1024)] {
            let p = SlicePacket { seq: 7, chunk_id: 65535, slice_id, num_slices, data: vec![0xAB; len] };
            let mut out = Vec::new();
            write_slice(&p, &cfg, &mut out).unwrap();
            assert_eq!(out.len(), slice_packet_bytes(&cfg, len, slice_id + 1 == num_slices));
            assert_eq!(decode_packet(&out, &cfg), Ok(ChunkPacket::Slice(p)));
        }
        let acked: Vec<bool> = (0..256).map(|i| i % 3 == 0).collect();
        let a = AckPacket { seq: 1, chunk_id: 3, num_slices: 256, acked };
        let mut out = Vec::new();
        write_ack(&a, &cfg, &mut out).unwrap();
        assert_eq!(out.len(), ack_packet_bytes(&cfg, 256));
        assert_eq!(out.len(), 38);
        assert_eq!(decode_packet(&out, &cfg), Ok(ChunkPacket::Ack(a)));
    }

    #[test]
    fn a_full_slice_packet_is_seven_bytes_of_header() {
        assert_eq!(slice_packet_bytes(&ChunkConfig::default(), 1024, false), 1031);
    }

    #[test]
    fn short_non_last_slices_and_trailing_bytes_are_refused() {
        let cfg = ChunkConfig::default();
        let p = SlicePacket { seq: 0, chunk_id: 0, slice_id: 0, num_slices: 2, data: vec![1; 10] };
        assert_eq!(write_slice(&p, &cfg, &mut Vec::new()), Err(PacketError::Layout));
        let p = SlicePacket { num_slices: 1, ..p };
        let mut out = Vec::new();
        write_slice(&p, &cfg, &mut out).unwrap();
        out.push(0);
        assert_eq!(decode_packet(&out, &cfg), Err(PacketError::Trailing(1)));
    }
}
