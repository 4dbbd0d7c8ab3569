//! rellikt's reliability scheme ("网络游戏程序员须知 可靠传输与流量控制") as a strategy.
//!
//! Header: `[protocol id][sequence][ack][ack bitfield]` — here 32, 16, 16 and 32 bits (the seed
//! starts from `uint` fields and then argues for 16-bit sequences with wrap-aware comparison).
//! A packet whose protocol id is not ours is foreign: counted as malformed
//! (`MalformedReason::Foreign`) and otherwise ignored. `ack` is the newest sequence received and
//! bit `i` of the bitfield says whether `ack - i` arrived (bit 0 is `ack` itself, so a zero
//! bitfield acks nothing — needed before anything arrived). Loss rule, from the seed: a packet not
//! acked within `loss_timeout_ms` (1 s) is lost (`PacketNakked`); an ack arriving later is ignored,
//! so every sequence gets exactly one outcome. RTT samples are smoothed with the seed's low-pass
//! filter (`RttFilter::Rellikt`) by default.
//!
//! Beyond the seed, as in `ack.rs`: after `ack_expiry_ms` without receiving anything the endpoint
//! sends a zero bitfield and restarts its received window with the next packet, so acks kept over
//! a long one-way outage never acknowledge a wrapped sequence that never arrived.
//!
//! Messages ride behind the header exactly as for `dnm` (`reliability::outbox`, run by the shared
//! [`NotifyPeer`]); lost packets resend their reliable messages with `SendKind::TimeoutResend`.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::peer::NotifyPeer;
use super::scheme::{Admission, NotifyScheme, Outcome};
use crate::event::{DiscardReason, MalformedReason, SimTime};
use crate::reliability::outbox::serialize_messages;
use crate::reliability::stats::{RttFilter, StatsConfig};
use crate::wire::bits::{BitError, BitReader, BitWriter, Stream};
use crate::wire::sequence::SequenceBuffer;

/// Header bytes on the wire.
pub const RELLIKT_HEADER_BYTES: usize = 12;

/// Settings of the `rellikt` strategy (dotted names `rellikt.*`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RelliktConfig {
    /// Packets starting with another id are foreign.
    pub protocol_id: u32,
    /// Not acked within this long = lost (the seed: 1 s).
    pub loss_timeout_ms: f64,
    /// Sent packets remembered for acks; a packet about to be forgotten unacked is lost early.
    pub sent_buffer_size: usize,
    /// Received sequences remembered for the bitfield.
    pub received_buffer_size: usize,
    /// See the module doc (0 = never).
    pub ack_expiry_ms: f64,
    pub max_packet_bytes: u32,
    /// The send window: messages held until acked; beyond it new ones wait in the backlog.
    pub send_queue_messages: u32,
    /// Estimators; `stats.rtt_filter` defaults to the seed's low-pass filter.
    pub stats: StatsConfig,
}

impl Default for RelliktConfig {
    fn default() -> Self {
        Self {
            protocol_id: u32::from_be_bytes(*b"RLKT"),
            loss_timeout_ms: 1000.0,
            sent_buffer_size: 1024,
            received_buffer_size: 256,
            ack_expiry_ms: 5000.0,
            max_packet_bytes: 1200,
            send_queue_messages: 1024,
            stats: StatsConfig { rtt_filter: RttFilter::Rellikt, ..StatsConfig::default() },
        }
    }
}

/// The header of every packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RelliktHeader {
    pub protocol_id: u32,
    pub sequence: u16,
    pub ack: u16,
    pub ack_bits: u32,
}

/// Why bytes are not one of our packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum RelliktError {
    #[error("packet of {0} bytes is shorter than the header")]
    Truncated(usize),
    #[error("protocol id {0:#010x} is not ours")]
    Foreign(u32),
    #[error(transparent)]
    Bits(#[from] BitError),
    #[error("{0} trailing bytes")]
    Trailing(usize),
}

impl RelliktError {
    pub fn reason(&self) -> MalformedReason {
        match self {
            RelliktError::Truncated(_) | RelliktError::Bits(BitError::Overflow { .. }) => MalformedReason::Truncated,
            RelliktError::Foreign(_) => MalformedReason::Foreign,
            _ => MalformedReason::BadPayload,
        }
    }
}

fn serialize_packet<S: Stream>(s: &mut S, h: &mut RelliktHeader, msgs: &mut Vec<Vec<u8>>) -> Result<(), BitError> {
    s.serialize_bits(&mut h.protocol_id, 32)?;
    s.serialize_u16(&mut h.sequence)?;
    s.serialize_u16(&mut h.ack)?;
    s.serialize_bits(&mut h.ack_bits, 32)?;
    serialize_messages(s, msgs)?;
    s.align()
}

