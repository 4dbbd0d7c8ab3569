//! The seeded lossy link between the two endpoints, and the scripted changes of its settings.
//!
//! - [`lossy`]: one direction of the link, a pipeline of per-packet decisions (MTU, queue, burst
//!   and random loss, delay, duplication) and a scheduler ordered by `(deliver_at, send order)`.
//! - [`burst`]: the Gilbert-Elliott burst state on a 1 ms time grid of its own.
//! - [`fifo`]: the delay path of jitter that never reorders.
//! - `schedule`: the delivery queue, a FIFO while packets keep their order, a heap for the rest.
//! - [`script`]: [`LinkStep`]s that change link settings at given virtual times.
//! - [`uplink`]: the server's outgoing bandwidth shared by every client, in front of their links.
//! - [`presets`]: named network conditions other tools ship, which a scenario can name.
//! - [`trace`]: a recorded link replayed packet by packet (`link.trace`), selected by
//!   [`LinkPair::build`].
//! - [`pair`]: both directions as a scenario holds them ([`LinkPair`]), and the link each runs.
//!
//! Every random decision is a keyed draw ([`draws`]), so the trace a seed gives is one trace
//! whoever sends on it.

pub mod burst;
pub mod config;
pub(crate) mod draws;
pub mod fifo;
pub mod lossy;
pub mod pair;
pub mod presets;
mod schedule;
pub mod script;
pub mod trace;
pub mod uplink;

pub use burst::{BurstChain, BURST_STEP_US};
pub use config::{BurstLoss, JitterDistribution, LinkConfig, IP_UDP_OVERHEAD_BYTES};
pub use lossy::Link;
pub use pair::LinkPair;
pub use presets::Preset;
pub use script::{LinkPatch, LinkStep, StepDirection};
pub use trace::{DirTrace, LinkTrace, Replay, TraceFate, TracePacket};
pub use uplink::{ServerConfig, Uplink, UplinkFate};
