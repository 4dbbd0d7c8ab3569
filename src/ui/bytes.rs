//! What the bytes pane shows about the selected packet: its bytes, where they came from, and the
//! fields a decoder read in them with their bit spans (drawing is [`super::bytes_ui`]).
//!
//! The fields are the passive decoders' own ([`ackscope_protocol::decode`]): each strategy's
//! packets are read by the format that uses its codecs, so a field's span is where the codec
//! really put it. A field and its bytes select each other: clicking a field highlights its bytes
//! and bits, clicking a byte selects the narrowest field that covers it.
//!
//! Where the recording kept a datagram's bytes (a UDP lane's sockets, the proxy, a capture:
//! [`crate::model::payloads`]) they are shown as sent (EXACT). Otherwise a simulated lane's
//! packets are re-encoded by re-running the lane ([`crate::capture::reencode`]) and marked so; a
//! lane that cannot be re-run says why.

use std::ops::Range;

use ackscope_protocol::decode::{Field, FormatKind};
use ackscope_protocol::strategies::ue4::bunch::MIN_PACKET_BYTES;
use ackscope_protocol::{ClientId, Dir, Scenario, Strategy};

use crate::capture::reencode::{LaneSnapshot, ReencodeWorker};
use crate::model::Shown;

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

/// The format of exact bytes no decoder reads: shown as bytes, without fields.
pub const OPAQUE: &str = "opaque";

/// Reads `bytes` with the decoder named `name` (a foreign format a capture or the proxy picked:
/// `enet`, `kcp`, ...), when ackscope has one by that name.
pub fn decode_named(name: &str, dir: Dir, bytes: &[u8]) -> Option<(&'static str, Vec<Field>, Option<String>, bool)> {
    let kind = FormatKind::auto_candidates().into_iter().find(|k| k.name() == name)?;
    let mut format = kind.make();
    let name = format.name();
    // ENet and KCP are byte formats: their fields are whole bytes, read the same either way.
    Some(match format.parse(dir, bytes) {
        Ok(p) => (name, p.fields, None, true),
        Err(e) => (name, e.fields, Some(e.message), true),
    })
}

/// What decoding a packet needs, taken when it was asked for (its bytes may come later).
#[derive(Debug, Clone)]
struct Asked {
    lane_id: u64,
    client: ClientId,
    uid: u64,
    dir: Dir,
    strategy: Option<Strategy>,
    protocol: String,
    scenario: Scenario,
}

impl Asked {
    fn decoded(&self, bytes: Vec<u8>, provenance: Provenance) -> Result<PacketBytes, String> {
        let (format, fields, error, lsb_first) = match self.strategy {
            Some(strategy) => decode_with(strategy, &self.scenario, self.dir, &bytes),
            // Exact bytes of a protocol ackscope has no decoder for (a proxy's opaque traffic)
            // are still the bytes: shown without fields.
            None => match decode_named(&self.protocol, self.dir, &bytes) {
                Some(d) => d,
                None if provenance == Provenance::Exact => (OPAQUE, Vec::new(), None, true),
                None => return Err(format!("{} is a protocol ackscope does not decode", self.protocol)),
            },
        };
        Ok(PacketBytes { uid: self.uid, bytes, provenance, format, fields, error, lsb_first })
    }
}

/// The pane's state: the re-encoding worker (kept while the pane stays), the packet shown (or
/// being re-encoded) and the field selected in it.
#[derive(Debug, Default)]
pub struct BytesView {
    worker: Option<ReencodeWorker>,
    /// The packet asked of the worker, until its bytes come.
    waiting: Option<Asked>,
    /// The packet shown, or why its bytes cannot be shown.
    pub shown: Option<(u64, Result<PacketBytes, String>)>,
    /// The field selected (index into [`PacketBytes::fields`]).
    pub selected: Option<usize>,
}

impl BytesView {
    /// Shows link send `uid` of `lane`'s focused client: at once when the recording kept its
    /// bytes, else once the worker has re-encoded it ([`Self::poll`]; the frame never waits).
    pub fn show(&mut self, lane: &Shown<'_>, uid: u64) {
        let same = |u: u64| u == uid;
        if self.shown.as_ref().is_some_and(|(u, _)| same(*u)) || self.waiting.as_ref().is_some_and(|a| same(a.uid)) {
            return;
        }
        self.selected = None;
        self.waiting = None;
        self.shown = None;
        let asked = match Self::ask(lane, uid) {
            Ok(a) => a,
            Err(why) => {
                self.shown = Some((uid, Err(why)));
                return;
            }
        };
        if let Some(b) = lane.rec.payloads.as_ref().and_then(|p| p.get(asked.client, uid)) {
            self.shown = Some((uid, asked.decoded(b, Provenance::Exact)));
            return;
        }
        let snapshot = LaneSnapshot::of(lane.rec);
        if let Some(why) = snapshot.refusal() {
            let why = match &lane.rec.payloads {
                // The store had them once: say so rather than why a re-run cannot help.
                Some(p) if p.evicted() > 0 => {
                    format!("its bytes were dropped to keep to the live memory cap ({} older datagrams)", p.evicted())
                }
                _ => why.to_string(),
            };
            self.shown = Some((uid, Err(why)));
            return;
        }
        if self.worker.is_none() {
            self.worker = ReencodeWorker::spawn();
        }
        match &self.worker {
            Some(w) if w.request(snapshot, asked.client, uid) => self.waiting = Some(asked),
            _ => self.shown = Some((uid, Err("cannot start the re-encoding thread".into()))),
        }
    }

    fn ask(lane: &Shown<'_>, uid: u64) -> Result<Asked, String> {
        let row = lane.packets.row_by_uid(uid, &lane.ledger).ok_or("no such packet")?;
        let protocol = lane.info().protocol_at(row.time);
        Ok(Asked {
            lane_id: lane.rec.id(),
            client: lane.conn.client,
            uid,
            dir: row.dir,
            strategy: protocol.strategy,
            protocol: protocol.name.clone(),
            scenario: lane.rec.scenario_at(row.time.as_secs_f64()).unwrap_or_default(),
        })
    }

    /// Takes the worker's answer for the packet waited for, when it has come: true while the
    /// pane still waits (it says "re-encoding..." and looks again next frame).
    pub fn poll(&mut self) -> bool {
        let Some(asked) = &self.waiting else { return false };
        let Some(worker) = &self.worker else { return false };
        while let Some(reply) = worker.try_reply() {
            if (reply.lane_id, reply.client, reply.uid) != (asked.lane_id, asked.client, asked.uid) {
                continue; // an answer for a packet clicked before
            }
            let shown = reply.result.and_then(|b| asked.decoded(b, Provenance::ReEncoded));
            self.shown = Some((asked.uid, shown));
            self.waiting = None;
            return false;
        }
        true
    }

    /// The packet being re-encoded, while the pane waits for it.
    pub fn waiting_for(&self) -> Option<u64> {
        self.waiting.as_ref().map(|a| a.uid)
    }

    /// The bytes shown, when there are some.
    pub fn bytes(&self) -> Option<&PacketBytes> {
        self.shown.as_ref().and_then(|(_, r)| r.as_ref().ok())
    }
}
