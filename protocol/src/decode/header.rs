//! A game's own reliable.io-style header, described declaratively (a small RON file, README
//! "Decoding a game's own header"): where its sequence, ack and ack-bits fields sit, how wide
//! they are, their byte order, an optional protocol id the datagram must start with, and an
//! optional reliable message id. Many game protocols are exactly this shape (Glenn Fiedler's
//! articles made it common), so one description reads them all.
//!
//! Offsets and widths are in whole bytes; the sequence space is as wide as the sequence field.
//! Bit `i` of the ack bits names `ack - i` (or `ack - 1 - i` with `ack_bits_skip_ack`, for
//! headers whose bits start below the ack).

use serde::{Deserialize, Serialize};

use crate::event::{Dir, MalformedReason};

use super::format::WireFormat;
use super::record::{AckView, Fields, Item, ParseError, Parsed};

/// Byte order of the header's integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ByteOrder {
    #[default]
    Little,
    Big,
}

/// Where an integer field sits: its first byte and its width in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldSpec {
    pub offset: usize,
    pub bytes: usize,
}

/// A protocol id: where it sits and the value it must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtocolIdSpec {
    pub offset: usize,
    pub bytes: usize,
    pub value: u64,
}

/// A game's header (module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeaderSpec {
    /// Shown in records ("header: NAME").
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub byte_order: ByteOrder,
    #[serde(default)]
    pub protocol_id: Option<ProtocolIdSpec>,
    pub sequence: FieldSpec,
    pub ack: FieldSpec,
    #[serde(default)]
    pub ack_bits: Option<FieldSpec>,
    /// Bit 0 of the ack bits names `ack - 1`, not `ack` (the ack itself then counts as received).
    #[serde(default)]
    pub ack_bits_skip_ack: bool,
    /// A reliable message id the packet carries: sending the same id again is a resend.
    #[serde(default)]
    pub message_id: Option<FieldSpec>,
}

/// Largest offset a field may start at.
const MAX_OFFSET: usize = 4096;

impl HeaderSpec {
    /// Checks the widths and places; the error names the field and what is valid.
    pub fn validate(&self) -> Result<(), String> {
        let mut fields = vec![("sequence", self.sequence, 1..=4), ("ack", self.ack, 1..=4)];
        if let Some(b) = self.ack_bits {
            fields.push(("ack_bits", b, 1..=8));
        }
        if let Some(m) = self.message_id {
            fields.push(("message_id", m, 1..=8));
        }
        if let Some(p) = self.protocol_id {
            fields.push(("protocol_id", FieldSpec { offset: p.offset, bytes: p.bytes }, 1..=8));
            if p.bytes < 8 && p.value >> (p.bytes * 8) != 0 {
                return Err(format!("protocol_id.value {:#x} does not fit in {} bytes", p.value, p.bytes));
            }
        }
        for (name, f, widths) in &fields {
            if !widths.contains(&f.bytes) {
                return Err(format!("{name}.bytes is {}, valid is {} to {}", f.bytes, widths.start(), widths.end()));
            }
            if f.offset > MAX_OFFSET {
                return Err(format!("{name}.offset is {}, valid is 0 to {MAX_OFFSET}", f.offset));
            }
        }
        for (i, (a, fa, _)) in fields.iter().enumerate() {
            for (b, fb, _) in &fields[i + 1..] {
                if fa.offset < fb.offset + fb.bytes && fb.offset < fa.offset + fa.bytes {
                    return Err(format!(
                        "{a} (bytes {}..{}) overlaps {b} (bytes {}..{})",
                        fa.offset,
                        fa.offset + fa.bytes,
                        fb.offset,
                        fb.offset + fb.bytes
                    ));
                }
            }
        }
        Ok(())
    }

    /// Bytes a datagram needs to hold every field.
    pub fn min_bytes(&self) -> usize {
        let mut end = (self.sequence.offset + self.sequence.bytes).max(self.ack.offset + self.ack.bytes);
        for f in [self.ack_bits, self.message_id].into_iter().flatten() {
            end = end.max(f.offset + f.bytes);
        }
        if let Some(p) = self.protocol_id {
            end = end.max(p.offset + p.bytes);
        }
        end
    }

    fn read(&self, bytes: &[u8], offset: usize, width: usize) -> u64 {
        let b = &bytes[offset..offset + width];
        match self.byte_order {
            ByteOrder::Little => b.iter().rev().fold(0u64, |v, x| v << 8 | *x as u64),
            ByteOrder::Big => b.iter().fold(0u64, |v, x| v << 8 | *x as u64),
        }
    }
}

