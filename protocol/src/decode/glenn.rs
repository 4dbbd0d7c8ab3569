//! Glenn's reliable-ordered messages after reliable.io's header (ackscope's `glenn` and `hybrid`
//! strategies), read with the strategy's own payload codec ([`decode_payload`]).
//!
//! Each reliable message is an item keyed by its 16-bit message id: the same id sent again is a
//! resend. Its workload id, when the payload proves one, names it in `MessageSent`, as the
//! strategy's own events do.

use crate::event::{Dir, MalformedReason, SendKind};
use crate::reliability::message::MessageFactory;
use crate::strategies::glenn::decode_payload;

use super::format::WireFormat;
use super::record::{workload_id, Item, ParseError, Parsed};
use super::reliable::{header_acks, read_header};

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
        f.bytes(
            "reliable messages",
            format!("{} (ids {})", decoded.reliable.len(), if ids.is_empty() { "-".into() } else { ids.join(", ") }),
            n,
            payload.len(),
        );
        f.bytes("unreliable messages", decoded.unreliable.len(), n, payload.len());
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
