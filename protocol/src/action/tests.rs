//! Steps as files spell them, and the driver running them at their instants.

use super::*;
use crate::event::{Event, EventKind};
use crate::measure::reliable_metrics;
use crate::{drain, Scenario, Simulation};

fn ron_opts() -> ron::Options {
    ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
}

fn parse(text: &str) -> Result<Vec<Step>, String> {
    ron_opts().from_str::<Vec<Step>>(text).map_err(|e| e.to_string())
}

#[test]
fn every_spelling_of_a_step_parses() {
    let steps = parse(
        r#"[
        (at_s: 12, action: burst),
        (at_s: 5, action: send_chunk(kib: 256)),
        (at_s: 20.0, dir: a_to_b, set: (loss_percent: 100.0)),
        (at_s: 21.5, set: (latency_ms: 80.0)),
        (at_us: 3000001, action: burst(side: B)),
        (at_s: 1, action: send_chunk(side: B, kib: 8)),
        (at_s: 2, action: set(name: "glenn.resend_delay_ms", value: 30)),
        (at_s: 2, action: set(name: "link.jitter_distribution", value: "normal")),
        (at_s: 3, action: link(dir: b_to_a, set: (jitter_ms: Some(4.0)))),
        (at_s: 4, action: restart),
        (at_s: 4.5, action: strategy(ue4)),
        (at_s: 6, action: pause),
        (at_s: 6, action: resume),
        (at_s: 7, action: transport(udp)),
        (at_s: 8, action: transport(in_process)),
    ]"#,
    )
    .unwrap();
    let patch = |f: fn(&mut LinkPatch)| {
        let mut p = LinkPatch::default();
        f(&mut p);
        p
    };
    let want = vec![
        Step::at_secs(12.0, Action::Burst { side: Side::A }),
        Step::at_secs(5.0, Action::SendChunk { side: Side::A, kib: 256 }),
        Step::at_secs(20.0, Action::Link { dir: StepDirection::AToB, set: patch(|p| p.loss_percent = Some(100.0)) }),
        Step::at_secs(21.5, Action::Link { dir: StepDirection::Both, set: patch(|p| p.latency_ms = Some(80.0)) }),
        Step::new(SimTime(3_000_001), Action::Burst { side: Side::B }),
        Step::at_secs(1.0, Action::SendChunk { side: Side::B, kib: 8 }),
        Step::at_secs(2.0, Action::Set(ParamChange::parse("glenn.resend_delay_ms", "30"))),
        Step::at_secs(2.0, Action::Set(ParamChange::parse("link.jitter_distribution", "normal"))),
        Step::at_secs(3.0, Action::Link { dir: StepDirection::BToA, set: patch(|p| p.jitter_ms = Some(4.0)) }),
        Step::at_secs(4.0, Action::Restart),
        Step::at_secs(4.5, Action::Strategy(Strategy::Ue4)),
        Step::at_secs(6.0, Action::Pause),
        Step::at_secs(6.0, Action::Resume),
        Step::at_secs(7.0, Action::Transport(Transport::Udp)),
        Step::at_secs(8.0, Action::Transport(Transport::InProcess)),
    ];
    assert_eq!(steps, want);
    // Written out and read back, in RON and in JSON (the `--set` path), nothing changes.
    let text = ron::ser::to_string(&steps).unwrap();
    assert!(text.contains("action:burst)") && text.contains("send_chunk(kib:256)"), "{text}");
    assert_eq!(parse(&text).unwrap(), want, "{text}");
    let json = serde_json::to_value(&steps).unwrap();
    assert_eq!(serde_json::from_value::<Vec<Step>>(json).unwrap(), want);
}

#[test]
fn unknown_names_and_bad_steps_are_refused_with_the_nearest_name() {
    for (text, expect) in [
        ("[(at_s: 1, action: bursst)]", "did you mean `burst`"),
        ("[(at_s: 1, action: send_chunk(kib: 4, sid: B))]", "did you mean `side`"),
        ("[(at_s: 1, action: send_chunk)]", "needs its arguments"),
        ("[(at_s: 1, action: send_chunk(kib: 0))]", "from 1 to 16384"),
        ("[(at_s: 1, action: strategy(warp))]", "warp"),
        ("[(at_s: 1, action: transport(tcp))]", "tcp"),
        ("[(at_s: 1, action: transport)]", "transport(udp)"),
        ("[(at_s: 1, action: transportt(udp))]", "did you mean `transport`"),
        ("[(at_s: 1, dri: a_to_b, set: (loss_percent: 1.0))]", "dri"),
        ("[(at_s: 1, set: (loss_precent: 1.0))]", "loss_precent"),
        ("[(at_s: 1, action: burst, dir: both)]", "not both"),
        ("[(at_s: 1, at_us: 5, action: burst)]", "not both"),
        ("[(action: burst)]", "needs its time"),
        ("[(at_s: -1, action: burst)]", "from 0"),
        ("[(at_s: NaN, action: burst)]", "from 0"),
        ("[(at_s: 1)]", "needs an `action`"),
        ("[(at_s: 1, action: link(set: (loss_percent: NaN)))]", "NaN"),
    ] {
        let e = parse(text).expect_err(text);
        assert!(e.contains(expect), "{text}: {e}");
    }
}

