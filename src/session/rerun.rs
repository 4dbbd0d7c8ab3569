//! Re-running a recording from its header: the same scenario, the same actions at the same
//! instants, through the live path's [`apply_and_record`], so an in-process recording re-runs to
//! identical events.

use ackscope_protocol::{Event, Scenario, SimTime, Simulation, Step};
use anyhow::{Context, Result};

use super::Session;
use crate::runtime::action::apply_and_record;

/// Runs `scenario` on virtual time until `until`, applying `actions` at their instants (those
/// after `until` are left out). Returns the simulation at `until`, its events and the log of the
/// actions applied.
pub fn run_lane(scenario: &Scenario, actions: &[Step], until: SimTime) -> Result<(Simulation, Vec<Event>, Vec<Step>)> {
    let mut scenario = scenario.clone();
    crate::fit::links::resolve(&mut scenario)?;
    run_lane_on(Simulation::new(scenario), actions, until)
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
