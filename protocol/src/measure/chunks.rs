//! Per-chunk figures computed from events alone, so they work on live runs and recorded sessions.

use serde::Serialize;

use super::clients::{ClientFold, PerClient};
use crate::event::{ClientId, Event, EventKind, Side};

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
    /// Ack packets that entered the link (the base of `loss_percent`; not printed).
    #[serde(skip)]
    pub link_sent: u64,
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

/// What a chunk's ideal time is measured against: the sender's cost (its wire bytes and
/// target), the sender-to-receiver link cap (0 = unlimited) and the round trip added (the link's
/// base RTT).
#[derive(Debug, Clone, Copy)]
pub struct ChunkIdeal<F: Fn(usize) -> usize> {
    pub cost: ChunkCost<F>,
    pub link_bandwidth_kbps: f64,
    pub rtt_ms: f64,
}

impl<F: Fn(usize) -> usize> ChunkIdeal<F> {
    /// The ideal seconds of a chunk of `bytes`.
    fn seconds(&self, bytes: u32) -> f64 {
        let target = if self.cost.target_kbps > 0.0 { self.cost.target_kbps } else { f64::INFINITY };
        let link = if self.link_bandwidth_kbps > 0.0 { self.link_bandwidth_kbps } else { f64::INFINITY };
        let kbps = target.min(link);
        let wire = (self.cost.wire_bytes)(bytes as usize) as f64;
        (if kbps.is_finite() { wire * 8.0 / 1000.0 / kbps } else { 0.0 }) + self.rtt_ms / 1000.0
    }
}

/// One completed chunk before its ideal time is known.
#[derive(Debug, Clone, Copy)]
struct Done {
    bytes: u32,
    elapsed_us: u64,
    sent: u64,
    resent: u64,
}

/// [`ChunkSummary`] fed one event at a time, keyed by client (chunk ids count per connection):
/// a run that keeps no events folds them as they come.
#[derive(Debug, Clone, Default)]
pub struct ChunkAccumulator {
    clients: PerClient<ClientChunks>,
}

/// One client's part of a [`ChunkAccumulator`].
#[derive(Debug, Clone, Default)]
struct ClientChunks {
    open: [Option<Open>; 2],
    is_sender: [bool; 2],
    done: Vec<Done>,
    /// Per side: packets and bytes sent, bytes received (the ack figures of the side that does
    /// not send chunks).
    sent: [(u64, u64); 2],
    received_bytes: [u64; 2],
    /// Per sending side: packets that entered the link and packets it dropped.
    link: [(u64, u64); 2],
}

impl ClientFold for ClientChunks {
    fn for_client(_: ClientId) -> Self {
        Self::default()
    }
}

impl ClientChunks {
    fn observe(&mut self, e: &Event) {
        match e.kind {
            EventKind::ChunkStarted { side, bytes, .. } => {
                self.is_sender[side.index()] = true;
                self.open[side.index()] = Some(Open { bytes, ..Open::default() });
            }
            EventKind::SliceSent { side, resend, .. } => {
                if let Some(o) = self.open[side.index()].as_mut() {
                    o.sent += 1;
                    o.resent += resend as u64;
                }
            }
            EventKind::ChunkCompleted { side, elapsed_us, .. } => {
                if let Some(o) = self.open[side.index()].take() {
                    self.done.push(Done { bytes: o.bytes, elapsed_us, sent: o.sent, resent: o.resent });
                }
            }
            EventKind::PacketSent { side, bytes, .. } => {
                let s = &mut self.sent[side.index()];
                (s.0, s.1) = (s.0 + 1, s.1 + bytes as u64);
            }
            EventKind::PacketReceived { side, bytes, .. } => self.received_bytes[side.index()] += bytes as u64,
            EventKind::LinkSent { dir, .. } => self.link[dir.sender().index()].0 += 1,
            EventKind::LinkDropped { dir, .. } => self.link[dir.sender().index()].1 += 1,
            _ => {}
        }
    }

    fn finish(&self, ideal: &ChunkIdeal<impl Fn(usize) -> usize>) -> ChunkSummary {
        let chunks = self
            .done
            .iter()
            .map(|d| ChunkRecord {
                size_bytes: d.bytes,
                completion_seconds: d.elapsed_us as f64 / 1e6,
                ideal_seconds: ideal.seconds(d.bytes),
                slices_sent: d.sent,
                slices_resent: d.resent,
            })
            .collect();
        let mut acks = ChunkAckSummary::default();
        if self.is_sender.iter().any(|s| *s) {
            for side in Side::BOTH.into_iter().filter(|s| !self.is_sender[s.index()]) {
                let (packets, bytes) = self.sent[side.index()];
                acks.packets += packets;
                acks.bytes_out += bytes;
                acks.bytes_in += self.received_bytes[side.index()];
                let (entered, dropped) = self.link[side.index()];
                acks.link_sent += entered;
                acks.dropped += dropped;
            }
            if acks.link_sent > 0 {
                acks.loss_percent = acks.dropped as f64 * 100.0 / acks.link_sent as f64;
            }
        }
        ChunkSummary { chunks, chunk_acks: acks }
    }
}

impl ChunkAccumulator {
    #[inline]
    pub fn observe(&mut self, e: &Event) {
        self.clients.observe(e, ClientChunks::observe);
    }

    /// Client `k`'s summary with its ideal times from `ideal` (None before any event of it).
    pub fn client(&self, k: ClientId, ideal: &ChunkIdeal<impl Fn(usize) -> usize>) -> Option<ChunkSummary> {
        self.clients.get(k).map(|c| c.finish(ideal))
    }

    /// The summary over every client: every client's chunks in client order, the ack figures
    /// summed; `ideal(k)` is client k's.
    pub fn finish<F: Fn(usize) -> usize>(&self, ideal: impl Fn(ClientId) -> ChunkIdeal<F>) -> ChunkSummary {
        let mut out = ChunkSummary::default();
        for (i, c) in self.clients.iter().enumerate() {
            let s = c.finish(&ideal(i as ClientId + 1));
            out.chunks.extend(s.chunks);
            let (a, b) = (&mut out.chunk_acks, s.chunk_acks);
            (a.packets, a.bytes_out, a.bytes_in) =
                (a.packets + b.packets, a.bytes_out + b.bytes_out, a.bytes_in + b.bytes_in);
            (a.link_sent, a.dropped) = (a.link_sent + b.link_sent, a.dropped + b.dropped);
        }
        if out.chunk_acks.link_sent > 0 {
            out.chunk_acks.loss_percent = out.chunk_acks.dropped as f64 * 100.0 / out.chunk_acks.link_sent as f64;
        }
        out
    }
}

impl ChunkSummary {
    /// Computes the summary. `cost` is the sending strategy's (its wire bytes and target),
    /// `link_bandwidth_kbps` the sender-to-receiver link cap (0 = unlimited) and `rtt_ms` the
    /// round trip used in the ideal time. Sides that start chunks are
    /// senders; the ack figures count every packet sent and received by the other side(s). With
    /// several clients, every client's (see [`ChunkAccumulator`] for one client's).
    pub fn from_events(
        events: &[Event],
        cost: ChunkCost<impl Fn(usize) -> usize + Copy>,
        link_bandwidth_kbps: f64,
        rtt_ms: f64,
    ) -> Self {
        let mut acc = ChunkAccumulator::default();
        for e in events {
            acc.observe(e);
        }
        acc.finish(|_| ChunkIdeal { cost, link_bandwidth_kbps, rtt_ms })
    }
}
