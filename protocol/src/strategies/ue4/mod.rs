//! UE4-style reliability: packets with a notify header, channels of bunches, and resends driven
//! only by Naks (after "UE4 UDP是如何进行可靠传输的", the seed in /work/shared/seeds).
//!
//! - [`sequence`]: 14-bit `TSequenceNumber`.
//! - [`notify`]: the packed notify header and 256-bit ack/nak history (`FNetPacketNotify`).
//! - [`bunch`]: bunches, partial bunches and the packet wire format.
//! - [`channel`]: `OutRec` (unacked reliable bunches) and `InRec` (reliable bunches ahead of a gap).
//! - [`order_cache`]: the receive-side packet order cache.
//! - [`throttle`]: `CurrentNetSpeed`, `QueuedBits`, `IsNetReady`.
//! - [`peer`]: the connection as a [`crate::Peer`].

pub mod bunch;
pub mod channel;
pub mod notify;
pub mod order_cache;
pub mod peer;
pub mod sequence;
pub mod throttle;

use serde::{Deserialize, Serialize};

pub use channel::RELIABLE_BUFFER;
pub use peer::{Ue4Peer, RELIABLE_OVERFLOW_REASON, TIMEOUT_REASON};
pub use sequence::SeqNum;

/// Channel carrying reliable workload messages.
pub const RELIABLE_CHANNEL: u8 = 1;
/// Channel carrying unreliable workload messages (snapshots), so their bunches never wait
/// behind a reliable gap.
pub const UNRELIABLE_CHANNEL: u8 = 2;

/// UE4 strategy settings (dotted names `ue4.*`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Ue4Config {
    /// `CurrentNetSpeed` in bytes per second; 0 = unthrottled. Default 10000, UE4's
    /// `ConfiguredInternetSpeed` (the seed; `ConfiguredLanSpeed` is 20000).
    pub net_speed_bytes_per_sec: f64,
    /// Clamp on the throttle's time step (`1 / DesiredTickRate`); 0 = no clamp.
    pub desired_tick_rate_hz: f64,
    /// Largest packet payload (UE4's `MAX_PACKET_SIZE`, 1024); raised to hold at least one
    /// full partial bunch (995).
    pub max_packet_bytes: u32,
    /// Send a packet when nothing went out for this long (`KeepAliveTime`, 0.2 s).
    pub keepalive_ms: f64,
    /// Hold packets that arrive after a small gap until the end of the tick.
    pub order_cache_enabled: bool,
    /// Largest gap that starts caching (UE4 cvar `net.PacketOrderMaxMissingPackets`, 3).
    pub order_cache_max_missing: u32,
    /// Cache slots (UE4 cvar `net.PacketOrderMaxCachedPackets`, 32).
    pub order_cache_capacity: u32,
    /// Both sides' first packet sequence (UE4 may randomise it in the handshake); set it near
    /// 16383 to cross the 14-bit wrap early.
    pub initial_packet_seq: u16,
    /// Merge a message into the previous bunch of the send buffer when it is on the same
    /// channel, equally reliable and the result stays one bunch (the seed's "考虑合并"): fewer
    /// `ChSequence`s and bunch headers per message.
    pub merge_bunches: bool,
    /// Close the connection when nothing has been received for this long; 0 = never. Not in
    /// the seed: UE4's IpNetDriver `ConnectionTimeout` (60 s). It is a liveness check, not a
    /// resend timer — and the only way out when both sides stall with a full sequence window.
    pub connection_timeout_ms: f64,
    /// Unreliable messages that may wait for `IsNetReady`; older ones are dropped (UE4 skips
    /// replication while saturated, so only the newest state is worth sending).
    pub max_waiting_unreliable: u32,
}

impl Default for Ue4Config {
    fn default() -> Self {
        Self {
            net_speed_bytes_per_sec: 10_000.0,
            desired_tick_rate_hz: 0.0,
            max_packet_bytes: 1024,
            keepalive_ms: 200.0,
            order_cache_enabled: true,
            order_cache_max_missing: 3,
            order_cache_capacity: 32,
            initial_packet_seq: 0,
            merge_bunches: true,
            connection_timeout_ms: 60_000.0,
            max_waiting_unreliable: 1,
        }
    }
}

/// One endpoint's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Ue4Counters {
    pub packets_sent: u64,
    /// Our packets the remote reported lost.
    pub naks_received: u64,
    /// Reliable bunches put back in the send buffer after a Nak.
    pub bunches_resent: u64,
    /// Messages merged into the previous bunch instead of starting one.
    pub bunches_merged: u64,
    /// Incoming packets skipped over (never processed): `InPacketsLost`.
    pub packets_lost: u64,
    /// Incoming packets held by the order cache.
    pub packets_cached: u64,
    /// Incoming packets dropped as old, duplicate or beyond the cache (`TotalOutOfOrderPackets`).
    pub packets_out_of_order_dropped: u64,
    pub malformed: u64,
    pub corrupt_payloads: u64,
    pub duplicate_bunches: u64,
    pub partial_discarded: u64,
    pub max_inrec_depth: u64,
    pub max_inrec_wait_us: u64,
    pub total_inrec_wait_us: u64,
    /// Largest `NumOutRec` on any channel at the moment counters were read.
    pub max_out_rec: u64,
    pub unreliable_dropped_saturated: u64,
    /// Flushes forced by 256 dirty acks.
    pub history_full_flushes: u64,
    /// Flushes held back because half the sequence space was unacknowledged.
    pub window_full_stalls: u64,
    pub ignored_after_close: u64,
    pub encode_failures: u64,
}
