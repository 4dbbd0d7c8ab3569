//! The Glenn-style endpoint: reliable.io packet acks carrying bit-packed message objects, with a
//! reliable-ordered channel ([`ReliableChannel`]) for events and an unreliable one for snapshots.
//!
//! Every send tick produces exactly one packet, messages or not, so acks keep flowing. Its payload
//! after the ack header is bit-packed:
//!
//! ```text
//! reliable count   [0, 256]   9 bits
//!   per message:   id (16 bits first; then 1 bit "previous + 1", else 16 bits), message object
//! unreliable count [0, 256]   9 bits
//!   per message:   message object
//! zero padding to the byte
//! ```
//!
//! Reliable messages are picked first (oldest unacked first, resend delay, budget, count); the
//! budget left over goes to snapshots. A packet whose payload does not decode, or whose message
//! ids fall outside the receive window (desync), is rejected before any state changes and is never
//! acked, so its messages are resent instead of being lost.
//!
//! Back-pressure: a reliable message refused because the send queue is full is reported once
//! (`MessageRefused { SendQueueFull }`) and **kept** in a backlog that is retried, in order, on every
//! tick; it is never dropped. A message larger than the packet budget is reported
//! (`MessageRefused { TooLarge }`) and dropped: it can never be sent. Snapshots that find the
//! unreliable queue full are reported and dropped (they are unreliable by nature).

mod payload;
pub mod policy;

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::event::{
    DiscardReason, Event, EventKind, MalformedReason, RefuseReason, SendKind, Side, SimTime, StatsSample,
};
use crate::peer::{Peer, PeerCommand};
use crate::reliability::ack::{malformed_reason, AckConfig, AckEndpoint, Acked, HeaderVerdict};
use crate::reliability::channel::{AckedMessage, ChannelError, ChannelSizes, Pick, ReliableChannel};
use crate::reliability::message::{keep_payload, Message, MessageFactory, MAX_MESSAGE_BYTES};
use crate::wire::bits::{BitError, BitWriter, Stream};
use crate::workload::{check_payload, MessageRequest, Workload, WorkloadConfig};

pub use payload::{decode_payload, decode_payload_into, decode_payload_reusing, encode_payload, DecodedPayload};
use payload::{write_message_id, EMPTY_PAYLOAD};
pub use policy::{GlennResend, PacketContext, ResendPolicy};

/// Wire limit on messages of each channel in one packet (the counts are 9-bit fields).
pub const MAX_MESSAGES_PER_PACKET_LIMIT: u32 = 256;
/// Fixed payload bits besides the messages: two counts and the final padding.
const PAYLOAD_OVERHEAD_BITS: usize = 9 + 9 + 7;
/// Payload buffers an endpoint keeps for reuse: those of messages acked, sent unreliably or
/// delivered go to the next message generated or received (a malloc and a free per message
/// each way were a tenth of a run); beyond this many they are freed.
const SPARE_PAYLOADS: usize = 1024;

/// Settings of the Glenn strategy (dotted names `glenn.*`; defaults from yojimbo).
///
/// `resend_delay_ms`, `rtt_resend`, `rtt_resend_factor`, `packet_budget_bytes` and
/// `max_messages_per_packet` may change while running; the queue sizes are fixed when the endpoint
/// is created.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GlennConfig {
    /// An unacked message is included again once this long has passed since its last send;
    /// 0 = in every packet until acked (maximum redundancy).
    pub resend_delay_ms: f64,
    /// Use `rtt_resend_factor` x the measured RTT as the resend delay (the fixed delay until the
    /// first RTT sample).
    pub rtt_resend: bool,
    pub rtt_resend_factor: f64,
    /// Bytes of message data one packet may carry after its ack header.
    pub packet_budget_bytes: u32,
    /// Messages per packet (reliable + unreliable), at most 256.
    pub max_messages_per_packet: u32,
    /// Unacked reliable messages the sender holds.
    pub send_queue_size: u32,
    /// Out-of-order reliable messages the receiver holds; the sender never runs further ahead.
    pub receive_queue_size: u32,
    /// Packets whose message ids are remembered to map packet acks to messages. The endpoint's
    /// ack layer holds at least as many sent packets (`ack.sent_packets_buffer_size` is raised to
    /// this), as in yojimbo: at high packet rates reliable.io's 256 would forget a packet before
    /// its ack could arrive, and every message in it would be resent for nothing.
    pub sent_packets_buffer_size: u32,
    /// Snapshots waiting for room in a packet.
    pub unreliable_queue_size: u32,
}

