//! Message objects: small, typed, bit-packed values that serialize, read and measure themselves
//! through one function, as in Glenn Fiedler's "Reliable Ordered Messages" ("Message Objects").
//!
//! The workload's messages travel as one of three types. The types exist for bit-packing, not
//! decoration: a small reliable event spends 8 bits on its length, a large event or a snapshot 12,
//! so the common case stays cheap while large messages remain possible. A [`MessageFactory`] knows how many
//! types there are, so a type id outside `0..num_types` on the wire is a malformed packet, exactly
//! the "strict bounds and malicious-packet discard" the seed asks the factory for.
//!
//! [`Message::serialize`] is generic over [`Stream`]; the same code writes ([`BitWriter`]), reads
//! ([`BitReader`]) and measures ([`MeasureStream`]) — measurement is what lets the channel decide
//! which messages fit into the remaining packet budget before writing anything.
//!
//! [`BitWriter`]: crate::wire::bits::BitWriter

use thiserror::Error;

use crate::wire::bits::{bits_required, BitError, BitReader, MeasureStream, Stream};
use crate::workload::MIN_MESSAGE_BYTES;

/// Largest payload a message may carry (bounds the large-event length field).
pub const MAX_MESSAGE_BYTES: u32 = 4096;
/// Largest payload of a snapshot or small event: an 8-bit length from [`MIN_MESSAGE_BYTES`].
pub const MAX_SMALL_MESSAGE_BYTES: u32 = MIN_MESSAGE_BYTES + 255;

/// The message types on the wire; the discriminant is the type id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MessageType {
    /// An unreliable state snapshot (12-bit length: snapshots are often the big ones).
    #[default]
    Snapshot = 0,
    /// A reliable event of at most [`MAX_SMALL_MESSAGE_BYTES`] (8-bit length).
    SmallEvent = 1,
    /// A reliable event above that, up to [`MAX_MESSAGE_BYTES`] (12-bit length).
    LargeEvent = 2,
}

/// Number of message types the factory creates.
pub const NUM_MESSAGE_TYPES: u32 = 3;

impl MessageType {
    fn from_id(id: u32) -> Option<Self> {
        match id {
            0 => Some(MessageType::Snapshot),
            1 => Some(MessageType::SmallEvent),
            2 => Some(MessageType::LargeEvent),
            _ => None,
        }
    }

    /// Inclusive payload length bounds of this type.
    fn length_bounds(self) -> (u32, u32) {
        match self {
            MessageType::SmallEvent => (MIN_MESSAGE_BYTES, MAX_SMALL_MESSAGE_BYTES),
            MessageType::Snapshot => (MIN_MESSAGE_BYTES, MAX_MESSAGE_BYTES),
            MessageType::LargeEvent => (MAX_SMALL_MESSAGE_BYTES + 1, MAX_MESSAGE_BYTES),
        }
    }
}

/// Why a message could not be created or decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum MessageError {
    /// The type id is not one the factory knows.
    #[error("message type id {type_id} out of range (factory knows {num_types})")]
    BadType { type_id: u32, num_types: u32 },
    /// The payload size is outside what any type can carry.
    #[error("message payload of {bytes} bytes is outside [{min}, {max}]")]
    BadSize { bytes: usize, min: u32, max: u32 },
    /// Bytes left over after the last message of a packet payload.
    #[error("{bytes} trailing bytes after the payload")]
    Trailing { bytes: usize },
    /// A message id written in full although the 1-bit "previous + 1" form applied.
    #[error("non-canonical message id encoding")]
    NonCanonicalId,
    /// The bits themselves were bad (truncated, out-of-range field, non-zero padding).
    #[error(transparent)]
    Bits(#[from] BitError),
}

/// One message object: its type and its payload (the workload's self-identifying bytes).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Message {
    pub kind: MessageType,
    pub payload: Vec<u8>,
}

impl Message {
    /// The unified serialize function: writes, reads or measures depending on the stream.
    ///
    /// On reading, `self.kind` must already be set (the factory created the object from the type
    /// id); the length is read within the type's bounds and the payload allocated to match.
    pub fn serialize<S: Stream>(&mut self, s: &mut S) -> Result<(), BitError> {
        let (min, max) = self.kind.length_bounds();
        let mut len = self.payload.len() as u32;
        s.serialize_u32(&mut len, min, max)?;
        if S::IS_READING {
            return s.read_bytes_into(&mut self.payload, len as usize);
        }
        s.serialize_bytes(&mut self.payload)
    }

    /// Bits this message takes when written with its type id from a byte boundary (the same
    /// serialize function run on a [`MeasureStream`]; it never fails and never reads the bytes).
    pub fn measure_bits(&mut self, factory: &MessageFactory) -> usize {
        let mut m = MeasureStream::new();
        let _ = factory.write(&mut m, self);
        m.bits_processed()
    }
}

