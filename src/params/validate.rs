//! Checking a whole scenario, its script and action logs against the parameter table, before
//! anything runs (a session's lanes: `Session::validate`).
//!
//! A file can hold any value serde accepts: NaN, infinities, a buffer of 0, a rate of 1e9. Each is
//! refused here with its dotted name and valid range ("'workload.snapshot_rate_hz' must be a
//! finite number from 0 to 120 Hz, got NaN"), the file named by the caller, instead of failing
//! after the run or not at all. Every leaf of the scenario has a row in the table (a test keeps it
//! so), so nothing escapes the check.

use ackscope_protocol::scenario::fields::leaf_names;
use ackscope_protocol::{Action, ParamValue, Scenario, Step, Strategy};
use anyhow::{anyhow, bail, Result};

use super::{find, overrides};

/// A leaf of the scenario: its dotted name and, for a number, its value (`None` for an unset
/// optional number or a value that is not a number).
pub struct Leaf {
    pub name: String,
    pub number: Option<f64>,
    /// True for a number or an unset optional number.
    pub numeric: bool,
}

/// Every leaf of `scenario` except the script, by dotted name (`link.a_to_b.loss_percent`), read
/// through the scenario's typed fields (a NaN stays a NaN, an unset optional number unset).
pub fn leaves(scenario: &Scenario) -> Vec<Leaf> {
    leaf_names()
        .into_iter()
        .map(|name| {
            let value = scenario.value(&name);
            let numeric = matches!(value, Some(ParamValue::Int(_) | ParamValue::Float(_) | ParamValue::Unset));
            Leaf { number: value.and_then(|v| v.as_f64()), numeric, name }
        })
        .collect()
}

/// Refuses a scenario with any value outside its parameter's range, or a script step that is not
/// valid; the message names the parameter (or step) and the range.
pub fn scenario(s: &Scenario) -> Result<()> {
    for leaf in leaves(s) {
        let Some(param) = find(&leaf.name) else { continue };
        if leaf.numeric {
            param.check_value(&leaf.name, leaf.number)?;
        }
    }
    clients(s)?;
    if let Some(i) = s.script.iter().position(|step| matches!(step.action, Action::Transport(_))) {
        bail!(
            "script[{i}]: `transport` cannot be scripted: it is the window's live switch between the \
             simulation and real sockets, recorded in a session's `actions` (use `restart` to rebuild the endpoints)"
        );
    }
    steps(s, &s.script, "script")
}

/// Checks each step of `list` (named `what` in messages) against the table, `base` being the
/// scenario they apply to.
pub fn steps(base: &Scenario, list: &[Step], what: &str) -> Result<()> {
    for (i, step) in list.iter().enumerate() {
        action(base, &step.action).map_err(|e| anyhow!("{what}[{i}] ({:.6} s): {e}", step.at.as_secs_f64()))?;
    }
    Ok(())
}

/// Refuses an action whose parameter or value the table refuses.
pub fn action(base: &Scenario, a: &Action) -> Result<()> {
    match a {
        Action::Set(change) if change.is_strategy() => {
            Strategy::parse(&change.value().to_string()).map_err(|e| anyhow!(e))?;
        }
        // The table's range, then the field's type, on a copy.
        Action::Set(change) => {
            super::refuse_during_run(change.name())?;
            super::apply(&mut base.clone(), change)?
        }
        Action::Link { set, .. } => {
            for (field, v) in set.fields() {
                let name = format!("link.{field}");
                if let (Some(p), Some(v)) = (find(&name), v) {
                    p.check_value(&name, Some(v))?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Refuses clients the run cannot have ([`Scenario::check_clients`]) and any group or client
/// setting outside its parameter's range, naming the group or client.
fn clients(s: &Scenario) -> Result<()> {
    s.check_clients().map_err(|e| anyhow!("{e}"))?;
    let mut settings: Vec<(String, &str, &str)> = Vec::new();
    if let ackscope_protocol::Clients::Groups(groups) = &s.clients {
        for (i, g) in groups.iter().enumerate() {
            for (field, v) in g.link.fields() {
                let name = format!("link.{field}");
                if let (Some(p), Some(v)) = (find(&name), v) {
                    p.check_value(&name, Some(v)).map_err(|e| anyhow!("clients[{i}]: {e}"))?;
                }
            }
            settings.extend(g.set.iter().map(|(n, v)| (format!("clients[{i}]"), n.as_str(), v.as_str())));
        }
    }
    for (k, list) in &s.client {
        settings.extend(list.iter().map(|(n, v)| (format!("client.{k}"), n.as_str(), v.as_str())));
    }
    for (place, name, value) in settings {
        if name != "preset" {
            overrides::apply(&mut s.clone(), &format!("{name}={value}")).map_err(|e| anyhow!("{place}: {e:#}"))?;
        }
    }
    Ok(())
}