impl Default for GlennConfig {
    fn default() -> Self {
        Self {
            resend_delay_ms: 100.0,
            rtt_resend: false,
            rtt_resend_factor: 1.25,
            packet_budget_bytes: 1200,
            max_messages_per_packet: 256,
            send_queue_size: 1024,
            receive_queue_size: 1024,
            sent_packets_buffer_size: 1024,
            unreliable_queue_size: 256,
        }
    }
}

impl GlennConfig {
    /// Bits of messages one packet may carry (the budget less the payload's fixed fields).
    pub fn budget_bits(&self) -> usize {
        (self.packet_budget_bytes as usize * 8).saturating_sub(PAYLOAD_OVERHEAD_BITS)
    }
    fn max_messages(&self) -> usize {
        self.max_messages_per_packet.clamp(1, MAX_MESSAGES_PER_PACKET_LIMIT) as usize
    }
}

/// Counters since creation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlennCounters {
    /// Packets rejected because their payload did not decode.
    pub malformed_payloads: u64,
    /// Packets rejected because a message id was beyond the receive window.
    pub desyncs: u64,
    /// Reliable messages that waited in the backlog for a full send queue.
    pub refused_queue_full: u64,
    /// Messages dropped because they can never fit the packet budget.
    pub refused_too_large: u64,
    /// Snapshots dropped because the unreliable queue was full.
    pub unreliable_dropped: u64,
    /// Longest backlog seen.
    pub max_backlog: u64,
}

#[derive(Debug, Clone)]
struct Queued {
    workload_id: u64,
    message: Message,
    bits: usize,
}

/// One Glenn-style endpoint driven by the seeded workload; `P` picks each packet's reliable
/// messages (Glenn's resend delay by default, see [`policy`]).
#[derive(Debug, Clone)]
pub struct GlennPeer<P: ResendPolicy = GlennResend> {
    side: Side,
    config: GlennConfig,
    factory: MessageFactory,
    ack: AckEndpoint,
    workload: Workload,
    channel: ReliableChannel,
    backlog: VecDeque<Queued>,
    unreliable: VecDeque<Queued>,
    counters: GlennCounters,
    tick_pending: bool,
    /// Reliable messages of bursts requested but not yet generated (counted as unacked so a drain
    /// right after a burst waits for it).
    burst_pending: usize,
    requests: Vec<MessageRequest>,
    /// Whether `PacketReceived`, `PacketAcked` and `PacketNakked` are reported
    /// ([`Peer::set_reports_packet_beliefs`]).
    reports_packets: bool,
    /// Whether `RttSample` is reported ([`Peer::set_reports_rtt_samples`]).
    reports_rtt: bool,
    /// The last packet's payload, kept for its vectors ([`decode_payload_into`]).
    decoded: DecodedPayload,
    picks: Vec<Pick>,
    acked: Vec<Acked>,
    acked_messages: Vec<AckedMessage>,
    /// Payload buffers for reuse (see [`SPARE_PAYLOADS`]).
    spare: Vec<Vec<u8>>,
    policy: P,
}

impl GlennPeer {
    pub fn new(side: Side, ack: AckConfig, g: GlennConfig, workload: WorkloadConfig, seed: u64) -> Self {
        Self::with_policy(side, ack, g, workload, seed, GlennResend)
    }
}

