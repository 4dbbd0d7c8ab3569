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
//!
//! Layout, from the bottom up; a module imports only from the layers below it:
//! - [`wire`]: bits, sequence arithmetic (16-bit, and UE4's 14-bit packet ids), header codec and
//!   reliable.io fragments: bytes only, no events, so decoders and capture readers share it;
//! - [`event`]: the one event language; [`strategy`] (the strategy names) and [`names`] (the
//!   nearest-name hint) import nothing;
//! - [`link`]: the seeded lossy link and its changes; [`action`]: timed actions (scenario scripts
//!   and recorded action logs);
//! - [`measure`]: every fold over events (ground truth and the figures a run reports), from events
//!   alone: it knows no strategy, and a caller passes in what only a strategy knows (a chunk's
//!   bytes on the wire);
//! - [`workload`] (the traffic every strategy carries), [`reliability`] (acks, channels, message
//!   layer, estimators, flow control, budgets), [`peer`] (the endpoint contract: the driver's
//!   limits on a peer live here) and [`tap`] (a wire tap around any endpoint);
//! - [`strategies`]: one module per protocol;
//! - [`scenario`] and [`registry`]: what a run is and which endpoint implements which strategy;
//! - [`driver`]: one endpoint's loop, the two-endpoint simulation, the drain.
//!
//! Beside them, [`decode`] reads other endpoints' traffic passively (ackscope's formats, ENet,
//! KCP, a described header) into the same events.

pub mod action;
pub mod decode;
pub mod driver;
pub mod event;
pub mod link;
pub mod measure;
pub mod names;
pub mod peer;
pub mod registry;
pub mod reliability;
pub mod scenario;
pub mod strategies;
pub mod strategy;
pub mod tap;
pub mod wire;
pub mod workload;

pub use action::{Action, ParamChange, ParamValue, Step, Transport};
pub use driver::{
    drain, DrainOutcome, EndpointDriver, EventFilter, Inbound, LinkUpdate, Outbound, PeerFactory, SendIds, Simulation,
    TickTiming, Ticker, Transmit,
};
pub use event::{
    ClientId, Dir, DiscardReason, DropReason, Event, EventKind, MalformedReason, RefuseReason, SendKind, Side, SimTime,
    SliceIgnoreReason, StatsSample, Ue4ChannelKind, FIRST_CLIENT, RUN_WIDE,
};
pub use link::{
    BurstLoss, DirTrace, JitterDistribution, Link, LinkConfig, LinkPair, LinkPatch, LinkStep, LinkTrace, Preset,
    Replay, ServerConfig, StepDirection, TraceFate, TracePacket, Uplink, UplinkFate, IP_UDP_OVERHEAD_BYTES,
};
pub use measure::{
    reliable_metrics, snapshot_summary, summarize, ChunkAccumulator, ChunkIdeal, ChunkSummary, ClientFold,
    ClientSummary, Discards, EstimateSummary, LatencyMs, MetricsAccumulator, PacketFate, PacketLedger, PacketRecord,
    PacketTotals, PerClient, Percentiles, ReliableMetrics, ServerAccumulator, ServerSummary, SnapshotAccumulator,
    SnapshotSummary, StalenessMs, SummaryAccumulator, Ue4Summary, Ue4SummaryAccumulator, UplinkSummary, LOSS_WARMUP,
};
pub use names::nearest_name;
pub use peer::{LiveSettings, Peer, PeerCommand, MAX_PACKETS_PER_TICK};
pub use registry::{make_peer, StrategyInfo};
pub use reliability::{
    AckConfig, AckCounters, AckEndpoint, Acked, ChannelError, ChannelSizes, FlowConfig, FlowControl, HeaderVerdict,
    Message, MessageError, MessageFactory, MessageType, ReliableChannel, RttFilter, StatsConfig,
};
pub use scenario::{
    client_seed, ClientGroup, ClientSettings, Clients, Scenario, SetError, SideConfig, Strategy, TickPhase, MAX_CLIENTS,
};
pub use strategies::acks::AckPeer;
pub use strategies::chunks::{chunk_wire_bytes, ChunkConfig, ChunkPeer, ChunkReceiver, ChunkSender};
pub use strategies::fragments::{FragmentPeer, FragmentReceiver, FragmentSender};
pub use strategies::glenn::{
    decode_payload, decode_payload_into, decode_payload_reusing, encode_payload, DecodedPayload, GlennConfig,
    GlennCounters, GlennPeer,
};
pub use strategies::hybrid::{HybridConfig, HybridPeer};
pub use strategies::notify::dnm::{DnmConfig, DnmPeer};
pub use strategies::notify::rellikt::{RelliktConfig, RelliktPeer};
pub use strategies::ue4::{Ue4Config, Ue4Peer};
pub use tap::{Inject, SideHook, Tap, TapDir, TapHook, TapLog, Tapped};
pub use wire::{
    sequence_difference, sequence_greater_than, sequence_less_than, BitError, BitReader, BitWriter, HeaderError,
    MeasureStream, PacketHeader, SequenceBuffer, Stream,
};
pub use workload::{MessageRequest, SnapshotMode, Workload, WorkloadConfig};
