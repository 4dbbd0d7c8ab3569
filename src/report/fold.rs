//! Every figure of a run report folded from events as they come, so a headless run keeps no event
//! it does not write: memory stays flat however long the run, and a recording's report is the
//! same fold over its events ([`super::from_session`]).
//!
//! Each fold is keyed by client (see `ackscope_protocol::measure::clients`): the report's
//! top-level figures are over every client (totals summed, estimates the mean over clients), and
//! a run of several clients adds each client's own ([`ClientReport`]) and the server's
//! ([`ServerSummary`]).

use ackscope_protocol::measure::InOrderLatency;
use ackscope_protocol::{
    registry, ChunkAccumulator, ChunkIdeal, ClientId, Dir, EstimateSummary, Event, LatencyMs, MetricsAccumulator,
    PacketTotals, Scenario, ServerAccumulator, SnapshotAccumulator, Strategy, SummaryAccumulator,
    Ue4SummaryAccumulator,
};
use serde::Serialize;

use super::bandwidth::BandwidthFold;
use super::decoded::DecodedFold;
use super::flow::FlowFold;
use super::sections::Sections;
use crate::model::lane::Protocol;

/// One client's figures in a run of several (`clients` in `run --json`): every per-connection
/// section of the report, for this client's connection alone.
#[derive(Debug, Clone, Serialize)]
pub struct ClientReport {
    /// The client's number, from 1.
    pub client: ClientId,
    /// The group it belongs to, numbered from 1 in `clients`' order (when `clients` lists groups).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<usize>,
    pub packets: PacketTotals,
    pub estimates: EstimateSummary,
    #[serde(flatten)]
    pub sections: Sections,
}

/// The sections of a run report, folded from its events.
pub struct RunFold {
    scenario: Scenario,
    events: u64,
    reliable: Option<MetricsAccumulator>,
    snapshots: Option<SnapshotAccumulator>,
    ue4: Option<Ue4SummaryAccumulator>,
    chunks: Option<ChunkAccumulator>,
    in_order: Option<InOrderLatency>,
    flow: FlowFold,
    server: ServerAccumulator,
    bandwidth: BandwidthFold,
    /// The protocol's name when the lane is not a run of the scenario's strategy.
    label: Option<String>,
    decoded: Option<DecodedFold>,
}

/// What a run's figures come from besides its events' sections.
pub struct RunEnd<'a> {
    /// Ground truth and estimates (the simulation's own fold, or one over a recording).
    pub truth: &'a SummaryAccumulator,
    pub simulated_seconds: f64,
    pub drain_seconds: f64,
    pub wall_seconds: f64,
}

impl RunFold {
    /// A fold for a run of `scenario`: its strategy (at the start) decides which sections apply.
    pub fn new(scenario: &Scenario) -> Self {
        let row = registry::info(scenario.strategy);
        Self {
            scenario: scenario.clone(),
            events: 0,
            reliable: row.has_messages.then(MetricsAccumulator::new),
            snapshots: row.has_messages.then(SnapshotAccumulator::default),
            ue4: (scenario.strategy == Strategy::Ue4).then(Ue4SummaryAccumulator::default),
            chunks: row.has_chunks.then(ChunkAccumulator::default),
            in_order: None,
            flow: FlowFold::new(scenario),
            server: ServerAccumulator::new(scenario.server),
            bandwidth: BandwidthFold::default(),
            label: None,
            decoded: None,
        }
    }

    /// A fold for a lane of another origin, described by the `protocol` it runs: its strategy's
    /// sections when it names one of ackscope's, none otherwise. A `decoded` lane (a proxy's, a
    /// capture's: a game's endpoints read from their traffic) has no workload events, so no
    /// strategy section either: the decoded section instead.
    pub fn for_lane(scenario: &Scenario, protocol: &Protocol, decoded: bool) -> Self {
        let mut fold = match protocol.strategy {
            Some(strategy) if !decoded => Self::new(&Scenario { strategy, ..scenario.clone() }),
            _ => Self { reliable: None, snapshots: None, ue4: None, chunks: None, ..Self::new(scenario) },
        };
        fold.label = Some(protocol.name.clone());
        fold.decoded = decoded.then(DecodedFold::default);
        fold
    }

