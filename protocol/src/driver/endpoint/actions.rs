//! Actions on one endpoint: `set`, bursts and chunks, link changes, and restarts.
//!
//! The same code runs a scenario's scripted step (at the start of its instant) and a live or
//! recorded action (after everything due at its instant), in the simulation and in every
//! real-time transport.

use super::{EndpointDriver, Ticker};
use crate::action::{Action, ParamChange};
use crate::event::{Dir, Event, EventKind, SimTime};
use crate::link::Link;
use crate::reliability::flow::FlowControl;
use crate::scenario::clients::parse_client_name;
use crate::scenario::SetError;
use crate::scenario::{client_seed, Scenario, Strategy};

/// Why a `set` switching flow control on is refused after [`EndpointDriver::fix_flow_off`].
const FLOW_FIXED_OFF: &str = "flow control cannot be switched on: this run declared it stays off (fix_flow_off)";

/// What an action did to the link into the endpoint: the caller applies it to its [`Link`].
#[must_use = "a changed link must reach the caller's link"]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkUpdate {
    /// Nothing changed.
    None,
    /// New settings ([`EndpointDriver::link_config`]) from now on.
    Config,
    /// The endpoint restarted: a new, empty link with its settings (what was in flight is gone).
    Rebuild,
}

impl LinkUpdate {
    /// Both updates, the stronger one winning.
    pub fn and(self, other: LinkUpdate) -> LinkUpdate {
        match (self, other) {
            (LinkUpdate::Rebuild, _) | (_, LinkUpdate::Rebuild) => LinkUpdate::Rebuild,
            (LinkUpdate::Config, _) | (_, LinkUpdate::Config) => LinkUpdate::Config,
            _ => LinkUpdate::None,
        }
    }

    /// Brings `link` (the link into `driver`'s endpoint) up to date at `now`.
    pub fn apply(self, driver: &EndpointDriver, link: &mut Link, now: SimTime) {
        match self {
            LinkUpdate::None => {}
            LinkUpdate::Config => link.set_config_at(now, *driver.link_config()),
            LinkUpdate::Rebuild => {
                *link = {
                    let scenario = driver.scenario();
                    scenario.link.build(driver.link_dir(), scenario.seed)
                };
            }
        }
    }
}

impl EndpointDriver {
    /// Applies `action` at `now` as far as it concerns this endpoint:
    /// - `set`: the parameter in this endpoint's settings ([`Self::reconfigure`]); `set` of
    ///   `strategy` is a strategy change;
    /// - `burst` / `send_chunk` of this side: queued on the endpoint;
    /// - `link` of the direction into this endpoint: its settings, each changed field reported
    ///   as a `ParamChanged` event;
    /// - `restart` / `strategy` / `transport`: [`Self::restart`] (a transport change is marked
    ///   `transport`: the caller moves the endpoint to the other transport, see [`Action`]);
    /// - `pause` / `resume`: nothing (virtual time does not pass while paused).
    ///
    /// `set`s and restarts are reported as `ParamChanged` events when this driver records them.
    /// A refused `set` (as is one switching flow control on after [`Self::fix_flow_off`])
    /// changes nothing.
    pub fn apply_action(
        &mut self,
        now: SimTime,
        action: &Action,
        events: &mut Vec<Event>,
    ) -> Result<LinkUpdate, SetError> {
        self.touch(now);
        if !action.concerns(self.side) {
            return Ok(LinkUpdate::None);
        }
        Ok(match action {
            Action::Set(change) if change.is_strategy() => {
                let strategy = Strategy::parse(&change.value().to_string()).map_err(SetError)?;
                self.restart(now, Some(strategy), events)
            }
            Action::Set(change) => {
                let Some((s, run_seed)) = self.settings_after_set(change)? else {
                    return Ok(LinkUpdate::None);
                };
                if self.tick_seed.is_some() {
                    // The server's grid follows the run's seed (it takes effect at a restart).
                    self.tick_seed = Some(run_seed);
                }
                let changed = self.reconfigure(now, s);
                if self.records {
                    let (name, value) = (change.name().to_string(), change.value().to_string());
                    events.push(Event::new(now, EventKind::ParamChanged { name, value }));
                }
                if changed {
                    LinkUpdate::Config
                } else {
                    LinkUpdate::None
                }
            }
            Action::Burst { .. } => {
                self.burst(now);
                LinkUpdate::None
            }
            Action::SendChunk { kib, .. } => {
                self.send_chunk(now, *kib as usize * 1024);
                LinkUpdate::None
            }
            Action::Link { set, .. } => {
                let dir = self.link_dir();
                let d = match dir {
                    Dir::AtoB => "a_to_b",
                    Dir::BtoA => "b_to_a",
                };
                for (field, v) in set.apply(self.scenario.link.get_mut(dir)) {
                    let name = format!("link.{d}.{field}");
                    events.push(Event::new(now, EventKind::ParamChanged { name, value: v.to_string() }));
                }
                LinkUpdate::Config
            }
            Action::Restart => self.restart(now, None, events),
            Action::Strategy(s) => self.restart(now, Some(*s), events),
            Action::Transport(t) => self.rebuild(now, None, ("transport", t.name()), events),
            Action::Pause | Action::Resume => LinkUpdate::None,
        })
    }

