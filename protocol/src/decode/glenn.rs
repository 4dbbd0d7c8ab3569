//! Glenn's reliable-ordered messages after reliable.io's header (ackscope's `glenn` and `hybrid`
//! strategies), read with the strategy's own payload codec ([`decode_payload`]).
//!
//! Each reliable message is an item keyed by its 16-bit message id: the same id sent again is a
//! resend. Its workload id, when the payload proves one, names it in `MessageSent`, as the
//! strategy's own events do.

use crate::event::{Dir, MalformedReason, SendKind};
use crate::reliability::message::MessageFactory;
use crate::strategies::glenn::{decode_payload, DecodedPayload, MAX_MESSAGES_PER_PACKET_LIMIT};
use crate::wire::bits::{BitError, BitWriter, Stream};

use super::format::WireFormat;
use super::record::{workload_id, Item, ParseError, Parsed};
use super::reliable::{header_acks, read_header};

/// The bits each message list of `decoded` takes, written as the strategy writes them: the
/// reliable list (its count, each id in full or as "previous + 1", each message) and the
/// unreliable one (its count, each message).
fn list_bits(factory: &MessageFactory, decoded: &DecodedPayload, bytes: usize) -> Result<(usize, usize), BitError> {
    // They were read from `bytes`: written again they fit in as many (and a margin).
    let mut w = BitWriter::with_capacity(bytes + 16);
    let mut n = decoded.reliable.len() as u32;
    w.serialize_u32(&mut n, 0, MAX_MESSAGES_PER_PACKET_LIMIT)?;
    let mut prev: Option<u16> = None;
    for (id, m) in &decoded.reliable {
        if let Some(p) = prev {
            let mut consecutive = *id == p.wrapping_add(1);
            w.serialize_bool(&mut consecutive)?;
            if !consecutive {
                w.serialize_u16(&mut id.clone())?;
            }
        } else {
            w.serialize_u16(&mut id.clone())?;
        }
        prev = Some(*id);
        factory.write(&mut w, &mut m.clone())?;
    }
    let reliable = w.bits_processed();
    let mut n = decoded.unreliable.len() as u32;
    w.serialize_u32(&mut n, 0, MAX_MESSAGES_PER_PACKET_LIMIT)?;
    for m in &decoded.unreliable {
        factory.write(&mut w, &mut m.clone())?;
    }
    Ok((reliable, w.bits_processed() - reliable))
}

/// Glenn's packets: reliable.io header, then bit-packed messages.
#[derive(Debug, Clone, Default)]
pub struct GlennFormat {
    factory: MessageFactory,
}

impl WireFormat for GlennFormat {
    fn name(&self) -> &'static str {
        "glenn"
    }

    fn resend_kind(&self) -> SendKind {
        SendKind::DelayResend
    }

    fn parse(&mut self, dir: Dir, bytes: &[u8]) -> Result<Parsed, ParseError> {
        let (h, n, mut f) = read_header(bytes)?;
        let payload = &bytes[n..];
        let decoded = decode_payload(&self.factory, payload).map_err(|e| {
            ParseError::new(MalformedReason::BadPayload, format!("glenn payload: {e}")).with_fields(f.clone())
        })?;
        let ids: Vec<String> = decoded.reliable.iter().map(|(id, _)| id.to_string()).collect();
        // Each list's own bits (the payload is bit-packed: the lists meet inside a byte), then
        // the zero padding to a byte.
        let (reliable_bits, unreliable_bits) = list_bits(&self.factory, &decoded, payload.len()).map_err(|e| {
            ParseError::new(MalformedReason::BadPayload, format!("glenn payload: {e}")).with_fields(f.clone())
        })?;
        f.bits(
            "reliable messages",
            format!("{} (ids {})", decoded.reliable.len(), if ids.is_empty() { "-".into() } else { ids.join(", ") }),
            n * 8,
            reliable_bits,
        );
        f.bits("unreliable messages", decoded.unreliable.len(), n * 8 + reliable_bits, unreliable_bits);
        let used = reliable_bits + unreliable_bits;
        if used < payload.len() * 8 {
            f.bits("padding", "zeros", n * 8 + used, payload.len() * 8 - used);
        }
        let sender = dir.sender();
        let items = decoded
            .reliable
            .iter()
            .map(|(id, m)| Item { key: *id as u64, stamp: None, msg: workload_id(sender, &m.payload) })
            .collect();
        Ok(Parsed {
            summary: format!(
                "seq {} ack {} bits {:#x}, {} reliable + {} unreliable messages",
                h.sequence,
                h.ack,
                h.ack_bits,
                decoded.reliable.len(),
                decoded.unreliable.len()
            ),
            fields: f.into_vec(),
            sequence: Some(h.sequence as u32),
            acks: Some(header_acks(&h)),
            items,
            ..Parsed::default()
        })
    }
}
