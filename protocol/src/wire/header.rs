//! The packet-ack header in reliable.io's wire format, so our endpoint talks to a reliable.io one.
//!
//! Layout (all integers little-endian, 4..=9 bytes): a prefix byte (bit 0 = 0 for a regular
//! packet; bit 1+k set when ack_bits byte k is on the wire, a byte equal to 0xFF being left out;
//! bit 5 set when `(sequence - ack) mod 65536 <= 255`, the ack then being one byte of difference),
//! then sequence u16, ack (u8 difference or u16), then the present ack_bits bytes, lowest first.
//!
//! Decoding is strict: only the canonical encoding of a header is accepted (a fragment prefix,
//! reserved bits, a present 0xFF byte or a u16 ack whose difference fits one byte are all
//! malformed), so `encode(decode(bytes)) == bytes` for every accepted header.

use thiserror::Error;

/// Sequence, most recent received sequence, and the 32-packet ack bitfield.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct PacketHeader {
    pub sequence: u16,
    /// Most recent sequence received from the peer (65535 before anything arrived).
    pub ack: u16,
    /// Bit i set: packet `ack - i` was received (bit 0 is `ack` itself).
    pub ack_bits: u32,
}

/// Largest encoded header.
pub const MAX_HEADER_BYTES: usize = 9;

/// Why a header failed to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error, serde::Serialize, serde::Deserialize)]
pub enum HeaderError {
    #[error("packet too short for its header ({len} bytes, need {need})")]
    Truncated { len: usize, need: usize },
    #[error("fragment packets are not accepted here")]
    Fragment,
    #[error("reserved prefix bits set")]
    ReservedBits,
    #[error("ack_bits byte {byte} is 0xFF but was sent (non-canonical)")]
    NonCanonicalAckBits { byte: u8 },
    #[error("ack sent as u16 although its difference fits in a byte (non-canonical)")]
    NonCanonicalAck,
}

impl PacketHeader {
    /// Appends the encoded header to `out`, returning its length.
    #[inline]
    pub fn encode(&self, out: &mut Vec<u8>) -> usize {
        let mut buf = [0u8; MAX_HEADER_BYTES];
        let n = self.encode_into(&mut buf);
        // The whole buffer, then cut back: a copy of fixed size is a few moves, one of `n` bytes
        // was a `memcpy` call per packet sent.
        let len = out.len();
        out.extend_from_slice(&buf);
        out.truncate(len + n);
        n
    }

    /// Writes the header into `buf`, returning its length (4..=9).
    #[inline]
    pub fn encode_into(&self, buf: &mut [u8; MAX_HEADER_BYTES]) -> usize {
        let mut prefix = 0u8;
        let bytes = self.ack_bits.to_le_bytes();
        for (k, b) in bytes.iter().enumerate() {
            if *b != 0xFF {
                prefix |= 1 << (1 + k);
            }
        }
        let diff = self.sequence.wrapping_sub(self.ack);
        let short_ack = diff <= 255;
        if short_ack {
            prefix |= 1 << 5;
        }
        buf[0] = prefix;
        buf[1..3].copy_from_slice(&self.sequence.to_le_bytes());
        let mut n = 3;
        if short_ack {
            buf[n] = diff as u8;
            n += 1;
        } else {
            buf[n..n + 2].copy_from_slice(&self.ack.to_le_bytes());
            n += 2;
        }
        for (k, b) in bytes.iter().enumerate() {
            if *b != 0xFF {
                buf[n] = *b;
                n += 1;
            }
            let _ = k;
        }
        n
    }

    /// Decodes a header from the front of `bytes`, returning it and its length.
    // Always inline: once per packet received, and a call of its own cost about 25 of its 65
    // instructions (the result goes back through memory).
    #[inline(always)]
    pub fn decode(bytes: &[u8]) -> Result<(PacketHeader, usize), HeaderError> {
        let Some(&prefix) = bytes.first() else {
            return Err(HeaderError::Truncated { len: 0, need: 4 });
        };
        if prefix & 1 != 0 {
            return Err(HeaderError::Fragment);
        }
        if prefix & 0xC0 != 0 {
            return Err(HeaderError::ReservedBits);
        }
        let short_ack = prefix & (1 << 5) != 0;
        let present = ((prefix >> 1) & 0x0F).count_ones() as usize;
        let need = 3 + if short_ack { 1 } else { 2 } + present;
        if bytes.len() < need {
            return Err(HeaderError::Truncated { len: bytes.len(), need });
        }
        let sequence = u16::from_le_bytes([bytes[1], bytes[2]]);
        let mut n = 3;
        let ack = if short_ack {
            let d = bytes[n];
            n += 1;
            sequence.wrapping_sub(d as u16)
        } else {
            let a = u16::from_le_bytes([bytes[n], bytes[n + 1]]);
            n += 2;
            if sequence.wrapping_sub(a) <= 255 {
                return Err(HeaderError::NonCanonicalAck);
            }
            a
        };
        let mut ack_bytes = [0xFFu8; 4];
        for (k, slot) in ack_bytes.iter_mut().enumerate() {
            if prefix & (1 << (1 + k)) != 0 {
                let b = bytes[n];
                n += 1;
                if b == 0xFF {
                    return Err(HeaderError::NonCanonicalAckBits { byte: k as u8 });
                }
                *slot = b;
            }
        }
        Ok((PacketHeader { sequence, ack, ack_bits: u32::from_le_bytes(ack_bytes) }, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_received_yet_encodes_as_reliable_io_does() {
        // reliable.io's first packet: sequence 0, ack 65535, ack_bits 0 -> diff 1 (short ack),
        // all four ack_bits bytes present.
        let h = PacketHeader { sequence: 0, ack: 65535, ack_bits: 0 };
        let mut out = Vec::new();
        h.encode(&mut out);
        assert_eq!(out, vec![0b0011_1110, 0, 0, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn full_ack_bits_and_far_ack_give_five_bytes() {
        let h = PacketHeader { sequence: 1000, ack: 10, ack_bits: u32::MAX };
        let mut out = Vec::new();
        assert_eq!(h.encode(&mut out), 5);
        assert_eq!(PacketHeader::decode(&out).unwrap(), (h, 5));
    }
}
