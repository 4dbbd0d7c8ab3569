//! Per-chunk figures computed from events alone, so they work on live runs and recorded sessions.

use serde::Serialize;

use crate::event::{Event, EventKind, Side};
use crate::link::IP_UDP_OVERHEAD_BYTES;
use crate::strategies::chunks::{slice_packet_bytes, ChunkConfig};

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

/// Ack traffic of the receiving side(s): packets and bytes it sent against the bytes it received,
/// and the ack packets the link dropped (apart from `estimates.true_loss_percent`, which counts
/// the sender's data packets: the loss its estimate is about).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ChunkAckSummary {
    pub packets: u64,
    pub bytes_out: u64,
    pub bytes_in: u64,
    /// Ack packets the link dropped.
    pub dropped: u64,
    /// `dropped` / ack packets that entered the link, in percent (0 without any).
    pub loss_percent: f64,
}

/// The `chunks` / `chunk_acks` sections of the CLI's JSON summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChunkSummary {
    pub chunks: Vec<ChunkRecord>,
    pub chunk_acks: ChunkAckSummary,
}

/// Bytes a chunk of `bytes` takes on the wire when every slice is sent once, IP+UDP included.
pub fn chunk_wire_bytes(config: &ChunkConfig, bytes: usize) -> usize {
    let n = config.slices_for(bytes);
    let size = config.slice_size();
    let last_len = bytes.saturating_sub((n - 1) * size).max(1);
    (n - 1) * (slice_packet_bytes(config, size, false) + IP_UDP_OVERHEAD_BYTES as usize)
        + slice_packet_bytes(config, last_len, true)
        + IP_UDP_OVERHEAD_BYTES as usize
}

#[derive(Debug, Clone, Copy, Default)]
struct Open {
    bytes: u32,
    sent: u64,
    resent: u64,
}

impl ChunkSummary {
    /// Computes the summary. `link_bandwidth_kbps` is the sender-to-receiver link cap (0 =
    /// unlimited) and `rtt_ms` the round trip used in the ideal time. Sides that start chunks are
    /// senders; the ack figures count every packet sent and received by the other side(s).
    pub fn from_events(events: &[Event], config: &ChunkConfig, link_bandwidth_kbps: f64, rtt_ms: f64) -> Self {
        let mut open: [Option<Open>; 2] = [None, None];
        let mut is_sender = [false; 2];
        let mut chunks = Vec::new();
        let target = if config.bandwidth_kbps > 0.0 { config.bandwidth_kbps } else { f64::INFINITY };
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
                        let wire = chunk_wire_bytes(config, o.bytes as usize) as f64;
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
            let mut link_sent = 0u64;
            for e in events {
                match e.kind {
                    EventKind::PacketSent { side, bytes, .. } if ackers.contains(&side) => {
                        acks.packets += 1;
                        acks.bytes_out += bytes as u64;
                    }
                    EventKind::PacketReceived { side, bytes, .. } if ackers.contains(&side) => {
                        acks.bytes_in += bytes as u64;
                    }
                    EventKind::LinkSent { dir, .. } if ackers.contains(&dir.sender()) => link_sent += 1,
                    EventKind::LinkDropped { dir, .. } if ackers.contains(&dir.sender()) => acks.dropped += 1,
                    _ => {}
                }
            }
            if link_sent > 0 {
                acks.loss_percent = acks.dropped as f64 * 100.0 / link_sent as f64;
            }
        }
        ChunkSummary { chunks, chunk_acks: acks }
    }
}
