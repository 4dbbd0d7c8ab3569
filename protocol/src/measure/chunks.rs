//! Per-chunk figures computed from events alone, so they work on live runs and recorded sessions.

use serde::Serialize;

use crate::event::{Event, EventKind, Side};

/// One completed chunk (or fragmentation-baseline block) as the sender saw it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChunkRecord {
    pub size_bytes: u32,
    /// From `ChunkStarted` to `ChunkCompleted` (the sender knows every slice arrived).
    pub completion_seconds: f64,
    /// Bytes on the wire (headers included) / min(sender target, link bandwidth) + one RTT.
    pub ideal_seconds: f64,
    /// Slices (or fragments) put on the wire, first sends and resends.
    pub slices_sent: u64,
    pub slices_resent: u64,
}

/// Ack traffic of the receiving side(s): packets and bytes it sent against the bytes it received.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ChunkAckSummary {
    pub packets: u64,
    pub bytes_out: u64,
    pub bytes_in: u64,
}

/// The `chunks` / `chunk_acks` sections of the CLI's JSON summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChunkSummary {
    pub chunks: Vec<ChunkRecord>,
    pub chunk_acks: ChunkAckSummary,
}

/// What a block's ideal transfer time depends on that only the strategy sending it knows (a fold
/// over events knows no wire format): built by the strategy's config (`ChunkConfig::cost`).
#[derive(Debug, Clone, Copy)]
pub struct ChunkCost<F: Fn(usize) -> usize> {
    /// Bytes a block of `n` bytes takes on the wire when every slice is sent once, IP+UDP
    /// included.
    pub wire_bytes: F,
    /// The sender's own bandwidth target, kbps (0 = none).
    pub target_kbps: f64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Open {
    bytes: u32,
    sent: u64,
    resent: u64,
}

impl ChunkSummary {
    /// Computes the summary. `cost` is the sending strategy's (its wire bytes and target),
    /// `link_bandwidth_kbps` the sender-to-receiver link cap (0 = unlimited) and `rtt_ms` the
    /// round trip used in the ideal time. Sides that start chunks are senders; the ack figures
    /// count every packet sent and received by the other side(s).
    pub fn from_events(
        events: &[Event],
        cost: ChunkCost<impl Fn(usize) -> usize>,
        link_bandwidth_kbps: f64,
        rtt_ms: f64,
    ) -> Self {
        let mut open: [Option<Open>; 2] = [None, None];
        let mut is_sender = [false; 2];
        let mut chunks = Vec::new();
        let target = if cost.target_kbps > 0.0 { cost.target_kbps } else { f64::INFINITY };
        let link = if link_bandwidth_kbps > 0.0 { link_bandwidth_kbps } else { f64::INFINITY };
        let kbps = target.min(link);
        for e in events {
            match e.kind {
                EventKind::ChunkStarted { side, bytes, .. } => {
                    is_sender[side.index()] = true;
                    open[side.index()] = Some(Open { bytes, ..Open::default() });
                }
                EventKind::SliceSent { side, resend, .. } => {
                    if let Some(o) = open[side.index()].as_mut() {
                        o.sent += 1;
                        o.resent += resend as u64;
                    }
                }
                EventKind::ChunkCompleted { side, elapsed_us, .. } => {
                    if let Some(o) = open[side.index()].take() {
                        let wire = (cost.wire_bytes)(o.bytes as usize) as f64;
                        let ideal = if kbps.is_finite() { wire * 8.0 / 1000.0 / kbps } else { 0.0 } + rtt_ms / 1000.0;
                        chunks.push(ChunkRecord {
                            size_bytes: o.bytes,
                            completion_seconds: elapsed_us as f64 / 1e6,
                            ideal_seconds: ideal,
                            slices_sent: o.sent,
                            slices_resent: o.resent,
                        });
                    }
                }
                _ => {}
            }
        }
        let mut acks = ChunkAckSummary::default();
        if is_sender.iter().any(|s| *s) {
            let ackers: Vec<Side> = Side::BOTH.into_iter().filter(|s| !is_sender[s.index()]).collect();
            for e in events {
                match e.kind {
                    EventKind::PacketSent { side, bytes, .. } if ackers.contains(&side) => {
                        acks.packets += 1;
                        acks.bytes_out += bytes as u64;
                    }
                    EventKind::PacketReceived { side, bytes, .. } if ackers.contains(&side) => {
                        acks.bytes_in += bytes as u64;
                    }
                    _ => {}
                }
            }
        }
        ChunkSummary { chunks, chunk_acks: acks }
    }
}
