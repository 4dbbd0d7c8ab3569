//! The server's uplink: one outgoing bandwidth shared by every client, a FIFO queue in front of
//! each client's own link.
//!
//! A game server's packets to all its clients leave through one network interface. When that
//! interface is the bottleneck, one client's large download queues up in front of everyone
//! else's snapshots: a packet waits for every byte offered before it, whoever it is for. The
//! uplink models exactly that: serialisation at `uplink_kbps` (IP+UDP headers counted, as the
//! link's own cap counts them) and tail drop once the queue holds `uplink_queue_bytes`. A packet
//! that gets through enters its client's link when it leaves the uplink
//! ([`super::Link::send_after`]): the link's random draws stay keyed by the send instant, so a
//! client meets the same loss trace with and without the cap, only later.
//!
//! The queue depends on nothing but the sizes and instants of the server's sends in order, so the
//! same [`Uplink`] fed the `LinkSent` events of a recording (A->B, every client, in event order)
//! makes the same decisions: that is how [`crate::measure::server`] measures the queue delay of a
//! run from its events alone.

use serde::{Deserialize, Serialize};

use super::config::IP_UDP_OVERHEAD_BYTES;
use crate::event::SimTime;

/// The server's outgoing bandwidth shared by all clients (`server.*`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Outgoing bandwidth of the server in kbit/s, IP+UDP headers included, shared by every
    /// client through one queue; 0 = unlimited (no shared queue).
    pub uplink_kbps: f64,
    /// Bytes the uplink queue holds before dropping (tail drop).
    pub uplink_queue_bytes: u32,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self { uplink_kbps: 0.0, uplink_queue_bytes: 64 * 1024 }
    }
}

impl ServerConfig {
    /// Whether the uplink is capped (a positive, finite rate): otherwise packets go straight to
    /// their client's link.
    pub fn capped(&self) -> bool {
        self.uplink_kbps > 0.0 && self.uplink_kbps.is_finite()
    }

    /// The default settings (nothing to write in a scenario file).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// What the uplink did with one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UplinkFate {
    /// It leaves the server at this instant (at or after it was sent).
    Departs(SimTime),
    /// The queue was full: dropped at the server (`LinkDropped` with `QueueFull`).
    Dropped,
}

/// The shared FIFO queue and its transmitter.
#[derive(Debug, Clone)]
pub struct Uplink {
    config: ServerConfig,
    /// When the transmitter finishes what it holds.
    busy_until: SimTime,
}

impl Uplink {
    pub fn new(config: ServerConfig) -> Self {
        Self { config, busy_until: SimTime::ZERO }
    }

    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// New settings from now on; what is queued keeps its departure.
    pub fn set_config(&mut self, config: ServerConfig) {
        self.config = config;
    }

    /// Offers a packet of `payload_bytes` (UDP payload; the headers are added) at `now`.
    pub fn offer(&mut self, now: SimTime, payload_bytes: usize) -> UplinkFate {
        let c = &self.config;
        if !c.capped() {
            return UplinkFate::Departs(now);
        }
        let wire_bytes = payload_bytes as f64 + IP_UDP_OVERHEAD_BYTES as f64;
        let start = self.busy_until.max(now);
        let backlog_bytes = (start.0 - now.0) as f64 * c.uplink_kbps / 8000.0;
        if backlog_bytes + wire_bytes > c.uplink_queue_bytes as f64 {
            return UplinkFate::Dropped;
        }
        let tx_us = (wire_bytes * 8000.0 / c.uplink_kbps).round() as u64;
        self.busy_until = start.plus_micros(tx_us);
        UplinkFate::Departs(self.busy_until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_queue_behind_each_other_and_a_full_queue_drops() {
        // 800 kbps: a 972-byte payload is 1000 wire bytes, 10 ms on the wire.
        let mut u = Uplink::new(ServerConfig { uplink_kbps: 800.0, uplink_queue_bytes: 3_000 });
        let t = SimTime(1_000_000);
        assert_eq!(u.offer(t, 972), UplinkFate::Departs(SimTime(1_010_000)));
        assert_eq!(u.offer(t, 972), UplinkFate::Departs(SimTime(1_020_000)));
        assert_eq!(u.offer(t, 972), UplinkFate::Departs(SimTime(1_030_000)));
        assert_eq!(u.offer(t, 972), UplinkFate::Dropped, "3000 bytes queued");
        // Once the queue has drained the next packet goes at once.
        assert_eq!(u.offer(SimTime(2_000_000), 72), UplinkFate::Departs(SimTime(2_001_000)));
        let mut free = Uplink::new(ServerConfig::default());
        assert_eq!(free.offer(t, 100_000), UplinkFate::Departs(t));
    }
}
