//! Setting any scenario parameter by its dotted name (`link.a_to_b.loss_percent`,
//! `glenn.resend_delay_ms`, ...), the names `ParamChanged` events, `--set` and `set` actions use.
//! `clients` and `client.K.NAME` are the clients' ([`super::clients`]).
//!
//! The scenario is turned into a JSON tree, the named leaf is replaced and the tree is turned
//! back, so every serde field is settable without a hand-kept list, and a value of the wrong type
//! is refused by the same deserializer that reads scenario files. `link.X` (with X not `a_to_b`
//! or `b_to_a`) sets X on both directions. It lives here, beside the scenario, because scripted
//! `set` actions run inside the driver in every transport; valid *ranges* are the app's parameter
//! table's business, and the endpoints stay safe whatever value arrives (they clamp).

use serde_json::Value;

use super::Scenario;
use crate::names::nearest_name;

/// Why a dotted-name assignment was refused; the scenario is left as it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SetError(pub String);

fn err(text: String) -> SetError {
    SetError(text)
}

/// Parses the right-hand side: JSON if it parses (numbers, booleans, quoted strings, `null`),
/// else a plain string (a name such as `normal`).
pub fn parse_value(raw: &str) -> Value {
    let raw = raw.trim();
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

fn set_path(root: &mut Value, path: &[&str], value: &Value, full: &str) -> Result<(), SetError> {
    let mut node = root;
    for (i, key) in path.iter().enumerate() {
        let obj = node.as_object_mut().ok_or_else(|| err(format!("unknown parameter '{full}'")))?;
        if !obj.contains_key(*key) {
            let known: Vec<&str> = obj.keys().map(String::as_str).collect();
            let hint =
                nearest_name(key, known.iter().copied()).map(|n| format!(", did you mean '{n}'?")).unwrap_or_default();
            return Err(err(format!(
                "unknown parameter '{full}' (no '{key}'{hint}; known here: {})",
                known.join(", ")
            )));
        }
        let child = obj.get_mut(*key).expect("checked above");
        if i + 1 == path.len() {
            if child.is_object() || child.is_array() {
                return Err(err(format!("'{full}' is a group of parameters, not a value")));
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
                return Err(err(format!("'{full}' expects {} but got {value}", kind(child))));
            }
            *child = value.clone();
            return Ok(());
        }
        node = child;
    }
    Err(err(format!("unknown parameter '{full}'")))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Number(_) => "a number",
        Value::Bool(_) => "true or false",
        Value::String(_) => "a name",
        _ => "a value",
    }
}

/// The dotted leaf paths `name` stands for: `link.X` means both directions.
pub fn expand_name(name: &str) -> Vec<Vec<&str>> {
    let parts: Vec<&str> = name.trim().split('.').collect();
    if parts.len() >= 2 && parts[0] == "link" && !matches!(parts[1], "a_to_b" | "b_to_a") {
        ["a_to_b", "b_to_a"]
            .into_iter()
            .map(|dir| {
                let mut p = vec!["link", dir];
                p.extend_from_slice(&parts[1..]);
                p
            })
            .collect()
    } else {
        vec![parts]
    }
}

impl Scenario {
    /// Sets the parameter `name` (dotted) to `value` (text: a number, `true`/`false`, a name or
    /// `null` for an optional one). On error the scenario is unchanged.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), SetError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(err("a parameter name is empty".into()));
        }
        if let Some(done) = self.set_clients_param(name, value) {
            return done;
        }
        let value = parse_value(value);
        if let Value::Number(n) = &value {
            if n.as_f64().is_some_and(|v| !v.is_finite()) {
                return Err(err(format!("'{name}' must be a finite number, got {value}")));
            }
        }
        let mut tree = serde_json::to_value(&*self).map_err(|e| err(format!("scenario to JSON: {e}")))?;
        // A file leaves the server's settings out while they are the defaults: they are
        // settable all the same.
        if let Value::Object(o) = &mut tree {
            if !o.contains_key("server") {
                let server = serde_json::to_value(self.server).map_err(|e| err(format!("scenario to JSON: {e}")))?;
                o.insert("server".into(), server);
            }
        }
        for path in expand_name(name) {
            set_path(&mut tree, &path, &value, name)?;
        }
        *self = serde_json::from_value(tree).map_err(|e| err(format!("bad value for '{name}': {e}")))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_names_set_both_directions_or_one_and_refusals_leave_the_scenario_alone() {
        let mut s = Scenario::default();
        s.set("link.loss_percent", "12.5").unwrap();
        assert_eq!((s.link.a_to_b.loss_percent, s.link.b_to_a.loss_percent), (12.5, 12.5));
        s.set("link.b_to_a.latency_ms", "80").unwrap();
        assert_eq!((s.link.a_to_b.latency_ms, s.link.b_to_a.latency_ms), (50.0, 80.0));
        s.set("a.tick_phase_ms", "4.5").unwrap();
        assert_eq!(s.a.tick_phase_ms, Some(4.5));
        s.set("a.tick_phase_ms", "null").unwrap();
        assert_eq!(s.a.tick_phase_ms, None);
        let before = s.clone();
        let e = s.set("link.los_percent", "3").unwrap_err().0;
        assert!(e.contains("did you mean 'loss_percent'"), "{e}");
        assert!(s.set("script", "1").unwrap_err().0.contains("group"), "the script is not a value");
        assert!(s.set("seed", "-1").unwrap_err().0.contains("bad value for 'seed'"));
        assert_eq!(s, before);
    }
}
