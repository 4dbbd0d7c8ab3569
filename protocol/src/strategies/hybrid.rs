//! `hybrid`: ackscope's own strategy, built from the seeds' parts to sit on the latency-overhead
//! frontier.
//!
//! It is Glenn's endpoint ([`GlennPeer`]: reliable.io packet acks, bit-packed message objects,
//! the reliable-ordered channel, the same wire format and receive path) with its own
//! [`ResendPolicy`]:
//!
//! - **Nak from the acks already in the header.** A packet carrying reliable messages counts as
//!   lost once the peer's newest `ack` is `reorder_tolerance_packets` or more ahead of it and its
//!   bit in `ack_bits` is clear (or it fell out of the 32 bits unacked): UE4's Nak without a Nak
//!   on the wire. It is reported as `PacketNakked`, and every message whose latest copy rode in
//!   it goes again in the next packet (`NakResend`). Only a header whose `ack` is the newest seen
//!   and whose `ack_bits` are not empty (an expired receiver acks nothing) is read, and only after
//!   its own acks were applied, so a packet already acked is never nakked.
//! - **Timeout.** A message unacked `rtt_factor` x RTT after its last send goes again
//!   (`DelayResend`), whichever comes first; the RTT is this policy's own average over the packets
//!   that carried reliable messages (acked at once, see below), `initial_rtt_ms` before any.
//! - **Redundancy.** Each packet that goes anyway carries, after its first sends, resends and
//!   snapshots, extra copies of the youngest unacked messages (`Redundant`): at most
//!   `redundant_copies` per message, only while younger than `redundancy_age_rtts` x RTT since
//!   their first send, within `redundancy_budget_bytes` per packet. A lost packet then costs no
//!   round trip, and a copy never costs a packet header of its own.
//! - **Quiet ticks.** Unless `every_tick`, a tick sends a packet only when it carries messages or
//!   owes an ack for a packet that carried reliable messages: Glenn's endpoint sends every tick, and
//!   its empty packets are a seventh of its bytes at the default workload. Acks of snapshot-only
//!   packets ride on the next packet that goes anyway (32 ack bits cover them).
//!
//! Packet settings (budget, message count, queue sizes) are Glenn's (`glenn.*`); Glenn's resend
//! settings (`glenn.resend_delay_ms`, `glenn.rtt_resend`, `glenn.rtt_resend_factor`) do not apply.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::event::{Event, EventKind, SendKind, Side, SimTime};
use crate::peer::LiveSettings;
use crate::reliability::ack::{AckConfig, Acked};
use crate::reliability::channel::{Pick, ReliableChannel};
use crate::strategies::glenn::{GlennConfig, GlennPeer, PacketContext, ResendPolicy};
use crate::wire::header::PacketHeader;
use crate::wire::sequence::{sequence_difference, sequence_less_than, SequenceBuffer};
use crate::workload::WorkloadConfig;

/// Packets carrying reliable messages that are remembered for Nak inference; beyond this (a
/// silent peer) the oldest are forgotten and their messages wait for the timeout.
const MAX_IN_FLIGHT: usize = 4096;
/// Weight of a new sample in the policy's RTT average (as the display RTT's).
const RTT_SMOOTHING: f64 = 0.1;

/// Settings of the `hybrid` strategy (dotted names `hybrid.*`); all may change while running.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HybridConfig {
    /// Newer packets the peer must have received before a missing one counts as lost (1 = the
    /// first gap; more tolerates reordering).
    pub reorder_tolerance_packets: u32,
    /// A message unacked this many RTTs after its last send goes again.
    pub rtt_factor: f64,
    /// Redundant copies ride only while a message is younger than this many RTTs.
    pub redundancy_age_rtts: f64,
    /// Bytes of redundant copies one packet may carry (0 = no redundancy).
    pub redundancy_budget_bytes: u32,
    /// Redundant copies per message at most (0 = no redundancy).
    pub redundant_copies: u32,
    /// Send a packet every tick, as Glenn does, instead of only with messages or owed acks.
    pub every_tick: bool,
    /// The RTT assumed before the first sample.
    pub initial_rtt_ms: f64,
}

/// Defaults from sweeps of the compare grid (README, "hybrid"): one copy of the messages that
/// fit 48 bytes (most of the default workload's), Glenn's RTT factor, and a tolerance of two
/// packets, which costs nothing without reordering.
impl Default for HybridConfig {
    fn default() -> Self {
        Self {
            reorder_tolerance_packets: 2,
            rtt_factor: 1.25,
            redundancy_age_rtts: 1.0,
            redundancy_budget_bytes: 48,
            redundant_copies: 1,
            every_tick: false,
            initial_rtt_ms: 100.0,
        }
    }
}

