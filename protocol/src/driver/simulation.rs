//! The simulation: two [`EndpointDriver`]s and a two-way lossy link on virtual time.
//!
//! [`Simulation::run_until`] takes the instants at which anything is due, in time order, and at
//! each one makes the drivers' calls in this order: scripted actions (in script order, each
//! action on side B's driver first, which owns the A->B link), deliveries A->B then B->A (each delivery noted by the link just
//! before the receiver handles it), side A's send tick then side B's (each datagram put on the
//! outgoing link as it is made), stats for A then B, then flow control for A then B. It runs as
//! fast as the CPU allows; the app paces it by calling `run_until(wall-clock elapsed)`. Ground
//! truth is checked as it goes: every ack an endpoint reports is looked up against the link's
//! record of that very send (the link tags each send with a run-unique id because 16-bit
//! sequences wrap). The composition follows quinn-proto's test `Pair`, which drives two
//! `TestEndpoint`s and carries their datagrams between them.
//!
//! Live and recorded actions ([`Simulation::apply`]) happen at the current instant, after
//! everything due then: call `run_until(t)`, then `apply`. A re-run that does the same at the
//! same instants produces the same events.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use crate::action::Action;
use crate::event::{Dir, Event, EventKind, Side, SimTime};
use crate::link::{Link, LinkConfig};
use crate::measure::{EstimateSummary, PacketTotals, SummaryAccumulator};
use crate::peer::Peer;
use crate::registry::make_peer;
use crate::reliability::flow::FlowControl;
use crate::scenario::set::SetError;
use crate::scenario::{Scenario, Strategy};

use super::endpoint::{EndpointDriver, IdSource, LinkUpdate, PeerFactory};
use super::filter::EventFilter;

/// Two endpoints, a two-way link, virtual time.
pub struct Simulation {
    scenario: Scenario,
    now: SimTime,
    links: [Link; 2],
    drivers: [EndpointDriver; 2],
    events: Vec<Event>,
    keep_events: bool,
    /// Which events are recorded (see [`Self::set_event_filter`]).
    filter: EventFilter,
    /// Whether the events of an instant need the filter's pass at its end: some left out were
    /// built anyway (by the endpoints, or by every source while the summary reads them).
    filter_pass: bool,
    /// Whether `summary` is fed (see [`Self::set_summary`]).
    fold_summary: bool,
    /// The fold `summarize` makes over a recording, fed every event as it passes, so a run's
    /// figures and the summary of its recording are the same numbers.
    summary: SummaryAccumulator,
    /// Whether an instant's events need anything at its end: the summary's fold, a truncation
    /// or the filter's pass (see [`Self::sync_end_of_instant`]).
    end_of_instant: bool,
}

impl Simulation {
    pub fn new(scenario: Scenario) -> Self {
        let peers = [make_peer(&scenario, Side::A), make_peer(&scenario, Side::B)];
        Self::with_peers(scenario, peers)
    }

    /// A simulation around endpoints built elsewhere (tests, other strategies); a restart builds
    /// new ones with [`make_peer`] (see [`Self::set_peer_factory`]).
    pub fn with_peers(mut scenario: Scenario, peers: [Box<dyn Peer>; 2]) -> Self {
        crate::action::sort_steps(&mut scenario.script);
        let links = [
            Link::new(Dir::AtoB, scenario.link.a_to_b, scenario.seed),
            Link::new(Dir::BtoA, scenario.link.b_to_a, scenario.seed),
        ];
        // One counter over both sides: send ids in send order, as ground truth tables expect.
        let counter = Arc::new(AtomicU64::new(0));
        let [peer_a, peer_b] = peers;
        let drivers = [
            EndpointDriver::with_ids(Side::A, scenario.clone(), peer_a, IdSource::Shared(counter.clone())),
            EndpointDriver::with_ids(Side::B, scenario.clone(), peer_b, IdSource::Shared(counter)),
        ];
        Self {
            now: SimTime::ZERO,
            links,
            drivers,
            events: Vec::new(),
            keep_events: true,
            filter: EventFilter::ALL,
            filter_pass: false,
            fold_summary: true,
            summary: SummaryAccumulator::default(),
            end_of_instant: true,
            scenario,
        }
    }

