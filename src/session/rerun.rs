//! Applying actions to a running simulation and recording them, and re-running a recording from
//! its header.
//!
//! Every action a live run, a headless run or a re-run takes goes through [`apply_and_record`]:
//! checked against the parameter table, applied at the simulation's current instant (after
//! everything due then, [`Simulation::apply`]) and appended to the lane's action log with that
//! instant. A re-run applies the logged actions at the same instants in the same order, so an
//! in-process recording re-runs to identical events.

use ackscope_protocol::{Action, Event, Scenario, SimTime, Simulation, Step};
use anyhow::{anyhow, Context, Result};

use super::Session;
use crate::params;

/// Checks `action` against the parameter table (a `set` must name a parameter and hold a value in
/// its range), then applies it to `sim` now. A refused action changes nothing.
fn check_and_apply(sim: &mut Simulation, action: &Action) -> Result<()> {
    if let Action::Set { name, value } = action {
        // The table's check and `--set`'s type check, on a copy.
        params::overrides::apply(&mut sim.scenario().clone(), &format!("{name}={value}"))?;
    }
    sim.apply(action).map_err(|e| anyhow!("{e}"))
}

/// Applies one parameter change to a running simulation (reported as a `ParamChanged` event).
pub fn apply_change(sim: &mut Simulation, name: &str, value: &str) -> Result<()> {
    check_and_apply(sim, &Action::Set { name: name.to_string(), value: value.to_string() })
}

/// Applies `action` at the simulation's current instant and appends it to `log`: the one way
/// every live, scripted-by-the-app (drain) or re-run action is made, so a re-run from the header
/// repeats it exactly.
pub fn apply_and_record(sim: &mut Simulation, log: &mut Vec<Step>, action: Action) -> Result<()> {
    check_and_apply(sim, &action)?;
    log.push(Step::new(sim.now(), action));
    Ok(())
}

/// Runs `scenario` on virtual time until `until`, applying `actions` at their instants (those
/// after `until` are left out). Returns the simulation at `until`, its events and the log of the
/// actions applied.
pub fn run_lane(scenario: &Scenario, actions: &[Step], until: SimTime) -> Result<(Simulation, Vec<Event>, Vec<Step>)> {
    run_lane_on(Simulation::new(scenario.clone()), actions, until)
}

/// [`run_lane`] on a simulation the caller built for the lane's scenario (endpoints wrapped in
/// a wire tap and a peer factory that taps the ones a restart builds, for the pcapng export).
pub fn run_lane_on(
    mut sim: Simulation,
    actions: &[Step],
    until: SimTime,
) -> Result<(Simulation, Vec<Event>, Vec<Step>)> {
    let mut events = Vec::new();
    let mut log = Vec::new();
    let mut sorted: Vec<&Step> = actions.iter().filter(|a| a.at <= until).collect();
    sorted.sort_by_key(|a| a.at);
    for step in sorted {
        sim.run_until(step.at);
        apply_and_record(&mut sim, &mut log, step.action.clone())
            .with_context(|| format!("action at {:.6} s ({})", step.at.as_secs_f64(), step.action))?;
        events.extend(sim.drain_events());
    }
    sim.run_until(until);
    events.extend(sim.drain_events());
    Ok((sim, events, log))
}

/// Re-runs a session's first lane from its header on virtual time: the same scenario, the same
/// actions at the same instants, for the same duration. For an in-process recording the events
/// are identical.
pub fn rerun(session: &Session) -> Result<Vec<Event>> {
    refuse_other_origins(session)?;
    let (_, events, _) = run_lane(&session.scenario, &session.actions, SimTime(session.duration_us))?;
    Ok(events)
}

/// Re-runs every lane of a session (both in A/B) and returns the session with the new events.
pub fn rerun_all(session: &Session) -> Result<Session> {
    refuse_other_origins(session)?;
    let until = SimTime(session.duration_us);
    let mut out = session.header();
    for (i, (scenario, actions)) in session.lanes().into_iter().enumerate() {
        let (_, events, log) = run_lane(&scenario, actions, until).with_context(|| format!("lane {}", i + 1))?;
        if i == 0 {
            (out.events, out.actions) = (events, log);
        } else {
            (out.ab_events, out.ab_actions) = (events, log);
        }
    }
    Ok(out)
}

/// Only a simulated recording can be run again: a stream, a capture or a proxy's events are all
/// there is of them.
fn refuse_other_origins(session: &Session) -> Result<()> {
    match &session.origin {
        Some(o) if !session.is_simulated() => {
            anyhow::bail!("a recording of {} has no scenario to run again", o.describe())
        }
        _ => Ok(()),
    }
}
