//! What the bytes pane shows about the selected packet: its bytes, where they came from, and the
//! fields a decoder read in them with their bit spans (drawing is [`super::bytes_ui`]).
//!
//! The fields are the passive decoders' own ([`ackscope_protocol::decode`]): each strategy's
//! packets are read by the format that uses its codecs, so a field's span is where the codec
//! really put it. A field and its bytes select each other: clicking a field highlights its bytes
//! and bits, clicking a byte selects the narrowest field that covers it.
//!
//! Recordings keep events, not bytes: a simulated lane's packets are re-encoded by re-running the
//! lane ([`crate::session::reencode`]) and marked so; a lane that cannot be re-run says why.

use std::ops::Range;

use ackscope_protocol::decode::{Field, FormatKind};
use ackscope_protocol::strategies::ue4::bunch::MIN_PACKET_BYTES;
use ackscope_protocol::{ClientId, Dir, Scenario, Strategy};

use crate::model::Shown;
use crate::session::reencode::Reencoder;

/// Where the bytes shown came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    /// The bytes that went on the wire, kept by the recording.
    Exact,
    /// Written again by re-running the lane's endpoints from its scenario and actions (every
    /// re-run send checked against the recorded one).
    ReEncoded,
}

/// One packet's bytes and the fields read in them.
#[derive(Debug, Clone, PartialEq)]
pub struct PacketBytes {
    pub uid: u64,
    pub bytes: Vec<u8>,
    pub provenance: Provenance,
    /// The decoder that read them (`glenn`, `ue4`, ...).
    pub format: &'static str,
    pub fields: Vec<Field>,
    /// Why the decoder stopped, when it did (the fields read before stay).
    pub error: Option<String>,
    /// Bit `k` of a field is bit `k % 8` counted from the byte's lowest bit (bit-packed codecs,
    /// written LSB first), rather than from its highest (byte formats).
    pub lsb_first: bool,
}

impl PacketBytes {
    /// The bytes field `i` touches.
    pub fn field_bytes(&self, i: usize) -> Range<usize> {
        let Some(f) = self.fields.get(i) else { return 0..0 };
        let start = (f.start_bit / 8) as usize;
        let end = (f.start_bit + f.bits.max(1)).div_ceil(8) as usize;
        start.min(self.bytes.len())..end.min(self.bytes.len())
    }

    /// The field that byte `byte` belongs to: the narrowest covering it (the first of equals).
    pub fn field_at_byte(&self, byte: usize) -> Option<usize> {
        (0..self.fields.len()).filter(|&i| self.field_bytes(i).contains(&byte)).min_by_key(|&i| self.fields[i].bits)
    }

    /// Whether bit `bit` (0 = the highest) of byte `byte` belongs to field `i`.
    pub fn bit_in_field(&self, i: usize, byte: usize, bit: u32) -> bool {
        let Some(f) = self.fields.get(i) else { return false };
        let k = if self.lsb_first { 7 - bit } else { bit };
        let pos = byte as u32 * 8 + k;
        pos >= f.start_bit && pos < f.start_bit + f.bits
    }
}

/// Reads `bytes` (sent in `dir`) with the decoder of `strategy`'s packets, configured as
/// `scenario` configures its endpoints: the decoder's name, its fields, why it stopped (if it
/// did) and whether its fields count bits LSB first.
pub fn decode_with(
    strategy: Strategy,
    scenario: &Scenario,
    dir: Dir,
    bytes: &[u8],
) -> (&'static str, Vec<Field>, Option<String>, bool) {
    use ackscope_protocol::decode::{blocks, notify, ue4, WireFormat};
    // Every bit-packed codec here (UE4's archive, dnm's ack ranges, Glenn's messages) writes the
    // lowest bit first; a byte format's fields are whole bytes, which read the same either way.
    let lsb_first = true;
    let mut format: Box<dyn WireFormat> = match strategy {
        Strategy::Ue4 => Box::new(ue4::Ue4Format {
            max_packet_bytes: (scenario.ue4.max_packet_bytes as usize).max(MIN_PACKET_BYTES) as u32,
        }),
        Strategy::Rellikt => Box::new(notify::RelliktFormat { protocol_id: scenario.rellikt.protocol_id }),
        Strategy::Chunks => Box::new(blocks::ChunkFormat { config: scenario.chunk }),
        Strategy::Fragments => Box::new(blocks::BaselineFormat { config: scenario.chunk }),
        Strategy::Glenn | Strategy::Hybrid => FormatKind::Glenn.make(),
        Strategy::Acks => FormatKind::Reliable.make(),
        Strategy::Dnm => FormatKind::Dnm.make(),
    };
    let name = format.name();
    match format.parse(dir, bytes) {
        Ok(p) => (name, p.fields, None, lsb_first),
        Err(e) => (name, e.fields, Some(e.message), lsb_first),
    }
}

/// The pane's state: the lane's re-encoder (kept while the lane stays), the packet shown and the
/// field selected in it.
#[derive(Debug, Default)]
pub struct BytesView {
    reencoder: Reencoder,
    /// The packet shown, or why its bytes cannot be shown.
    pub shown: Option<(u64, Result<PacketBytes, String>)>,
    /// The field selected (index into [`PacketBytes::fields`]).
    pub selected: Option<usize>,
}

impl BytesView {
    /// Shows link send `uid` of `lane`'s focused client (re-encoding it on first sight).
    pub fn show(&mut self, lane: &Shown<'_>, uid: u64) {
        if self.shown.as_ref().is_some_and(|(u, _)| *u == uid) {
            return;
        }
        self.selected = None;
        self.shown = Some((uid, self.packet_bytes(lane, uid)));
    }

    fn packet_bytes(&mut self, lane: &Shown<'_>, uid: u64) -> Result<PacketBytes, String> {
        let client: ClientId = lane.conn.client;
        let row = lane.packets.row_by_uid(uid, &lane.ledger).ok_or("no such packet")?;
        let bytes = self.reencoder.bytes_of(lane.rec, client, uid)?.to_vec();
        let strategy = lane.info().protocol_at(row.time).strategy.ok_or("a protocol ackscope does not decode")?;
        let scenario = lane.rec.scenario_at(row.time.as_secs_f64()).unwrap_or_default();
        let (format, fields, error, lsb_first) = decode_with(strategy, &scenario, row.dir, &bytes);
        Ok(PacketBytes { uid, bytes, provenance: Provenance::ReEncoded, format, fields, error, lsb_first })
    }

    /// The bytes shown, when there are some.
    pub fn bytes(&self) -> Option<&PacketBytes> {
        self.shown.as_ref().and_then(|(_, r)| r.as_ref().ok())
    }
}