impl WireFormat for HeaderSpec {
    fn name(&self) -> &'static str {
        "header"
    }

    fn seq_bits(&self) -> u32 {
        (self.sequence.bytes.clamp(1, 4) * 8) as u32
    }

    fn parse(&mut self, _dir: Dir, bytes: &[u8]) -> Result<Parsed, ParseError> {
        if self.validate().is_err() {
            return Err(ParseError::new(MalformedReason::BadHeader, "invalid header description"));
        }
        let need = self.min_bytes();
        if bytes.len() < need {
            return Err(ParseError::new(
                MalformedReason::Truncated,
                format!("{} bytes, the header needs {need}", bytes.len()),
            ));
        }
        let mut f = Fields::default();
        if let Some(p) = self.protocol_id {
            let id = self.read(bytes, p.offset, p.bytes);
            f.bytes("protocol id", format!("{id:#x}"), p.offset, p.bytes);
            if id != p.value {
                let e =
                    ParseError::new(MalformedReason::Foreign, format!("protocol id {id:#x}, expected {:#x}", p.value));
                return Err(e.with_fields(f));
            }
        }
        let seq_bits = self.seq_bits();
        let mask = if seq_bits >= 32 { u32::MAX } else { (1u32 << seq_bits) - 1 };
        let seq = self.read(bytes, self.sequence.offset, self.sequence.bytes) as u32;
        let ack = self.read(bytes, self.ack.offset, self.ack.bytes) as u32 & mask;
        f.bytes("sequence", seq, self.sequence.offset, self.sequence.bytes);
        f.bytes("ack", ack, self.ack.offset, self.ack.bytes);
        let mut acked = Vec::new();
        match self.ack_bits {
            Some(b) => {
                let bits = self.read(bytes, b.offset, b.bytes);
                f.bytes("ack bits", format!("{bits:#x}"), b.offset, b.bytes);
                let skip = u32::from(self.ack_bits_skip_ack);
                if skip == 1 {
                    acked.push(ack);
                }
                for i in 0..(b.bytes as u32 * 8) {
                    if bits >> i & 1 != 0 {
                        acked.push(ack.wrapping_sub(i + skip) & mask);
                    }
                }
            }
            None => acked.push(ack),
        }
        let mut items = Vec::new();
        if let Some(m) = self.message_id {
            let id = self.read(bytes, m.offset, m.bytes);
            f.bytes("message id", id, m.offset, m.bytes);
            items.push(Item { key: id, stamp: None, msg: None });
        }
        if bytes.len() > need {
            f.bytes("payload", format!("{} bytes", bytes.len() - need), need, bytes.len() - need);
        }
        let name = if self.name.is_empty() { "header" } else { self.name.as_str() };
        Ok(Parsed {
            summary: format!("{name}: seq {seq} ack {ack}, {} acked", acked.len()),
            fields: f.into_vec(),
            sequence: Some(seq),
            acks: Some(AckView { acked, nakked: Vec::new() }),
            items,
            ..Parsed::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skirmish() -> HeaderSpec {
        HeaderSpec {
            name: "skirmish".into(),
            byte_order: ByteOrder::Big,
            protocol_id: Some(ProtocolIdSpec { offset: 0, bytes: 2, value: 0x5343 }),
            sequence: FieldSpec { offset: 2, bytes: 2 },
            ack: FieldSpec { offset: 4, bytes: 2 },
            ack_bits: Some(FieldSpec { offset: 6, bytes: 1 }),
            ack_bits_skip_ack: true,
            message_id: None,
        }
    }

    #[test]
    fn a_described_header_reads_its_acks() {
        let mut h = skirmish();
        h.validate().unwrap();
        let p = h.parse(Dir::AtoB, &[0x53, 0x43, 0, 10, 0, 8, 0b101, 0xEE]).unwrap();
        assert_eq!(p.sequence, Some(10));
        assert_eq!(p.acks.unwrap().acked, vec![8, 7, 5]);
        let e = h.parse(Dir::AtoB, &[0x00, 0x43, 0, 10, 0, 8, 0b101]).unwrap_err();
        assert_eq!(e.reason, MalformedReason::Foreign);
        assert!(h.parse(Dir::AtoB, &[0x53, 0x43, 0]).is_err());
    }

    #[test]
    fn bad_descriptions_name_the_field() {
        let mut h = skirmish();
        h.sequence.bytes = 5;
        assert!(h.validate().unwrap_err().contains("sequence.bytes"));
        let mut h = skirmish();
        h.ack.offset = 3;
        assert!(h.validate().unwrap_err().contains("overlaps"));
    }
}
