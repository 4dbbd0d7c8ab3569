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
    Ue4SummaryAccumulator, RUN_WIDE,
};
use serde::Serialize;

use super::bandwidth::BandwidthFold;
use super::decoded::DecodedFold;
use super::flow::FlowFold;
use super::sections::Sections;
use crate::lane::Protocol;

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
    /// The order [`Self::observe`] takes a batch's events in, kept from batch to batch.
    by_client: ByClient,
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
            by_client: ByClient::default(),
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

    /// Folds `events` (in emission order, after those folded before).
    ///
    /// With many clients the per-connection sections (reliable, snapshots, ue4, chunks, in-order
    /// latency) take a batch client by client (see [`ByClient`]); the others, whose figures
    /// depend on the order across clients (the server's uplink replay, the flow switches'
    /// list, the bandwidth means' sums), take it in order. Every figure ends the same as folded
    /// event by event.
    pub fn observe(&mut self, events: &[Event]) {
        self.events += events.len() as u64;
        for e in events {
            self.flow.observe(e);
            self.server.observe(e);
            self.bandwidth.observe(e);
            if let Some(d) = &mut self.decoded {
                d.observe(e);
            }
        }
        let n = self.scenario.client_count() as usize;
        if n > 1 && events.len() >= BY_CLIENT_MIN_EVENTS {
            let mut by = std::mem::take(&mut self.by_client);
            if by.group(events, n) {
                for i in by.order() {
                    self.observe_connection(&events[i as usize]);
                }
                self.by_client = by;
                return;
            }
            self.by_client = by;
        }
        for e in events {
            self.observe_connection(e);
        }
    }

    /// One event into the sections kept per connection.
    #[inline(always)]
    fn observe_connection(&mut self, e: &Event) {
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

/// Batches shorter than this are folded in order: grouping them would gain nothing.
const BY_CLIENT_MIN_EVENTS: usize = 4096;

/// A batch's events in the order the per-connection sections may take them: client by client,
/// each client's in emission order, up to each event of the whole run, which stays where it is.
///
/// Why: a batch of a second of 1000 clients holds about 930,000 events in time order, so each
/// event lands on a client whose fold state (message states, staleness samples, snapshot ids) has
/// left the cache since its previous one. Taken client by client, a client's state is fetched
/// once per batch. Why it changes no figure: each of those sections keeps one fold per client
/// (`ackscope_protocol::measure::clients`), fed that client's events in their order, and an
/// event of the whole run goes to every client's fold that exists when it comes, which is the same
/// set here, as every event before it is taken before it.
#[derive(Debug, Default)]
struct ByClient {
    /// Event indices in the order to fold them.
    order: Vec<u32>,
    /// Per client id (0 to n): its events in a span, then where its next index goes in `order`.
    starts: Vec<u32>,
}

impl ByClient {
    /// Orders `events` of clients 1 to `n` (and of the whole run); false when an event names
    /// another client (a recording of more clients than its scenario says): keep their order.
    fn group(&mut self, events: &[Event], n: usize) -> bool {
        if events.len() > u32::MAX as usize || events.iter().any(|e| e.client as usize > n) {
            return false;
        }
        self.order.clear();
        self.order.reserve(events.len());
        let mut from = 0;
        while from < events.len() {
            // Up to the next event of the whole run (or the end), client by client.
            let to = events[from..].iter().position(|e| e.client == RUN_WIDE).map_or(events.len(), |p| from + p);
            self.group_span(events, from, to, n);
            if to < events.len() {
                self.order.push(to as u32);
            }
            from = to + 1;
        }
        true
    }

    /// Appends the indices `from..to` (no event of the whole run among them) by client, each
    /// client's in order: a counting sort.
    fn group_span(&mut self, events: &[Event], from: usize, to: usize, n: usize) {
        if from >= to {
            return;
        }
        self.starts.clear();
        self.starts.resize(n + 1, 0);
        for e in &events[from..to] {
            self.starts[e.client as usize] += 1;
        }
        let base = self.order.len() as u32;
        let mut at = base;
        for s in &mut self.starts {
            let count = *s;
            *s = at;
            at += count;
        }
        self.order.resize(base as usize + (to - from), 0);
        for (i, e) in events[from..to].iter().enumerate() {
            let slot = &mut self.starts[e.client as usize];
            self.order[*slot as usize] = (from + i) as u32;
            *slot += 1;
        }
    }

    /// The indices [`Self::group`] ordered.
    fn order(&self) -> impl Iterator<Item = u32> + '_ {
        self.order.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackscope_protocol::{Action, Clients, ParamChange, SimTime, Simulation};

    #[test]
    fn a_batch_folded_client_by_client_reports_what_event_by_event_does() {
        for strategy in [Strategy::Glenn, Strategy::Ue4] {
            let s = Scenario { clients: Clients::Count(16), seed: 3, strategy, ..Scenario::default() };
            let mut sim = Simulation::new(s.clone());
            sim.run_until(SimTime(1_500_000));
            // A change of every client: one event of the whole run, mid-batch.
            sim.apply(&Action::Set(ParamChange::new("link.a_to_b.loss_percent", 20.0))).unwrap();
            sim.run_until(SimTime(3_000_000));
            let events: Vec<Event> = sim.drain_events().collect();
            let name = strategy.name();
            assert!(events.len() > BY_CLIENT_MIN_EVENTS, "{name}: {} events", events.len());
            assert!(events.iter().any(|e| e.client == RUN_WIDE), "{name}");

            let mut grouped = RunFold::new(&s).with_in_order_latency();
            grouped.observe(&events);
            assert_eq!(grouped.by_client.order.len(), events.len(), "{name}: taken client by client");
            let mut one_by_one = RunFold::new(&s).with_in_order_latency();
            for e in &events {
                one_by_one.observe(std::slice::from_ref(e));
            }
            let end = RunEnd { truth: sim.summary(), simulated_seconds: 3.0, drain_seconds: 0.0, wall_seconds: 0.0 };
            let json = |f: &RunFold| serde_json::to_string(&f.report(&end)).unwrap();
            assert_eq!(json(&grouped), json(&one_by_one), "{name}");
            assert_eq!(grouped.in_order_latency(), one_by_one.in_order_latency(), "{name}");
        }
    }

    #[test]
    fn events_of_a_client_beyond_the_scenario_keep_their_order() {
        let mut by = ByClient::default();
        let e = |client| {
            Event::for_client(
                SimTime(0),
                client,
                ackscope_protocol::EventKind::PacketAcked { side: ackscope_protocol::Side::A, seq: 0 },
            )
        };
        assert!(!by.group(&[e(1), e(3)], 2));
        assert!(by.group(&[e(2), e(1), e(RUN_WIDE), e(2), e(1), e(1)], 2));
        assert_eq!(by.order().collect::<Vec<_>>(), [1, 0, 2, 4, 5, 3]);
    }
}
