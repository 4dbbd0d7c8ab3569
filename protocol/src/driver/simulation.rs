//! The simulation: a server and N clients on virtual time, each client's connection two
//! [`EndpointDriver`]s and a two-way lossy link ([`Connection`]); one client is the
//! two-endpoint run.
//!
//! [`Simulation::run_until`] takes the instants at which anything is due, in time order, and at
//! each one runs every connection with something due then, in client order (see [`Connection`]
//! for the order within one: scripted actions, deliveries A->B then B->A, side A's send tick then
//! side B's, stats, flow control). With one client it compares the connection's due times
//! directly; with more it keeps them in a priority queue ([`super::due_queue`]), so an instant
//! costs what is due in it, not a scan of every client. While nothing couples the clients (no
//! shared uplink, no scripted step due), several clients run in windows instead: each connection
//! alone for a stretch of virtual time, then the stretch's instants put back in that same order
//! ([`windows`]), which keeps each connection's state in the cache; the events are the same. It runs as fast as the CPU allows; the
//! app paces it by calling `run_until(wall-clock elapsed)`. Ground truth is checked as it goes:
//! every ack an endpoint reports is looked up against the link's record of that very send (the
//! link tags each send with an id unique within its client's connection because 16-bit
//! sequences wrap). The composition follows quinn-proto's test `Pair`, which drives two
//! `TestEndpoint`s and carries their datagrams between them.
//!
//! Every event names its client ([`Event::client`]); a parameter change or restart of every
//! client is one event of the whole run ([`RUN_WIDE`]) when there are several clients (with one,
//! every event is client 1's, as before clients existed).
//!
//! Live and recorded actions ([`Simulation::apply`], in [`actions`]) happen at the current
//! instant, after everything due then: call `run_until(t)`, then `apply`. A re-run that does the same at the
//! same instants produces the same events.

#[cfg(doc)]
use crate::event::RUN_WIDE;
use crate::event::{ClientId, Event, Side, SimTime, FIRST_CLIENT};
use crate::link::Uplink;
use crate::measure::{EstimateSummary, PacketTotals, SummaryAccumulator};
use crate::peer::Peer;
use crate::registry::make_peer;
use crate::scenario::Scenario;
use crate::scenario::SetError;

use super::connection::Connection;
use super::due_queue::DueQueue;
#[cfg(doc)]
use super::endpoint::EndpointDriver;
use super::endpoint::PeerFactory;
use super::filter::EventFilter;

/// A server and its clients, their links, virtual time.
pub struct Simulation {
    /// The run's settings: every client's before its group's and its own, and the run-wide
    /// changes since (each client's own are its drivers').
    scenario: Scenario,
    now: SimTime,
    /// One per client, client k at `k - 1`.
    conns: Vec<Connection>,
    /// The server's shared uplink, and whether `scenario.server` caps it (kept: asked at every
    /// instant).
    uplink: Uplink,
    uplink_on: bool,
    /// When each connection is next due (several clients only; see [`Self::run_until`]).
    due: DueQueue,
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
    /// Whether several clients may run in time windows ([`windows`]): endpoints built by
    /// [`make_peer`] only.
    windowed: bool,
    windows: windows::Windows,
}

impl Simulation {
    /// The run of `scenario` at time 0, with every client it has (see
    /// [`crate::scenario::clients`]). A client whose own settings do not apply (check with
    /// [`Scenario::check_clients`] first, as every file and `--set` is) runs the run's settings
    /// under its own seed; [`Self::try_new`] refuses it instead.
    pub fn new(scenario: Scenario) -> Self {
        let peers = Self::client_peers(&scenario, FIRST_CLIENT);
        let mut sim = Self::with_peers(scenario, peers);
        sim.windowed = true;
        sim
    }

    /// [`Self::new`], refusing a scenario whose clients' settings do not apply.
    pub fn try_new(scenario: Scenario) -> Result<Self, SetError> {
        scenario.check_clients()?;
        Ok(Self::new(scenario))
    }

    /// Both ends of client `k`'s connection as [`make_peer`] builds them.
    fn client_peers(scenario: &Scenario, k: ClientId) -> [Box<dyn Peer>; 2] {
        let s = Self::client_scenario(scenario, k);
        [make_peer(&s, Side::A), make_peer(&s, Side::B)]
    }

