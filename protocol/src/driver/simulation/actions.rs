//! Settings changed while a simulation runs: live and recorded actions ([`Simulation::apply`]),
//! the direct setters the app's controls and tests call, and what one client is asked to send
//! (a chunk, a burst). Every change happens at the current instant, after everything due then,
//! and a `set` is reported as a `ParamChanged` event (of the whole run, or of the client it
//! names).

use crate::action::{Action, ParamChange};
use crate::event::{ClientId, Dir, Event, EventKind, Side, FIRST_CLIENT, RUN_WIDE};
use crate::link::LinkConfig;
use crate::reliability::flow::FlowControl;
use crate::scenario::clients::parse_client_name;
use crate::scenario::SetError;
use crate::scenario::{Scenario, Strategy};

use super::super::connection::Connection;
use super::Simulation;

impl Simulation {
    /// Changes one direction of every client's link from now on.
    pub fn set_link(&mut self, dir: Dir, config: LinkConfig) {
        for c in &mut self.conns {
            c.drivers[dir.receiver().index()].set_link(config);
            c.links[dir.index()].set_config_at(self.now, config);
        }
        *self.scenario.link.get_mut(dir) = config;
        self.due.invalidate();
    }

    /// Changes every endpoint's send rate from now on.
    pub fn set_send_rate(&mut self, pps: f64) {
        self.scenario.send_rate_pps = pps;
        for d in self.conns.iter_mut().flat_map(|c| &mut c.drivers) {
            d.set_send_rate(self.now, pps);
        }
        self.due.invalidate();
    }

    /// Changes the chunk/fragment senders' target bandwidth from now on.
    pub fn set_chunk_bandwidth_kbps(&mut self, kbps: f64) {
        self.scenario.chunk.bandwidth_kbps = kbps;
        for d in self.conns.iter_mut().flat_map(|c| &mut c.drivers) {
            d.set_chunk_bandwidth_kbps(self.now, kbps);
        }
    }

    /// Client 1's end `side` flow control state (meaningful when `scenario.flow.enabled`).
    pub fn flow(&self, side: Side) -> &FlowControl {
        self.conns[0].drivers[side.index()].flow()
    }

    /// Declares that flow control stays off for the rest of the run: no live action will
    /// switch it on (for runs whose actions are known up front, such as a sweep's; check them
    /// with [`EndpointDriver::may_switch_flow_on`]). Where the scenario has flow control off and
    /// no scripted step may switch it on, the endpoints stop feeding its RTT filter, which is read
    /// only while it is on ([`EndpointDriver::fix_flow_off`]); the run's events stay exactly the
    /// same. Returns whether that happened everywhere; from then on [`Self::apply`] refuses a
    /// `set` that would switch flow control on, and [`Self::reconfigure`] with one lifts the
    /// declaration (the filter starts afresh: [`EndpointDriver::reconfigure`]).
    pub fn fix_flow_off(&mut self) -> bool {
        let mut all = true;
        for d in self.conns.iter_mut().flat_map(|c| &mut c.drivers) {
            all &= d.fix_flow_off();
        }
        // The peers may now leave out RTT samples (when not recorded): the filter pass follows.
        self.sync_records();
        all
    }

    fn flow_fixed_off(&self) -> Vec<bool> {
        self.conns.iter().flat_map(|c| &c.drivers).map(|d| d.flow_fixed_off()).collect()
    }

