//! The strategy sections a report carries: declared once for every report shape (`run --json`,
//! its `clients` rows and `peer --json`), so their JSON names, order and "absent when the
//! strategy has none" rule cannot drift apart between them.

use ackscope_protocol::{ChunkSummary, ReliableMetrics, SnapshotSummary, Ue4Summary};
use serde::Serialize;

use super::flow::FlowSummary;

/// The sections that depend on what the lane runs, each absent from the JSON when it does not
/// apply. Flattened into its report (`#[serde(flatten)]`), so the fields stand at the report's
/// top level, in this order, exactly where the report places this struct.
///
/// `R` and `S` are the reliable and snapshot sections' types: the figures themselves in a run,
/// a JSON object with the fields one process cannot know set to null in a peer's report.
#[derive(Debug, Clone, Serialize)]
pub struct Sections<R = ReliableMetrics, S = SnapshotSummary> {
    /// Reliable-message metrics, for message strategies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reliable: Option<R>,
    /// Unreliable state snapshots: sent, received and staleness at the receiver (message strategies).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<S>,
    /// UE4 counters, for `strategy=ue4`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ue4: Option<Ue4Summary>,
    /// `"chunks"` and `"chunk_acks"`, for chunk and fragment transfers.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<ChunkSummary>,
    /// Flow-control mode switches, when flow control was enabled at any point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow: Option<FlowSummary>,
}

impl<R, S> Default for Sections<R, S> {
    fn default() -> Self {
        Self { reliable: None, snapshots: None, ue4: None, chunk: None, flow: None }
    }
}