    /// Client `k`'s scenario (the run's under the client's seed when its own does not apply).
    fn client_scenario(scenario: &Scenario, k: ClientId) -> Scenario {
        scenario
            .for_client(k)
            .unwrap_or_else(|_| Scenario { seed: crate::scenario::client_seed(scenario.seed, k), ..scenario.clone() })
    }

    /// A simulation around endpoints built elsewhere for client 1 (tests, other strategies); the
    /// other clients' are built by [`make_peer`], and a restart builds new ones with it (see
    /// [`Self::set_peer_factory`]).
    pub fn with_peers(scenario: Scenario, peers: [Box<dyn Peer>; 2]) -> Self {
        let mut first = peers.map(Some);
        Self::with_client_peers(scenario, move |k, s, side| match first[side.index()].take() {
            Some(p) if k == FIRST_CLIENT => p,
            _ => make_peer(s, side),
        })
    }

    /// A simulation whose every endpoint `build(client, client's scenario, side)` makes, client
    /// by client, side A before B: a wire tap around each, so a recording of many clients
    /// exports every connection's bytes (a restart builds new ones with
    /// [`Self::set_peer_factory`]).
    pub fn with_client_peers(
        mut scenario: Scenario,
        mut build: impl FnMut(ClientId, &Scenario, Side) -> Box<dyn Peer>,
    ) -> Self {
        crate::action::sort_steps(&mut scenario.script);
        let n = scenario.client_count();
        let mut conns = Vec::with_capacity(n as usize);
        for k in 1..=n {
            let s = Self::client_scenario(&scenario, k);
            let peers = [build(k, &s, Side::A), build(k, &s, Side::B)];
            conns.push(Connection::new(k, s, scenario.seed, peers));
        }
        let mut sim = Self {
            now: SimTime::ZERO,
            conns,
            uplink: Uplink::new(scenario.server),
            uplink_on: scenario.server.capped(),
            due: DueQueue::default(),
            events: Vec::new(),
            keep_events: true,
            filter: EventFilter::ALL,
            filter_pass: false,
            fold_summary: true,
            summary: SummaryAccumulator::default(),
            end_of_instant: true,
            windowed: false,
            windows: windows::Windows::default(),
            scenario,
        };
        if n > 1 {
            sim.sync_scenario();
        }
        sim
    }

