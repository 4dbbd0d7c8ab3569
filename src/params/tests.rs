//! The table against the scenario it describes: every name settable, every default in range, every
//! end of every range handled by the strategies it concerns, and `--set` held to the ranges.

use ackscope_protocol::{ParamChange, Scenario, Side, Simulation, Strategy};

use super::overrides::apply;
use super::{find, refuse_during_run, Kind, PARAMS};

/// The scenario's current value of `name` as text (`link.X` reads A->B), read through its typed
/// field.
fn current(s: &Scenario, name: &str) -> String {
    let value = s.value(name).unwrap_or_else(|| panic!("'{name}' is not a leaf of the scenario"));
    value.to_string()
}

#[test]
fn every_row_names_a_scenario_leaf_whose_default_is_valid() {
    let s = Scenario::default();
    // File paths have their own tests (`super::link_file`, `crate::fit::links`): link.trace is
    // unset by default, link.file names no field of the scenario.
    for p in PARAMS.iter().filter(|p| !matches!(p.kind, Kind::Path)) {
        let value = current(&s, p.name);
        let mut t = s.clone();
        apply(&mut t, &format!("{}={value}", p.name)).unwrap_or_else(|e| panic!("{}: {e:#}", p.name));
        assert_eq!(t, s, "{} = its default changes the scenario", p.name);
        if let Kind::Choice(names) = p.kind {
            assert!(names().contains(&value.as_str()), "{}: default {value} not among the choices", p.name);
            for n in names() {
                apply(&mut t, &format!("{}={n}", p.name)).unwrap_or_else(|e| panic!("{}={n}: {e:#}", p.name));
            }
        }
        assert!(!p.tip.contains('|') && !p.label.is_empty(), "{}: a tip breaks README's table", p.name);
    }
    let names: std::collections::BTreeSet<&str> = PARAMS.iter().map(|p| p.name).collect();
    assert_eq!(names.len(), PARAMS.len(), "a name is in the table twice");
}

#[test]
fn the_names_readme_listed_for_set_are_all_in_the_table() {
    for name in [
        "seed",
        "strategy",
        "send_rate_pps",
        "link.latency_ms",
        "link.jitter_ms",
        "link.jitter_distribution",
        "link.loss_percent",
        "link.burst.p_percent",
        "link.burst.r_percent",
        "link.burst.loss_in_bad_percent",
        "link.duplicate_percent",
        "link.reorder_percent",
        "link.bandwidth_kbps",
        "link.queue_bytes",
        "link.mtu_bytes",
        "link.a_to_b.latency_ms",
        "link.b_to_a.loss_percent",
        "glenn.resend_delay_ms",
        "glenn.rtt_resend",
        "glenn.packet_budget_bytes",
        "glenn.max_messages_per_packet",
        "ue4.net_speed_bytes_per_sec",
        "workload.chunk_kib",
        "workload.snapshot_mode",
        "chunk.bandwidth_kbps",
        "chunk.resend_delay_ms",
        "chunk.rtt_resend",
        "chunk.initial_burst",
        "flow.enabled",
        "dnm.timeout_ms",
        "dnm.stats.loss_window",
        "rellikt.loss_timeout_ms",
        "rellikt.stats.rtt_filter",
        "ack.ack_expiry_ms",
    ] {
        assert!(find(name).is_some(), "'{name}' is not in the table");
    }
}

#[test]
fn set_refuses_values_outside_the_range_naming_it() {
    let mut s = Scenario::default();
    let e = apply(&mut s, "link.loss_percent=150").unwrap_err().to_string();
    assert!(e.contains("'link.loss_percent'") && e.contains("from 0 to 100 %"), "{e}");
    let e = apply(&mut s, "link.b_to_a.latency_ms=-5").unwrap_err().to_string();
    assert!(e.contains("'link.b_to_a.latency_ms'") && e.contains("from 0 to 1000 ms"), "{e}");
    for bad in ["NaN", "inf", "-inf", "infinity"] {
        let e = apply(&mut s, &format!("send_rate_pps={bad}")).unwrap_err().to_string();
        assert!(e.contains("finite number") && e.contains("'send_rate_pps'"), "{bad}: {e}");
    }
    let e = apply(&mut s, "link.queue_bytes=70000.5").unwrap_err().to_string();
    assert!(e.contains("whole numbers"), "{e}");
    let e = apply(&mut s, "rellikt.stats.loss_window=0").unwrap_err().to_string();
    assert!(e.contains("'rellikt.stats.loss_window'"), "{e}");
    assert_eq!(s, Scenario::default(), "a refused value must leave the scenario alone");
    apply(&mut s, "link.loss_percent=100").unwrap();
    apply(&mut s, "link.queue_bytes=1e6").unwrap();
    assert_eq!(s.link.b_to_a.queue_bytes, 1_000_000);
}

/// The strategies a parameter concerns.
fn strategies_for(name: &str) -> Vec<Strategy> {
    let only = |s: Strategy| vec![s];
    match name.split('.').next().unwrap_or("") {
        "glenn" | "flow" => only(Strategy::Glenn),
        "ue4" => only(Strategy::Ue4),
        "dnm" => only(Strategy::Dnm),
        "rellikt" => only(Strategy::Rellikt),
        "hybrid" => only(Strategy::Hybrid),
        "chunk" => vec![Strategy::Chunks, Strategy::Fragments],
        "payload_bytes" => only(Strategy::Acks),
        _ => Strategy::all().collect(),
    }
}

/// Runs `scenario` for a few seconds with a burst and a chunk, then sets `name=value` live and
/// runs on: no panic, and time advanced.
fn run_with(mut scenario: Scenario, name: &str, value: &str) {
    scenario.flow.enabled = name.starts_with("flow.");
    scenario.workload.chunk_kib = scenario.workload.chunk_kib.min(64);
    let mut sim = Simulation::new(scenario);
    sim.burst(Side::A);
    sim.send_chunk(Side::A, 16 * 1024);
    sim.run_for_secs(1.0);
    let change = ParamChange::parse(name, value);
    crate::runtime::action::apply_change(&mut sim, &change).unwrap_or_else(|e| panic!("{change}: {e:#}"));
    sim.run_for_secs(1.0);
    let n = sim.drain_events().count();
    assert!(n > 0, "{name}={value}: no events");
}

#[test]
fn every_strategy_runs_at_both_ends_of_every_range() {
    for p in PARAMS {
        let (Kind::Number { min, max, .. } | Kind::OptionalNumber { min, max }) = p.kind else { continue };
        if p.name == "clients" {
            // Fixed for a run (a live change is refused) and 65,536 runs of a client each are
            // no unit test: tests/app/clients.rs and the protocol's clients tests run many.
            continue;
        }
        for value in [min, max] {
            let value = value.to_string();
            for strategy in strategies_for(p.name) {
                // Set from the start, and changed while running.
                let mut at_start = Scenario { strategy, ..Scenario::default() };
                apply(&mut at_start, &format!("{}={value}", p.name)).unwrap_or_else(|e| panic!("{e:#}"));
                run_with(at_start, p.name, &value);
                run_with(Scenario { strategy, ..Scenario::default() }, p.name, &value);
            }
        }
    }
}

#[test]
fn neither_file_setting_may_change_during_a_run() {
    assert!(refuse_during_run("link.trace").is_err());
    assert!(refuse_during_run(" link.file").is_err());
    assert!(refuse_during_run("link.loss_percent").is_ok());
}