    /// Also folds the latency an application needing order would see (`compare`'s column).
    pub fn with_in_order_latency(mut self) -> Self {
        self.in_order = Some(InOrderLatency::new());
        self
    }

    pub fn observe(&mut self, events: &[Event]) {
        self.events += events.len() as u64;
        for e in events {
            if let Some(r) = &mut self.reliable {
                r.observe(e);
            }
            if let Some(s) = &mut self.snapshots {
                s.observe(e);
            }
            if let Some(u) = &mut self.ue4 {
                u.observe(e);
            }
            if let Some(c) = &mut self.chunks {
                c.observe(e);
            }
            if let Some(o) = &mut self.in_order {
                o.observe(e);
            }
            self.flow.observe(e);
            self.server.observe(e);
            self.bandwidth.observe(e);
            if let Some(d) = &mut self.decoded {
                d.observe(e);
            }
        }
    }

    /// Each side's sending, receiving and acked rates (every client's samples).
    pub fn bandwidth(&self) -> &BandwidthFold {
        &self.bandwidth
    }

    /// The in-order latency over every client (when asked for).
    pub fn in_order_latency(&self) -> Option<LatencyMs> {
        self.in_order.as_ref().map(InOrderLatency::finish)
    }

    /// What a chunk's ideal time of client `k` is measured against: its link at the start (the
    /// sender-to-receiver cap) and the base round trip.
    fn ideal(&self, k: ClientId) -> ChunkIdeal<impl Fn(usize) -> usize + Copy> {
        let s = self.scenario.for_client(k).unwrap_or_else(|_| self.scenario.clone());
        let l = &s.link;
        ChunkIdeal {
            cost: s.chunk.cost(),
            link_bandwidth_kbps: l.get(Dir::AtoB).bandwidth_kbps,
            rtt_ms: l.a_to_b.latency_ms + l.b_to_a.latency_ms,
        }
    }

    /// The report: the run's figures over every client, and with several clients each client's
    /// and the server's.
    pub fn report(&self, end: &RunEnd) -> super::RunReport {
        let (packets, estimates) = end.truth.finish();
        let s = &self.scenario;
        let n = s.client_count();
        let clients = (n > 1).then(|| (1..=n).map(|k| self.client_report(k, end.truth)).collect());
        super::RunReport {
            seed: s.seed,
            strategy: self.label.clone().unwrap_or_else(|| s.strategy.name().to_string()),
            simulated_seconds: end.simulated_seconds,
            wall_seconds: end.wall_seconds,
            packets,
            estimates,
            events: self.events,
            drain_seconds: end.drain_seconds,
            session_bytes: None,
            sections: Sections {
                reliable: self.reliable.as_ref().map(MetricsAccumulator::finish),
                snapshots: self.snapshots.as_ref().map(SnapshotAccumulator::finish),
                ue4: self.ue4.as_ref().map(Ue4SummaryAccumulator::finish),
                chunk: self.chunks.as_ref().map(|c| c.finish(|k| self.ideal(k))),
                flow: self.flow.finish(None),
            },
            bandwidth: Some(self.bandwidth.finish()),
            decoded: self.decoded.as_ref().map(DecodedFold::finish),
            clients,
            server: (n > 1).then(|| self.server.finish(Some(end.simulated_seconds))),
            ab: None,
        }
    }

    /// Client `k`'s figures (zeros for a client no event names).
    fn client_report(&self, k: ClientId, truth: &SummaryAccumulator) -> ClientReport {
        let (packets, estimates) = truth.client(k).map(|c| c.finish()).unwrap_or_default();
        ClientReport {
            client: k,
            group: self.scenario.group_of(k).map(|(i, _)| i + 1),
            packets,
            estimates,
            sections: Sections {
                reliable: self.reliable.as_ref().map(|r| r.client(k).unwrap_or_default()),
                snapshots: self.snapshots.as_ref().map(|s| s.client(k).unwrap_or_default()),
                ue4: self.ue4.as_ref().map(|u| u.client(k).unwrap_or_default()),
                chunk: self.chunks.as_ref().map(|c| c.client(k, &self.ideal(k)).unwrap_or_default()),
                flow: self.flow.finish(Some(k)),
            },
        }
    }
}
