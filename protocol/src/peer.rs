//! The contract between the simulation driver and a protocol endpoint, and the plain packet-ack
//! endpoint (reliable.io header + opaque payload) that every Glenn-style strategy builds on.

use std::any::Any;

use crate::ack::{AckConfig, AckEndpoint, Acked, HeaderVerdict};
use crate::event::{Event, EventKind, MalformedReason, Side, SimTime, StatsSample};
use crate::header::HeaderError;
use crate::workload::WorkloadConfig;

/// Something the driver asks of an endpoint besides the packet loop (a user action or a live
/// setting). Strategies act on what applies to them and ignore the rest.
pub enum PeerCommand {
    /// Queue a workload burst (message strategies).
    Burst,
    /// Queue one large block of `bytes` for sending (chunk strategies).
    SendChunk { bytes: usize },
    /// A bandwidth-budgeted sender's new target (chunk and fragment senders).
    TargetKbps(f64),
    /// The settings that may change while running; see [`LiveSettings`].
    Reconfigure(LiveSettings),
}

impl std::fmt::Debug for PeerCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerCommand::Burst => write!(f, "Burst"),
            PeerCommand::SendChunk { bytes } => write!(f, "SendChunk {{ bytes: {bytes} }}"),
            PeerCommand::TargetKbps(k) => write!(f, "TargetKbps({k})"),
            PeerCommand::Reconfigure(l) => write!(f, "Reconfigure({:?}, ..)", l.workload),
        }
    }
}

/// Live settings for one endpoint: the workload every message strategy shares, and the
/// strategy's own section of the scenario (`GlennConfig`, `Ue4Config`, ...), which the registry
/// builds and the endpoint downcasts. Endpoints thereby know their own config only, and nothing
/// here depends on the scenario or on any strategy.
pub struct LiveSettings {
    pub workload: WorkloadConfig,
    pub own: Box<dyn Any + Send>,
}

impl LiveSettings {
    /// The strategy's own section, if it is a `T`.
    pub fn own<T: 'static>(&self) -> Option<&T> {
        self.own.downcast_ref::<T>()
    }
}

/// A protocol endpoint driven on virtual time.
///
/// Call order at one instant: every packet due is passed to [`Peer::receive`]; then, at the
/// endpoint's send ticks, [`Peer::on_tick`] once and [`Peer::poll_send`] repeatedly until it returns
/// `None` (a peer may send several packets per tick, e.g. chunk slices, or none); then, at stats
/// instants, [`Peer::update`] and [`Peer::stats`]. Endpoints push what they believe happened into
/// `events`; the driver adds `PacketSent` (it knows the link's send id) and checks every
/// `PacketAcked` against the link's ground truth.
pub trait Peer: Send {
    /// A send tick at `now` (the endpoint's packet rate): decide what to send this tick.
    fn on_tick(&mut self, now: SimTime, events: &mut Vec<Event>);
    /// Writes the next packet into `out` (empty on entry) and returns its sequence, or `None` when
    /// nothing more goes out this tick.
    fn poll_send(&mut self, now: SimTime, out: &mut Vec<u8>, events: &mut Vec<Event>) -> Option<u32>;
    /// Handles one incoming datagram (any bytes: malformed ones are counted, never a panic).
    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>);
    /// Advances timers and estimators.
    fn update(&mut self, now: SimTime, events: &mut Vec<Event>);
    /// Current estimates.
    fn stats(&self) -> StatsSample;
    /// A user action or live setting (see [`PeerCommand`]); what does not apply is ignored.
    fn command(&mut self, now: SimTime, command: PeerCommand);
    /// Reliable messages queued and not yet acked, including any waiting for queue space (0 for
    /// strategies without reliable messages); a run has drained when both sides report 0.
    fn unacked_reliable(&self) -> usize;
}

/// Maps a header decode error to the event reason.
pub fn header_malformed_reason(e: &HeaderError) -> MalformedReason {
    match e {
        HeaderError::Truncated { .. } => MalformedReason::Truncated,
        HeaderError::Fragment => MalformedReason::Foreign,
        _ => MalformedReason::BadHeader,
    }
}

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
pub fn push_acked(side: Side, now: SimTime, acked: &mut Vec<Acked>, events: &mut Vec<Event>) {
    for a in acked.drain(..) {
        events.push(Event { time: now, kind: EventKind::PacketAcked { side, seq: a.sequence as u32 } });
        events.push(Event { time: now, kind: EventKind::RttSample { side, rtt_ms: a.rtt_ms as f32 } });
    }
}

impl Peer for AckPeer {
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
                events.push(Event {
                    time: now,
                    kind: EventKind::Malformed { side, reason: header_malformed_reason(&e) },
                });
            }
            Ok((_, _, HeaderVerdict::Stale)) => self.ack.drop_stale(),
            Ok((h, _, _)) => {
                events.push(Event {
                    time: now,
                    kind: EventKind::PacketReceived { side, seq: h.sequence as u32, bytes: packet.len() as u32 },
                });
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
