//! A run declared to keep flow control off (`Simulation::fix_flow_off`, what a sweep does) stops
//! feeding flow control's RTT filter and otherwise runs exactly as one without the declaration:
//! the same events, bit for bit, through scripted steps, restarts and live `set`s. A `set` that
//! would switch flow control on is refused from then on, and a run that may switch it on is not
//! affected by the declaration at all.

use ackscope_protocol::*;

const SECONDS: u64 = 12;

/// A jittery, lossy link with duplicates, a burst, a scripted `set`, a restart and a change of
/// strategy.
fn scenario(strategy: Strategy, seed: u64) -> Scenario {
    let mut s = Scenario { seed, strategy, ..Scenario::default() };
    crate::support::jittery_off_grid_link(&mut s);
    let other = if strategy == Strategy::Ue4 { Strategy::Glenn } else { Strategy::Ue4 };
    let set = |name: &str, value: &str| Action::Set(ParamChange::parse(name, value));
    s.script = vec![
        Step::new(SimTime::from_secs_f64(2.3), Action::Burst { side: Side::A }),
        Step::new(SimTime::from_secs_f64(3.0), set("send_rate_pps", "45")),
        Step::new(SimTime::from_secs_f64(6.0), Action::Restart),
        Step::new(SimTime::from_secs_f64(9.5), Action::Strategy(other)),
    ];
    s
}

/// Every event of a run of `scenario` (sweep settings), with or without `fix_flow_off`, a live
/// `set` at 4 s; and whether the declaration took effect.
fn events(scenario: &Scenario, fixed: bool) -> (Vec<Event>, bool, Simulation) {
    events_kept(scenario, fixed, EventFilter::MESSAGE_METRICS)
}

/// [`events`] recording what `filter` keeps.
fn events_kept(scenario: &Scenario, fixed: bool, filter: EventFilter) -> (Vec<Event>, bool, Simulation) {
    let mut sim = Simulation::new(scenario.clone());
    sim.set_summary(false);
    sim.set_event_filter(filter);
    let took = fixed && sim.fix_flow_off();
    let mut out = Vec::new();
    for s in 1..=SECONDS {
        sim.run_until(SimTime(s * 1_000_000));
        if s == 4 {
            sim.apply(&Action::Set(ParamChange::parse("workload.reliable_rate_hz", "25"))).unwrap();
        }
        out.extend(sim.drain_events());
    }
    (out, took, sim)
}

#[test]
fn a_run_fixed_to_keep_flow_off_makes_the_same_events_without_feeding_the_filter() {
    for strategy in [Strategy::Glenn, Strategy::Ue4, Strategy::Hybrid, Strategy::Dnm, Strategy::Rellikt] {
        for seed in 1..=3 {
            let s = scenario(strategy, seed);
            // RTT samples recorded (the endpoints build them either way) and left out (with the
            // declaration the endpoints then build none; without it the run takes them out).
            let keep_rtt = EventFilter { rtt_samples: true, ..EventFilter::MESSAGE_METRICS };
            for filter in [keep_rtt, EventFilter::MESSAGE_METRICS] {
                let (plain, _, plain_sim) = events_kept(&s, false, filter);
                let (fixed, took, fixed_sim) = events_kept(&s, true, filter);
                assert!(took, "{strategy:?} seed {seed}: the declaration did not take effect");
                assert!(plain == fixed, "{strategy:?} seed {seed} {filter:?}: events differ with flow fixed off");
                let samples = plain.iter().any(|e| matches!(e.kind, EventKind::RttSample { .. }));
                assert_eq!(samples, filter.rtt_samples, "{strategy:?} seed {seed}");
                // The filter is fed in the plain run only (the restart at 6 s started both afresh).
                assert!(plain_sim.flow(Side::A).rtt_ms() > 0.0, "{strategy:?} seed {seed}");
                assert_eq!(fixed_sim.flow(Side::A).rtt_ms(), 0.0, "{strategy:?} seed {seed}");
            }
        }
    }
}

#[test]
fn switching_flow_on_is_refused_once_fixed_off_and_other_flow_settings_are_not() {
    let mut sim = Simulation::new(Scenario::default());
    assert!(sim.fix_flow_off());
    sim.run_until(SimTime(1_000_000));
    let on = Action::Set(ParamChange::parse("flow.enabled", "true"));
    assert!(sim.apply(&on).is_err());
    assert!(!sim.scenario().flow.enabled);
    let threshold = Action::Set(ParamChange::parse("flow.rtt_threshold_ms", "300"));
    sim.apply(&threshold).unwrap();
    assert_eq!(sim.scenario().flow.rtt_threshold_ms, 300.0);
}

#[test]
fn a_run_that_may_switch_flow_on_ignores_the_declaration() {
    let mut on = Scenario::default();
    on.flow.enabled = true;
    let mut scripted = Scenario::default();
    let set = Action::Set(ParamChange::parse(" flow.enabled", "true"));
    assert!(EndpointDriver::may_switch_flow_on(&set));
    scripted.script = vec![Step::new(SimTime::from_secs_f64(2.0), set)];
    for s in [on, scripted] {
        let mut sim = Simulation::new(s.clone());
        assert!(!sim.fix_flow_off(), "flow enabled {}", s.flow.enabled);
        sim.run_until(SimTime(5_000_000));
        assert!(sim.scenario().flow.enabled);
        assert!(sim.flow(Side::B).rtt_ms() > 0.0);
        let (plain, _, _) = events(&s, false);
        let (declared, took, _) = events(&s, true);
        assert!(!took && plain == declared);
    }
}

/// A caller that declared flow control fixed off and then switches it on through
/// `Simulation::reconfigure` (which cannot refuse) gets flow control with a fresh filter: the
/// declaration is lifted, the filter fed again from the next sample, and nothing panics.
#[test]
fn switching_flow_on_by_reconfigure_lifts_the_declaration() {
    let mut sim = Simulation::new(Scenario::default());
    assert!(sim.fix_flow_off());
    sim.run_until(SimTime(3_000_000));
    assert_eq!(sim.flow(Side::A).rtt_ms(), 0.0, "not fed while fixed off");
    sim.reconfigure(|s| s.flow.enabled = true);
    assert!(sim.scenario().flow.enabled);
    sim.run_until(SimTime(6_000_000));
    // 50 ms each way: the filter follows the samples again.
    for side in Side::BOTH {
        let rtt = sim.flow(side).rtt_ms();
        assert!((90.0..160.0).contains(&rtt), "{side:?}: {rtt}");
    }
}
