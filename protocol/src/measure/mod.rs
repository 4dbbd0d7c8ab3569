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
//! - [`clients`]: folds keyed by client ([`PerClient`]): every fold above counts per connection
//!   (ids and sequences are per connection) and reports over every client and per client.
//! - [`server`]: the server's totals over its clients and its shared uplink's queue.

pub mod chunks;
pub mod clients;
mod id_table;
pub mod ledger;
pub mod messages;
pub mod percentile;
pub mod server;
pub mod snapshots;
mod step_runs;
pub mod summary;
pub mod ue4;

pub use chunks::{ChunkAccumulator, ChunkAckSummary, ChunkCost, ChunkIdeal, ChunkRecord, ChunkSummary};
pub use clients::{ClientFold, PerClient};
pub use ledger::{Discards, PacketFate, PacketLedger, PacketRecord, PacketTotals};
pub use messages::{
    in_order_latency, reliable_metrics, send_is_spurious, InOrderLatency, MetricsAccumulator, ReliableMetrics,
};
pub use percentile::{LatencyMs, Percentiles, StalenessMs};
pub use server::{ServerAccumulator, ServerSummary, UplinkSummary};
pub use snapshots::{snapshot_summary, SnapshotAccumulator, SnapshotSummary, STALENESS_SAMPLE_MS};
pub use summary::{summarize, ClientSummary, EstimateSummary, SummaryAccumulator, LOSS_WARMUP};
pub use ue4::{InRecDepthByKind, Ue4Summary, Ue4SummaryAccumulator};