impl<P: ResendPolicy> GlennPeer<P> {
    /// An endpoint whose packets' reliable messages `policy` picks.
    pub fn with_policy(
        side: Side,
        ack: AckConfig,
        g: GlennConfig,
        workload: WorkloadConfig,
        seed: u64,
        policy: P,
    ) -> Self {
        let sizes = ChannelSizes {
            send_queue_size: g.send_queue_size as usize,
            receive_queue_size: g.receive_queue_size as usize,
            sent_packets_buffer_size: g.sent_packets_buffer_size as usize,
        };
        Self {
            side,
            config: g,
            factory: MessageFactory::default(),
            ack: AckEndpoint::new(AckConfig {
                sent_packets_buffer_size: ack.sent_packets_buffer_size.max(sizes.sent_packets_buffer_size),
                ..ack
            }),
            workload: Workload::new(side, workload, seed),
            channel: ReliableChannel::new(sizes),
            backlog: VecDeque::new(),
            unreliable: VecDeque::new(),
            counters: GlennCounters::default(),
            tick_pending: false,
            burst_pending: 0,
            requests: Vec::new(),
            reports_packets: true,
            reports_rtt: true,
            decoded: DecodedPayload::default(),
            picks: Vec::new(),
            acked: Vec::new(),
            acked_messages: Vec::new(),
            spare: Vec::new(),
            policy,
        }
    }

    pub fn policy(&self) -> &P {
        &self.policy
    }

    pub fn config(&self) -> &GlennConfig {
        &self.config
    }

    /// Changes the live settings (queue sizes stay as created).
    pub fn set_config(&mut self, config: GlennConfig) {
        self.config = config;
    }

    pub fn counters(&self) -> GlennCounters {
        self.counters
    }

    pub fn channel(&self) -> &ReliableChannel {
        &self.channel
    }

    pub fn endpoint(&self) -> &AckEndpoint {
        &self.ack
    }

    pub fn workload_mut(&mut self) -> &mut Workload {
        &mut self.workload
    }

    /// Reliable messages waiting for room in the send queue.
    pub fn backlog_len(&self) -> usize {
        self.backlog.len()
    }

    /// Glenn's resend delay in force: fixed, or RTT x factor once an RTT sample exists.
    pub fn resend_delay_ms(&self) -> f64 {
        policy::resend_delay_ms(&self.config, self.ack.rtt())
    }

    fn refuse(&self, now: SimTime, msg: u64, reason: RefuseReason, events: &mut Vec<Event>) {
        events.push(Event::new(now, EventKind::MessageRefused { side: self.side, msg, reason }));
    }

    /// Moves backlogged messages into the send queue while it has room, oldest first.
    fn flush_backlog(&mut self) {
        while self.channel.can_send() {
            let Some(q) = self.backlog.pop_front() else { break };
            let sent = self.channel.send(q.message, q.workload_id, q.bits);
            debug_assert!(sent.is_ok(), "send failed after can_send: {sent:?}");
        }
    }

    fn queue(&mut self, now: SimTime, req: MessageRequest, events: &mut Vec<Event>) {
        let side = self.side;
        let bytes = req.payload.len() as u32;
        events.push(Event::new(now, EventKind::MessageQueued { side, msg: req.id, bytes, reliable: req.reliable }));
        let Ok(mut message) = self.factory.wrap(req.reliable, req.payload) else {
            self.counters.refused_too_large += 1;
            return self.refuse(now, req.id, RefuseReason::TooLarge, events);
        };
        let bits = message.measure_bits(&self.factory);
        if ReliableChannel::packet_bits(bits) > self.config.budget_bits() {
            self.counters.refused_too_large += 1;
            return self.refuse(now, req.id, RefuseReason::TooLarge, events);
        }
        let q = Queued { workload_id: req.id, message, bits };
        if !req.reliable {
            if self.unreliable.len() >= self.config.unreliable_queue_size as usize {
                self.counters.unreliable_dropped += 1;
                return self.refuse(now, req.id, RefuseReason::SendQueueFull, events);
            }
            self.unreliable.push_back(q);
        } else if !self.backlog.is_empty() || !self.channel.can_send() {
            self.counters.refused_queue_full += 1;
            self.refuse(now, req.id, RefuseReason::SendQueueFull, events);
            self.backlog.push_back(q);
            self.counters.max_backlog = self.counters.max_backlog.max(self.backlog.len() as u64);
        } else {
            let sent = self.channel.send(q.message, q.workload_id, q.bits);
            debug_assert!(sent.is_ok(), "send failed after can_send: {sent:?}");
        }
    }