/// A hybrid endpoint: Glenn's endpoint with the hybrid policy.
pub type HybridPeer = GlennPeer<HybridPolicy>;

/// Builds the hybrid endpoint of `side` (Glenn's packet settings `glenn`, its own `hybrid`).
pub fn hybrid_peer(
    side: Side,
    ack: AckConfig,
    glenn: GlennConfig,
    hybrid: HybridConfig,
    workload: WorkloadConfig,
    seed: u64,
) -> HybridPeer {
    GlennPeer::with_policy(side, ack, glenn, workload, seed, HybridPolicy::new(hybrid, glenn.send_queue_size))
}

/// What the policy keeps per unacked message.
#[derive(Debug, Clone, Copy, Default)]
struct MessageState {
    /// The latest packet that carried it: only that packet's loss sends it again.
    last_carrier: u16,
    /// Its latest copy was nakked: it goes in the next packet.
    nakked: bool,
    /// Redundant copies sent so far.
    copies: u32,
}

/// Counters since creation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HybridCounters {
    /// Packets inferred lost from the peer's acks.
    pub naks: u64,
    /// Ticks that sent no packet (nothing to carry, no ack owed).
    pub quiet_ticks: u64,
}

/// The hybrid [`ResendPolicy`] (see the module doc).
#[derive(Debug, Clone)]
pub struct HybridPolicy {
    config: HybridConfig,
    /// Packets that carried reliable messages, neither acked nor nakked yet, in send order.
    in_flight: VecDeque<u16>,
    /// The newest `ack` the peer sent.
    newest_ack: Option<u16>,
    /// A packet with reliable messages arrived since our last packet.
    ack_owed: bool,
    messages: SequenceBuffer<MessageState>,
    /// Average RTT of packets that carried reliable messages.
    rtt_ms: Option<f64>,
    counters: HybridCounters,
}

impl HybridPolicy {
    /// A policy for a channel holding up to `send_queue_size` unacked messages.
    pub fn new(config: HybridConfig, send_queue_size: u32) -> Self {
        let size = (send_queue_size as usize).clamp(1, 32768).next_power_of_two().min(32768);
        Self {
            config,
            in_flight: VecDeque::new(),
            newest_ack: None,
            ack_owed: false,
            messages: SequenceBuffer::new(size),
            rtt_ms: None,
            counters: HybridCounters::default(),
        }
    }

    pub fn config(&self) -> &HybridConfig {
        &self.config
    }

    pub fn counters(&self) -> HybridCounters {
        self.counters
    }

    /// The RTT the policy works with: its own average, `initial_rtt_ms` before any sample.
    pub fn rtt_ms(&self) -> f64 {
        let ms = self.rtt_ms.unwrap_or(self.config.initial_rtt_ms);
        if ms.is_finite() {
            ms.max(0.0)
        } else {
            0.0
        }
    }

    fn micros(ms: f64) -> u64 {
        if ms.is_finite() {
            (ms.max(0.0) * 1000.0).round() as u64
        } else {
            u64::MAX
        }
    }

    /// Redundant copies of the youngest unacked messages, within their own budget and the
    /// packet's, appended to `picks`.
    fn add_redundancy(
        &mut self,
        now: SimTime,
        channel: &mut ReliableChannel,
        budget_bits: &mut usize,
        max_messages: usize,
        picks: &mut Vec<Pick>,
    ) {
        let c = self.config;
        if c.redundant_copies == 0 || c.redundancy_budget_bytes == 0 {
            return;
        }
        let max_age_us = Self::micros(self.rtt_ms() * c.redundancy_age_rtts);
        let mut own = (c.redundancy_budget_bytes as usize * 8).min(*budget_bits);
        let span = channel.unacked().min(channel.sizes().receive_queue_size);
        let oldest = channel.oldest_unacked();
        for i in (0..span).rev() {
            if picks.len() >= max_messages || own < ReliableChannel::packet_bits(0) {
                break;
            }
            let id = oldest.wrapping_add(i as u16);
            let Some(view) = channel.view(id) else { continue };
            let Some(first) = view.first_sent else { continue };
            if now.saturating_since(first).0 >= max_age_us {
                break; // every older message is older still
            }
            if view.last_sent == Some(now) {
                continue; // already in this packet
            }
            let Some(state) = self.messages.get(id) else { continue };
            if state.copies >= c.redundant_copies {
                continue;
            }
            let before = own;
            if let Some(p) = channel.pick(id, now, SendKind::Redundant, &mut own) {
                *budget_bits -= before - own;
                picks.push(p);
            }
        }
        // Written in id order, so consecutive ids keep their one-bit encoding.
        picks.sort_by_key(|p| p.id.wrapping_sub(oldest));
    }

