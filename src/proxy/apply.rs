//! Link settings per client: the seed and links a client starts with, and how a scripted step
//! or a live edit changes them.
//!
//! Both rules live here alone: [`client_seed`] and [`client_links`] (client groups and
//! `client.K.link...` settings, by order of arrival) are what a client gets on arrival,
//! [`apply_to_pair`] what an action does to one client's pair. The proxy's events and the re-run of its link decisions
//! ([`super::rerun`]) both go through these functions, so they agree by construction.

use ackscope_protocol::{Action, ClientId, Dir, LinkConfig, LinkPair, Scenario};
use anyhow::{anyhow, Result};

/// The seed of client `client`'s links.
///
/// Client 1 takes the scenario's seed itself (a proxy with one client draws exactly the trace a
/// simulation of that scenario draws); client k > 1 a seed mixed from the scenario's seed and k
/// only, so a client's trace does not depend on how many others came before or after it.
pub fn client_seed(seed: u64, client: ClientId) -> u64 {
    if client <= 1 {
        return seed;
    }
    splitmix(seed ^ splitmix(0x636C_6965_6E74_0000 ^ client as u64)) // "client"
}

/// SplitMix64's output function: a well-mixed 64-bit value from any input.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The link settings client `client` starts with under `scenario` (the settings in force when it
/// arrives): the run's link, then the link of the client group it falls in by order of arrival
/// (the scenario's `clients` groups: the first `count` clients to arrive are the first group's,
/// and so on), then its own `client.K.link...` settings, exactly as a simulated client K gets
/// them ([`Scenario::for_client`]). A client beyond every group has the run's link.
pub fn client_links(scenario: &Scenario, client: ClientId) -> LinkPair {
    // The scenario was checked when the proxy started (a group or client setting that does not
    // apply is refused there), so this falls back only for a scenario built by hand.
    scenario.for_client(client).map(|s| s.link).unwrap_or_else(|_| scenario.link.clone())
}

/// Whether a `--set` name changes anything the proxy runs: only link settings do (there are no
/// endpoints, workload or strategy in a proxy).
pub fn is_link_setting(name: &str) -> bool {
    let n = name.trim();
    n == "link" || n.starts_with("link.")
}

/// A changed link pair and each change as `(dotted name, value)`.
pub type PairChange = (LinkPair, Vec<(String, String)>);

/// What `action` makes of one client's link pair: the new pair and each change as the
/// `ParamChanged` events report it (dotted name, value), or `None` when the action is not a link
/// change (a scripted burst, restart or strategy change means nothing to a proxy).
///
/// `base` supplies everything but the links, for the parameter table's checks; a value the table
/// refuses is an error and changes nothing.
pub fn apply_to_pair(base: &Scenario, pair: LinkPair, action: &Action) -> Result<Option<PairChange>> {
    match action {
        Action::Set(change) if is_link_setting(change.name()) => {
            let mut s = Scenario { link: pair, script: Vec::new(), ..base.clone() };
            s.apply_change(change).map_err(|e| anyhow!("{}", e.0))?;
            crate::params::validate::scenario(&s)?;
            Ok(Some((s.link, vec![(change.name().to_string(), change.value().to_string())])))
        }
        Action::Link { dir, set } => {
            let mut out = pair;
            let mut changes = Vec::new();
            for d in Dir::BOTH {
                if !dir.includes(d) {
                    continue;
                }
                let label = match d {
                    Dir::AtoB => "a_to_b",
                    Dir::BtoA => "b_to_a",
                };
                for (field, v) in set.apply(out.get_mut(d)) {
                    changes.push((format!("link.{label}.{field}"), v.to_string()));
                }
            }
            let s = Scenario { link: out.clone(), script: Vec::new(), ..base.clone() };
            crate::params::validate::scenario(&s)?;
            Ok(Some((out, changes)))
        }
        _ => Ok(None),
    }
}

/// The pair of configs a client's two links hold now.
pub fn pair_of(a_to_b: &LinkConfig, b_to_a: &LinkConfig) -> LinkPair {
    LinkPair { a_to_b: *a_to_b, b_to_a: *b_to_a, ..LinkPair::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackscope_protocol::{LinkPatch, ParamChange, StepDirection};

    #[test]
    fn client_one_keeps_the_scenario_seed_and_others_differ_from_each_other() {
        assert_eq!(client_seed(42, 1), 42);
        let seeds: std::collections::BTreeSet<u64> = (1..=1000).map(|k| client_seed(42, k)).collect();
        assert_eq!(seeds.len(), 1000);
        assert_ne!(client_seed(42, 2), client_seed(43, 2));
    }

    #[test]
    fn link_sets_and_steps_change_the_pair_and_name_each_change() {
        let base = Scenario::default();
        let set = Action::Set(ParamChange::parse("link.b_to_a.loss_percent", "20"));
        let (pair, ch) = apply_to_pair(&base, base.link.clone(), &set).unwrap().unwrap();
        assert_eq!(pair.b_to_a.loss_percent, 20.0);
        assert_eq!(pair.a_to_b, base.link.a_to_b);
        assert_eq!(ch, vec![("link.b_to_a.loss_percent".to_string(), "20".to_string())]);

        let step = Action::Link {
            dir: StepDirection::AToB,
            set: LinkPatch { latency_ms: Some(80.0), ..LinkPatch::default() },
        };
        let (pair, ch) = apply_to_pair(&base, base.link.clone(), &step).unwrap().unwrap();
        assert_eq!(pair.a_to_b.latency_ms, 80.0);
        assert_eq!(ch, vec![("link.a_to_b.latency_ms".to_string(), "80".to_string())]);

        let bad = Action::Set(ParamChange::parse("link.loss_percent", "250"));
        assert!(apply_to_pair(&base, base.link.clone(), &bad).is_err());
        assert!(apply_to_pair(&base, base.link.clone(), &Action::Restart).unwrap().is_none());
    }
}
