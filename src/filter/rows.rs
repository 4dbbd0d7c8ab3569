//! The rows a filter runs over, read from one client's connection: a packet's facts (the packet
//! log's row joined with the ledger, plus the header's ack), messages and anomalies as their
//! indexes keep them. A row's client is its connection's ([`Connection::client`]): the one place
//! a filter learns it.

use ackscope_protocol::{Event, EventKind, Strategy};

use crate::model::index::{PacketRow, UidTable};
use crate::model::Connection;

/// A packet as a filter sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct PacketFacts {
    pub row: PacketRow,
    /// The header's ack field (see [`AckTrack`]); `None` when the filter does not use it.
    pub ack: Option<u32>,
}

/// The event log a filter cache reads to learn which rows changed since its last update: the
/// connection's own events (and the run-wide ones).
pub fn events_of(conn: &Connection) -> &[Event] {
    conn.store.events()
}

/// `a` is after `b` in a `bits`-bit wrapping sequence space (as the ack field is chosen).
fn after(a: u32, b: u32, bits: u32) -> bool {
    let mask = (1u32 << bits) - 1;
    let d = a.wrapping_sub(b) & mask;
    d != 0 && d < (1 << (bits - 1))
}

/// Each packet's header ack, followed from the event log: the newest sequence (in wrapping
/// order) its sender had accepted from the peer before sending it, as the packet detail
/// rebuilds the header (`ack_window` over the receipts before the send). Slice packets (chunks,
/// fragments) carry no ack field.
///
/// Fed incrementally, so a live recording costs a few comparisons per new event; built only
/// when a filter names `ack`.
#[derive(Debug, Clone)]
pub struct AckTrack {
    /// Sequence bits of the header's ack (`None`: no ack field).
    bits: Option<u32>,
    newest: [Option<u32>; 2],
    /// Per link send: its ack.
    acks: UidTable,
    /// Events of the log taken in so far.
    pub seen: usize,
}

impl AckTrack {
    /// For a lane running `strategy` (`None`: a protocol ackscope does not know, whose header
    /// it cannot rebuild: no ack field).
    pub fn new(strategy: Option<Strategy>) -> Self {
        let bits = match strategy {
            None | Some(Strategy::Chunks | Strategy::Fragments) => None,
            Some(Strategy::Ue4) => Some(ackscope_protocol::wire::UE4_SEQ_BITS),
            Some(_) => Some(ackscope_protocol::wire::RELIABLE_IO_SEQ_BITS),
        };
        Self { bits, newest: [None; 2], acks: UidTable::default(), seen: 0 }
    }

    /// Takes in the events of `log` after those already seen.
    pub fn feed(&mut self, log: &[Event]) {
        let Some(bits) = self.bits else {
            self.seen = log.len();
            return;
        };
        let mask = (1u32 << bits) - 1;
        for e in log.get(self.seen..).unwrap_or(&[]) {
            match e.kind {
                EventKind::PacketReceived { side, seq, .. } if seq <= mask => {
                    let n = &mut self.newest[side.index()];
                    if n.is_none_or(|a| after(seq, a, bits)) {
                        *n = Some(seq);
                    }
                }
                EventKind::PacketSent { side, uid, .. } => {
                    self.acks.set(uid, self.newest[side.index()].unwrap_or(u32::MAX));
                }
                _ => {}
            }
        }
        self.seen = log.len();
    }

    /// The ack field of link send `uid`.
    pub fn ack_of(&self, uid: u64) -> Option<u32> {
        self.acks.get(uid)
    }
}

/// Packet `i` of `conn`'s log as a filter sees it (`acks` when the filter names `ack`).
pub fn packet_facts(conn: &Connection, i: usize, acks: Option<&AckTrack>) -> Option<PacketFacts> {
    let row = conn.packets.row(i, &conn.ledger)?;
    let ack = acks.and_then(|t| t.ack_of(row.uid));
    Some(PacketFacts { row, ack })
}

#[cfg(test)]
mod tests {
    use ackscope_protocol::{Side, SimTime};

    use super::*;

    /// A send folded after a later uid of the other side keeps its ack field.
    #[test]
    fn a_send_folded_after_a_later_uid_keeps_its_ack() {
        let e = |kind| Event::new(SimTime(1_000), kind);
        let log = [
            e(EventKind::PacketReceived { side: Side::A, seq: 3, bytes: 100 }),
            e(EventKind::PacketReceived { side: Side::B, seq: 9, bytes: 100 }),
            e(EventKind::PacketSent { side: Side::B, seq: 0, bytes: 100, uid: 7 }),
            e(EventKind::PacketSent { side: Side::A, seq: 0, bytes: 100, uid: 5 }),
        ];
        let mut track = AckTrack::new(Some(Strategy::Glenn));
        track.feed(&log);
        assert_eq!((track.ack_of(5), track.ack_of(6), track.ack_of(7)), (Some(3), None, Some(9)));
    }
}
