//! Every fold over events: ground truth and the figures a run reports.

pub mod chunks;
pub mod ledger;
pub mod messages;
pub mod percentile;
pub mod snapshots;
pub mod ue4;

pub use chunks::{chunk_wire_bytes, ChunkAckSummary, ChunkRecord, ChunkSummary};
pub(crate) use ledger::Truth;
pub use ledger::{summarize, EstimateSummary, PacketTotals, SummaryAccumulator};
pub use messages::{reliable_metrics, MetricsAccumulator, ReliableMetrics};
pub use percentile::{LatencyMs, Percentiles, StalenessMs};
pub use snapshots::{snapshot_summary, SnapshotAccumulator, SnapshotSummary, STALENESS_SAMPLE_MS};
pub use ue4::{Ue4Summary, Ue4SummaryAccumulator};