    /// Changes the settings of every client while running: `change` edits the run's scenario and
    /// each client's own ([`EndpointDriver::reconfigure`]: its link where changed, send rate, flow
    /// control, live settings). The strategy stays (see [`Self::apply`] for a change of strategy);
    /// seed and tick phases are kept in the settings and take effect at the next restart.
    pub fn reconfigure(&mut self, change: impl Fn(&mut Scenario)) {
        let fixed_off = self.flow_fixed_off();
        let now = self.now;
        for c in &mut self.conns {
            for side in Side::BOTH {
                let d = &mut c.drivers[side.index()];
                let mut s = d.scenario().clone();
                change(&mut s);
                s.strategy = d.scenario().strategy;
                if d.reconfigure(now, s) {
                    c.update_link(side, super::super::LinkUpdate::Config, now);
                }
            }
        }
        let strategy = self.scenario.strategy;
        change(&mut self.scenario);
        self.scenario.strategy = strategy;
        self.sync_scenario();
        if fixed_off != self.flow_fixed_off() {
            // Flow control switched on lifted `fix_flow_off`: the peers report RTT samples again.
            self.sync_records();
        }
        self.due.invalidate();
    }

    /// Records a live parameter change (already applied) as a `ParamChanged` event at `now`: of
    /// the whole run, or of client K for `client.K.NAME` (client 1's with one client).
    pub fn record_param_change(&mut self, name: &str, value: &str) {
        let kind = EventKind::ParamChanged { name: name.to_string(), value: value.to_string() };
        let client = match parse_client_name(name) {
            Some((Ok(k), _)) => k,
            _ if self.conns.len() > 1 => RUN_WIDE,
            _ => FIRST_CLIENT,
        };
        self.events.push(Event::for_client(self.now, client, kind));
    }

    /// Applies `action` now, after everything due at this instant ran (a live or recorded
    /// action; see [`crate::action`]) to every client it concerns: a `set` changes the settings
    /// (`client.K.NAME` client K's only) and is reported as a `ParamChanged` event; a restart or
    /// strategy change rebuilds every endpoint and link. A refused `set` changes nothing (see
    /// [`Self::fix_flow_off`] for one more reason to refuse); the number of clients is fixed.
    pub fn apply(&mut self, action: &Action) -> Result<(), SetError> {
        match action {
            Action::Set(change) if !change.is_strategy() => self.apply_set(change)?,
            Action::Set(change) => {
                let s = Strategy::parse(&change.value().to_string()).map_err(SetError)?;
                self.apply_on_drivers(&Action::Strategy(s))?;
            }
            other => self.apply_on_drivers(other)?,
        }
        self.due.invalidate();
        Ok(())
    }

    /// A live `set`: checked on the run's settings and on every end it concerns before any
    /// changes, then taken by each ([`EndpointDriver::apply_action`]), then reported.
    fn apply_set(&mut self, change: &ParamChange) -> Result<(), SetError> {
        let name = change.name();
        if name == "clients" {
            return Err(SetError("the number of clients is fixed for a run: start a new run with clients=N".into()));
        }
        let target = match parse_client_name(name) {
            Some((k, _)) => {
                let k = k?;
                if k > self.client_count() {
                    return Err(SetError(format!("'{name}': the run has {} client(s)", self.client_count())));
                }
                Some(k)
            }
            None => None,
        };
        let mut base = self.scenario.clone();
        base.apply_change(change)?;
        let concerned = |c: &Connection| target.is_none_or(|k| k == c.client);
        for c in self.conns.iter().filter(|c| concerned(c)) {
            for d in &c.drivers {
                d.scenario_after_set(change)?;
            }
        }
        let fixed_off = self.flow_fixed_off();
        let set = Action::Set(change.clone());
        let (now, mut scratch) = (self.now, Vec::new());
        for c in self.conns.iter_mut().filter(|c| concerned(c)) {
            for side in [Side::B, Side::A] {
                let update = c.drivers[side.index()].apply_action(now, &set, &mut scratch)?;
                c.update_link(side, update, now);
            }
        }
        base.strategy = self.scenario.strategy;
        self.scenario = base;
        self.sync_scenario();
        if fixed_off != self.flow_fixed_off() {
            self.sync_records();
        }
        self.record_param_change(name, &change.value().to_string());
        Ok(())
    }