fn events_named<'a>(events: &'a [Event], want: impl Fn(&EventKind) -> bool + 'a) -> impl Iterator<Item = &'a Event> {
    events.iter().filter(move |e| want(&e.kind))
}

#[test]
fn scripted_actions_run_at_their_instant() {
    let mut s = Scenario { seed: 4, ..Scenario::default() };
    s.workload.reliable_rate_hz = 0.0;
    s.workload.burst_messages = 40;
    s.script = vec![
        Step::at_secs(2.0, Action::Burst { side: Side::A }),
        Step::at_secs(3.0, Action::Set(ParamChange::parse("glenn.resend_delay_ms", "30"))),
    ];
    let mut sim = Simulation::new(s);
    sim.run_until(SimTime::from_secs_f64(4.0));
    let queued: Vec<SimTime> =
        events_named(sim.events(), |k| matches!(k, EventKind::MessageQueued { reliable: true, .. }))
            .map(|e| e.time)
            .collect();
    // The endpoint queues a burst at its first send tick from the action's instant.
    let tick_after = |t: f64| SimTime::from_secs_f64(t)..SimTime::from_secs_f64(t + 1.0 / 60.0);
    assert_eq!(queued.len(), 40, "the burst and nothing else");
    assert!(queued.iter().all(|t| *t == queued[0] && tick_after(2.0).contains(t)), "{queued:?}");
    let changed: Vec<(SimTime, String)> = events_named(sim.events(), |k| matches!(k, EventKind::ParamChanged { .. }))
        .map(|e| (e.time, format!("{:?}", e.kind)))
        .collect();
    assert_eq!(changed.len(), 1, "{changed:?}");
    assert!(changed[0].0 == SimTime::from_secs_f64(3.0) && changed[0].1.contains("glenn.resend_delay_ms"));
    assert_eq!(sim.scenario().glenn.resend_delay_ms, 30.0, "the scenario in force has the change");
}

#[test]
fn a_chunk_and_a_strategy_change_in_the_script_run_in_order() {
    let mut s = Scenario { seed: 8, strategy: Strategy::Chunks, ..Scenario::default() };
    s.script = vec![
        Step::at_secs(0.5, Action::SendChunk { side: Side::A, kib: 16 }),
        Step::at_secs(3.0, Action::Strategy(Strategy::Glenn)),
    ];
    let mut sim = Simulation::new(s);
    sim.run_until(SimTime::from_secs_f64(5.0));
    let started: Vec<SimTime> =
        events_named(sim.events(), |k| matches!(k, EventKind::ChunkStarted { .. })).map(|e| e.time).collect();
    assert_eq!(started.len(), 1);
    let tick = SimTime::from_secs_f64(0.5)..SimTime::from_secs_f64(0.5 + 1.0 / 60.0);
    assert!(tick.contains(&started[0]), "the chunk starts at the first tick from 0.5 s: {started:?}");
    assert_eq!(sim.scenario().strategy, Strategy::Glenn);
    let marker = events_named(sim.events(), EventKind::is_restart).next().expect("a restart marker");
    assert_eq!(marker.time, SimTime::from_secs_f64(3.0));
    let after = &sim.events()[sim.events().iter().position(|e| e.kind.is_restart()).unwrap()..];
    assert!(after.iter().any(|e| matches!(e.kind, EventKind::MessageQueued { .. })), "glenn's workload runs after 3 s");
    assert!(!after.iter().any(|e| matches!(e.kind, EventKind::SliceSent { .. })), "no chunk slices after the switch");
}

#[test]
fn a_restart_rebuilds_the_endpoints_and_the_figures_stay_true() {
    let mut s = Scenario { seed: 5, ..Scenario::default() };
    s.link.a_to_b.loss_percent = 20.0;
    let mut sim = Simulation::new(s);
    sim.run_until(SimTime::from_secs_f64(4.0));
    sim.apply(&Action::Restart).unwrap();
    let at = sim.events().len() - 1;
    assert!(sim.events()[at].kind.is_restart() && sim.events()[at].time == SimTime::from_secs_f64(4.0));
    sim.run_until(SimTime::from_secs_f64(8.0));
    drain(&mut sim, 30.0);
    let events: Vec<Event> = sim.drain_events().collect();
    let first_after = events[at..].iter().find_map(|e| match e.kind {
        EventKind::PacketSent { side: Side::A, seq, .. } => Some(seq),
        _ => None,
    });
    let first_ever = events.iter().find_map(|e| match e.kind {
        EventKind::PacketSent { side: Side::A, seq, .. } => Some(seq),
        _ => None,
    });
    assert_eq!(first_after, first_ever, "the new endpoint counts sequences from its start again");
    let m = reliable_metrics(&events);
    assert_eq!(m.out_of_order, 0, "ids counting from zero again are not out of order: {m:?}");
    assert_eq!(m.duplicated, 0, "{m:?}");
    assert!(m.delivered > 0 && m.sent >= m.delivered, "{m:?}");
    // What was queued before the restart and not delivered by then is lost, nothing else.
    assert!(m.lost < 40, "{m:?}");
    assert_eq!(sim.totals().false_acks, 0);
}

