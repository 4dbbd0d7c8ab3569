//! Checking a whole scenario, its script and action logs against the parameter table, before
//! anything runs (a session's lanes: `Session::validate`).
//!
//! A file can hold any value serde accepts: NaN, infinities, a buffer of 0, a rate of 1e9. Each is
//! refused here with its dotted name and valid range ("'workload.snapshot_rate_hz' must be a
//! finite number from 0 to 120 Hz, got NaN"), the file named by the caller, instead of failing
//! after the run or not at all. Every leaf of the scenario has a row in the table (a test keeps it
//! so), so nothing escapes the check.

use ackscope_protocol::{Action, Scenario, Step, Strategy};
use anyhow::{anyhow, bail, Result};
use ron::Value;

use super::{find, overrides};

/// A leaf of the scenario: its dotted name and, for a number, its value (`None` for an unset
/// optional number or a value that is not a number).
pub struct Leaf {
    pub name: String,
    pub number: Option<f64>,
    /// True for a number or an unset optional number.
    pub numeric: bool,
}

/// Every leaf of `scenario` except the script, by dotted name (`link.a_to_b.loss_percent`).
///
/// Read through RON's value tree, which keeps NaN and infinities (JSON would turn them into
/// `null`, indistinguishable from an unset optional number).
pub fn leaves(scenario: &Scenario) -> Vec<Leaf> {
    let tree: Value = ron::to_string(scenario).ok().and_then(|text| ron::from_str(&text).ok()).unwrap_or(Value::Unit);
    let mut out = Vec::new();
    walk(&tree, String::new(), &mut out);
    out
}

fn walk(v: &Value, name: String, out: &mut Vec<Leaf>) {
    match v {
        Value::Map(m) => {
            for (k, child) in m.iter() {
                let Value::String(k) = k else { continue };
                if name.is_empty() && k == "script" {
                    continue;
                }
                let dotted = if name.is_empty() { k.clone() } else { format!("{name}.{k}") };
                walk(child, dotted, out);
            }
        }
        Value::Number(n) => out.push(Leaf { name, number: Some(n.into_f64()), numeric: true }),
        Value::Option(None) => out.push(Leaf { name, number: None, numeric: true }),
        Value::Option(Some(inner)) => walk(inner, name, out),
        _ => out.push(Leaf { name, number: None, numeric: false }),
    }
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
        Action::Set { name, value } if name.trim() == "strategy" => {
            Strategy::parse(value.trim()).map_err(|e| anyhow!(e))?;
        }
        Action::Set { name, value } => overrides::apply(&mut base.clone(), &format!("{name}={value}"))?,
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
