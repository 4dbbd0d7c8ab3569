//! Which unacked messages ride in a packet, and whether a tick sends a packet at all: the part of
//! a Glenn-style endpoint that differs between strategies built on it.
//!
//! [`GlennPeer`](super::GlennPeer) owns the packets, the ack endpoint, the reliable-ordered
//! channel, the queues and the whole receive path; a [`ResendPolicy`] picks the reliable messages
//! of each packet and may watch what is sent and what the peer's acks say. [`GlennResend`] is
//! Glenn's rule (a resend delay, fixed or RTT x factor, one packet every tick); the `hybrid`
//! strategy brings its own, so it shares every byte of the wire format and the channel instead of
//! copying them.

use crate::event::{round_u64, Event, Side, SimTime};
use crate::peer::LiveSettings;
use crate::reliability::ack::Acked;
use crate::reliability::channel::{Pick, ReliableChannel};
use crate::reliability::stats::RttEstimator;
use crate::wire::header::PacketHeader;

use super::GlennConfig;

/// What a policy may read about the endpoint while a packet is built or received.
#[derive(Debug, Clone, Copy)]
pub struct PacketContext<'a> {
    pub now: SimTime,
    pub side: Side,
    /// The packet settings in force (budget, queue sizes, Glenn's resend delay).
    pub config: &'a GlennConfig,
    pub rtt: &'a RttEstimator,
    /// Whether the endpoint reports packet beliefs (`PacketNakked` among them): a policy that
    /// concludes any reports them only when this is set ([`crate::Peer::set_reports_packet_beliefs`]).
    pub reports_beliefs: bool,
}

/// The per-packet decisions of a Glenn-style endpoint (see the module doc).
///
/// Call order per tick: [`select`](Self::select), then [`send_packet`](Self::send_packet) with
/// what the packet would carry, then (if it goes) [`fill`](Self::fill) and
/// [`on_sent`](Self::on_sent). Per accepted packet:
/// [`on_received`](Self::on_received) after its acks reached the channel and before its messages
/// are delivered.
pub trait ResendPolicy: std::fmt::Debug + Clone + Send + 'static {
    /// Picks the reliable messages for the packet being built within `budget_bits` (reduced by
    /// what is taken) and `max_messages`; `picks` is empty on entry. A policy that picks nothing
    /// must leave the channel as it was: the tick may send no packet.
    fn select(
        &mut self,
        cx: &PacketContext<'_>,
        channel: &mut ReliableChannel,
        budget_bits: &mut usize,
        max_messages: usize,
        picks: &mut Vec<Pick>,
    );

    /// Whether this tick sends a packet that would carry `messages` messages (reliable and
    /// unreliable). Glenn's endpoint always does, so acks keep flowing.
    fn send_packet(&self, _messages: usize) -> bool {
        true
    }

    /// For a packet that goes: more reliable messages in what is left of `budget_bits` and
    /// `max_messages` after the unreliable ones, appended to `picks` (which the policy may
    /// reorder). Extras ride on packets that go anyway; they never make a tick send one.
    fn fill(
        &mut self,
        _cx: &PacketContext<'_>,
        _channel: &mut ReliableChannel,
        _budget_bits: &mut usize,
        _max_messages: usize,
        _picks: &mut Vec<Pick>,
    ) {
    }

    /// Packet `sequence` went out at `now` carrying `picks`.
    fn on_sent(&mut self, _now: SimTime, _sequence: u16, _picks: &[Pick]) {}

    /// An accepted packet with `header` was applied: `acked` are the sequences it newly acked,
    /// `carried_reliable` says whether it carried reliable messages. A policy may report what it
    /// concludes (e.g. `PacketNakked`) in `events`.
    fn on_received(
        &mut self,
        _cx: &PacketContext<'_>,
        _header: &PacketHeader,
        _acked: &[Acked],
        _carried_reliable: bool,
        _channel: &ReliableChannel,
        _events: &mut Vec<Event>,
    ) {
    }

    /// Takes the live settings; returns the packet settings to use from now (None: unchanged).
    fn reconfigure(&mut self, live: &LiveSettings) -> Option<GlennConfig>;
}

/// Glenn's rule: an unacked message goes again once the resend delay passed since its last send
/// (every packet at delay 0), oldest first; a packet every tick.
#[derive(Debug, Clone, Copy, Default)]
pub struct GlennResend;

/// The resend delay in force: fixed, or RTT x factor once an RTT sample exists; never negative.
pub fn resend_delay_ms(config: &GlennConfig, rtt: &RttEstimator) -> f64 {
    let ms = if config.rtt_resend && rtt.has_sample() {
        rtt.display_ms() * config.rtt_resend_factor
    } else {
        config.resend_delay_ms
    };
    if ms.is_finite() {
        ms.max(0.0)
    } else {
        0.0
    }
}

impl ResendPolicy for GlennResend {
    fn select(
        &mut self,
        cx: &PacketContext<'_>,
        channel: &mut ReliableChannel,
        budget_bits: &mut usize,
        max_messages: usize,
        picks: &mut Vec<Pick>,
    ) {
        // Nothing unacked, nothing to pick: the delay's float arithmetic is skipped.
        if channel.unacked() == 0 {
            return;
        }
        let delay_us = round_u64(resend_delay_ms(cx.config, cx.rtt) * 1000.0);
        channel.select(cx.now, delay_us, budget_bits, max_messages, picks);
    }

    fn reconfigure(&mut self, live: &LiveSettings) -> Option<GlennConfig> {
        live.own::<GlennConfig>().copied()
    }
}
