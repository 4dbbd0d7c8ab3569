//! `--set NAME=VALUE` overrides by dotted name, for any scenario parameter.
//!
//! The scenario is turned into a JSON tree, the named leaf is replaced and the tree is turned back,
//! so every serde field is settable without a hand-kept list, and a value of the wrong type is
//! refused by the same deserializer that reads scenario files. `link.X` (with X not `a_to_b` or
//! `b_to_a`) sets X on both directions. A parameter in the table ([`super::PARAMS`]) is also held
//! to its valid range there, so a value the window's slider could not reach is refused here too.

use ackscope_protocol::Scenario;
use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;

/// Parses the right-hand side: JSON if it parses (numbers, booleans, quoted strings), else a string.
fn parse_value(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

fn set_path(root: &mut Value, path: &[&str], value: &Value, full: &str) -> Result<()> {
    let mut node = root;
    for (i, key) in path.iter().enumerate() {
        let obj = node.as_object_mut().ok_or_else(|| anyhow!("unknown parameter '{full}'"))?;
        if !obj.contains_key(*key) {
            let known: Vec<&str> = obj.keys().map(String::as_str).collect();
            bail!("unknown parameter '{full}' (no '{key}'; known here: {})", known.join(", "));
        }
        let child = obj.get_mut(*key).expect("checked above");
        if i + 1 == path.len() {
            if child.is_object() {
                bail!("'{full}' is a group of parameters, not a value");
            }
            let compatible = matches!(
                (&*child, value),
                (Value::Number(_), Value::Number(_))
                    | (Value::Bool(_), Value::Bool(_))
                    | (Value::String(_), Value::String(_))
                    | (Value::Null, _)
                    | (_, Value::Null)
            );
            if !compatible {
                bail!("'{full}' expects {} but got {value}", kind(child));
            }
            *child = value.clone();
            return Ok(());
        }
        node = child;
    }
    unreachable!("path is never empty")
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Number(_) => "a number",
        Value::Bool(_) => "true or false",
        Value::String(_) => "a name",
        _ => "a value",
    }
}

/// Applies one `NAME=VALUE` override to `scenario`.
pub fn apply(scenario: &mut Scenario, assignment: &str) -> Result<()> {
    let (name, raw) =
        assignment.split_once('=').ok_or_else(|| anyhow!("--set expects NAME=VALUE, got '{assignment}'"))?;
    let name = name.trim();
    if name.is_empty() {
        bail!("--set expects NAME=VALUE, got '{assignment}'");
    }
    let checked = match super::find(name) {
        Some(p) => p.check(name, raw)?,
        None => None,
    };
    let value = parse_value(checked.as_deref().unwrap_or(raw).trim());
    let mut tree = serde_json::to_value(&*scenario).context("scenario to JSON")?;
    let parts: Vec<&str> = name.split('.').collect();
    if parts.len() >= 2 && parts[0] == "link" && !matches!(parts[1], "a_to_b" | "b_to_a") {
        for dir in ["a_to_b", "b_to_a"] {
            let mut p = vec!["link", dir];
            p.extend_from_slice(&parts[1..]);
            set_path(&mut tree, &p, &value, name)?;
        }
    } else {
        set_path(&mut tree, &parts, &value, name)?;
    }
    *scenario = serde_json::from_value(tree).map_err(|e| anyhow!("bad value for '{name}': {e}"))?;
    Ok(())
}

/// Applies every override in order.
pub fn apply_all<'a>(scenario: &mut Scenario, assignments: impl IntoIterator<Item = &'a String>) -> Result<()> {
    for a in assignments {
        apply(scenario, a)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_names_apply_to_both_directions_or_one() {
        let mut s = Scenario::default();
        apply(&mut s, "link.loss_percent=12.5").unwrap();
        assert_eq!(s.link.a_to_b.loss_percent, 12.5);
        assert_eq!(s.link.b_to_a.loss_percent, 12.5);
        apply(&mut s, "link.b_to_a.latency_ms=80").unwrap();
        assert_eq!(s.link.b_to_a.latency_ms, 80.0);
        assert_eq!(s.link.a_to_b.latency_ms, 50.0);
        apply(&mut s, "link.burst.p_percent=3").unwrap();
        assert_eq!(s.link.a_to_b.burst.p_percent, 3.0);
        apply(&mut s, "seed=99").unwrap();
        assert_eq!(s.seed, 99);
        apply(&mut s, "link.jitter_distribution=normal").unwrap();
        assert_eq!(s.link.a_to_b.jitter_distribution, ackscope_protocol::JitterDistribution::Normal);
    }

    #[test]
    fn bad_names_and_values_are_refused_with_a_reason() {
        let mut s = Scenario::default();
        let e = apply(&mut s, "link.nope=1").unwrap_err().to_string();
        assert!(e.contains("unknown parameter 'link.nope'"), "{e}");
        let e = apply(&mut s, "send_rate_pps=fast").unwrap_err().to_string();
        assert!(e.contains("expects a number"), "{e}");
        let e = apply(&mut s, "seed=-1").unwrap_err().to_string();
        assert!(e.contains("bad value for 'seed'"), "{e}");
        assert!(apply(&mut s, "noequals").is_err());
        assert!(apply(&mut s, "link=3").is_err());
        assert_eq!(s, Scenario::default(), "a refused override must leave the scenario alone");
    }
}
