//! What the packet detail pane says about one packet: its header field by field, what it
//! carried, and its fate, gathered from a recording (drawing is [`super::packet_detail_ui`]).
//!
//! Recordings keep events, not packet bytes, so the header is rebuilt from them: the sequence is
//! the one the sender reported; the ack fields are what its sender had accepted from the peer
//! before sending it ([`ackscope_protocol::wire::ack_window`]: reliable.io's `ack`/`ack_bits`,
//! UE4's `AckedSeq` and first history word, where a bunch the receiver could not process is a Nak);
//! chunk and fragment packets name the slice they carried. The carried messages are the message
//! sends the index tied to this link send, so a message's sends and a packet's messages are the
//! same links read both ways.

use ackscope_protocol::wire::{ack_window, AckWindow, RELIABLE_IO_SEQ_BITS, UE4_SEQ_BITS};
use ackscope_protocol::{Event, EventKind, SendKind, Side, SimTime, Strategy};

use crate::model::index::PacketRow;
use crate::model::{Shown, WireFormat};

/// Receipts looked at when rebuilding an ack field (a sender's receive buffer is smaller).
const RECEIPTS: usize = 512;

/// How a strategy's packets acknowledge the peer's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckScheme {
    /// reliable.io's header: sequence, ack, 32 ack bits (glenn, hybrid, acks).
    ReliableIo,
    /// UE4's packet notify: packet id, acked sequence, ack/nak history.
    Ue4,
    /// Delivery notification (dnm, rellikt): the 32 sequences before the newest received.
    Notify,
    /// Chunk and fragment packets: slice ids (acks travel as slice bitmaps).
    Slices,
    /// A layout ackscope does not know (a game's own protocol): the sequence its events name,
    /// nothing rebuilt.
    Opaque,
}

impl AckScheme {
    pub fn of(strategy: Strategy) -> Self {
        Self::of_wire(WireFormat::of(strategy))
    }

    /// The scheme of a lane's wire format.
    pub fn of_wire(wire: WireFormat) -> Self {
        match wire {
            WireFormat::ReliableIo => AckScheme::ReliableIo,
            WireFormat::Ue4 => AckScheme::Ue4,
            WireFormat::Notify => AckScheme::Notify,
            WireFormat::Slices => AckScheme::Slices,
            WireFormat::Opaque => AckScheme::Opaque,
        }
    }

    /// Bits of the sequence space the ack fields wrap in.
    pub fn seq_bits(self) -> u32 {
        match self {
            AckScheme::Ue4 => UE4_SEQ_BITS,
            _ => RELIABLE_IO_SEQ_BITS,
        }
    }

    /// The names of (sequence, ack, ack bits) in this scheme's own terms.
    pub fn field_names(self) -> [&'static str; 3] {
        match self {
            AckScheme::Ue4 => ["packet id", "acked seq", "ack history"],
            _ => ["sequence", "ack", "ack bits"],
        }
    }
}

/// One message send the packet carried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Carried {
    pub side: Side,
    pub id: u64,
    pub kind: SendKind,
    pub spurious: bool,
    pub reliable: bool,
}

/// Everything the pane shows about one packet.
#[derive(Debug, Clone, PartialEq)]
pub struct PacketDetail {
    pub row: PacketRow,
    pub scheme: AckScheme,
    /// The ack fields (`None` before the sender had received anything).
    pub ack: Option<AckWindow>,
    /// Messages it carried (in the order the index holds them).
    pub carried: Vec<Carried>,
}

impl PacketDetail {
    /// The detail of link send `uid` of `lane`, or `None` when the lane has no such packet.
    pub fn of(lane: &Shown<'_>, uid: u64) -> Option<Self> {
        let row = lane.packets.row_by_uid(uid, &lane.ledger)?;
        // What the lane ran when the packet was sent decides its layout.
        let scheme = AckScheme::of_wire(lane.info().protocol_at(row.time).wire);
        let events = lane.store.events_until(row.time);
        let ack = ack_fields(events, row.dir.sender(), uid, scheme);
        let mut carried = Vec::new();
        let msgs = lane.messages.messages();
        let queued_by = msgs.partition_point(|m| m.queued_at <= row.time);
        for m in &msgs[..queued_by] {
            for s in m.sends.iter().filter(|s| s.uid == Some(uid)) {
                carried.push(Carried {
                    side: m.side,
                    id: m.id,
                    kind: s.kind,
                    spurious: s.spurious,
                    reliable: m.reliable,
                });
            }
        }
        Some(Self { row, scheme, ack, carried })
    }

    /// When the sender or the link last learned something about it: the latest of its delivery,
    /// ack and nak (its send when nothing followed).
    pub fn outcome_at(&self) -> SimTime {
        let r = &self.row;
        [r.delivered_at, r.received_at, r.acked_at, r.nakked_at].into_iter().flatten().fold(r.time, SimTime::max)
    }

    /// The header as (field name, value) lines.
    pub fn header_lines(&self) -> Vec<(String, String)> {
        let [seq, ack, bits] = self.scheme.field_names();
        let mut v = vec![(seq.to_string(), self.row.seq.to_string())];
        if self.scheme == AckScheme::Opaque {
            v.push(("header".into(), "layout unknown to ackscope (shown from the events)".into()));
            return v;
        }
        if self.scheme == AckScheme::Slices {
            if let Some((chunk, slice, n)) = self.row.contents.slice {
                v.push(("chunk id".into(), chunk.to_string()));
                v.push(("slice id".into(), format!("{slice} of {n}")));
            } else {
                v.push(("kind".into(), "ack packet (slice bitmap)".into()));
            }
            return v;
        }
        match self.ack {
            Some(w) => {
                v.push((ack.into(), w.ack.to_string()));
                v.push((bits.into(), format!("{:#010x}", w.bits)));
            }
            None => v.push((ack.into(), "nothing received yet".into())),
        }
        v
    }
}

/// The ack fields of link send `uid`, sent by `sender`: rebuilt from the receipts the sender
/// reported before the packet's `PacketSent` in `events` (which end at its send instant).
fn ack_fields(events: &[Event], sender: Side, uid: u64, scheme: AckScheme) -> Option<AckWindow> {
    if matches!(scheme, AckScheme::Slices | AckScheme::Opaque) {
        return None;
    }
    let sent_pos = events
        .iter()
        .rposition(|e| matches!(e.kind, EventKind::PacketSent { uid: u, .. } if u == uid))
        .unwrap_or(events.len());
    let mut receipts = Vec::new();
    let mut skipped: Vec<u32> = Vec::new();
    for e in events[..sent_pos].iter().rev() {
        match e.kind {
            EventKind::PacketReceived { side, seq, .. } if side == sender => {
                receipts.push(seq);
                if receipts.len() >= RECEIPTS {
                    break;
                }
            }
            // UE4 reports a packet it could not process as lost although it arrived.
            EventKind::Ue4SkipAck { side, seq } if side == sender => skipped.push(seq),
            _ => {}
        }
    }
    receipts.reverse();
    let mut w = ack_window(&receipts, scheme.seq_bits())?;
    let mask = (1u32 << scheme.seq_bits()) - 1;
    for s in skipped {
        let d = w.ack.wrapping_sub(s) & mask;
        if d < 32 {
            w.bits &= !(1 << d);
        }
    }
    Some(w)
}