    /// Rebuilds the endpoint at `now` from the settings in force (with `strategy` if given): a
    /// new peer from the factory, its tick phase and lateness drawn again from the (possibly new)
    /// seed, ticks on its grid from `now`, a stats sample at `now`, flow control afresh. The
    /// script position and the send ids carry on. Reported (when this driver records) as
    /// `ParamChanged { name: "strategy", value }` for a strategy change, else
    /// `ParamChanged { name: "restart", value: strategy }`. The caller rebuilds the link.
    pub fn restart(&mut self, now: SimTime, strategy: Option<Strategy>, events: &mut Vec<Event>) -> LinkUpdate {
        let marker = match strategy {
            Some(s) => ("strategy", s.name()),
            None => ("restart", self.scenario.strategy.name()),
        };
        self.rebuild(now, strategy, marker, events)
    }

    /// This endpoint's settings after `change` (checked: a refused change is an error and
    /// changes nothing), or None when it names another client (`client.K.NAME`, K not this
    /// endpoint's client). `client.K.NAME` of this client sets NAME; a new run seed gives the
    /// endpoint the client's seed of it ([`client_seed`]).
    pub fn scenario_after_set(&self, change: &ParamChange) -> Result<Option<Scenario>, SetError> {
        Ok(self.settings_after_set(change)?.map(|(s, _)| s))
    }

    /// [`Self::scenario_after_set`] and the run's seed after it.
    fn settings_after_set(&self, change: &ParamChange) -> Result<Option<(Scenario, u64)>, SetError> {
        let mut s = self.scenario.clone();
        let mut run_seed = self.tick_seed.unwrap_or(s.seed);
        match parse_client_name(change.name()) {
            Some((k, rest)) => {
                if k? != self.client {
                    return Ok(None);
                }
                s.apply_change_for_client(&ParamChange::new(rest, change.value().clone()))?;
            }
            None => s.apply_change(change)?,
        }
        if change.name() == "seed" {
            run_seed = s.seed;
            s.seed = client_seed(s.seed, self.client);
        }
        self.check_flow_fixed_off(&s)?;
        Ok(Some((s, run_seed)))
    }

    /// Refuses settings that switch flow control on after [`Self::fix_flow_off`] took effect
    /// (its filter missed the samples since); anything else passes.
    pub fn check_flow_fixed_off(&self, scenario: &Scenario) -> Result<(), SetError> {
        if scenario.flow.enabled && self.flow_filter_idle {
            return Err(SetError(FLOW_FIXED_OFF.into()));
        }
        Ok(())
    }

    /// [`Self::restart`], reported (when this driver records) as `ParamChanged` named and valued
    /// by `marker`.
    fn rebuild(
        &mut self,
        now: SimTime,
        strategy: Option<Strategy>,
        (name, value): (&str, &str),
        events: &mut Vec<Event>,
    ) -> LinkUpdate {
        self.touch(now);
        if let Some(s) = strategy {
            self.scenario.strategy = s;
        }
        self.peer = (self.factory)(&self.scenario, self.side);
        self.adopt_peer();
        self.timing = self.tick_timing_now();
        self.flow = FlowControl::new(self.scenario.flow);
        self.last_tick = None;
        self.set_ticker(Ticker::on_grid(&self.timing, self.scenario.send_rate_pps, now));
        self.next_stats = now;
        self.sync_due();
        if self.records {
            events.push(Event::new(now, EventKind::ParamChanged { name: name.into(), value: value.into() }));
        }
        LinkUpdate::Rebuild
    }
}