/// Keeps `payload`'s buffer in `pool` for a later message, unless the pool holds `cap` already or
/// the buffer has no allocation to reuse (the endpoints' free lists of payload buffers).
pub fn keep_payload(pool: &mut Vec<Vec<u8>>, payload: Vec<u8>, cap: usize) {
    if pool.len() < cap && payload.capacity() > 0 {
        pool.push(payload);
    }
}

/// Creates message objects by type id and knows how many types exist (bounds on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageFactory {
    num_types: u32,
}

impl Default for MessageFactory {
    fn default() -> Self {
        Self { num_types: NUM_MESSAGE_TYPES }
    }
}

impl MessageFactory {
    pub fn num_types(&self) -> u32 {
        self.num_types
    }

    fn type_bits(&self) -> u32 {
        bits_required(self.num_types.saturating_sub(1) as u64)
    }

    /// An empty message of type `type_id`, or an error for an unknown id.
    pub fn create(&self, type_id: u32) -> Result<Message, MessageError> {
        match MessageType::from_id(type_id).filter(|_| type_id < self.num_types) {
            Some(kind) => Ok(Message { kind, payload: Vec::new() }),
            None => Err(MessageError::BadType { type_id, num_types: self.num_types }),
        }
    }

    /// Wraps a workload payload in the message type that fits it.
    pub fn wrap(&self, reliable: bool, payload: Vec<u8>) -> Result<Message, MessageError> {
        let n = payload.len() as u32;
        let kind = if !reliable {
            MessageType::Snapshot
        } else if n <= MAX_SMALL_MESSAGE_BYTES {
            MessageType::SmallEvent
        } else {
            MessageType::LargeEvent
        };
        let (min, max) = kind.length_bounds();
        let min = min.min(MIN_MESSAGE_BYTES);
        if n < min || n > max {
            return Err(MessageError::BadSize { bytes: payload.len(), min, max });
        }
        Ok(Message { kind, payload })
    }

    /// Writes or measures `message` preceded by its type id.
    pub fn write<S: Stream>(&self, s: &mut S, message: &mut Message) -> Result<(), BitError> {
        let mut t = message.kind as u32;
        s.serialize_u32(&mut t, 0, self.num_types - 1)?;
        message.serialize(s)
    }

    /// Reads a type id, creates the message and reads its fields.
    pub fn read(&self, r: &mut BitReader<'_>) -> Result<Message, MessageError> {
        self.read_into(r, Vec::new())
    }

    /// [`Self::read`] with the payload read into `buffer` (its old content replaced, its
    /// allocation kept): an endpoint reads every message of every packet, and a fresh buffer for
    /// each was an allocation per message.
    pub fn read_into(&self, r: &mut BitReader<'_>, buffer: Vec<u8>) -> Result<Message, MessageError> {
        let mut t = 0u32;
        let bits = self.type_bits();
        r.serialize_bits(&mut t, bits)?;
        let mut m = self.create(t)?;
        m.payload = buffer;
        m.serialize(r)?;
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::bits::BitWriter;

    #[test]
    fn write_read_and_measure_agree_for_every_type() {
        let f = MessageFactory::default();
        for (reliable, n) in [(false, 64usize), (true, 8), (true, 263), (true, 264), (true, 4096)] {
            let mut m = f.wrap(reliable, (0..n).map(|i| i as u8).collect()).unwrap();
            let mut w = BitWriter::with_capacity(8192);
            // Start off a byte boundary: measure is from a boundary, so allow alignment slack.
            w.serialize_bits(&mut 1, 3).unwrap();
            f.write(&mut w, &mut m).unwrap();
            let used = w.bits_processed() - 3;
            let measured = m.measure_bits(&f);
            assert!(used <= measured + 7 && measured <= used + 7, "{n}: used {used} measured {measured}");
            let bytes = w.finish();
            let mut r = BitReader::new(&bytes);
            r.serialize_bits(&mut 0, 3).unwrap();
            assert_eq!(f.read(&mut r).unwrap(), m);
        }
    }

    #[test]
    fn unknown_type_id_is_an_error() {
        let f = MessageFactory::default();
        // Type id 3 in the low two bits.
        let err = f.read(&mut BitReader::new(&[0b11, 0, 0])).unwrap_err();
        assert_eq!(err, MessageError::BadType { type_id: 3, num_types: 3 });
    }

    #[test]
    fn wrap_refuses_sizes_no_type_can_carry() {
        let f = MessageFactory::default();
        assert!(f.wrap(true, vec![0; 4]).is_err());
        assert!(f.wrap(true, vec![0; MAX_MESSAGE_BYTES as usize + 1]).is_err());
        assert!(f.wrap(false, vec![0; 300]).is_ok());
    }
}
