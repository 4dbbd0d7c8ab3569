//! ackscope's delivery-notification formats, read with the strategies' own codecs: `dnm` (ack
//! ranges, [`read_packet`](crate::strategies::notify::dnm::wire::read_packet)) and `rellikt`
//! (protocol id, sequence, ack and bitfield).
//!
//! Messages ride behind both headers without ids of their own; each is an item keyed by the
//! workload id its payload proves (a message sent again after a timeout repeats it), or by a hash
//! of its bytes when it proves none.

use crate::event::{Dir, Side};
use crate::strategies::notify::dnm::wire::read_packet as read_dnm;
use crate::strategies::notify::rellikt::{read_packet as read_rellikt, RelliktConfig, RELLIKT_HEADER_BYTES};
use crate::wire::ack_window::{acked_sequences, RELIABLE_IO_SEQ_BITS};

use super::format::WireFormat;
use super::record::{workload_id, AckView, Fields, Item, ParseError, Parsed};

/// A message as an item: its workload id, or an FNV-1a hash of its bytes (top bit set, so the
/// two never meet).
fn message_item(sender: Side, m: &[u8]) -> Item {
    match workload_id(sender, m) {
        Some(id) => Item { key: id, stamp: None, msg: Some(id) },
        None => {
            let h = m.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ *b as u64).wrapping_mul(0x100_0000_01b3));
            Item { key: h | 1 << 63, stamp: None, msg: None }
        }
    }
}

/// `dnm`: tag, sequence, ack ranges, messages.
#[derive(Debug, Clone, Copy, Default)]
pub struct DnmFormat;

impl WireFormat for DnmFormat {
    fn name(&self) -> &'static str {
        "dnm"
    }

    fn parse(&mut self, dir: Dir, bytes: &[u8]) -> Result<Parsed, ParseError> {
        let p = read_dnm(bytes).map_err(|e| ParseError::new(e.reason(), format!("dnm packet: {e}")))?;
        let mut f = Fields::default();
        f.bytes("tag", format!("{:#04x}", bytes[0]), 0, 1);
        f.bytes("sequence", p.sequence, 1, 2);
        let ranges_bits = if p.acks.is_empty() {
            1
        } else {
            1 + 4 + p.acks.iter().map(|r| if r.count > 1 { 25 } else { 17 }).sum::<usize>()
        };
        let ranges: Vec<String> = p.acks.iter().map(|r| format!("{}+{}", r.start, r.count)).collect();
        f.bits("ack ranges", if ranges.is_empty() { "none".into() } else { ranges.join(", ") }, 24, ranges_bits);
        let msg_at = (24 + ranges_bits).div_ceil(8);
        f.bytes("messages", p.messages.len(), msg_at.min(bytes.len()), bytes.len().saturating_sub(msg_at));
        let acked =
            p.acks.iter().flat_map(|r| (0..r.count).map(move |i| r.start.wrapping_add(i as u16) as u32)).collect();
        let sender = dir.sender();
        Ok(Parsed {
            summary: format!("seq {} acks [{}], {} messages", p.sequence, ranges.join(", "), p.messages.len()),
            fields: f.into_vec(),
            sequence: Some(p.sequence as u32),
            acks: Some(AckView { acked, nakked: Vec::new() }),
            items: p.messages.iter().map(|m| message_item(sender, m)).collect(),
            ..Parsed::default()
        })
    }
}

/// `rellikt`: protocol id, sequence, ack, 32-bit ack bitfield, messages.
#[derive(Debug, Clone, Copy)]
pub struct RelliktFormat {
    pub protocol_id: u32,
}

impl Default for RelliktFormat {
    fn default() -> Self {
        Self { protocol_id: RelliktConfig::default().protocol_id }
    }
}

impl WireFormat for RelliktFormat {
    fn name(&self) -> &'static str {
        "rellikt"
    }

    fn parse(&mut self, dir: Dir, bytes: &[u8]) -> Result<Parsed, ParseError> {
        let (h, msgs) = read_rellikt(bytes, self.protocol_id)
            .map_err(|e| ParseError::new(e.reason(), format!("rellikt packet: {e}")))?;
        let mut f = Fields::default();
        f.bytes("protocol id", format!("{:#010x}", h.protocol_id), 0, 4);
        f.bytes("sequence", h.sequence, 4, 2);
        f.bytes("ack", h.ack, 6, 2);
        f.bytes("ack bits", format!("{:#010x}", h.ack_bits), 8, 4);
        f.bytes("messages", msgs.len(), RELLIKT_HEADER_BYTES, bytes.len() - RELLIKT_HEADER_BYTES);
        let sender = dir.sender();
        Ok(Parsed {
            summary: format!("seq {} ack {} bits {:#x}, {} messages", h.sequence, h.ack, h.ack_bits, msgs.len()),
            fields: f.into_vec(),
            sequence: Some(h.sequence as u32),
            acks: Some(AckView {
                acked: acked_sequences(h.ack as u32, h.ack_bits, RELIABLE_IO_SEQ_BITS).collect(),
                nakked: Vec::new(),
            }),
            items: msgs.iter().map(|m| message_item(sender, m)).collect(),
            ..Parsed::default()
        })
    }
}
