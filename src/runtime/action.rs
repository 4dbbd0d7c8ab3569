//! Applying an action to a running simulation and logging it: the one path every live run, a
//! headless run (its drain) and a re-run take.
//!
//! [`apply_and_record`] checks the action against the parameter table (a `set` must hold a value
//! in its parameter's range: a number compared with the table, no text read again), applies it at
//! the simulation's current instant (after everything due then, [`Simulation::apply`]) and appends
//! it to the lane's action log with that instant. A re-run applies the logged actions at the same
//! instants in the same order, so an in-process recording re-runs to identical events.

use ackscope_protocol::{Action, ParamChange, Simulation, Step};
use anyhow::{anyhow, Result};

use crate::params;

/// Checks `action` against the parameter table, then applies it to `sim` now. A refused action
/// changes nothing.
fn check_and_apply(sim: &mut Simulation, action: &Action) -> Result<()> {
    if let Action::Set(change) = action {
        crate::params::refuse_during_run(change.name())?;
        params::check(change)?;
    }
    sim.apply(action).map_err(|e| anyhow!("{e}"))
}

/// Applies one parameter change to a running simulation (reported as a `ParamChanged` event).
pub fn apply_change(sim: &mut Simulation, change: &ParamChange) -> Result<()> {
    check_and_apply(sim, &Action::Set(change.clone()))
}

/// Applies `action` at the simulation's current instant and appends it to `log`: the one way
/// every live, scripted-by-the-app (drain) or re-run action is made, so a re-run from the header
/// repeats it exactly.
pub fn apply_and_record(sim: &mut Simulation, log: &mut Vec<Step>, action: Action) -> Result<()> {
    check_and_apply(sim, &action)?;
    log.push(Step::new(sim.now(), action));
    Ok(())
}
