//! `--set NAME=VALUE` overrides by dotted name, for any scenario parameter: the text edge.
//!
//! The text is read once into a typed [`ParamChange`], which [`super::apply`] holds to the
//! parameter table's range (so a value the window's slider could not reach is refused here too,
//! with the range in the message) and the protocol writes into the scenario's typed field
//! ([`Scenario::apply_change`]: a value of the wrong kind is refused by name; `link.X` sets both
//! directions).

use ackscope_protocol::{ParamChange, ParamValue, Scenario};
use anyhow::{anyhow, Result};

/// Reads `NAME=VALUE` into a change (nothing is checked but the shape). A path parameter's value
/// is a name whatever it looks like (`123`, `true`); empty or `null` unsets it.
pub fn parse(assignment: &str) -> Result<ParamChange> {
    let change = ParamChange::parse_assignment(assignment).map_err(|e| anyhow!("--set {e}"))?;
    if super::find(change.name()).is_some_and(|p| matches!(p.kind, super::Kind::Path)) {
        let raw = assignment.split_once('=').map_or("", |(_, v)| v.trim());
        if !matches!(raw, "" | "null") {
            return Ok(ParamChange::new(change.name(), ParamValue::Name(raw.to_string())));
        }
    }
    Ok(change)
}

/// Applies one `NAME=VALUE` override to `scenario` (unchanged when refused).
pub fn apply(scenario: &mut Scenario, assignment: &str) -> Result<()> {
    super::apply(scenario, &parse(assignment)?)
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
