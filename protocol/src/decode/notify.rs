//! ackscope's delivery-notification formats, read with the strategies' own codecs: `dnm` (ack
//! ranges, [`read_packet`](crate::strategies::notify::dnm::wire::read_packet)) and `rellikt`
//! (protocol id, sequence, ack and bitfield).
//!
//! Messages ride behind both headers without ids of their own; each is an item keyed by the
//! workload id its payload proves (a message sent again after a timeout repeats it), or by a hash
//! of its bytes when it proves none.

use crate::event::{Dir, DiscardReason, Side, SimTime};
use crate::strategies::notify::dnm::wire::read_packet as read_dnm;
use crate::strategies::notify::dnm::{DeliveryNotificationManager, DnmConfig};
use crate::strategies::notify::rellikt::{read_packet as read_rellikt, RelliktConfig, RELLIKT_HEADER_BYTES};
use crate::wire::ack_window::{acked_sequences, RELIABLE_IO_SEQ_BITS};

use super::format::WireFormat;
use super::record::{workload_id, AckView, Fields, Item, ParseError, Parsed};
use super::track::AckRule;

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
///
/// Its endpoints act on the acks that reach them as the book's manager does, and the decoder
/// does the same, with dnm's default settings (it cannot see the endpoints' own): a packet older
/// than the newest its receiver processed is dropped unread, the acks it carries with it
/// ([`WireFormat::admit`], the receiving side's own [`DeliveryNotificationManager`] deciding);
/// a sender's packets wait in send order, so an ack fails every older one still waiting, and one
/// unacked after `timeout_ms` has failed ([`AckRule`]). Counting every ack on the wire instead
/// read 841 acks where the endpoints took 650 (12 % loss, 4 % duplicates, 25 ms jitter).
/// `dnm.accept_late=true` breaks the book's rule on purpose: its late packets are then counted
/// as discarded here though the endpoint read them.
#[derive(Debug, Clone)]
pub struct DnmFormat {
    /// What each direction's receiver has processed (`Dir::index`): its admission rule.
    receivers: [DeliveryNotificationManager; 2],
    config: DnmConfig,
}

impl Default for DnmFormat {
    fn default() -> Self {
        let config = DnmConfig::default();
        Self { receivers: [DeliveryNotificationManager::new(config), DeliveryNotificationManager::new(config)], config }
    }
}

impl WireFormat for DnmFormat {
    fn name(&self) -> &'static str {
        "dnm"
    }

    fn ack_rule(&self) -> AckRule {
        AckRule { in_order: true, timeout_us: Some((self.config.timeout_ms * 1000.0) as u64) }
    }

    /// dnm's endpoints read the loss the acks lost on the way back explain out of their count
    /// (`strategies::notify::endpoint`), with each ack range in `ack_repeat` packets.
    fn ack_redundancy(&self) -> Option<u32> {
        Some(self.config.ack_repeat.max(1))
    }

    fn admit(&mut self, dir: Dir, seq: u32, at: SimTime) -> Option<DiscardReason> {
        let m = &mut self.receivers[dir.index()];
        let seen = m.processed_recently(seq as u16);
        match (m.process_sequence(at, seq as u16), seen) {
            (true, _) => None,
            (false, true) => Some(DiscardReason::Duplicate),
            (false, false) => Some(DiscardReason::Late),
        }
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
        // The ranges are bit-packed and padded with zeros to the messages' byte.
        if (24 + ranges_bits) < msg_at * 8 {
            f.bits("padding", "zeros", 24 + ranges_bits, msg_at * 8 - 24 - ranges_bits);
        }
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

    /// rellikt's loss rule: not acked within `loss_timeout_ms` (its default) = lost, and an ack
    /// arriving later is ignored.
    fn ack_rule(&self) -> AckRule {
        AckRule { in_order: false, timeout_us: Some((RelliktConfig::default().loss_timeout_ms * 1000.0) as u64) }
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
