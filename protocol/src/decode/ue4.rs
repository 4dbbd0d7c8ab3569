//! UE4 packets and bunches (ackscope's `ue4` strategy), read with the strategy's own codec
//! ([`decode_packet_with`]).
//!
//! Acks: the notify header's history says for each of the `32 x words` sequences up to
//! `AckedSeq` whether it arrived (Ack) or not (Nak). Items: each workload message in a reliable
//! bunch, keyed by (channel, bunch sequence, place in the bunch); a partial bunch, whose messages
//! span several bunches, is one item. A resend of a reliable bunch (after a Nak) repeats its key.

use crate::event::{Dir, SendKind};
use crate::strategies::ue4::bunch::{decode_packet_with, split_messages, DEFAULT_MAX_PACKET_BYTES};
use crate::strategies::ue4::notify::BITS_PER_WORD;
use crate::strategies::ue4::sequence::SeqNum;

use super::format::WireFormat;
use super::record::{workload_id, AckView, Fields, Item, ParseError, Parsed};

/// UE4 packets of a connection with `max_packet_bytes` (`MaxPacket`, 1024 by default).
#[derive(Debug, Clone)]
pub struct Ue4Format {
    pub max_packet_bytes: u32,
}

impl Default for Ue4Format {
    fn default() -> Self {
        Self { max_packet_bytes: DEFAULT_MAX_PACKET_BYTES }
    }
}

impl WireFormat for Ue4Format {
    fn name(&self) -> &'static str {
        "ue4"
    }

    fn seq_bits(&self) -> u32 {
        SeqNum::BITS
    }

    fn resend_kind(&self) -> SendKind {
        SendKind::NakResend
    }

    fn parse(&mut self, dir: Dir, bytes: &[u8]) -> Result<Parsed, ParseError> {
        let packet = decode_packet_with(bytes, self.max_packet_bytes)
            .map_err(|e| ParseError::new(e.malformed_reason(), format!("ue4 packet: {e}")))?;
        let h = &packet.header;
        let mut f = Fields::default();
        f.bits("history words", h.history_word_count, 0, 4);
        f.bits("acked seq", h.acked_seq.get(), 4, 14);
        f.bits("seq", h.seq.get(), 18, 14);
        let history_len = h.history_word_count * BITS_PER_WORD;
        let mut acks = AckView::default();
        for i in 0..history_len {
            let seq = h.acked_seq.minus(i as u16).get() as u32;
            if h.history.is_delivered(i) {
                acks.acked.push(seq);
            } else {
                acks.nakked.push(seq);
            }
        }
        f.bits("history", format!("{} acked, {} nakked", acks.acked.len(), acks.nakked.len()), 32, history_len);
        let mut at = 32 + history_len;
        let mut items = Vec::new();
        let sender = dir.sender();
        for (i, b) in packet.bunches.iter().enumerate() {
            let header_bits = b.header_bits_for(self.max_packet_bytes);
            let kind = if b.reliable { format!("reliable chseq {}", b.ch_sequence) } else { "unreliable".into() };
            let flags = [(b.open, " open"), (b.close, " close"), (b.partial, " partial")]
                .iter()
                .filter(|(on, _)| *on)
                .map(|(_, s)| *s)
                .collect::<String>();
            f.bits(format!("bunch {i} header"), format!("channel {} {kind}{flags}", b.ch_index), at, header_bits);
            f.bits(
                format!("bunch {i} data"),
                format!("{} bytes", b.payload.len()),
                at + header_bits,
                b.payload.len() * 8,
            );
            at += header_bits + b.payload.len() * 8;
            if !b.reliable {
                continue;
            }
            let base = (b.ch_index as u64) << 32 | (b.ch_sequence as u64) << 8;
            match split_messages(&b.payload) {
                Ok(msgs) if !b.partial => {
                    for (k, m) in msgs.iter().enumerate().take(256) {
                        items.push(Item { key: base | k as u64, stamp: None, msg: workload_id(sender, m) });
                    }
                }
                _ => items.push(Item { key: base, stamp: None, msg: None }),
            }
        }
        // The archive ends with a 1 bit (where the reader finds the end) and zero padding to a
        // byte: bits of no bunch, named so every bit of the packet belongs to a field.
        if at < bytes.len() * 8 {
            f.bits("end marker and padding", "1 then zeros", at, bytes.len() * 8 - at);
        }
        Ok(Parsed {
            summary: format!(
                "seq {} acked {} ({} words), {} bunches",
                h.seq.get(),
                h.acked_seq.get(),
                h.history_word_count,
                packet.bunches.len()
            ),
            fields: f.into_vec(),
            sequence: Some(h.seq.get() as u32),
            acks: Some(acks),
            items,
            ..Parsed::default()
        })
    }
}
