//! Setting any scenario parameter by its dotted name (`link.a_to_b.loss_percent`,
//! `glenn.resend_delay_ms`, ...), the names `ParamChanged` events, `--set` and `set` actions use.
//! `clients` and `client.K.NAME` are the clients' ([`super::clients`]).
//!
//! A [`ParamChange`] names a parameter and carries its typed value; [`Scenario::apply_change`]
//! finds the typed field each name stands for ([`super::fields`]) and writes the value there, so a
//! value of the wrong kind ("fast" for a number) is refused by name before anything changes.
//! `link.X` (with X not `a_to_b`, `b_to_a` or a setting of the whole link such as `trace`) sets X
//! on both directions. It lives here, beside the
//! scenario, because scripted `set` actions run inside the driver in every transport; valid
//! *ranges* are the app's parameter table's business, and the endpoints stay safe whatever value
//! arrives (they clamp).

use super::clients::parse_client_name;
use super::fields::{self, Misfit, GROUPS, TOP, WHOLE_LINK};
use super::Scenario;
use super::SetError;
use crate::action::{ParamChange, ParamValue};
use crate::link::Replay;
use crate::names::nearest_name;

fn err(text: String) -> SetError {
    SetError(text)
}

/// The dotted leaf paths `name` stands for: `link.X` means both directions.
pub fn expand_name(name: &str) -> Vec<Vec<&str>> {
    let parts: Vec<&str> = name.trim().split('.').collect();
    let whole = parts.len() == 2 && WHOLE_LINK.contains(&parts[1]);
    if parts.len() >= 2 && parts[0] == "link" && !matches!(parts[1], "a_to_b" | "b_to_a") && !whole {
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

/// Why `path` (one leaf of `full`) names nothing: a group, or an unknown name with the nearest
/// known one and the names known there.
fn unknown(full: &str, path: &str) -> SetError {
    if GROUPS.iter().any(|(g, _)| *g == path) {
        return err(format!("'{full}' is a group of parameters, not a value"));
    }
    let within = GROUPS
        .iter()
        .filter(|(g, _)| path.strip_prefix(g).is_some_and(|rest| rest.starts_with('.')))
        .max_by_key(|(g, _)| g.len());
    let (key, known): (&str, Vec<&str>) = match within {
        Some((g, keys)) => {
            // The group's own fields and the groups inside it (`ack` holds `stats`).
            let inner = GROUPS.iter().filter_map(|(h, _)| h.strip_prefix(g)?.strip_prefix('.'));
            (&path[g.len() + 1..], keys.iter().copied().chain(inner).collect())
        }
        None => {
            let mut top: Vec<&str> = TOP.to_vec();
            for (g, _) in GROUPS {
                let first = g.split('.').next().unwrap_or(g);
                if !top.contains(&first) {
                    top.push(first);
                }
            }
            (path.split('.').next().unwrap_or(path), top)
        }
    };
    let first = key.split('.').next().unwrap_or(key);
    let hint = nearest_name(key, known.iter().copied())
        .or_else(|| nearest_name(first, known.iter().copied()))
        .map(|n| format!(", did you mean '{n}'?"))
        .unwrap_or_default();
    err(format!("unknown parameter '{full}' (no '{key}'{hint}; known here: {})", known.join(", ")))
}

fn misfit(full: &str, value: &ParamValue, m: Misfit) -> SetError {
    match m {
        Misfit::Expects(kind) => err(format!("'{full}' expects {kind} but got {value}")),
        Misfit::Bad(why) => err(format!("bad value for '{full}': {why}")),
    }
}

impl Scenario {
    /// Applies `change`: its value goes into every field its name stands for, or, when any of
    /// them refuses it (unknown name, a value of the wrong kind or out of the field's type), into
    /// none, and the scenario is unchanged.
    pub fn apply_change(&mut self, change: &ParamChange) -> Result<(), SetError> {
        let name = change.name();
        if name.is_empty() {
            return Err(err("a parameter name is empty".into()));
        }
        if let Some(done) = self.set_clients_param(change) {
            return done;
        }
        let value = change.value();
        let paths: Vec<String> = expand_name(name).into_iter().map(|p| p.join(".")).collect();
        let trace_before = self.link.trace.clone();
        for path in &paths {
            let slot = fields::slot(self, path).ok_or_else(|| unknown(name, path))?;
            slot.check(value).map_err(|m| misfit(name, value, m))?;
        }
        for path in &paths {
            let slot = fields::slot(self, path).ok_or_else(|| unknown(name, path))?;
            slot.set(value).map_err(|m| misfit(name, value, m))?;
        }
        if self.link.trace != trace_before {
            // Another trace must be read again (the app reads it when a run starts).
            self.link.replay = Replay::default();
        }
        Ok(())
    }

    /// Sets the parameter `name` (dotted) to `value` written as text (a number, `true`/`false`,
    /// a name or `null` for an optional one): [`Self::apply_change`] of the parsed change. On
    /// error the scenario is unchanged.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), SetError> {
        self.apply_change(&ParamChange::parse(name, value))
    }

    /// The value of the parameter `name` (dotted; `link.X` reads the A->B direction; `clients`
    /// the number of clients, `client.K.NAME` client K's), or `None` for a name that is not a
    /// value.
    pub fn value(&self, name: &str) -> Option<ParamValue> {
        if name.trim() == "clients" {
            return Some(ParamValue::Int(self.clients.total().into()));
        }
        if let Some((k, rest)) = parse_client_name(name) {
            return self.for_client(k.ok()?).ok()?.value(rest);
        }
        let path = expand_name(name).into_iter().next()?.join(".");
        fields::get(self, &path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::JitterDistribution;
    use crate::scenario::TickPhase;
    use crate::Strategy;

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
        assert!(s.set("link", "3").unwrap_err().0.contains("group"), "{:?}", s.set("link", "3"));
        assert!(s.set("seed", "-1").unwrap_err().0.contains("bad value for 'seed'"));
        assert!(s.set("send_rate_pps", "fast").unwrap_err().0.contains("expects a number"));
        assert!(s.set("glenn.rtt_resend", "1").unwrap_err().0.contains("expects true or false"));
        assert!(s.set("link.jitter_distribution", "wobbly").unwrap_err().0.contains("wobbly"));
        assert!(s.set("link.queue_bytes", "1.5").unwrap_err().0.contains("whole number"));
        assert!(s.set("link.latency_ms", "inf").unwrap_err().0.contains("finite"));
        let e = s.set("glen.resend_delay_ms", "3").unwrap_err().0;
        assert!(e.contains("did you mean 'glenn'"), "{e}");
        let e = s.set("ack.stat.loss_window", "3").unwrap_err().0;
        assert!(e.contains("did you mean 'stats'"), "{e}");
        assert_eq!(s, before);
    }

    #[test]
    fn typed_changes_reach_every_kind_of_field() {
        let mut s = Scenario::default();
        let apply = |s: &mut Scenario, name: &str, v: ParamValue| s.apply_change(&ParamChange::new(name, v)).unwrap();
        apply(&mut s, "seed", ParamValue::Int(u64::MAX.into()));
        apply(&mut s, "link.a_to_b.jitter_distribution", "normal".into());
        apply(&mut s, "tick_phase", "lockstep".into());
        apply(&mut s, "strategy", "ue4".into());
        apply(&mut s, "dnm.stats.loss_window", 300.0.into());
        apply(&mut s, "rellikt.stats.rtt_filter", "rellikt".into());
        apply(&mut s, "ue4.initial_packet_seq", 16383.0.into());
        apply(&mut s, "flow.enabled", true.into());
        assert_eq!(s.seed, u64::MAX);
        assert_eq!(s.link.a_to_b.jitter_distribution, JitterDistribution::Normal);
        assert_eq!(s.link.b_to_a.jitter_distribution, JitterDistribution::Uniform);
        assert_eq!((s.tick_phase, s.strategy), (TickPhase::Lockstep, Strategy::Ue4));
        assert_eq!((s.dnm.stats.loss_window, s.ack.stats.loss_window), (300, 256));
        assert_eq!((s.ue4.initial_packet_seq, s.flow.enabled), (16383, true));
        assert_eq!(s.value("seed"), Some(ParamValue::Int(u64::MAX.into())));
        assert_eq!(s.value("link.jitter_distribution"), Some("normal".into()));
        assert_eq!(s.value("link.b_to_a.jitter_distribution"), Some("uniform".into()));
        assert_eq!(s.value("a.tick_phase_ms"), Some(ParamValue::Unset));
        assert_eq!(s.value("link"), None);
        // A u16 field takes nothing beyond 65535, and the scenario stays as it was.
        let before = s.clone();
        assert!(s.apply_change(&ParamChange::new("ue4.initial_packet_seq", 65536.0)).is_err());
        assert_eq!(s, before);
    }

    #[test]
    fn the_trace_is_one_setting_of_the_whole_link_and_its_loaded_copy_survives_other_changes() {
        use crate::link::{DirTrace, LinkTrace, Replay};
        let mut s = Scenario::default();
        s.set("link.trace", "\"player.pcapng\"").unwrap();
        assert_eq!(s.link.trace.as_deref(), Some("player.pcapng"));
        s.set("link.trace", "other.pcapng").unwrap();
        assert_eq!(s.link.trace.as_deref(), Some("other.pcapng"), "a plain word is a name too");
        let trace = LinkTrace::new("other.pcapng", DirTrace::default(), DirTrace::default());
        s.link.replay = Replay(Some(std::sync::Arc::new(trace)));
        s.set("link.loss_percent", "3").unwrap();
        assert!(s.link.replay.trace().is_some(), "kept across an unrelated change");
        s.set("link.trace", "third.pcapng").unwrap();
        assert!(s.link.replay.trace().is_none(), "another trace must be read again");
        s.set("link.trace", "null").unwrap();
        assert_eq!(s.link.trace, None);
        assert!(s.set("link.a_to_b.trace", "x").is_err(), "the trace is not per direction");
    }
}
