//! What a decoder makes of one datagram: named fields with their bit ranges (for display, and for
//! a bytes pane to highlight), and the format-neutral facts the tracker folds ([`Parsed`]).

use serde::{Deserialize, Serialize};

use crate::event::{ClientId, Dir, MalformedReason, SimTime};

/// One decoded field: its name, its value as text, and where it sits in the datagram.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    pub name: String,
    pub value: String,
    /// First bit of the field, counted from the datagram's first byte (bit 0 is that byte's
    /// lowest bit for bit-packed formats, its first bit in reading order for byte formats: both
    /// are `byte * 8 + bit`).
    pub start_bit: u32,
    pub bits: u32,
}

/// A growing list of fields, with the shorthands every decoder needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields(pub Vec<Field>);

impl Fields {
    /// A field of `bits` bits from bit `start_bit`.
    pub fn bits(&mut self, name: impl Into<String>, value: impl ToString, start_bit: usize, bits: usize) {
        self.0.push(Field {
            name: name.into(),
            value: value.to_string(),
            start_bit: start_bit as u32,
            bits: bits as u32,
        });
    }

    /// A field of `len` whole bytes from byte `start`.
    pub fn bytes(&mut self, name: impl Into<String>, value: impl ToString, start: usize, len: usize) {
        self.bits(name, value, start * 8, len * 8);
    }

    /// Every field, prefixed (`bunch 2.` + `channel`), shifted by `offset_bits`: a nested
    /// structure's fields as they sit in the whole datagram.
    pub fn nested(&mut self, prefix: &str, offset_bits: usize, inner: Fields) {
        for f in inner.0 {
            self.0.push(Field {
                name: format!("{prefix}{}", f.name),
                start_bit: f.start_bit + offset_bits as u32,
                ..f
            });
        }
    }

    pub fn into_vec(self) -> Vec<Field> {
        self.0
    }
}

/// Packet-level acknowledgements a datagram carries about the other direction's packets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AckView {
    /// Sequences (in the format's own width) the datagram says arrived.
    pub acked: Vec<u32>,
    /// Sequences it says did not arrive (UE4's Naks, dnm's skipped ranges).
    pub nakked: Vec<u32>,
}

/// A reliable unit the datagram carries: a message, a command, a segment. Sending the same `key`
/// again is a resend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    pub key: u64,
    /// What the sender stamps on this copy and the receiver echoes in its ack (ENet's header
    /// sent time, KCP's `ts`): it names which copy an ack answers.
    pub stamp: Option<u32>,
    /// The workload id its payload proves, when the payload is an ackscope workload message.
    pub msg: Option<u64>,
}

/// An acknowledgement of one item of the other direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemAck {
    pub key: u64,
    /// The stamp of the copy it answers, when the format echoes one.
    pub echo: Option<u32>,
}

/// A datagram that is one fragment of a packet: its acks and its receipt count only once every
/// fragment of the packet was delivered (the receiver reassembles before it reads anything).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FragmentOf {
    pub id: u16,
    pub count: u16,
}

/// Everything a format reads from one well-formed datagram.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// One line for a packet list ("seq 12 ack 10 bits 0x3ff" ...).
    pub summary: String,
    pub fields: Vec<Field>,
    /// The packet's own sequence, in the format's width.
    pub sequence: Option<u32>,
    /// Packet acks about the other direction.
    pub acks: Option<AckView>,
    /// Reliable units sent.
    pub items: Vec<Item>,
    /// Acks of the other direction's items.
    pub item_acks: Vec<ItemAck>,
    /// Every item of the other direction with a key below this is acknowledged (KCP's `una`).
    pub cumulative_ack: Option<u64>,
    /// Set when the datagram is a fragment of packet `sequence`.
    pub fragment: Option<FragmentOf>,
}

/// Why a datagram could not be decoded: the reason counted, a message, and the fields read
/// before the error (so a display still shows what made sense).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub reason: MalformedReason,
    pub message: String,
    pub fields: Vec<Field>,
}

impl ParseError {
    pub fn new(reason: MalformedReason, message: impl ToString) -> Self {
        Self { reason, message: message.to_string(), fields: Vec::new() }
    }

    pub fn with_fields(mut self, fields: Fields) -> Self {
        self.fields = fields.into_vec();
        self
    }
}

/// The record of one datagram for display: when, whose, how big, what a decoder read in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecodedPacket {
    /// The caller's id for this datagram (the proxy's send id).
    pub uid: u64,
    pub time: SimTime,
    pub client: ClientId,
    /// `AtoB` is client -> server, `BtoA` server -> client.
    pub dir: Dir,
    pub bytes: u32,
    /// Microseconds since the previous datagram of this client in this direction.
    pub gap_us: Option<u64>,
    /// The format that read it (`""` when none did: packet-level only).
    pub format: String,
    pub summary: String,
    pub fields: Vec<Field>,
    /// Why it did not decode, when it did not.
    pub malformed: Option<String>,
}

/// Reads the workload id an ackscope message payload starts with, when the rest of it proves the
/// id (`workload::check_payload`): a decoded message can then name the same message the
/// strategy's own events name.
pub fn workload_id(sender: crate::event::Side, payload: &[u8]) -> Option<u64> {
    crate::workload::check_payload(sender, payload)
}
