//! The plain packet-ack endpoint: reliable.io's header and an opaque payload of fixed size.
//!
//! It is the walking skeleton every Glenn-style strategy builds on, and the raw mode that
//! interoperates with any reliable.io-format peer.

use crate::event::{Event, EventKind, Side, SimTime, StatsSample};
use crate::peer::{Peer, PeerCommand};
use crate::reliability::ack::{malformed_reason, AckConfig, AckEndpoint, Acked, HeaderVerdict};

/// Packet acks with an opaque payload of fixed size: the walking skeleton's endpoint, and the raw
/// mode that interoperates with any reliable.io-format peer (it acks every well-formed packet).
#[derive(Debug, Clone)]
pub struct AckPeer {
    side: Side,
    ack: AckEndpoint,
    payload_bytes: usize,
    stats_per_packet: bool,
    tick_pending: bool,
    acked: Vec<Acked>,
}

impl AckPeer {
    pub fn new(side: Side, config: AckConfig, payload_bytes: usize) -> Self {
        Self {
            side,
            ack: AckEndpoint::new(config),
            payload_bytes,
            stats_per_packet: true,
            tick_pending: false,
            acked: Vec::new(),
        }
    }

    pub fn set_payload_bytes(&mut self, n: usize) {
        self.payload_bytes = n;
    }

    pub fn endpoint(&self) -> &AckEndpoint {
        &self.ack
    }

    pub fn endpoint_mut(&mut self) -> &mut AckEndpoint {
        &mut self.ack
    }
}

/// Emits the events for newly acked packets.
fn push_acked(side: Side, now: SimTime, acked: &mut Vec<Acked>, events: &mut Vec<Event>) {
    for a in acked.drain(..) {
        events.push(Event::new(now, EventKind::PacketAcked { side, seq: a.sequence as u32 }));
        events.push(Event::new(now, EventKind::RttSample { side, rtt_ms: a.rtt_ms as f32 }));
    }
}

impl Peer for AckPeer {
    fn set_reports_stats(&mut self, reports: bool) {
        self.ack.set_records_stats(reports);
    }

    fn on_tick(&mut self, _now: SimTime, _events: &mut Vec<Event>) {
        self.tick_pending = true;
    }

    fn poll_send(&mut self, now: SimTime, out: &mut Vec<u8>, _events: &mut Vec<Event>) -> Option<u32> {
        if !std::mem::take(&mut self.tick_pending) {
            return None;
        }
        let h = self.ack.begin_packet(now, out);
        // A recognisable, deterministic filler: the low byte of the sequence repeated.
        out.resize(out.len() + self.payload_bytes, h.sequence as u8);
        self.ack.finish_packet(h.sequence, out.len());
        Some(h.sequence as u32)
    }

    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        let side = self.side;
        match self.ack.read_header(now, packet) {
            Err(e) => {
                events.push(Event::new(now, EventKind::Malformed { side, reason: malformed_reason(&e) }));
            }
            Ok((_, _, HeaderVerdict::Stale)) => self.ack.drop_stale(),
            Ok((h, _, _)) => {
                events.push(Event::new(
                    now,
                    EventKind::PacketReceived { side, seq: h.sequence as u32, bytes: packet.len() as u32 },
                ));
                self.ack.accept_packet(now, &h, packet.len(), &mut self.acked);
                push_acked(side, now, &mut self.acked, events);
                if self.stats_per_packet {
                    self.ack.update(now);
                }
            }
        }
    }

    fn update(&mut self, now: SimTime, _events: &mut Vec<Event>) {
        self.ack.update(now);
    }

    fn stats(&self) -> StatsSample {
        self.ack.stats()
    }

    fn command(&mut self, _now: SimTime, _command: PeerCommand) {}

    fn unacked_reliable(&self) -> usize {
        0
    }
}
