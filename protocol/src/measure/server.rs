//! The server's figures over all its clients: what it sent and received, and what its shared
//! uplink did (queue delay, drops), from events alone.
//!
//! The uplink's queue delay is not an event: it is measured again by feeding the same
//! [`Uplink`] the server's sends as the recording holds them (`LinkSent` A->B, every client, in
//! event order) with the settings in force (the scenario's `server`, then each
//! `ParamChanged` of a `server.*` name). The queue depends on nothing else, so this makes exactly
//! the decisions the run made: the same delays, the same drops.

use serde::{Deserialize, Serialize};

use super::percentile::LatencyMs;
use crate::event::{Dir, Event, EventKind, Side, SimTime};
use crate::link::{ServerConfig, Uplink, UplinkFate, IP_UDP_OVERHEAD_BYTES};
use crate::scenario::Scenario;

/// The server's totals over every client (the `server` section of a run of several clients).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSummary {
    /// Bits per second the server sent, every client's connection together, IP+UDP headers
    /// included (as `server.uplink_kbps` counts), over the run.
    pub kbps_out: f64,
    /// Bits per second of packets that reached the server and were accepted, headers included.
    pub kbps_in: f64,
    /// Packets the server sent and accepted.
    pub packets_out: u64,
    pub packets_in: u64,
    /// The shared uplink's queue, when it was capped at any point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uplink: Option<UplinkSummary>,
}

/// What the server's shared uplink did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UplinkSummary {
    /// The cap at the end of the run (kbit/s, headers included) and the queue's size.
    pub kbps: f64,
    pub queue_bytes: u32,
    /// Packets that went through the queue while it was capped, and those it dropped (full).
    pub packets: u64,
    pub dropped: u64,
    /// Time from the send to leaving the server, over the packets that got through.
    pub queue_delay_ms: LatencyMs,
}

/// [`ServerSummary`] fed one event at a time.
#[derive(Debug, Clone)]
pub struct ServerAccumulator {
    uplink: Uplink,
    /// The settings as a scenario, for `server.*` changes read as `--set` reads them.
    settings: Scenario,
    capped_ever: bool,
    out: (u64, u64),
    received: (u64, u64),
    delays_ms: Vec<f64>,
    dropped: u64,
    last: SimTime,
}

impl ServerAccumulator {
    /// A new fold of a run whose server starts with `server`.
    pub fn new(server: ServerConfig) -> Self {
        Self {
            uplink: Uplink::new(server),
            settings: Scenario { server, ..Scenario::default() },
            capped_ever: server.capped(),
            out: (0, 0),
            received: (0, 0),
            delays_ms: Vec::new(),
            dropped: 0,
            last: SimTime::ZERO,
        }
    }

    pub fn observe(&mut self, e: &Event) {
        self.last = self.last.max(e.time);
        let headers = IP_UDP_OVERHEAD_BYTES as u64;
        match &e.kind {
            EventKind::PacketSent { side: Side::A, bytes, .. } => {
                self.out = (self.out.0 + 1, self.out.1 + *bytes as u64 + headers);
            }
            EventKind::PacketReceived { side: Side::A, bytes, .. } => {
                self.received = (self.received.0 + 1, self.received.1 + *bytes as u64 + headers);
            }
            EventKind::LinkSent { dir: Dir::AtoB, bytes, .. } if self.uplink.config().capped() => {
                match self.uplink.offer(e.time, *bytes as usize) {
                    UplinkFate::Departs(at) => self.delays_ms.push(at.saturating_since(e.time).as_millis_f64()),
                    UplinkFate::Dropped => self.dropped += 1,
                }
            }
            EventKind::ParamChanged { name, value }
                if name.starts_with("server.") && self.settings.set(name, value).is_ok() =>
            {
                self.uplink.set_config(self.settings.server);
                self.capped_ever |= self.settings.server.capped();
            }
            _ => {}
        }
    }

    /// The figures so far, rates over `seconds` (the run's length; the last event's time when
    /// None).
    pub fn finish(&self, seconds: Option<f64>) -> ServerSummary {
        let secs = seconds.unwrap_or(self.last.as_secs_f64());
        let kbps = |bytes: u64| if secs > 0.0 { bytes as f64 * 8.0 / 1000.0 / secs } else { 0.0 };
        let uplink = self.capped_ever.then(|| UplinkSummary {
            kbps: self.settings.server.uplink_kbps,
            queue_bytes: self.settings.server.uplink_queue_bytes,
            packets: self.delays_ms.len() as u64 + self.dropped,
            dropped: self.dropped,
            queue_delay_ms: LatencyMs::of(self.delays_ms.clone()),
        });
        ServerSummary {
            kbps_out: kbps(self.out.1),
            kbps_in: kbps(self.received.1),
            packets_out: self.out.0,
            packets_in: self.received.0,
            uplink,
        }
    }
}
