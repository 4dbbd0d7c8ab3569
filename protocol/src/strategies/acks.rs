//! The plain packet-ack endpoint: reliable.io's header and an opaque payload of fixed size.
//!
//! It is the walking skeleton every Glenn-style strategy builds on, and the raw mode that
//! interoperates with any reliable.io-format peer. As reliable.io, it sends a payload above
//! `fragment_above` bytes as fragments ([`crate::wire::fragment`]: every fragment is a datagram
//! of its own with the packet's sequence) and reassembles the peer's: a fragmented packet is
//! received, and acked, only once every fragment arrived; a fragment that is not canonical is
//! counted malformed. Payloads up to `fragment_above` go out exactly as before fragments existed.

use std::collections::VecDeque;

use crate::event::{DiscardReason, Event, EventKind, Side, SimTime, StatsSample};
use crate::peer::{Peer, PeerCommand};
use crate::reliability::ack::{
    fragment_malformed_reason, malformed_reason, AckConfig, AckEndpoint, Acked, HeaderVerdict,
};
use crate::wire::fragment::{
    decode_fragment, write_fragments, FragmentConfig, FragmentOutcome, Reassembly, FRAGMENT_PREFIX,
};

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
    fragments: FragmentConfig,
    /// The fragments of the packet being sent that have not gone out yet, and its sequence.
    outgoing: VecDeque<Vec<u8>>,
    outgoing_seq: u16,
    reassembly: Reassembly,
}

impl AckPeer {
    /// An endpoint with reliable.io's fragment settings ([`FragmentConfig::default`]).
    pub fn new(side: Side, config: AckConfig, payload_bytes: usize) -> Self {
        Self::with_fragments(side, config, payload_bytes, FragmentConfig::default())
    }

    /// An endpoint with its own fragment settings.
    pub fn with_fragments(side: Side, config: AckConfig, payload_bytes: usize, fragments: FragmentConfig) -> Self {
        Self {
            side,
            ack: AckEndpoint::new(config),
            payload_bytes,
            stats_per_packet: true,
            tick_pending: false,
            acked: Vec::new(),
            fragments,
            outgoing: VecDeque::new(),
            outgoing_seq: 0,
            reassembly: Reassembly::new(fragments),
        }
    }

    pub fn fragment_config(&self) -> &FragmentConfig {
        &self.fragments
    }

    /// Whether this many payload bytes go out as fragments: above `fragment_above`, and within
    /// what `max_fragments` can carry (a larger payload, which reliable.io refuses to send, goes
    /// as one regular packet as it did before fragments).
    fn fragments_payload(&self, payload_bytes: usize) -> bool {
        payload_bytes > self.fragments.fragment_above && payload_bytes <= self.fragments.max_payload_bytes()
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
        if let Some(fragment) = self.outgoing.pop_front() {
            out.extend_from_slice(&fragment);
            return Some(self.outgoing_seq as u32);
        }
        if !std::mem::take(&mut self.tick_pending) {
            return None;
        }
        let h = self.ack.begin_packet(now, out);
        if self.fragments_payload(self.payload_bytes) {
            let header_bytes = out.len();
            out.clear();
            let payload = vec![h.sequence as u8; self.payload_bytes];
            let mut pieces = Vec::new();
            write_fragments(&h, &payload, &self.fragments, &mut pieces);
            self.ack.finish_packet(h.sequence, header_bytes + payload.len());
            self.outgoing.extend(pieces);
            self.outgoing_seq = h.sequence;
            out.extend_from_slice(&self.outgoing.pop_front().unwrap_or_default());
            return Some(h.sequence as u32);
        }
        // A recognisable, deterministic filler: the low byte of the sequence repeated.
        out.resize(out.len() + self.payload_bytes, h.sequence as u8);
        self.ack.finish_packet(h.sequence, out.len());
        Some(h.sequence as u32)
    }

    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        if packet.first() == Some(&FRAGMENT_PREFIX) {
            return self.receive_fragment(now, packet, events);
        }
        self.receive_packet(now, packet, events);
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

impl AckPeer {
    /// A fragment: stored until its packet is whole, then received as that one packet.
    fn receive_fragment(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        let side = self.side;
        let outcome = decode_fragment(packet, &self.fragments).and_then(|f| {
            // A packet already received whole: reliable.io ignores its stray fragments.
            if self.ack.has_received(f.header.sequence) {
                return Ok(FragmentOutcome::Repeated);
            }
            self.reassembly.insert(&f)
        });
        match outcome {
            Err(e) => {
                self.ack.reject_packet();
                events.push(Event::new(now, EventKind::Malformed { side, reason: fragment_malformed_reason(&e) }));
            }
            Ok(FragmentOutcome::Complete(p)) => self.receive_packet(now, &p.to_packet(), events),
            Ok(FragmentOutcome::Stored | FragmentOutcome::Repeated) => {}
        }
    }

    /// A regular packet (or a reassembled one): its header, then its acks.
    fn receive_packet(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        let side = self.side;
        match self.ack.read_header(now, packet) {
            Err(e) => {
                events.push(Event::new(now, EventKind::Malformed { side, reason: malformed_reason(&e) }));
            }
            Ok((h, _, HeaderVerdict::Stale)) => {
                self.ack.drop_stale();
                let (seq, reason) = (h.sequence as u32, DiscardReason::Stale);
                events.push(Event::new(now, EventKind::PacketDiscarded { side, seq, reason }));
            }
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
}