    /// Writes the payload for the picked reliable messages and `unreliable_n` snapshots after
    /// what `out` holds (the header); on an error `out` holds what was written so far.
    fn write_payload(&mut self, unreliable_n: usize, out: &mut Vec<u8>) -> Result<(), BitError> {
        // A packet without messages (about half): its one encoding, without a bit writer.
        if self.picks.is_empty() && unreliable_n == 0 {
            out.extend_from_slice(&EMPTY_PAYLOAD);
            return Ok(());
        }
        // Room for the budget plus one oversized message (see `ReliableChannel::select`).
        let room = self.config.packet_budget_bytes as usize + MAX_MESSAGE_BYTES as usize + 64;
        let mut w = BitWriter::appending(std::mem::take(out), room);
        let written = self.write_messages(unreliable_n, &mut w);
        *out = w.finish();
        written
    }

    fn write_messages(&mut self, unreliable_n: usize, w: &mut BitWriter) -> Result<(), BitError> {
        let mut n = self.picks.len() as u32;
        w.serialize_u32(&mut n, 0, MAX_MESSAGES_PER_PACKET_LIMIT)?;
        let mut prev: Option<u16> = None;
        for p in &self.picks {
            write_message_id(w, prev, p.id)?;
            prev = Some(p.id);
            if let Some(m) = self.channel.message_mut(p.id) {
                self.factory.write(w, m)?;
            }
        }
        let mut n = unreliable_n as u32;
        w.serialize_u32(&mut n, 0, MAX_MESSAGES_PER_PACKET_LIMIT)?;
        // Most packets carry no snapshot: the deque's iterator is not even built for them.
        if unreliable_n > 0 {
            for q in self.unreliable.iter_mut().take(unreliable_n) {
                self.factory.write(w, &mut q.message)?;
            }
        }
        Ok(())
    }

    /// Reports `message` delivered to `side`'s application (and corrupted, when its content is
    /// not what the sender's workload made).
    fn deliver(side: Side, now: SimTime, message: &Message, events: &mut Vec<Event>) {
        let msg = match check_payload(side.other(), &message.payload) {
            Some(id) => id,
            None => {
                let mut id = [0u8; 8];
                let n = message.payload.len().min(8);
                id[..n].copy_from_slice(&message.payload[..n]);
                let msg = u64::from_le_bytes(id);
                events.push(Event::new(now, EventKind::MessageCorrupted { side, msg }));
                msg
            }
        };
        events.push(Event::new(now, EventKind::MessageDelivered { side, msg }));
    }
}

impl<P: ResendPolicy> Peer for GlennPeer<P> {
    fn on_tick(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.tick_pending = true;
        self.burst_pending = 0;
        self.flush_backlog();
        let mut reqs = std::mem::take(&mut self.requests);
        self.workload.poll_reusing(now, &mut reqs, &mut self.spare);
        // Most ticks make no message, and a `drain` costs its setup and drop even when empty.
        if !reqs.is_empty() {
            for r in reqs.drain(..) {
                self.queue(now, r, events);
            }
        }
        self.requests = reqs;
    }