    /// How a restart builds each side's new endpoint (`factory()` is called once per side).
    pub fn set_peer_factory(&mut self, mut factory: impl FnMut() -> PeerFactory) {
        for d in &mut self.drivers {
            d.set_peer_factory(factory());
        }
    }

    /// When false, events are checked against ground truth and then discarded (long soaks).
    pub fn set_keep_events(&mut self, keep: bool) {
        self.keep_events = keep;
        self.sync_end_of_instant();
    }

    /// Notes whether the end of an instant has work: one test per instant instead of three (a
    /// sweep's instants have none).
    fn sync_end_of_instant(&mut self) {
        self.end_of_instant = self.fold_summary || !self.keep_events || self.filter_pass;
    }

    /// Records only the events `filter` keeps from now on (all by default); the run itself is
    /// unchanged. With the summary on ([`Self::set_summary`]) it still sees every event: the
    /// filter applies after it, at the end of each instant. For callers that read only some
    /// events (a sweep folds the message metrics: [`EventFilter::MESSAGE_METRICS`]).
    pub fn set_event_filter(&mut self, filter: EventFilter) {
        self.filter = filter;
        self.sync_records();
    }

    /// Tells the links and drivers which of their events are recorded: they build none of the
    /// others (unless the summary, which reads them, is on).
    fn sync_records(&mut self) {
        let f = if self.fold_summary { EventFilter::ALL } else { self.filter };
        for l in &mut self.links {
            l.set_records(f.link);
        }
        for d in &mut self.drivers {
            d.set_records_stats(f.stats);
            d.set_records_packet_beliefs(f.packet_beliefs);
            d.set_records_rtt_samples(f.rtt_samples);
        }
        let beliefs_built = self.drivers.iter().any(|d| d.builds_packet_beliefs());
        let rtt_built = self.drivers.iter().any(|d| d.builds_rtt_samples());
        self.filter_pass = f != self.filter
            || (!self.filter.rtt_samples && rtt_built)
            || (!self.filter.packet_beliefs && beliefs_built);
        self.sync_end_of_instant();
    }