/// Appends a packet to `out`.
pub fn write_packet(h: &RelliktHeader, msgs: &[Vec<u8>], out: &mut Vec<u8>) -> Result<(), BitError> {
    let mut w = BitWriter::with_capacity(65536);
    serialize_packet(&mut w, &mut h.clone(), &mut msgs.to_vec())?;
    out.extend_from_slice(&w.finish());
    Ok(())
}

/// Decodes any bytes; a wrong protocol id is `Foreign` before anything else is looked at.
pub fn read_packet(bytes: &[u8], protocol_id: u32) -> Result<(RelliktHeader, Vec<Vec<u8>>), RelliktError> {
    if bytes.len() < RELLIKT_HEADER_BYTES {
        return Err(RelliktError::Truncated(bytes.len()));
    }
    let id = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    if id != protocol_id {
        return Err(RelliktError::Foreign(id));
    }
    let mut r = BitReader::new(bytes);
    let mut h = RelliktHeader::default();
    let mut msgs = Vec::new();
    serialize_packet(&mut r, &mut h, &mut msgs)?;
    if !r.at_end() {
        return Err(RelliktError::Trailing(r.bits_remaining() / 8));
    }
    Ok((h, msgs))
}

#[derive(Debug, Clone, Copy, Default)]
struct Sent {
    time: SimTime,
    pending: bool,
}

/// The seed's sequence/ack/bitfield bookkeeping with the 1-second loss rule.
#[derive(Debug, Clone)]
pub struct RelliktEndpoint {
    config: RelliktConfig,
    local_sequence: u16,
    sent: SequenceBuffer<Sent>,
    /// Sequences awaiting an outcome, oldest first, with their send time.
    in_flight: VecDeque<(u16, SimTime)>,
    received: SequenceBuffer<()>,
    last_receive: Option<SimTime>,
}

impl RelliktEndpoint {
    /// Changes the "not acked within this = lost" rule from now on.
    pub fn set_loss_timeout_ms(&mut self, ms: f64) {
        self.config.loss_timeout_ms = ms;
    }

    pub fn new(config: RelliktConfig) -> Self {
        Self {
            config,
            local_sequence: 0,
            sent: SequenceBuffer::new(config.sent_buffer_size.clamp(33, 32768)),
            in_flight: VecDeque::new(),
            received: SequenceBuffer::new(config.received_buffer_size.clamp(33, 32768)),
            last_receive: None,
        }
    }

    fn expired(&self, now: SimTime) -> bool {
        self.config.ack_expiry_ms > 0.0
            && self.last_receive.is_some_and(|t| now.saturating_since(t).as_millis_f64() > self.config.ack_expiry_ms)
    }

    /// `ack` and bitfield as they go out now.
    pub fn ack_state(&self, now: SimTime) -> (u16, u32) {
        let ack = self.received.next_sequence().wrapping_sub(1);
        if self.last_receive.is_none() || self.expired(now) {
            return (ack, 0);
        }
        let mut bits = 0u32;
        for i in 0..32u16 {
            if self.received.exists(ack.wrapping_sub(i)) {
                bits |= 1 << i;
            }
        }
        (ack, bits)
    }

    /// The header of the next packet; packets about to leave the sent buffer unacked are lost.
    pub fn next_packet(&mut self, now: SimTime, out: &mut Vec<Outcome>) -> RelliktHeader {
        let sequence = self.local_sequence;
        self.local_sequence = sequence.wrapping_add(1);
        // Every packet in flight was sent before this one: its distance behind is plain
        // unsigned arithmetic, right up to a buffer of half the sequence space (a signed
        // difference reads exactly half as -32768 and would never let it go).
        let size = self.sent.size();
        while let Some(&(s, t)) = self.in_flight.front() {
            if (sequence.wrapping_sub(s) as usize) < size {
                break;
            }
            self.in_flight.pop_front();
            self.resolve_lost(s, t, out);
        }
        if let Some(e) = self.sent.insert(sequence) {
            *e = Sent { time: now, pending: true };
        }
        self.in_flight.push_back((sequence, now));
        let (ack, ack_bits) = self.ack_state(now);
        RelliktHeader { protocol_id: self.config.protocol_id, sequence, ack, ack_bits }
    }

    fn resolve_lost(&mut self, s: u16, t: SimTime, out: &mut Vec<Outcome>) {
        if let Some(e) = self.sent.get_mut(s) {
            if e.pending && e.time == t {
                e.pending = false;
                out.push(Outcome::Failed { sequence: s, timeout: true });
            }
        }
    }

