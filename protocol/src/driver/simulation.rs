//! The simulation: two [`EndpointDriver`]s and a two-way lossy link on virtual time.
//!
//! [`Simulation::run_until`] takes the instants at which anything is due, in time order, and at
//! each one makes the drivers' calls in this order: scripted link steps (in script order, each
//! step's A->B direction first), deliveries A->B then B->A (each delivery noted by the link just
//! before the receiver handles it), side A's send tick then side B's (each datagram put on the
//! outgoing link as it is made), stats for A then B, then flow control for A then B. It runs as
//! fast as the CPU allows; the app paces it by calling `run_until(wall-clock elapsed)`. Ground
//! truth is checked as it goes: every ack an endpoint reports is looked up against the link's
//! record of that very send (the link tags each send with a run-unique id because 16-bit
//! sequences wrap). The composition follows quinn-proto's test `Pair`, which drives two
//! `TestEndpoint`s and carries their datagrams between them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::event::{Dir, Event, EventKind, Side, SimTime};
use crate::link::{Link, LinkConfig};
use crate::measure::{EstimateSummary, PacketTotals, SummaryAccumulator};
use crate::peer::Peer;
use crate::registry::make_peer;
use crate::reliability::flow::FlowControl;
use crate::scenario::Scenario;

use super::endpoint::{EndpointDriver, SendIds};

/// Two endpoints, a two-way link, virtual time.
pub struct Simulation {
    scenario: Scenario,
    now: SimTime,
    links: [Link; 2],
    drivers: [EndpointDriver; 2],
    events: Vec<Event>,
    keep_events: bool,
    /// The fold `summarize` makes over a recording, fed every event as it passes, so a run's
    /// figures and the summary of its recording are the same numbers.
    summary: SummaryAccumulator,
}

impl Simulation {
    pub fn new(scenario: Scenario) -> Self {
        let peers = [make_peer(&scenario, Side::A), make_peer(&scenario, Side::B)];
        Self::with_peers(scenario, peers)
    }

    /// A simulation around endpoints built elsewhere (tests, other strategies).
    pub fn with_peers(mut scenario: Scenario, peers: [Box<dyn Peer>; 2]) -> Self {
        scenario.script.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
        let links = [
            Link::new(Dir::AtoB, scenario.link.a_to_b, scenario.seed),
            Link::new(Dir::BtoA, scenario.link.b_to_a, scenario.seed),
        ];
        // One counter over both sides: send ids in send order, as ground truth tables expect.
        let counter = Arc::new(AtomicU64::new(0));
        let ids = || -> SendIds {
            let c = counter.clone();
            Box::new(move || c.fetch_add(1, Ordering::Relaxed))
        };
        let [peer_a, peer_b] = peers;
        let drivers = [
            EndpointDriver::new(Side::A, scenario.clone(), peer_a, ids()),
            EndpointDriver::new(Side::B, scenario.clone(), peer_b, ids()),
        ];
        Self {
            now: SimTime::ZERO,
            links,
            drivers,
            events: Vec::new(),
            keep_events: true,
            summary: SummaryAccumulator::default(),
            scenario,
        }
    }

    /// When false, events are checked against ground truth and then discarded (long soaks).
    pub fn set_keep_events(&mut self, keep: bool) {
        self.keep_events = keep;
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Changes one direction of the link from now on.
    pub fn set_link(&mut self, dir: Dir, config: LinkConfig) {
        self.drivers[dir.receiver().index()].set_link(config);
        self.sync_link(dir);
    }

    /// Copies the settings of `dir`'s link from the driver that owns them (its receiver).
    fn sync_link(&mut self, dir: Dir) {
        let config = *self.drivers[dir.receiver().index()].link_config();
        *self.scenario.link.get_mut(dir) = config;
        self.links[dir.index()].set_config_at(self.now, config);
    }

    /// Changes both endpoints' send rate from now on.
    pub fn set_send_rate(&mut self, pps: f64) {
        self.scenario.send_rate_pps = pps;
        for d in &mut self.drivers {
            d.set_send_rate(self.now, pps);
        }
    }

    /// Changes the chunk/fragment senders' target bandwidth from now on.
    pub fn set_chunk_bandwidth_kbps(&mut self, kbps: f64) {
        self.scenario.chunk.bandwidth_kbps = kbps;
        for d in &mut self.drivers {
            d.set_chunk_bandwidth_kbps(self.now, kbps);
        }
    }

    /// Each side's flow control state (meaningful when `scenario.flow.enabled`).
    pub fn flow(&self, side: Side) -> &FlowControl {
        self.drivers[side.index()].flow()
    }

    /// Changes the scenario while running: `change` edits it, then each endpoint takes it
    /// ([`EndpointDriver::reconfigure`]: its link where changed, send rate, flow control, live
    /// settings). Seed, strategy and tick phases are fixed per run.
    pub fn reconfigure(&mut self, change: impl FnOnce(&mut Scenario)) {
        let mut s = self.scenario.clone();
        change(&mut s);
        s.seed = self.scenario.seed;
        s.strategy = self.scenario.strategy;
        (s.tick_phase, s.tick_jitter_ms) = (self.scenario.tick_phase, self.scenario.tick_jitter_ms);
        (s.a, s.b) = (self.scenario.a, self.scenario.b);
        for side in Side::BOTH {
            if self.drivers[side.index()].reconfigure(self.now, s.clone()) {
                self.sync_link(side.other().outgoing());
            }
        }
        self.scenario = s;
    }

    /// Records a live parameter change (already applied) as a `ParamChanged` event at `now`.
    pub fn record_param_change(&mut self, name: &str, value: &str) {
        let kind = EventKind::ParamChanged { name: name.to_string(), value: value.to_string() };
        self.events.push(Event { time: self.now, kind });
    }

    /// Queues one large block of `bytes` on `side` (chunk and fragment strategies).
    pub fn send_chunk(&mut self, side: Side, bytes: usize) {
        self.drivers[side.index()].send_chunk(self.now, bytes);
    }

    /// Queues a workload burst on `side`.
    pub fn burst(&mut self, side: Side) {
        self.drivers[side.index()].burst(self.now);
    }

    /// Reliable messages not yet acked, both sides together.
    pub fn unacked_reliable(&self) -> usize {
        self.drivers.iter().map(|d| d.peer().unacked_reliable()).sum()
    }

    /// Events recorded since the last drain.
    pub fn drain_events(&mut self) -> std::vec::Drain<'_, Event> {
        self.events.drain(..)
    }

