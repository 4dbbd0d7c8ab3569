//! Sending large blocks reliably: Glenn Fiedler's chunk/slice system.
//!
//! A chunk (up to `max_slices` x `slice_bytes`, 256 KiB by default) is cut into slices that are
//! sent over and over, round-robin and within a byte budget, until the receiver's ack bitfield
//! says every one arrived. Unlike packet fragmentation ([`crate::strategies::fragments`]), losing
//! a slice only costs that slice, so loss is not amplified by the number of pieces.
//!
//! Only one chunk is on the network at a time ([`ChunkSender`] keeps a queue in front of it);
//! the receiver ([`ChunkReceiver`]) is a receive queue of length one. Acks are rate limited so a
//! flood of slice packets is never answered one-for-one (the seed's DDoS note).
//!
//! The `chunks` strategy ([`ChunkPeer`]) is the chunk protocol alone on the wire; later it may be
//! multiplexed beside a message strategy (slice and ack packets carry their own tag byte, so they
//! can share a socket with other packet kinds).

mod packets;
mod peer;
mod receiver;
mod sender;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use packets::{
    ack_packet_bytes, chunk_wire_bytes, decode_packet, slice_packet_bytes, write_ack, write_slice, AckPacket,
    ChunkPacket, PacketError, SlicePacket, ACK_TAG, SLICE_TAG,
};
pub use peer::ChunkPeer;
pub use receiver::{ChunkReceiver, ReceiverCounters};
pub use sender::{ChunkSender, SenderCounters};

/// Largest slice the configuration accepts (keeps a slice packet in one datagram).
pub const MAX_SLICE_BYTES: u32 = 8192;
/// Most slices per chunk the configuration accepts (an ack stays below 1 KiB).
pub const MAX_SLICES_LIMIT: u32 = 4096;

/// Chunk system settings (dotted names `chunk.*`). Both ends must agree on `slice_bytes` and
/// `max_slices`: they bound the wire fields, as in the seed's `serialize_int` ranges.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChunkConfig {
    /// The sender's target bandwidth in kbit/s, counting 28 bytes IP+UDP per packet.
    pub bandwidth_kbps: f64,
    /// Minimum time between two sends of the same slice.
    pub resend_delay_ms: f64,
    /// Use RTT x 1.25 as the per-slice resend delay instead (fixed delay until a sample exists).
    pub rtt_resend: bool,
    /// Send every slice once at the start of a chunk, wait `burst_wait_ms`, then go budgeted.
    pub initial_burst: bool,
    pub burst_wait_ms: f64,
    /// Bytes per slice (all but the last slice are exactly this long). A slice packet adds 7 to 9
    /// bytes and IP+UDP 28, so keep it under the link MTU minus 37 (1024 fits a 1200-byte MTU).
    pub slice_bytes: u32,
    /// Most slices per chunk.
    pub max_slices: u32,
    /// At most one ack packet per this interval, whatever arrives.
    pub ack_interval_ms: f64,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        Self {
            bandwidth_kbps: 256.0,
            resend_delay_ms: 100.0,
            rtt_resend: false,
            initial_burst: false,
            burst_wait_ms: 100.0,
            slice_bytes: 1024,
            max_slices: 256,
            ack_interval_ms: 50.0,
        }
    }
}

impl ChunkConfig {
    /// What the chunk figures ([`ChunkSummary::from_events`](crate::measure::ChunkSummary::from_events))
    /// need to know of this sender: a block's bytes on the wire and the target bandwidth.
    pub fn cost(&self) -> crate::measure::ChunkCost<impl Fn(usize) -> usize + Copy> {
        let config = *self;
        crate::measure::ChunkCost {
            wire_bytes: move |bytes| chunk_wire_bytes(&config, bytes),
            target_kbps: self.bandwidth_kbps,
        }
    }

    /// `slice_bytes` clamped to `[1, MAX_SLICE_BYTES]`.
    pub fn slice_size(&self) -> usize {
        self.slice_bytes.clamp(1, MAX_SLICE_BYTES) as usize
    }

    /// `max_slices` clamped to `[1, MAX_SLICES_LIMIT]`.
    pub fn slice_limit(&self) -> usize {
        self.max_slices.clamp(1, MAX_SLICES_LIMIT) as usize
    }

    /// Largest chunk the configuration can carry.
    pub fn max_chunk_bytes(&self) -> usize {
        self.slice_size() * self.slice_limit()
    }

    /// Slices a chunk of `bytes` is cut into (an empty chunk is refused, so at least 1).
    pub fn slices_for(&self, bytes: usize) -> usize {
        bytes.div_ceil(self.slice_size()).max(1)
    }
}

/// Why a chunk could not be queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ChunkError {
    #[error("empty chunk")]
    Empty,
    #[error("chunk of {bytes} bytes exceeds the limit of {max} bytes")]
    TooLarge { bytes: usize, max: usize },
}
