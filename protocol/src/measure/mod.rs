//! Every fold over events in one place: ground truth and the figures a run reports.
//!
//! Everything here reads events only, so a live run, a recorded session and a test all get the
//! same figures from the same code; nothing here drives an endpoint.
//!
//! - [`ledger`]: the [`PacketLedger`], ground truth per send (uid <-> side and sequence, the
//!   link's verdict, the sender's ack or nak, false acks and naks) and the [`PacketTotals`].
//! - [`summary`]: the run summary on top of it ([`EstimateSummary`], [`summarize`]).
//! - [`messages`]: reliable-message metrics of every message strategy.
//! - [`snapshots`]: snapshot traffic and receiver staleness.
//! - [`ue4`], [`chunks`]: the UE4 and large-block figures.
//! - [`percentile`]: the one nearest-rank percentile definition they all use.

pub mod chunks;
pub mod ledger;
pub mod messages;
pub mod percentile;
pub mod snapshots;
pub mod summary;
pub mod ue4;

pub use chunks::{ChunkAckSummary, ChunkCost, ChunkRecord, ChunkSummary};
pub use ledger::{PacketFate, PacketLedger, PacketRecord, PacketTotals};
pub use messages::{
    in_order_latency, reliable_metrics, send_is_spurious, InOrderLatency, MetricsAccumulator, ReliableMetrics,
};
pub use percentile::{LatencyMs, Percentiles, StalenessMs};
pub use snapshots::{snapshot_summary, SnapshotAccumulator, SnapshotSummary, STALENESS_SAMPLE_MS};
pub use summary::{summarize, EstimateSummary, SummaryAccumulator, LOSS_WARMUP};
pub use ue4::{InRecDepthByKind, Ue4Summary, Ue4SummaryAccumulator};