    pub fn events(&self) -> &[Event] {
        &self.events
    }

    pub fn totals(&self) -> PacketTotals {
        self.summary.finish().0
    }

    pub fn peer(&self, side: Side) -> &dyn Peer {
        self.drivers[side.index()].peer()
    }

    /// The run's estimates beside ground truth, from its events: the RTT each side last
    /// reported in a `Stats` event, the mean loss estimate after the warm-up. Exactly what
    /// [`summarize`](crate::summarize) computes from the recording.
    pub fn estimates(&self) -> EstimateSummary {
        self.summary.finish().1
    }

    fn next_event_time(&self) -> SimTime {
        let mut t = self.drivers[0].next_due().min(self.drivers[1].next_due());
        for l in &self.links {
            if let Some(d) = l.next_delivery() {
                t = t.min(d);
            }
        }
        t
    }

    /// Runs every event up to and including `until`.
    pub fn run_until(&mut self, until: SimTime) {
        loop {
            let t = self.next_event_time();
            if t > until {
                self.now = self.now.max(until);
                return;
            }
            self.now = t;
            self.step_at(t);
        }
    }

    /// Runs for `seconds` of virtual time.
    pub fn run_for_secs(&mut self, seconds: f64) {
        let until = self.now.plus_micros((seconds * 1e6).round() as u64);
        self.run_until(until);
    }

    /// Applies every scripted link step due at `t`, in script order. Each driver holds the steps
    /// of the direction into it, so their due steps are merged by (script position, direction).
    fn apply_script(&mut self, t: SimTime) {
        loop {
            let next = self
                .drivers
                .iter()
                .filter_map(|d| d.next_script_step(t).map(|i| (i, d.link_dir().index(), d.side())))
                .min();
            let Some((_, _, side)) = next else {
                return;
            };
            self.drivers[side.index()].apply_script_step(t, &mut self.events);
            self.sync_link(side.other().outgoing());
        }
    }

    fn step_at(&mut self, t: SimTime) {
        let mark = self.events.len();
        self.apply_script(t);
        for dir in Dir::BOTH {
            let link = &mut self.links[dir.index()];
            self.drivers[dir.receiver().index()].receive(t, link, &mut self.events);
        }
        for side in Side::BOTH {
            let link = &mut self.links[side.outgoing().index()];
            self.drivers[side.index()].tick(t, link, &mut self.events);
        }
        let mut samples = [None; 2];
        for side in Side::BOTH {
            samples[side.index()] = self.drivers[side.index()].sample_stats(t, &mut self.events);
        }
        for side in Side::BOTH {
            if let Some(stats) = &samples[side.index()] {
                self.drivers[side.index()].apply_flow(t, stats, &mut self.events);
            }
        }
        self.summary.observe(&self.events[mark..]);
        if !self.keep_events {
            self.events.truncate(mark);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::{LinkPatch, LinkStep, StepDirection};

    fn step(at_s: f64, dir: StepDirection, set: LinkPatch) -> LinkStep {
        LinkStep { at_s, dir, set }
    }

    #[test]
    fn script_steps_at_one_instant_apply_in_script_order_each_a_to_b_first() {
        let script = vec![
            step(2.0, StepDirection::AToB, LinkPatch { loss_percent: Some(9.0), ..LinkPatch::default() }),
            step(1.0, StepDirection::Both, LinkPatch { latency_ms: Some(80.0), ..LinkPatch::default() }),
            step(1.0, StepDirection::BToA, LinkPatch { loss_percent: Some(3.0), ..LinkPatch::default() }),
            step(1.0, StepDirection::AToB, LinkPatch { jitter_ms: Some(2.0), ..LinkPatch::default() }),
        ];
        let mut sim = Simulation::new(Scenario { script, ..Scenario::default() });
        sim.run_until(SimTime::from_secs_f64(2.5));
        let changed: Vec<(u64, String)> = sim
            .events()
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::ParamChanged { name, .. } => Some((e.time.0 / 1000, name.clone())),
                _ => None,
            })
            .collect();
        let expect = [
            (1000, "link.a_to_b.latency_ms"),
            (1000, "link.b_to_a.latency_ms"),
            (1000, "link.b_to_a.loss_percent"),
            (1000, "link.a_to_b.jitter_ms"),
            (2000, "link.a_to_b.loss_percent"),
        ];
        assert_eq!(changed, expect.map(|(t, n)| (t, n.to_string())));
        let l = &sim.scenario().link;
        assert_eq!((l.a_to_b.latency_ms, l.a_to_b.jitter_ms, l.a_to_b.loss_percent), (80.0, 2.0, 9.0));
        assert_eq!((l.b_to_a.latency_ms, l.b_to_a.loss_percent), (80.0, 3.0));
    }
}
