//! ackscope's protocol library: sans-IO game networking protocols and a seeded lossy link.
//!
//! Nothing here reads a clock, opens a socket, spawns a thread or draws from an unseeded RNG:
//! time is passed in as [`SimTime`], randomness comes from the scenario's `seed`, and everything
//! that happens is reported as timestamped [`Event`]s. The same seed and scenario therefore give
//! byte-identical event logs, which is what makes A/B comparisons and recorded sessions honest.
//!
//! The driving contract (see [`Peer`], [`EndpointDriver`] and [`Simulation`]): at each instant,
//! deliver due packets to `Peer::receive`, then call `Peer::poll_send` on send ticks, then
//! `Peer::update`; collect events.

pub mod ack;
pub mod bits;
pub mod budget;
pub mod channel;
pub mod chunk;
pub mod dnm;
pub mod driver;
pub mod event;
pub mod flow;
pub mod fragments;
pub mod glenn;
pub mod header;
pub mod link;
pub mod message;
pub mod metrics;
pub mod peer;
pub mod registry;
pub mod rellikt;
pub mod replication;
pub mod scenario;
pub mod script;
pub mod sequence;
pub mod stats;
pub mod truth;
pub mod ue4;
pub mod workload;

pub use ack::{AckConfig, AckCounters, AckEndpoint, Acked, HeaderVerdict};
pub use bits::{BitError, BitReader, BitWriter, MeasureStream, Stream};
pub use channel::{ChannelError, ChannelSizes, ReliableChannel};
pub use chunk::{ChunkConfig, ChunkPeer, ChunkReceiver, ChunkSender, ChunkSummary};
pub use dnm::{DnmConfig, DnmPeer};
pub use driver::{
    drain, DrainOutcome, EndpointDriver, Inbound, Outbound, SendIds, Simulation, Ticker, Transmit, MAX_PACKETS_PER_TICK,
};
pub use event::{
    Dir, DropReason, Event, EventKind, MalformedReason, RefuseReason, SendKind, Side, SimTime, SliceIgnoreReason,
    StatsSample,
};
pub use flow::{FlowConfig, FlowControl};
pub use fragments::{FragmentPeer, FragmentReceiver, FragmentSender};
pub use glenn::{decode_payload, encode_payload, DecodedPayload, GlennConfig, GlennCounters, GlennPeer};
pub use header::{HeaderError, PacketHeader};
pub use link::{BurstLoss, JitterDistribution, Link, LinkConfig, IP_UDP_OVERHEAD_BYTES};
pub use message::{Message, MessageError, MessageFactory, MessageType};
pub use metrics::{reliable_metrics, LatencyMs, MetricsAccumulator, ReliableMetrics};
pub use peer::{AckPeer, LiveSettings, Peer, PeerCommand};
pub use registry::{make_peer, StrategyInfo};
pub use rellikt::{RelliktConfig, RelliktPeer};
pub use replication::{snapshot_summary, SnapshotAccumulator, SnapshotMode, SnapshotSummary};
pub use scenario::{LinkPair, Scenario, Strategy};
pub use script::{LinkPatch, LinkStep, StepDirection};
pub use sequence::{sequence_difference, sequence_greater_than, sequence_less_than, SequenceBuffer};
pub use stats::{RttFilter, StatsConfig};
pub use truth::{summarize, EstimateSummary, PacketTotals, SummaryAccumulator};
pub use ue4::{Ue4Config, Ue4Peer, Ue4Summary, Ue4SummaryAccumulator};
pub use workload::{MessageRequest, Workload, WorkloadConfig};
