//! The delivery notification manager of *Multiplayer Game Programming* ch. 7.5, as a strategy.
//!
//! Every outgoing packet carries a 16-bit sequence and is kept, in send order, with its dispatch
//! time. The receiver processes the expected sequence or a newer one (an older one is neither
//! processed nor acked, unless `accept_late` is set: then it is processed once, if it was not
//! processed before and is at most [`LATE_WINDOW`] packets old) and accumulates pending acks as ranges (`start`, `count`) that go out in
//! its next packets. The sender walks each ack range against its in-flight list in order: packets
//! acked are delivery successes, in-flight packets a range skips are failures, and packets still
//! unacked after `timeout_ms` are failures. Each sequence gets exactly one outcome
//! (`PacketAcked` or `PacketNakked`), and the delivered/dropped counts feed the loss estimate.
//!
//! - [`wire`]: the packet format (bits.rs streams).
//! - [`manager`]: the algorithm, free of messages and events.
//! - [`scheme`]: the manager as a [`NotifyScheme`](super::NotifyScheme), which [`DnmPeer`] runs
//!   with the shared message layer.

pub mod manager;
pub mod scheme;
pub mod wire;

use serde::{Deserialize, Serialize};

use super::peer::NotifyPeer;
use crate::reliability::stats::StatsConfig;

pub use manager::{DeliveryNotificationManager, LATE_WINDOW};
pub use wire::{AckRange, DnmPacket, WireError};

/// Settings of the `dnm` strategy (dotted names `dnm.*`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DnmConfig {
    /// A packet not acked this long after dispatch is a delivery failure (the seed's kAckTimeout).
    pub timeout_ms: f64,
    /// Ack ranges written into one packet (the seed writes one; more keep up with gaps).
    pub max_ack_ranges_per_packet: u32,
    /// Packets each pending ack range is written into (the seed: 1, written once and forgotten).
    pub ack_repeat: u32,
    /// Pending ack ranges kept; the oldest are dropped beyond it (their packets time out).
    pub max_pending_ack_ranges: u32,
    /// After this long without accepting a packet, the next sequence is accepted whatever it is
    /// (otherwise, after a long one-way outage, wrapped sequences would look old). 0 = never.
    pub receive_reset_ms: f64,
    /// Packet size limit; messages that do not fit wait for the next packet.
    pub max_packet_bytes: u32,
    /// The send window: messages held until acked; beyond it new ones wait in the backlog.
    pub send_queue_messages: u32,
    /// Process a packet older than the newest received once (ack it, deliver its messages)
    /// instead of the book's rule, which drops it unacked. Off by default: under jitter the
    /// book's rule raises sends per message, and that cost is the book's to show.
    pub accept_late: bool,
    /// RTT / loss / bandwidth estimator settings.
    pub stats: StatsConfig,
}

impl Default for DnmConfig {
    fn default() -> Self {
        Self {
            timeout_ms: 1000.0,
            max_ack_ranges_per_packet: 8,
            ack_repeat: 1,
            max_pending_ack_ranges: 64,
            receive_reset_ms: 5000.0,
            max_packet_bytes: 1200,
            send_queue_messages: 1024,
            accept_late: false,
            stats: StatsConfig::default(),
        }
    }
}

/// One endpoint of the `dnm` strategy.
pub type DnmPeer = NotifyPeer<DeliveryNotificationManager>;

impl DnmPeer {
    pub fn manager(&self) -> &DeliveryNotificationManager {
        self.scheme()
    }
}