    /// How a restart builds each endpoint (`factory()` is called once per end of every client,
    /// client by client, side A before B).
    pub fn set_peer_factory(&mut self, mut factory: impl FnMut() -> PeerFactory) {
        // The caller's endpoints may share state across clients (one log for every tap): their
        // instants keep the one loop's order.
        self.windowed = false;
        for c in &mut self.conns {
            for d in &mut c.drivers {
                d.set_peer_factory(factory());
            }
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
        let (mut beliefs_built, mut rtt_built) = (false, false);
        for c in &mut self.conns {
            for l in &mut c.links {
                l.set_records(f.link);
            }
            for d in &mut c.drivers {
                d.set_records_stats(f.stats);
                d.set_records_packet_beliefs(f.packet_beliefs);
                d.set_records_rtt_samples(f.rtt_samples);
                beliefs_built |= d.builds_packet_beliefs();
                rtt_built |= d.builds_rtt_samples();
            }
        }
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

    /// The run's settings: the scenario it started from with the run-wide changes since (with
    /// one client, also that client's link as its drivers hold it). Each client's own are
    /// [`Self::client_scenario_now`].
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Clients in the run.
    pub fn client_count(&self) -> u32 {
        self.conns.len() as u32
    }

    /// Client `k`'s settings now (the server's end of its connection; each link direction as
    /// the end it leads to holds it), or None when there is no client `k`.
    pub fn client_scenario_now(&self, k: ClientId) -> Option<Scenario> {
        let c = self.conn(k)?;
        let mut s = c.drivers[Side::A.index()].scenario().clone();
        s.link.a_to_b = *c.drivers[Side::B.index()].link_config();
        s.link.b_to_a = *c.drivers[Side::A.index()].link_config();
        Some(s)
    }

    fn conn(&self, k: ClientId) -> Option<&Connection> {
        self.conns.get((k as usize).checked_sub(1)?)
    }

    /// Reliable messages not yet acked, every end of every client together.
    pub fn unacked_reliable(&self) -> usize {
        self.conns.iter().map(Connection::unacked_reliable).sum()
    }

    /// Events recorded since the last drain.
    pub fn drain_events(&mut self) -> std::vec::Drain<'_, Event> {
        self.events.drain(..)
    }

    /// Events recorded since the last drain, as a vector of their own: `spare` (emptied) takes
    /// its place. A caller handing batches to another thread swaps two buffers this way instead
    /// of copying every event out of a drain (a simulated second of 1000 clients is 67 MB).
    pub fn take_events(&mut self, mut spare: Vec<Event>) -> Vec<Event> {
        spare.clear();
        std::mem::replace(&mut self.events, spare)
    }

    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Ground-truth totals over every client.
    pub fn totals(&self) -> PacketTotals {
        self.summary.finish().0
    }

    /// Client 1's end `side`.
    pub fn peer(&self, side: Side) -> &dyn Peer {
        self.conns[0].drivers[side.index()].peer()
    }

    /// Client `k`'s end `side` (the server's end of its connection for side A).
    pub fn peer_of(&self, k: ClientId, side: Side) -> Option<&dyn Peer> {
        Some(self.conn(k)?.drivers[side.index()].peer())
    }

    /// The run's estimates beside ground truth, from its events: the RTT each side last
    /// reported in a `Stats` event, the mean loss estimate after the warm-up (with several
    /// clients, the mean over clients). Exactly what [`summarize`](crate::summarize) computes
    /// from the recording.
    pub fn estimates(&self) -> EstimateSummary {
        self.summary.finish().1
    }

    /// The summary fold of the run so far (per client: [`SummaryAccumulator::client`]).
    pub fn summary(&self) -> &SummaryAccumulator {
        &self.summary
    }

    /// Runs every event up to and including `until`.
    pub fn run_until(&mut self, until: SimTime) {
        if self.conns.len() == 1 {
            self.run_one_until(until);
        } else {
            self.run_many_until(until);
        }
        // The drivers are told the instant only now (see `Connection::step_at`).
        for d in self.conns.iter_mut().flat_map(|c| &mut c.drivers) {
            d.touch(self.now);
        }
        self.now = self.now.max(until);
    }

    /// Runs for `seconds` of virtual time.
    pub fn run_for_secs(&mut self, seconds: f64) {
        let until = self.now.plus_micros((seconds * 1e6).round() as u64);
        self.run_until(until);
    }

    /// [`Self::run_until`] of one client: the next instant is the earliest of its four due
    /// times.
    fn run_one_until(&mut self, until: SimTime) {
        loop {
            let t = self.conns[0].next_time();
            if t > until {
                return;
            }
            self.now = t;
            self.step(0, t);
        }
    }

    /// [`Self::run_until`] of several clients: the connection due first, from the queue of
    /// their due times (client order among those due at one instant), stepped and put back with
    /// its next due time. Only the connection stepped changes its due time, so the queue holds
    /// one entry per client; anything else that may change them ([`Self::apply`], ...) marks the
    /// queue for a rebuild. Runs in windows instead when it may ([`Self::can_run_windows`]).
    fn run_many_until(&mut self, until: SimTime) {
        if self.can_run_windows(until) {
            self.run_windows(until);
            return;
        }
        self.due.refresh(self.conns.iter().map(Connection::next_time));
        while let Some((t, i)) = self.due.first() {
            if t > until {
                return;
            }
            self.now = t;
            self.step(i, t);
            self.due.replace_first(self.conns[i].next_time());
        }
    }

    /// Runs what connection `i` has due at `t`, then the end of its instant.
    // Always inlined: a call per instant (29,000 in a 120 s run) with its register saves, and
    // the bounds checks on `conns[i]` that inlining into the one-client loop (i = 0) removes,
    // were most of what the one-client loop grew by when clients came.
    #[inline(always)]
    fn step(&mut self, i: usize, t: SimTime) {
        let mark = self.events.len();
        let uplink = if self.uplink_on { Some(&mut self.uplink) } else { None };
        let script = self.conns[i].step_at(t, &mut self.events, uplink);
        if script.applied {
            if script.rebuilt {
                self.sync_records();
            }
            if i == 0 {
                self.sync_scenario();
            }
            self.settle_action_events(i, mark, script.events_end);
        }
        // The endpoints make client 1's events; another client's connection names its own (its
        // settled actions are its own already: only client 1's connection reports the run's).
        let k = self.conns[i].client;
        if k != FIRST_CLIENT {
            for e in &mut self.events[mark..] {
                e.client = k;
            }
        }
        if self.end_of_instant {
            self.end_instant(mark);
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

mod actions;
#[cfg(test)]
mod tests;
mod windows;
