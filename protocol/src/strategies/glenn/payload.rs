//! Glenn's packet payload: the bit-packed reliable and unreliable messages after the ack header
//! (layout in the parent module's doc), with a decoder that accepts only canonical encodings.

use crate::reliability::message::{Message, MessageError, MessageFactory};
use crate::wire::bits::{BitError, BitReader, BitWriter, Stream};

use super::MAX_MESSAGES_PER_PACKET_LIMIT;

/// The encoding of a payload without messages: the two 9-bit counts, zero, padded to the byte.
pub(super) const EMPTY_PAYLOAD: [u8; 3] = [0; 3];

/// A decoded packet payload.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DecodedPayload {
    pub reliable: Vec<(u16, Message)>,
    pub unreliable: Vec<Message>,
}

/// Decodes a payload; any malformation (bad type id, truncation, out-of-range field, non-zero
/// padding, trailing bytes, a non-canonical id) is an error, so every accepted payload re-encodes
/// to the same bytes.
pub fn decode_payload(factory: &MessageFactory, bytes: &[u8]) -> Result<DecodedPayload, MessageError> {
    let mut out = DecodedPayload::default();
    decode_payload_into(factory, bytes, &mut out)?;
    Ok(out)
}

/// [`decode_payload`] into `out` (cleared first), reusing its vectors: an endpoint decodes every
/// packet, and two new vectors each time were two allocations per packet. On an error `out`
/// holds what was decoded before it.
pub fn decode_payload_into(
    factory: &MessageFactory,
    bytes: &[u8],
    out: &mut DecodedPayload,
) -> Result<(), MessageError> {
    decode_payload_reusing(factory, bytes, out, &mut Vec::new())
}

/// [`decode_payload_into`] reading each message's payload into a buffer taken from `spare`;
/// the payloads `out` still holds from the last packet go to `spare` first. An endpoint that
/// also gives back the buffers of the messages it delivers allocates none per message received.
pub fn decode_payload_reusing(
    factory: &MessageFactory,
    bytes: &[u8],
    out: &mut DecodedPayload,
    spare: &mut Vec<Vec<u8>>,
) -> Result<(), MessageError> {
    // Popped, not drained: a `drain` costs its setup and drop even when empty, as most are.
    while let Some((_, m)) = out.reliable.pop() {
        spare.push(m.payload);
    }
    while let Some(m) = out.unreliable.pop() {
        spare.push(m.payload);
    }
    // A packet without messages (about half of them): two zero counts and zero padding are
    // exactly three zero bytes, the one canonical encoding of an empty payload.
    if bytes == EMPTY_PAYLOAD {
        return Ok(());
    }
    let mut r = BitReader::new(bytes);
    let mut n = 0u32;
    r.serialize_u32(&mut n, 0, MAX_MESSAGES_PER_PACKET_LIMIT)?;
    // Sized once (the count is bounded above): growing from empty was a realloc per packet.
    out.reliable.reserve_exact(n as usize);
    let mut prev: Option<u16> = None;
    for _ in 0..n {
        let mut id = 0u16;
        let consecutive = match prev {
            Some(_) => {
                let mut c = false;
                r.serialize_bool(&mut c)?;
                c
            }
            None => false,
        };
        match (consecutive, prev) {
            (true, Some(p)) => id = p.wrapping_add(1),
            _ => {
                r.serialize_u16(&mut id)?;
                // Canonical form only: "previous + 1" must use the 1-bit form.
                if prev.is_some_and(|p| id == p.wrapping_add(1)) {
                    return Err(MessageError::NonCanonicalId);
                }
            }
        }
        prev = Some(id);
        out.reliable.push((id, factory.read_into(&mut r, spare.pop().unwrap_or_default())?));
    }
    r.serialize_u32(&mut n, 0, MAX_MESSAGES_PER_PACKET_LIMIT)?;
    out.unreliable.reserve_exact(n as usize);
    for _ in 0..n {
        out.unreliable.push(factory.read_into(&mut r, spare.pop().unwrap_or_default())?);
    }
    r.align()?;
    if r.bits_remaining() != 0 {
        return Err(MessageError::Trailing { bytes: r.bits_remaining() / 8 });
    }
    Ok(())
}

/// Writes a reliable message id: 16 bits for the first, then 1 bit "previous + 1" or 16 bits.
pub(super) fn write_message_id(w: &mut BitWriter, prev: Option<u16>, id: u16) -> Result<(), BitError> {
    if let Some(p) = prev {
        let mut consecutive = id == p.wrapping_add(1);
        w.serialize_bool(&mut consecutive)?;
        if consecutive {
            return Ok(());
        }
    }
    w.serialize_u16(&mut id.clone())
}

/// Encodes a payload (the inverse of [`decode_payload`]; the endpoint writes straight from its
/// queues with the same layout). Counts above 256 or unencodable messages are an error.
pub fn encode_payload(factory: &MessageFactory, payload: &mut DecodedPayload) -> Result<Vec<u8>, BitError> {
    let room: usize = payload.reliable.iter().map(|(_, m)| m.payload.len() + 8).sum::<usize>()
        + payload.unreliable.iter().map(|m| m.payload.len() + 8).sum::<usize>()
        + 8;
    let mut w = BitWriter::with_capacity(room);
    let mut n = payload.reliable.len() as u32;
    w.serialize_u32(&mut n, 0, MAX_MESSAGES_PER_PACKET_LIMIT)?;
    let mut prev = None;
    for (id, m) in &mut payload.reliable {
        write_message_id(&mut w, prev, *id)?;
        prev = Some(*id);
        factory.write(&mut w, m)?;
    }
    let mut n = payload.unreliable.len() as u32;
    w.serialize_u32(&mut n, 0, MAX_MESSAGES_PER_PACKET_LIMIT)?;
    for m in &mut payload.unreliable {
        factory.write(&mut w, m)?;
    }
    Ok(w.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reliability::message::MessageType;

    /// The shortcut for an empty payload agrees with the encoder and with the general decoder:
    /// an empty payload encodes to exactly [`EMPTY_PAYLOAD`], decoding it leaves nothing (and
    /// returns the last packet's buffers), and every other short byte string decodes or fails
    /// exactly as before (only the general path sees it).
    #[test]
    fn the_empty_payload_shortcut_matches_encoder_and_decoder() {
        let f = MessageFactory::default();
        assert_eq!(encode_payload(&f, &mut DecodedPayload::default()).unwrap(), EMPTY_PAYLOAD);
        let mut out = DecodedPayload::default();
        let msg = Message { kind: MessageType::Snapshot, payload: vec![7; 12] };
        out.unreliable.push(msg.clone());
        out.reliable.push((3, msg));
        let mut spare = Vec::new();
        decode_payload_reusing(&f, &EMPTY_PAYLOAD, &mut out, &mut spare).unwrap();
        assert_eq!(out, DecodedPayload::default());
        assert_eq!(spare.len(), 2, "the last packet's buffers go to the free list");
        for bad in [&[0u8, 0][..], &[0, 0, 0, 0], &[0, 0, 0x80], &[1, 0, 0], &[]] {
            assert!(decode_payload(&f, bad).is_err(), "{bad:?} must stay malformed");
        }
    }
}
