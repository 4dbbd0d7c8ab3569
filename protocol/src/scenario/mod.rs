//! What a run depends on: the [`Scenario`] (seed, strategy, link, workload, every strategy's
//! settings), kept apart from the driver that runs them; the [`Strategy`] enum lives below both
//! it and the action log in [`crate::strategy`].
//!
//! Strategy names, parsing and iteration are derived once from the enum (strum): the window's
//! menu, `--set strategy=...`, `--ab`, serde and the registry all read the same list, so an eighth
//! strategy is one variant here plus one row in [`crate::registry`].

use serde::{Deserialize, Serialize};

pub mod clients;
pub mod fields;
pub mod set;

use crate::action::Step;
use crate::link::{LinkPair, ServerConfig};
use crate::reliability::ack::AckConfig;
use crate::reliability::flow::FlowConfig;
use crate::strategies::chunks::ChunkConfig;
use crate::strategies::glenn::GlennConfig;
use crate::strategies::hybrid::HybridConfig;
use crate::strategies::notify::dnm::DnmConfig;
use crate::strategies::notify::rellikt::RelliktConfig;
use crate::strategies::ue4::Ue4Config;
pub use crate::strategy::Strategy;
use crate::workload::WorkloadConfig;
pub use clients::{client_seed, ClientGroup, ClientSettings, Clients, MAX_CLIENTS};

/// Why a change to the scenario by dotted name was refused ([`set`], and per client
/// [`clients`]); the scenario is left as it was. Here, below both, as each refers to the other's
/// names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SetError(pub String);

/// Where the two endpoints' send ticks fall relative to each other.
///
/// Real endpoints do not tick in step: each starts its clock when it starts, and its timer wakes
/// a little late each time. With both ticking at the same exact instants, every packet of one side
/// arrives exactly at (or just off) a tick of the other whenever the latency is a multiple of the
/// tick interval, and a resend delay that is a multiple of the interval fires exactly on a tick:
/// figures that depend on "did the ack make this tick" (resends, RTT) jump between neighbouring
/// latencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TickPhase {
    /// Each side's phase is drawn from the seed, uniformly within one tick interval, each side
    /// from its own stream (no other draw moves); each tick wakes up to `tick_jitter_ms` late.
    #[default]
    Seeded,
    /// Both sides tick at the same exact instants from 0, never late (the pathological case,
    /// kept to show it; `a/b.tick_phase_ms` still apply, `tick_jitter_ms` does not).
    Lockstep,
}

/// Settings of one endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SideConfig {
    /// This endpoint's send-tick phase: its ticks fall at `phase + k / rate`. Overrides
    /// `tick_phase` for this side when set; taken modulo the tick interval.
    pub tick_phase_ms: Option<f64>,
}

/// Everything a run depends on: with the same scenario, a run produces the same events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Scenario {
    pub seed: u64,
    pub strategy: Strategy,
    /// Packets per second each endpoint sends.
    pub send_rate_pps: f64,
    /// Opaque payload per packet for the `acks` strategy.
    pub payload_bytes: u32,
    /// How often each endpoint emits a `Stats` event.
    pub stats_interval_ms: f64,
    /// How the sides' send-tick phases are chosen (fixed per run, like the seed).
    pub tick_phase: TickPhase,
    /// How late a send tick may wake (uniform in `[0, tick_jitter_ms)`, drawn per side and tick
    /// from the seed, at most half a tick interval), as a real endpoint's timer does. Not in
    /// lock-step.
    pub tick_jitter_ms: f64,
    /// Side A's own settings (`a.tick_phase_ms`).
    pub a: SideConfig,
    /// Side B's own settings (`b.tick_phase_ms`).
    pub b: SideConfig,
    pub ack: AckConfig,
    pub link: LinkPair,
    /// The message workload for message strategies.
    pub workload: WorkloadConfig,
    /// Large-block transfer settings (`chunks` and `fragments` strategies).
    pub chunk: ChunkConfig,
    /// rellikt's RTT-driven send-rate switch; when enabled it sets each side's packet rate.
    pub flow: FlowConfig,
    /// Timed actions planned in advance: link changes (outages, lag spikes, bandwidth drops),
    /// parameter changes, bursts, chunks, restarts ([`crate::action`]).
    pub script: Vec<Step>,
    /// Settings of the `glenn` strategy.
    pub glenn: GlennConfig,
    /// Settings of the `ue4` strategy.
    pub ue4: Ue4Config,
    /// Delivery notification manager settings (`dnm` strategy).
    pub dnm: DnmConfig,
    /// rellikt's header and loss rule (`rellikt` strategy).
    pub rellikt: RelliktConfig,
    /// Settings of the `hybrid` strategy (its packets take Glenn's packet settings).
    pub hybrid: HybridConfig,
    /// How many clients the server has: a count or groups ([`clients`]); one by default, the
    /// two-endpoint run. Left out of a file when it is one.
    #[serde(skip_serializing_if = "Clients::is_one")]
    pub clients: Clients,
    /// Each client's own settings by client number (`client.K.NAME=VALUE`, in order), over its
    /// group's.
    #[serde(skip_serializing_if = "ClientSettings::is_empty")]
    pub client: ClientSettings,
    /// The server's outgoing bandwidth shared by every client (`server.uplink_kbps`).
    #[serde(skip_serializing_if = "ServerConfig::is_default")]
    pub server: ServerConfig,
}

impl Default for Scenario {
    fn default() -> Self {
        Self {
            seed: 1,
            strategy: Strategy::Glenn,
            send_rate_pps: 60.0,
            payload_bytes: 100,
            stats_interval_ms: 100.0,
            tick_phase: TickPhase::default(),
            tick_jitter_ms: 1.0,
            a: SideConfig::default(),
            b: SideConfig::default(),
            ack: AckConfig::default(),
            link: LinkPair::default(),
            workload: WorkloadConfig::default(),
            chunk: ChunkConfig::default(),
            flow: FlowConfig::default(),
            script: Vec::new(),
            glenn: GlennConfig::default(),
            ue4: Ue4Config::default(),
            dnm: DnmConfig::default(),
            rellikt: RelliktConfig::default(),
            hybrid: HybridConfig::default(),
            clients: Clients::default(),
            client: ClientSettings::new(),
            server: ServerConfig::default(),
        }
    }
}