#[test]
fn a_transport_change_rebuilds_both_endpoints_at_its_instant_like_a_restart() {
    // In a simulation (a re-run) a transport change is a restart marked `transport`: the same
    // events as a restart there, but for the marker's name and value.
    let run = |action: Action| {
        let mut sim = Simulation::new(Scenario { seed: 3, ..Scenario::default() });
        sim.run_until(SimTime::from_secs_f64(2.345_678));
        sim.apply(&action).unwrap();
        sim.run_until(SimTime::from_secs_f64(5.0));
        sim.drain_events().collect::<Vec<Event>>()
    };
    let (restarted, switched) = (run(Action::Restart), run(Action::Transport(Transport::Udp)));
    let markers: Vec<&Event> = switched.iter().filter(|e| e.kind.is_restart()).collect();
    assert_eq!(markers.len(), 1, "one marker (side A records it)");
    assert_eq!(markers[0].time, SimTime::from_secs_f64(2.345_678));
    let EventKind::ParamChanged { name, value } = &markers[0].kind else { panic!("{:?}", markers[0]) };
    assert_eq!((name.as_str(), value.as_str()), ("transport", "udp"));
    assert_eq!(restarted.len(), switched.len());
    for (a, b) in restarted.iter().zip(&switched) {
        if !a.kind.is_restart() {
            assert_eq!(a, b);
        }
    }
    assert!(Action::Transport(Transport::InProcess).rebuilds());
}

#[test]
fn after_a_restart_the_new_endpoints_tick_on_their_grid_from_that_instant() {
    // Restarted at an instant of side A's send tick, the new endpoint ticks at once (the first
    // grid instant at or after the restart), not one interval later on the old schedule.
    let mut sim = Simulation::new(Scenario { seed: 21, ..Scenario::default() });
    sim.run_until(SimTime::from_secs_f64(1.0));
    let tick = sim
        .events()
        .iter()
        .rev()
        .find_map(|e| matches!(e.kind, EventKind::PacketSent { side: Side::A, .. }).then_some(e.time))
        .unwrap();
    let mut sim = Simulation::new(Scenario { seed: 21, ..Scenario::default() });
    sim.run_until(tick);
    sim.apply(&Action::Restart).unwrap();
    sim.run_until(tick.plus_micros(40_000));
    let events = sim.events();
    let marker = events.iter().position(|e| e.kind.is_restart()).unwrap();
    let first_a = events[marker..]
        .iter()
        .find_map(|e| matches!(e.kind, EventKind::PacketSent { side: Side::A, .. }).then_some(e.time));
    assert_eq!(first_a, Some(tick), "side A's first send after the restart");
    // With a new seed the tick phase is drawn again, and the first tick follows the new grid.
    let mut sim = Simulation::new(Scenario { seed: 21, ..Scenario::default() });
    sim.run_until(tick);
    sim.apply(&Action::Set(ParamChange::parse("seed", "22"))).unwrap();
    sim.apply(&Action::Restart).unwrap();
    let mut probe = Simulation::new(Scenario { seed: 22, ..Scenario::default() });
    probe.run_until(SimTime::from_secs_f64(1.0));
    let interval_us = 1_000_000 / 60;
    let phase_of = |t: SimTime| (t.0 % interval_us as u64) as i64;
    let grid: Vec<i64> = probe
        .events()
        .iter()
        .filter_map(|e| matches!(e.kind, EventKind::PacketSent { side: Side::A, .. }).then_some(phase_of(e.time)))
        .collect();
    sim.run_until(tick.plus_micros(40_000));
    let events = sim.events();
    let marker = events.iter().position(|e| e.kind.is_restart()).unwrap();
    let first_a = events[marker..]
        .iter()
        .find_map(|e| matches!(e.kind, EventKind::PacketSent { side: Side::A, .. }).then_some(e.time))
        .unwrap();
    // Within the tick lateness (up to 1 ms) and the grid's rounding of the seed-22 phase.
    let near = grid.iter().any(|&p| (p - phase_of(first_a)).abs() <= 1_100);
    assert!(near, "first tick at {first_a:?} (phase {}) is off seed 22's grid {:?}", phase_of(first_a), &grid[..5]);
}

#[test]
fn a_refused_set_changes_nothing() {
    let mut sim = Simulation::new(Scenario::default());
    sim.run_until(SimTime::from_secs_f64(1.0));
    let before = sim.scenario().clone();
    let n = sim.events().len();
    assert!(sim.apply(&Action::Set(ParamChange::parse("link.nope", "1"))).is_err());
    assert!(sim.apply(&Action::Set(ParamChange::parse("strategy", "tcp"))).is_err());
    assert_eq!((sim.scenario(), sim.events().len()), (&before, n));
}