    /// Applies `action` on each driver it concerns, client by client, side B's first (it owns
    /// the A->B link), as scripted actions are; then brings links and the scenario up to date.
    fn apply_on_drivers(&mut self, action: &Action) -> Result<(), SetError> {
        let now = self.now;
        let mut rebuilt = false;
        for i in 0..self.conns.len() {
            let mark = self.events.len();
            let c = &mut self.conns[i];
            for side in [Side::B, Side::A] {
                let update = c.drivers[side.index()].apply_action(now, action, &mut self.events)?;
                rebuilt |= c.update_link(side, update, now);
            }
            let end = self.events.len();
            self.settle_action_events(i, mark, end);
        }
        if rebuilt {
            self.sync_records();
        }
        self.sync_scenario();
        Ok(())
    }

    /// Names the client of the events connection `i` made from `mark` on while applying actions,
    /// up to `end` (events after it are the connection's own). With one client nothing changes.
    /// With several, a change of every client is reported once, as an event of the whole run
    /// (client 1's connection's report of it is kept, the others' dropped), and a change of
    /// client K (`client.K.NAME`) as client K's.
    pub(super) fn settle_action_events(&mut self, i: usize, mark: usize, end: usize) {
        if self.conns.len() == 1 || mark == end {
            return;
        }
        let k = self.conns[i].client;
        let tail = self.events.split_off(end);
        let actions = self.events.split_off(mark);
        for mut e in actions {
            let own = match &e.kind {
                EventKind::ParamChanged { name, .. } => match parse_client_name(name) {
                    Some((Ok(named), _)) => (named == k).then_some(k),
                    _ => (i == 0).then_some(RUN_WIDE),
                },
                _ => Some(k),
            };
            if let Some(client) = own {
                e.client = client;
                self.events.push(e);
            }
        }
        self.events.extend(tail);
    }

    /// The run's scenario after actions the drivers applied themselves, and the uplink's
    /// settings from it. With one client: side A's settings, each link direction from the driver
    /// that owns it (the run's clients and client settings kept). With several: the strategy
    /// and server settings in force (client 1's connection has every run-wide change).
    pub(super) fn sync_scenario(&mut self) {
        let c = &self.conns[0];
        let a = &c.drivers[Side::A.index()];
        if self.conns.len() > 1 {
            self.scenario.strategy = a.scenario().strategy;
            self.scenario.server = a.scenario().server;
        } else {
            let mut s = a.scenario().clone();
            s.link.a_to_b = *c.drivers[Side::B.index()].link_config();
            s.link.b_to_a = *a.link_config();
            s.script = std::mem::take(&mut self.scenario.script);
            s.clients = std::mem::take(&mut self.scenario.clients);
            s.client = std::mem::take(&mut self.scenario.client);
            self.scenario = s;
        }
        self.uplink.set_config(self.scenario.server);
        self.uplink_on = self.scenario.server.capped();
    }

    /// Queues one large block of `bytes` on `side` of every client (chunk and fragment
    /// strategies).
    pub fn send_chunk(&mut self, side: Side, bytes: usize) {
        for k in 1..=self.client_count() {
            self.send_chunk_for(k, side, bytes);
        }
    }

    /// Queues one large block of `bytes` on `side` of client `k`'s connection (the server's end
    /// for side A): nothing when there is no client `k`.
    pub fn send_chunk_for(&mut self, k: ClientId, side: Side, bytes: usize) {
        let now = self.now;
        if let Some(c) = self.conns.get_mut((k as usize).wrapping_sub(1)) {
            c.drivers[side.index()].send_chunk(now, bytes);
            self.due.invalidate();
        }
    }

    /// Queues a workload burst on `side` of every client.
    pub fn burst(&mut self, side: Side) {
        for k in 1..=self.client_count() {
            self.burst_for(k, side);
        }
    }

    /// Queues a workload burst on `side` of client `k`'s connection: nothing when there is no
    /// client `k`.
    pub fn burst_for(&mut self, k: ClientId, side: Side) {
        let now = self.now;
        if let Some(c) = self.conns.get_mut((k as usize).wrapping_sub(1)) {
            c.drivers[side.index()].burst(now);
            self.due.invalidate();
        }
    }
}