    /// When false, the run's own summary is not folded: [`Self::totals`] and
    /// [`Self::estimates`] stay at zero. For callers that fold the events they need themselves
    /// (a sweep reads only the message metrics): the packet ledger behind the summary keeps a
    /// record per send, and growing it was a sixth of a run's time.
    pub fn set_summary(&mut self, fold: bool) {
        self.fold_summary = fold;
        self.sync_records();
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

    /// Declares that flow control stays off for the rest of the run: no live action will
    /// switch it on (for runs whose actions are known up front, such as a sweep's; check them
    /// with [`EndpointDriver::may_switch_flow_on`]). Where the scenario has flow control off and
    /// no scripted step may switch it on, the endpoints stop feeding its RTT filter, which is read
    /// only while it is on ([`EndpointDriver::fix_flow_off`]); the run's events stay exactly the
    /// same. Returns whether that happened; from then on [`Self::apply`] refuses a `set` that
    /// would switch flow control on, and [`Self::reconfigure`] with one lifts the declaration
    /// (the filter starts afresh: [`EndpointDriver::reconfigure`]).
    pub fn fix_flow_off(&mut self) -> bool {
        let idle = self.drivers.each_mut().map(|d| d.fix_flow_off());
        // The peers may now leave out RTT samples (when not recorded): the filter pass follows.
        self.sync_records();
        idle[0] && idle[1]
    }

    /// Changes the scenario while running: `change` edits it, then each endpoint takes it
    /// ([`EndpointDriver::reconfigure`]: its link where changed, send rate, flow control, live
    /// settings). The strategy stays (see [`Self::apply`] for a change of strategy); seed and
    /// tick phases are kept in the scenario and take effect at the next restart.
    pub fn reconfigure(&mut self, change: impl FnOnce(&mut Scenario)) {
        let mut s = self.scenario.clone();
        change(&mut s);
        s.strategy = self.scenario.strategy;
        let fixed_off = self.drivers.each_ref().map(|d| d.flow_fixed_off());
        for side in Side::BOTH {
            if self.drivers[side.index()].reconfigure(self.now, s.clone()) {
                self.sync_link(side.other().outgoing());
            }
        }
        self.scenario = s;
        if fixed_off != self.drivers.each_ref().map(|d| d.flow_fixed_off()) {
            // Flow control switched on lifted `fix_flow_off`: the peers report RTT samples again.
            self.sync_records();
        }
    }

    /// Records a live parameter change (already applied) as a `ParamChanged` event at `now`.
    pub fn record_param_change(&mut self, name: &str, value: &str) {
        let kind = EventKind::ParamChanged { name: name.to_string(), value: value.to_string() };
        self.events.push(Event::new(self.now, kind));
    }

    /// Applies `action` now, after everything due at this instant ran (a live or recorded
    /// action; see [`crate::action`]): a `set` changes the scenario ([`Self::reconfigure`]) and
    /// is reported as a `ParamChanged` event; a restart or strategy change rebuilds both
    /// endpoints and both links. A refused `set` changes nothing (see [`Self::fix_flow_off`] for
    /// one more reason to refuse).
    pub fn apply(&mut self, action: &Action) -> Result<(), SetError> {
        match action {
            Action::Set(change) if !change.is_strategy() => {
                let mut s = self.scenario.clone();
                s.apply_change(change)?;
                for d in &self.drivers {
                    d.check_flow_fixed_off(&s)?;
                }
                self.reconfigure(|cur| *cur = s);
                self.record_param_change(change.name(), &change.value().to_string());
            }
            Action::Set(change) => {
                let s = Strategy::parse(&change.value().to_string()).map_err(SetError)?;
                self.apply_on_drivers(&Action::Strategy(s))?;
            }
            other => self.apply_on_drivers(other)?,
        }
        Ok(())
    }

    /// Applies `action` on each driver it concerns, side B's first (it owns the A->B link), as
    /// scripted actions are; then brings links and the scenario up to date.
    fn apply_on_drivers(&mut self, action: &Action) -> Result<(), SetError> {
        for side in [Side::B, Side::A] {
            let update = self.drivers[side.index()].apply_action(self.now, action, &mut self.events)?;
            self.update_link(side, update);
        }
        self.sync_scenario();
        Ok(())
    }

    /// Applies a driver's [`LinkUpdate`] to the link into its endpoint.
    fn update_link(&mut self, side: Side, update: LinkUpdate) {
        let dir = side.other().outgoing();
        update.apply(&self.drivers[side.index()], &mut self.links[dir.index()], self.now);
        if update == LinkUpdate::Rebuild {
            self.sync_records();
        }
        *self.scenario.link.get_mut(dir) = *self.drivers[side.index()].link_config();
    }

    /// The scenario in force from the drivers after actions they applied themselves: side A's
    /// settings, each link direction from the driver that owns it.
    fn sync_scenario(&mut self) {
        let mut s = self.drivers[Side::A.index()].scenario().clone();
        s.link.a_to_b = *self.drivers[Side::B.index()].link_config();
        s.link.b_to_a = *self.drivers[Side::A.index()].link_config();
        s.script = std::mem::take(&mut self.scenario.script);
        self.scenario = s;
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
        let t = self.drivers[0].next_due().min(self.drivers[1].next_due());
        t.min(self.links[0].next_delivery_or_never()).min(self.links[1].next_delivery_or_never())
    }

    /// Runs every event up to and including `until`.
    pub fn run_until(&mut self, until: SimTime) {
        loop {
            let t = self.next_event_time();
            if t > until {
                // The drivers are told the instant only now (see `step_at`).
                for d in &mut self.drivers {
                    d.touch(self.now);
                }
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

    /// Applies every scripted action due at `t`, in script order. Each driver holds the steps
    /// that concern it, so their due steps are merged by (script position, direction into it):
    /// at one position side B's driver (which owns A->B) goes first.
    fn apply_script(&mut self, t: SimTime) {
        let mut applied = false;
        loop {
            let next = self
                .drivers
                .iter()
                .filter_map(|d| d.next_script_step(t).map(|i| (i, d.link_dir().index(), d.side())))
                .min();
            let Some((_, _, side)) = next else {
                break;
            };
            let update = self.drivers[side.index()].apply_script_step(t, &mut self.events);
            self.update_link(side, update);
            applied = true;
        }
        if applied {
            self.sync_scenario();
        }
    }

    fn step_at(&mut self, t: SimTime) {
        let mark = self.events.len();
        // Whether either driver has a tick, stats sample or script step due: most instants are
        // a delivery and nothing else (deliveries do not move what a driver has due).
        let drivers_due = self.drivers[0].next_due().min(self.drivers[1].next_due()) <= t;
        if drivers_due {
            self.apply_script(t);
        }
        for dir in Dir::BOTH {
            let link = &mut self.links[dir.index()];
            // Most instants deliver nothing on a direction (the instant reaches the driver
            // below, with its tick). An empty link says "never", u64::MAX: an instant then
            // finds nothing to take.
            if link.next_delivery_or_never() <= t {
                self.drivers[dir.receiver().index()].take_datagrams(t, link, &mut self.events);
            }
        }
        // Each driver is called only for what is due (a tick, a stats sample): most instants are
        // one delivery, and calling every step of both drivers at each was a tenth of a run. The
        // drivers are told the instant at the end of `run_until` (nothing reads it before):
        // telling each at every instant was 0.3 M instructions per 120 s sweep run.
        if drivers_due {
            for side in Side::BOTH {
                let link = &mut self.links[side.outgoing().index()];
                let d = &mut self.drivers[side.index()];
                if d.next_tick() <= t {
                    d.take_tick(t, link, &mut self.events);
                }
            }
            // One test for both in the common case (a stats instant comes every 100 ms or so).
            if self.drivers[0].stats_due(t) || self.drivers[1].stats_due(t) {
                self.sample_due_stats(t);
            }
        }
        if self.end_of_instant {
            self.end_instant(mark);
        }
    }

    /// The stats samples due at `t`, A's then B's, then flow control after each sample.
    fn sample_due_stats(&mut self, t: SimTime) {
        let mut sampled = [false; 2];
        for side in Side::BOTH {
            let d = &mut self.drivers[side.index()];
            sampled[side.index()] = d.stats_due(t) && d.sample_stats(t, &mut self.events);
        }
        for side in Side::BOTH {
            if sampled[side.index()] {
                self.drivers[side.index()].apply_flow(t, &mut self.events);
            }
        }
    }

    /// The end of an instant whose events start at `mark`: the summary's fold, then the events
    /// dropped or filtered.
    fn end_instant(&mut self, mark: usize) {
        if self.fold_summary {
            self.summary.observe(&self.events[mark..]);
        }
        if !self.keep_events {
            self.events.truncate(mark);
        } else if self.filter_pass {
            self.filter.retain_from(&mut self.events, mark);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::Step;
    use crate::link::{LinkPatch, LinkStep, StepDirection};

    fn step(at_s: f64, dir: StepDirection, set: LinkPatch) -> Step {
        LinkStep { at_s, dir, set }.into()
    }

    #[test]
    fn send_ids_count_up_over_both_sides_in_send_order() {
        let mut sim = Simulation::new(Scenario::default());
        sim.run_until(SimTime::from_secs_f64(2.0));
        let sent: Vec<(Side, u64)> = sim
            .events()
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::PacketSent { side, uid, .. } => Some((side, uid)),
                _ => None,
            })
            .collect();
        assert!(sent.iter().any(|s| s.0 == Side::A) && sent.iter().any(|s| s.0 == Side::B));
        assert!(sent.iter().map(|s| s.1).eq(0..sent.len() as u64), "{sent:?}");
    }

    #[test]
    fn without_the_summary_each_instant_still_drops_or_filters_its_events() {
        let mut sim = Simulation::new(Scenario::default());
        sim.set_summary(false);
        sim.set_keep_events(false);
        sim.run_until(SimTime::from_secs_f64(1.0));
        assert!(sim.events().is_empty());
        sim.set_keep_events(true);
        // RTT samples are built (flow control's filter is fed) but not recorded: the filter's pass.
        sim.set_event_filter(EventFilter::MESSAGE_METRICS);
        sim.run_until(SimTime::from_secs_f64(3.0));
        let kept = |e: &&Event| EventFilter::MESSAGE_METRICS.keeps(&e.kind);
        assert!(sim.events().len() > 100 && sim.events().iter().all(|e| kept(&e)));
        sim.set_event_filter(EventFilter::ALL);
        sim.run_until(SimTime::from_secs_f64(4.0));
        assert!(sim.events().iter().any(|e| matches!(e.kind, EventKind::RttSample { .. })));
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
