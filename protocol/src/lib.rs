//! ackscope's protocol library: sans-IO game networking protocols and a seeded lossy link.
//!
//! Nothing here reads a clock, opens a socket, spawns a thread or draws from an unseeded RNG:
//! time is passed in as [`SimTime`], randomness comes from the scenario's `seed`, and everything
//! that happens is reported as timestamped [`Event`]s. The same seed and scenario therefore give
//! byte-identical event logs, which is what makes A/B comparisons and recorded sessions honest.
//!
//! The driving contract (see [`Peer`] and [`Simulation`]): at each instant, deliver due packets to
//! `Peer::receive`, then call `Peer::poll_send` on send ticks, then `Peer::update`; collect events.

pub mod ack;
pub mod bits;
pub mod chunk;
pub mod dnm;
pub mod event;
pub mod flow;
pub mod fragments;
pub mod header;
pub mod link;
pub mod peer;
pub mod rellikt;
pub mod replication;
pub mod sequence;
pub mod sim;
pub mod stats;
pub mod workload;

pub use ack::{AckConfig, AckCounters, AckEndpoint, Acked, HeaderVerdict};
pub use bits::{BitError, BitReader, BitWriter, MeasureStream, Stream};
pub use chunk::{ChunkConfig, ChunkPeer, ChunkReceiver, ChunkSender, ChunkSummary};
pub use dnm::{DnmConfig, DnmPeer};
pub use event::{
    Dir, DropReason, Event, EventKind, MalformedReason, RefuseReason, SendKind, Side, SimTime, SliceIgnoreReason,
    StatsSample,
};
pub use flow::{FlowConfig, FlowControl};
pub use fragments::{FragmentPeer, FragmentReceiver, FragmentSender};
pub use header::{HeaderError, PacketHeader};
pub use link::{BurstLoss, JitterDistribution, Link, LinkConfig, IP_UDP_OVERHEAD_BYTES};
pub use peer::{AckPeer, Peer};
pub use rellikt::{RelliktConfig, RelliktPeer};
pub use replication::{snapshot_summary, SnapshotMode, SnapshotSummary};
pub use sequence::{sequence_difference, sequence_greater_than, sequence_less_than, SequenceBuffer};
pub use sim::{EstimateSummary, LinkPair, PacketTotals, Scenario, Simulation, Strategy};
pub use stats::{RttFilter, StatsConfig};
pub use workload::{MessageRequest, Workload, WorkloadConfig};
