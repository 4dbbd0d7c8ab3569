//! What differs between delivery-notification schemes: the [`NotifyScheme`] trait, and the
//! [`Outcome`] every scheme reports for each of its packets.

use crate::event::{DiscardReason, MalformedReason, SimTime};
use crate::reliability::stats::StatsConfig;

/// What a scheme learned about one of its packets (each sequence gets exactly one).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    Delivered {
        sequence: u16,
        rtt_ms: f64,
    },
    /// Skipped by an ack range (`timeout == false`) or not acked within `timeout_ms`.
    Failed {
        sequence: u16,
        timeout: bool,
    },
}

/// What a receiver does with a well-formed packet (intact messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Processed and acked.
    Accept,
    /// Neither processed nor acked.
    Ignore(DiscardReason),
    /// Its acks and messages are taken, but it is never acked (rellikt: too old for its received
    /// buffer), so its sender counts it lost.
    Unacked(DiscardReason),
}

/// One delivery-notification scheme's header and ack bookkeeping: everything a
/// [`NotifyPeer`](super::NotifyPeer) does not share.
///
/// The peer calls, per send tick: [`process_timeouts`](Self::process_timeouts), then for the
/// packet [`next_header`](Self::next_header), [`message_budget`](Self::message_budget) and
/// [`write`](Self::write); per incoming packet: [`read`](Self::read), [`admit`](Self::admit) and,
/// when admitted, [`process_acks`](Self::process_acks). Outcomes are appended to the caller's
/// `Vec`; the peer turns them into events and message acks or resends.
pub trait NotifyScheme: Send + 'static {
    /// The strategy's own settings (its section of the scenario).
    type Config: Copy + Send + 'static;
    /// A packet's header: everything on the wire but the messages.
    type Header;

    fn new(config: Self::Config) -> Self;
    /// Bytes a packet leaves for messages after its largest header: a larger message could never
    /// be sent, so it is refused rather than queued.
    fn message_room_bytes(&self) -> usize;
    /// The send window: messages held until acked before new ones wait in the backlog.
    fn send_queue_messages(&self) -> u32;
    /// RTT / loss / bandwidth estimator settings.
    fn stats_config(&self) -> StatsConfig;
    /// How many of the peer's packets carry each of its acks, when that is a fixed number (dnm's
    /// `ack_repeat`); `None` when acks repeat until superseded. The loss estimate uses it to
    /// discount failures caused by acks lost on the way back (see `MessageEndpoint`).
    fn ack_redundancy(&self) -> Option<u32>;
    /// Takes the settings that may change while running.
    fn reconfigure(&mut self, config: &Self::Config);

    /// Failures due by `now` (sends unacknowledged for too long).
    fn process_timeouts(&mut self, now: SimTime, out: &mut Vec<Outcome>);
    /// The header of the next packet, which takes the next sequence (that may give up older ones).
    fn next_header(&mut self, now: SimTime, out: &mut Vec<Outcome>) -> Self::Header;
    fn sequence(header: &Self::Header) -> u16;
    /// Bytes left for messages in a packet with this header.
    fn message_budget(&self, header: &Self::Header) -> usize;
    /// Appends the packet to `out`; false when it cannot be encoded (sizes are bounded, so only an
    /// internal bug gets there).
    fn write(&self, header: &Self::Header, messages: &[Vec<u8>], out: &mut Vec<u8>) -> bool;
    /// The header to send instead when [`write`](Self::write) failed.
    fn bare(header: &Self::Header) -> Self::Header;

    /// Decodes any bytes into a header and message payloads, or says why they are malformed.
    fn read(&self, packet: &[u8]) -> Result<(Self::Header, Vec<Vec<u8>>), MalformedReason>;
    /// Whether a well-formed packet (intact messages) is processed and acked (see
    /// [`Admission`]); `Err` rejects it as malformed.
    fn admit(&mut self, now: SimTime, header: &Self::Header) -> Result<Admission, MalformedReason>;
    /// Takes in an admitted packet: records its sequence for acking and reads the acks it carries.
    fn process_acks(&mut self, now: SimTime, header: &Self::Header, out: &mut Vec<Outcome>);
}
