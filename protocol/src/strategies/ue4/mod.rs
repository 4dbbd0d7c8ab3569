//! UE4-style reliability: packets with a notify header, channels of bunches, and resends driven
//! only by Naks (after "UE4 UDP是如何进行可靠传输的", the seed in /work/shared/seeds).
//!
//! - [`sequence`]: 14-bit `TSequenceNumber`.
//! - [`notify`]: the packed notify header and 256-bit ack/nak history (`FNetPacketNotify`).
//! - [`archive`]: UE4's `SerializeInt`, `SerializeIntPacked` and hard-coded names.
//! - [`bunch`]: bunches with the 4.25 bunch header, and splitting into partial bunches.
//! - [`packet`]: the packet wire format (termination bit) and message framing in bunches.
//! - [`channel`]: `OutRec` (unacked reliable bunches) and `InRec` (reliable bunches ahead of a
//!   gap), channel open/close and bSkipAck on the receive side.
//! - [`order_cache`]: the receive-side packet order cache.
//! - [`throttle`]: `CurrentNetSpeed`, `QueuedBits`, `IsNetReady`.
//! - [`peer`]: the connection as a [`crate::Peer`], with one actor channel per actor.

pub mod archive;
pub mod bunch;
pub mod channel;
pub mod notify;
pub mod order_cache;
pub mod packet;
pub mod peer;
pub mod sequence;
pub mod throttle;

use serde::{Deserialize, Serialize};

pub use bunch::CONTROL_CHANNEL;
pub use channel::RELIABLE_BUFFER;
pub use peer::{Ue4Peer, RELIABLE_OVERFLOW_REASON, TIMEOUT_REASON};
pub use sequence::SeqNum;

/// The static channel carrying the workload's unreliable snapshots (open on both sides from
/// the start, so their bunches never wait behind a reliable gap). Index 1 is left free: it is
/// UE4's static voice channel, not modelled.
pub const SNAPSHOT_CHANNEL: u32 = 2;
/// First index actor channels take (each actor's channel takes the lowest free index from here,
/// as `GetFreeChannelIndex` does).
pub const FIRST_ACTOR_CHANNEL: u32 = 3;

/// UE4 strategy settings (dotted names `ue4.*`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
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
    /// Close an actor channel (a reliable bunch with bClose, reason `Relevancy`) when its actor
    /// sent nothing for this long; its next message reopens a channel. Default 5 s, UE4's
    /// `RelevantTimeout` (the seed names no idle time); 0 = never close.
    pub channel_close_s: f64,
    /// When any piece of a reliable bunch split into partial bunches is nakked, resend every
    /// piece, and release the pieces from `OutRec` only together: the seed's prose ("即使删除一个
    /// 部分 Bunch 也会导致整个 Bunch 的重新传输"). `false` resends only the pieces the lost packet
    /// carried, which is what the 4.25 code path (`PrepBunch` per piece, `ReceivedNak` by packet
    /// id) does.
    pub whole_bunch_resend: bool,
    /// `net.PartialBunchReliableThreshold` (4.25 default 8; 0 = off): an unreliable bunch split
    /// into at least this many partial bunches is sent reliably unless that would overflow the
    /// reliable buffer, and its channel's replication (snapshots) pauses until everything
    /// reliable on it is acked (`bPausedUntilReliableACK`).
    pub partial_bunch_reliable_threshold: u32,
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
            channel_close_s: 5.0,
            whole_bunch_resend: true,
            partial_bunch_reliable_threshold: 8,
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
    /// Packets received but reported lost because a bunch in them could not be processed.
    pub skip_acks: u64,
    /// Bunches that could not be processed (each makes its packet skip-acked).
    pub skipped_bunches: u64,
    /// Bunches UE4 flags as errors (only corrupt input makes them); discarded and skip-acked.
    pub bunch_errors: u64,
    /// Actor channels this side opened and closed (idle closes).
    pub channels_opened: u64,
    pub channels_closed: u64,
    /// Deepest `InRec` per channel kind.
    pub max_inrec_depth_actor: u64,
    pub max_inrec_depth_control: u64,
    pub max_inrec_depth_snapshot: u64,
    /// Unreliable bunches sent reliably under `partial_bunch_reliable_threshold`.
    pub unreliable_made_reliable: u64,
}
