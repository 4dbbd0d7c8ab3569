//! reliable.io's packet header and fragments with an opaque payload (ackscope's `acks` strategy
//! and `peer --raw`), read with the codecs the endpoints use ([`PacketHeader`], [`decode_fragment`]).

use crate::event::{Dir, MalformedReason};
use crate::reliability::ack::{fragment_malformed_reason, malformed_reason};
use crate::wire::ack_window::{acked_sequences, RELIABLE_IO_SEQ_BITS};
use crate::wire::fragment::{decode_fragment, FragmentConfig, FRAGMENT_HEADER_BYTES, FRAGMENT_PREFIX};
use crate::wire::header::{HeaderError, PacketHeader};

use super::format::WireFormat;
use super::record::{AckView, Fields, FragmentOf, ParseError, Parsed};

/// The fields of a reliable.io header encoded at byte `at` in `len` bytes.
pub(super) fn header_fields(f: &mut Fields, bytes: &[u8], at: usize, h: &PacketHeader, len: usize) {
    let prefix = bytes.get(at).copied().unwrap_or(0);
    f.bytes("prefix", format!("{prefix:#010b}"), at, 1);
    f.bytes("sequence", h.sequence, at + 1, 2);
    let short = prefix & (1 << 5) != 0;
    let ack_len = if short { 1 } else { 2 };
    let ack_text =
        if short { format!("{} (sequence - {})", h.ack, h.sequence.wrapping_sub(h.ack)) } else { h.ack.to_string() };
    f.bytes("ack", ack_text, at + 3, ack_len);
    let bits_at = at + 3 + ack_len;
    if len > bits_at - at {
        f.bytes("ack_bits", format!("{:#010x} (0xFF bytes left out)", h.ack_bits), bits_at, len - (bits_at - at));
    }
}

/// The acks a header carries: every sequence its bits name (none before anything arrived).
pub(super) fn header_acks(h: &PacketHeader) -> AckView {
    AckView { acked: acked_sequences(h.ack as u32, h.ack_bits, RELIABLE_IO_SEQ_BITS).collect(), nakked: Vec::new() }
}

/// Decodes a regular reliable.io header, with its fields, or the error with the fields read.
pub(super) fn read_header(bytes: &[u8]) -> Result<(PacketHeader, usize, Fields), ParseError> {
    let mut f = Fields::default();
    match PacketHeader::decode(bytes) {
        Ok((h, n)) => {
            header_fields(&mut f, bytes, 0, &h, n);
            Ok((h, n, f))
        }
        Err(e) => {
            if let Some(p) = bytes.first() {
                f.bytes("prefix", format!("{p:#010b}"), 0, 1);
            }
            Err(ParseError::new(malformed_reason(&e), e).with_fields(f))
        }
    }
}

/// reliable.io with an opaque payload.
#[derive(Debug, Clone, Default)]
pub struct ReliableFormat {
    pub fragments: FragmentConfig,
}

impl ReliableFormat {
    fn fragment(&self, bytes: &[u8]) -> Result<Parsed, ParseError> {
        let mut f = Fields::default();
        let frag = decode_fragment(bytes, &self.fragments).map_err(|e| {
            let mut f = Fields::default();
            f.bytes("prefix", format!("{:#04x} (fragment)", bytes[0]), 0, 1);
            ParseError::new(fragment_malformed_reason(&e), e).with_fields(f)
        })?;
        let h = frag.header;
        f.bytes("prefix", "0x01 (fragment)", 0, 1);
        f.bytes("sequence", h.sequence, 1, 2);
        f.bytes("fragment id", h.id, 3, 1);
        f.bytes("fragment count", format!("{} (sent minus one)", h.count), 4, 1);
        let mut acks = None;
        let mut data_at = FRAGMENT_HEADER_BYTES;
        if let Some((ph, n)) = frag.packet_header {
            header_fields(&mut f, bytes, FRAGMENT_HEADER_BYTES, &ph, n);
            acks = Some(header_acks(&ph));
            data_at += n;
        }
        f.bytes("payload", format!("{} bytes", frag.data.len()), data_at, frag.data.len());
        let summary = match frag.packet_header {
            Some((ph, _)) => format!(
                "fragment {}/{} of seq {} ack {} bits {:#x}",
                h.id + 1,
                h.count,
                h.sequence,
                ph.ack,
                ph.ack_bits
            ),
            None => format!("fragment {}/{} of seq {}, {} bytes", h.id + 1, h.count, h.sequence, frag.data.len()),
        };
        Ok(Parsed {
            summary,
            fields: f.into_vec(),
            sequence: Some(h.sequence as u32),
            acks,
            fragment: Some(FragmentOf { id: h.id as u16, count: h.count }),
            ..Parsed::default()
        })
    }
}

impl WireFormat for ReliableFormat {
    fn name(&self) -> &'static str {
        "reliable"
    }

    fn parse(&mut self, _dir: Dir, bytes: &[u8]) -> Result<Parsed, ParseError> {
        if bytes.first() == Some(&FRAGMENT_PREFIX) {
            return self.fragment(bytes);
        }
        if bytes.first().is_some_and(|p| p & 1 != 0) {
            return Err(ParseError::new(MalformedReason::BadHeader, HeaderError::ReservedBits));
        }
        let (h, n, mut f) = read_header(bytes)?;
        f.bytes("payload", format!("{} bytes", bytes.len() - n), n, bytes.len() - n);
        Ok(Parsed {
            summary: format!(
                "seq {} ack {} bits {:#x}, {} payload bytes",
                h.sequence,
                h.ack,
                h.ack_bits,
                bytes.len() - n
            ),
            fields: f.into_vec(),
            sequence: Some(h.sequence as u32),
            acks: Some(header_acks(&h)),
            ..Parsed::default()
        })
    }
}