    /// Reads the peer's newest acks: every packet with reliable messages that is at least the
    /// reorder tolerance behind the newest ack and not acked is lost.
    fn infer_naks(
        &mut self,
        cx: &PacketContext<'_>,
        header: &PacketHeader,
        channel: &ReliableChannel,
        events: &mut Vec<Event>,
    ) {
        if header.ack_bits == 0 || self.newest_ack.is_some_and(|n| sequence_less_than(header.ack, n)) {
            return; // an expired receiver's empty acks, or older news than we had
        }
        self.newest_ack = Some(header.ack);
        let (side, now, reports) = (cx.side, cx.now, cx.reports_beliefs);
        let tolerance = self.config.reorder_tolerance_packets.max(1) as i32;
        while let Some(&seq) = self.in_flight.front() {
            let behind = sequence_difference(header.ack, seq);
            if behind < tolerance {
                break;
            }
            self.in_flight.pop_front();
            if behind < 32 && header.ack_bits & (1 << behind) != 0 {
                continue; // acked by this very header (already reported)
            }
            self.counters.naks += 1;
            if reports {
                events.push(Event::new(now, EventKind::PacketNakked { side, seq: seq as u32 }));
            }
            let Some((sent_at, ids)) = channel.packet_messages(seq) else { continue };
            for &id in ids {
                // A message sent first after this packet only shares a wrapped id with one in it.
                let same = channel.view(id).is_some_and(|v| v.first_sent.is_some_and(|t| t <= sent_at));
                if let Some(state) = self.messages.get_mut(id).filter(|s| same && s.last_carrier == seq) {
                    state.nakked = true;
                }
            }
        }
    }
}

impl ResendPolicy for HybridPolicy {
    fn select(
        &mut self,
        cx: &PacketContext<'_>,
        channel: &mut ReliableChannel,
        budget_bits: &mut usize,
        max_messages: usize,
        picks: &mut Vec<Pick>,
    ) {
        let now = cx.now;
        let timeout_us = Self::micros(self.rtt_ms() * self.config.rtt_factor).max(1);
        let messages = &self.messages;
        channel.select_with(budget_bits, max_messages, picks, now, |id, m| match m.last_sent {
            None => Some(SendKind::First),
            Some(_) if messages.get(id).is_some_and(|s| s.nakked) => Some(SendKind::NakResend),
            Some(t) if now.saturating_since(t).0 >= timeout_us => Some(SendKind::DelayResend),
            Some(_) => None,
        });
    }

    fn send_packet(&self, messages: usize) -> bool {
        messages > 0 || self.ack_owed || self.config.every_tick
    }

    fn fill(
        &mut self,
        cx: &PacketContext<'_>,
        channel: &mut ReliableChannel,
        budget_bits: &mut usize,
        max_messages: usize,
        picks: &mut Vec<Pick>,
    ) {
        self.add_redundancy(cx.now, channel, budget_bits, max_messages, picks);
    }

    fn on_sent(&mut self, _now: SimTime, sequence: u16, picks: &[Pick]) {
        self.ack_owed = false;
        if picks.is_empty() {
            return;
        }
        if self.in_flight.len() >= MAX_IN_FLIGHT {
            self.in_flight.pop_front();
        }
        self.in_flight.push_back(sequence);
        for p in picks {
            let fresh = p.kind == SendKind::First;
            let state = match self.messages.get_mut(p.id) {
                Some(s) if !fresh => s,
                _ => match self.messages.insert(p.id) {
                    Some(s) => s,
                    None => continue,
                },
            };
            state.last_carrier = sequence;
            state.nakked = false;
            state.copies += (p.kind == SendKind::Redundant) as u32;
        }
    }

    fn on_received(
        &mut self,
        cx: &PacketContext<'_>,
        header: &PacketHeader,
        acked: &[Acked],
        carried_reliable: bool,
        channel: &ReliableChannel,
        events: &mut Vec<Event>,
    ) {
        self.ack_owed |= carried_reliable;
        for a in acked {
            let Some(at) = self.in_flight.iter().position(|s| *s == a.sequence) else { continue };
            self.in_flight.remove(at);
            // Only packets with reliable messages: the peer acks those at its next tick.
            if a.rtt_ms.is_finite() && a.rtt_ms >= 0.0 {
                self.rtt_ms = Some(match self.rtt_ms {
                    Some(r) => r + (a.rtt_ms - r) * RTT_SMOOTHING,
                    None => a.rtt_ms,
                });
            }
        }
        self.infer_naks(cx, header, channel, events);
    }

    fn reconfigure(&mut self, live: &LiveSettings) -> Option<GlennConfig> {
        let (glenn, hybrid) = live.own::<(GlennConfig, HybridConfig)>()?;
        self.config = *hybrid;
        Some(*glenn)
    }
}