    fn poll_send(&mut self, now: SimTime, out: &mut Vec<u8>, events: &mut Vec<Event>) -> Option<u32> {
        if !std::mem::take(&mut self.tick_pending) {
            return None;
        }
        let side = self.side;
        let mut budget = self.config.budget_bits();
        let max = self.config.max_messages();
        self.picks.clear();
        let cx = PacketContext {
            now,
            side,
            config: &self.config,
            rtt: self.ack.rtt(),
            reports_beliefs: self.reports_packets,
        };
        self.policy.select(&cx, &mut self.channel, &mut budget, max, &mut self.picks);
        // Snapshots queued under a larger budget that can no longer fit are dropped, explicitly.
        let full = self.config.budget_bits();
        while let Some(q) = self.unreliable.front() {
            if ReliableChannel::packet_bits(q.bits) <= full {
                break;
            }
            let msg = q.workload_id;
            self.unreliable.pop_front();
            self.counters.refused_too_large += 1;
            self.refuse(now, msg, RefuseReason::TooLarge, events);
        }
        let mut unreliable_n = 0;
        for q in &self.unreliable {
            let need = ReliableChannel::packet_bits(q.bits);
            if self.picks.len() + unreliable_n >= max || need > budget {
                break;
            }
            budget -= need;
            unreliable_n += 1;
        }
        if !self.policy.send_packet(self.picks.len() + unreliable_n) {
            return None;
        }
        self.policy.fill(&cx, &mut self.channel, &mut budget, max - unreliable_n, &mut self.picks);
        // The header comes after the choice: a tick that sends nothing takes no sequence.
        let h = self.ack.begin_packet(now, out);
        let header_len = out.len();
        if self.write_payload(unreliable_n, out).is_err() {
            // The budget reserves worst-case bits, so this is a broken invariant; send no messages
            // rather than a corrupt packet (the picked ones are resent after the delay).
            debug_assert!(false, "payload exceeded its reserved budget");
            out.truncate(header_len);
            out.extend_from_slice(&[0, 0, 0]);
            self.picks.clear();
            unreliable_n = 0;
        }
        let seq = h.sequence as u32;
        self.channel.on_packet_sent(now, h.sequence, &self.picks);
        self.policy.on_sent(now, h.sequence, &self.picks);
        for p in &self.picks {
            events.push(Event::new(now, EventKind::MessageSent { side, msg: p.workload_id, seq, kind: p.kind }));
        }
        // Popped one by one: a `drain` cost more to drop than the snapshots it took.
        for _ in 0..unreliable_n {
            let Some(q) = self.unreliable.pop_front() else { break };
            let msg = q.workload_id;
            events.push(Event::new(now, EventKind::MessageSent { side, msg, seq, kind: SendKind::First }));
            keep_payload(&mut self.spare, q.message.payload, SPARE_PAYLOADS);
        }
        self.ack.finish_packet(h.sequence, out.len());
        Some(seq)
    }

    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        let side = self.side;
        let (h, n, verdict) = match self.ack.read_header(now, packet) {
            Err(e) => {
                let reason = malformed_reason(&e);
                return events.push(Event::new(now, EventKind::Malformed { side, reason }));
            }
            Ok((h, _, HeaderVerdict::Stale)) => {
                self.ack.drop_stale();
                if self.reports_packets {
                    let (seq, reason) = (h.sequence as u32, DiscardReason::Stale);
                    events.push(Event::new(now, EventKind::PacketDiscarded { side, seq, reason }));
                }
                return;
            }
            Ok(x) => x,
        };
        // Decoded in place (the vectors and payload buffers of the last packet are reused).
        match decode_payload_reusing(&self.factory, &packet[n..], &mut self.decoded, &mut self.spare) {
            Ok(()) => {}
            Err(_) => {
                self.ack.reject_packet();
                self.counters.malformed_payloads += 1;
                let reason = MalformedReason::BadPayload;
                return events.push(Event::new(now, EventKind::Malformed { side, reason }));
            }
        };
        for (id, _) in &self.decoded.reliable {
            if let Err(ChannelError::Desync { message_id, expected, .. }) = self.channel.check_receive(*id) {
                self.ack.reject_packet();
                self.counters.desyncs += 1;
                let (message_id, expected) = (message_id as u32, expected as u32);
                return events.push(Event::new(now, EventKind::MessageDesync { side, message_id, expected }));
            }
        }
        let bytes = packet.len() as u32;
        let reports = self.reports_packets;
        if reports {
            events.push(Event::new(now, EventKind::PacketReceived { side, seq: h.sequence as u32, bytes }));
        }
        self.ack.accept_packet(now, &h, packet.len(), &mut self.acked);
        for a in &self.acked {
            let seq = a.sequence as u32;
            if reports {
                events.push(Event::new(now, EventKind::PacketAcked { side, seq }));
            }
            if self.reports_rtt {
                events.push(Event::new(now, EventKind::RttSample { side, rtt_ms: a.rtt_ms as f32 }));
            }
            self.channel.on_packet_acked(a.sequence, &mut self.acked_messages);
            for m in &self.acked_messages {
                let msg = m.workload_id;
                events.push(Event::new(now, EventKind::MessageAcked { side, msg, seq }));
            }
            self.acked_messages.clear();
        }
        let cx = PacketContext {
            now,
            side,
            config: &self.config,
            rtt: self.ack.rtt(),
            reports_beliefs: self.reports_packets,
        };
        let carried_reliable = !self.decoded.reliable.is_empty();
        self.policy.on_received(&cx, &h, &self.acked, carried_reliable, &self.channel, events);
        self.acked.clear();
        // Only a message inserted now can make one deliverable: every call drains what it can,
        // so a packet without reliable messages skips the check (most packets).
        if carried_reliable {
            for (id, m) in self.decoded.reliable.drain(..) {
                self.channel.insert_received(id, m);
            }
            while let Some(m) = self.channel.receive() {
                Self::deliver(side, now, &m, events);
                keep_payload(&mut self.spare, m.payload, SPARE_PAYLOADS);
            }
        }
        while let Some(p) = self.channel.take_freed() {
            keep_payload(&mut self.spare, p, SPARE_PAYLOADS);
        }
        if verdict == HeaderVerdict::Fresh {
            for m in &self.decoded.unreliable {
                Self::deliver(side, now, m, events);
            }
        }
        self.ack.update(now);
    }

    fn update(&mut self, now: SimTime, _events: &mut Vec<Event>) {
        self.ack.update(now);
    }

    fn stats(&self) -> StatsSample {
        self.ack.stats()
    }

    fn command(&mut self, _now: SimTime, command: PeerCommand) {
        match command {
            PeerCommand::Reconfigure(live) => {
                if let Some(g) = self.policy.reconfigure(&live) {
                    self.config = g;
                }
                self.workload.set_config(live.workload);
            }
            PeerCommand::Burst => {
                self.workload.burst();
                self.burst_pending += self.workload.config().burst_messages as usize;
            }
            PeerCommand::SendChunk { .. } | PeerCommand::TargetKbps(_) => {}
        }
    }

    fn unacked_reliable(&self) -> usize {
        self.channel.unacked() + self.backlog.len() + self.burst_pending
    }

    fn set_reports_packet_beliefs(&mut self, reports: bool) -> bool {
        self.reports_packets = reports;
        true
    }

    /// One packet per tick, messages or not (the module doc).
    fn max_packets_per_tick(&self) -> usize {
        1
    }

    fn set_reports_stats(&mut self, reports: bool) {
        self.ack.set_records_stats(reports);
    }

    fn set_reports_rtt_samples(&mut self, reports: bool) -> bool {
        self.reports_rtt = reports;
        true
    }
}