    /// Takes in a well-formed packet's header: records its sequence, then reads its acks.
    pub fn receive(&mut self, now: SimTime, h: &RelliktHeader, out: &mut Vec<Outcome>) {
        if self.expired(now) {
            self.received.reset_to(h.sequence);
        }
        self.last_receive = Some(now);
        // Too old for the window: not recorded (so never acked), but its acks still count.
        let _ = self.received.insert(h.sequence);
        let mut bits = h.ack_bits;
        let mut i = 0u16;
        while bits != 0 {
            if bits & 1 != 0 {
                let s = h.ack.wrapping_sub(i);
                if let Some(e) = self.sent.get_mut(s) {
                    if e.pending {
                        e.pending = false;
                        let rtt_ms = now.saturating_since(e.time).as_millis_f64();
                        out.push(Outcome::Delivered { sequence: s, rtt_ms });
                    }
                }
            }
            bits >>= 1;
            i += 1;
        }
    }

    /// "Not acked within 1 s = lost".
    pub fn process_timeouts(&mut self, now: SimTime, out: &mut Vec<Outcome>) {
        let timeout_us = (self.config.loss_timeout_ms.max(0.0) * 1000.0) as u64;
        while let Some(&(s, t)) = self.in_flight.front() {
            if now.0 < t.0.saturating_add(timeout_us) {
                break;
            }
            self.in_flight.pop_front();
            self.resolve_lost(s, t, out);
        }
        // Acked packets leave the queue lazily; keep it short when everything is acked.
        while let Some(&(s, t)) = self.in_flight.front() {
            match self.sent.get(s) {
                Some(e) if e.pending && e.time == t => break,
                _ => {
                    self.in_flight.pop_front();
                }
            }
        }
    }
}

impl NotifyScheme for RelliktEndpoint {
    type Config = RelliktConfig;
    type Header = RelliktHeader;

    fn new(config: RelliktConfig) -> Self {
        RelliktEndpoint::new(config)
    }

    fn message_room_bytes(&self) -> usize {
        (self.config.max_packet_bytes as usize).saturating_sub(RELLIKT_HEADER_BYTES + 1)
    }

    fn send_queue_messages(&self) -> u32 {
        self.config.send_queue_messages
    }

    fn stats_config(&self) -> StatsConfig {
        self.config.stats
    }

    /// The bitfield repeats an ack in every packet until 32 newer sequences have arrived: at
    /// least 32 packets, and many more when the forward path loses packets.
    fn ack_redundancy(&self) -> Option<u32> {
        None
    }

    fn reconfigure(&mut self, config: &RelliktConfig) {
        self.set_loss_timeout_ms(config.loss_timeout_ms);
    }

    fn process_timeouts(&mut self, now: SimTime, out: &mut Vec<Outcome>) {
        RelliktEndpoint::process_timeouts(self, now, out);
    }

    fn next_header(&mut self, now: SimTime, out: &mut Vec<Outcome>) -> RelliktHeader {
        self.next_packet(now, out)
    }

    fn sequence(header: &RelliktHeader) -> u16 {
        header.sequence
    }

    fn message_budget(&self, _header: &RelliktHeader) -> usize {
        self.message_room_bytes()
    }

    fn write(&self, header: &RelliktHeader, messages: &[Vec<u8>], out: &mut Vec<u8>) -> bool {
        write_packet(header, messages, out).is_ok()
    }

    /// The same header (its acks are fixed-size), without messages.
    fn bare(header: &RelliktHeader) -> RelliktHeader {
        *header
    }

    fn read(&self, packet: &[u8]) -> Result<(RelliktHeader, Vec<Vec<u8>>), MalformedReason> {
        read_packet(packet, self.config.protocol_id).map_err(|e| e.reason())
    }

    /// Every well-formed packet is processed: the bitfield tells which arrived. One older than
    /// the received window is never acked (it cannot be recorded), though its acks and messages
    /// are taken.
    fn admit(&mut self, now: SimTime, header: &RelliktHeader) -> Result<Admission, MalformedReason> {
        if !self.expired(now) && self.last_receive.is_some() && self.received.is_too_old(header.sequence) {
            return Ok(Admission::Unacked(DiscardReason::Stale));
        }
        Ok(Admission::Accept)
    }

    fn process_acks(&mut self, now: SimTime, header: &RelliktHeader, out: &mut Vec<Outcome>) {
        self.receive(now, header, out);
    }
}

/// One endpoint of the `rellikt` strategy; its loss rule reports only timeouts ("not acked within
/// 1 s = lost"), so its failures resend as `TimeoutResend`.
pub type RelliktPeer = NotifyPeer<RelliktEndpoint>;

impl RelliktPeer {
    pub fn endpoint(&self) -> &RelliktEndpoint {
        self.scheme()
    }
}
