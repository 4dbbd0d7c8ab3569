//! The endpoint driver alone: send ids, tick grids and phases, flow control's rate switches.

use super::*;
use crate::action::ParamChange;
use crate::registry::make_peer;
use crate::scenario::{Strategy, TickPhase};

fn driver(scenario: Scenario) -> EndpointDriver {
    let peer = make_peer(&scenario, Side::A);
    let mut n = 0;
    EndpointDriver::new(
        Side::A,
        scenario,
        peer,
        Box::new(move || {
            n += 1;
            n - 1
        }),
    )
}

/// Runs the driver alone (nothing inbound) until `until`; returns what it sent.
fn run(d: &mut EndpointDriver, until: SimTime, events: &mut Vec<Event>) -> Vec<Transmit> {
    let mut sent = Vec::new();
    while d.next_due() <= until {
        let t = d.next_due();
        let _ = d.step(t, &mut std::collections::VecDeque::new(), &mut sent, events);
    }
    sent
}

#[test]
fn turning_flow_control_off_restores_the_configured_send_rate() {
    let mut s = Scenario { send_rate_pps: 60.0, tick_phase: TickPhase::Lockstep, ..Scenario::default() };
    s.flow.enabled = true;
    let mut d = driver(s.clone());
    let mut events = Vec::new();
    run(&mut d, SimTime::from_secs_f64(1.0), &mut events);
    assert_eq!(d.ticker().pps, 30.0, "flow control's good rate, not the configured one");
    s.flow.enabled = false;
    let now = d.now();
    let _ = d.reconfigure(now, s);
    assert_eq!((d.ticker().pps, d.next_tick()), (60.0, now));
}

#[test]
fn sends_carry_fresh_ids_and_the_instant_of_their_tick() {
    let mut d = driver(Scenario { send_rate_pps: 50.0, tick_phase: TickPhase::Lockstep, ..Scenario::default() });
    let mut events = Vec::new();
    let sent = run(&mut d, SimTime::from_millis_f64(100.0), &mut events);
    let got: Vec<(u64, u64)> = sent.iter().map(|t| (t.uid, t.sent_at.0)).collect();
    assert_eq!(got, [(0, 0), (1, 20_000), (2, 40_000), (3, 60_000), (4, 80_000), (5, 100_000)]);
    let sent_events = events.iter().filter(|e| matches!(e.kind, EventKind::PacketSent { .. })).count();
    assert_eq!(sent_events, sent.len());
}

#[test]
fn skipping_ticks_after_a_stall_keeps_the_tick_grid() {
    let mut d = driver(Scenario { send_rate_pps: 60.0, tick_phase: TickPhase::Lockstep, ..Scenario::default() });
    d.skip_ticks_to(SimTime(1_005_000));
    // Ticks fall at round(k * 1e6 / 60) us: 1_000_000 (k = 60), then 1_016_667.
    assert_eq!(d.next_tick(), SimTime(1_016_667));
    d.skip_ticks_to(SimTime(1_016_667));
    assert_eq!(d.next_tick(), SimTime(1_016_667), "a tick due now is not skipped");
}

fn tick_times(events: &[Event]) -> Vec<u64> {
    let mut t: Vec<u64> =
        events.iter().filter(|e| matches!(e.kind, EventKind::PacketSent { .. })).map(|e| e.time.0).collect();
    t.dedup();
    t
}

#[test]
fn ticks_fall_on_the_endpoints_own_phase() {
    let mut s = Scenario { send_rate_pps: 50.0, tick_jitter_ms: 0.0, ..Scenario::default() };
    s.a.tick_phase_ms = Some(7.5);
    let mut d = driver(s);
    assert_eq!(d.tick_timing().phase_us, 7_500.0);
    let mut events = Vec::new();
    run(&mut d, SimTime::from_millis_f64(70.0), &mut events);
    assert_eq!(tick_times(&events), [7_500, 27_500, 47_500, 67_500]);
}

#[test]
fn flow_control_keeps_the_phase_when_it_changes_the_rate() {
    // 60 pps configured, flow control's good rate 30: after the switch the ticks stay on the
    // grid 4 ms + k / 30 s, the first at least one 30 pps interval after the last tick.
    let mut s = Scenario { send_rate_pps: 60.0, tick_jitter_ms: 0.0, ..Scenario::default() };
    s.flow.enabled = true;
    s.a.tick_phase_ms = Some(4.0);
    let mut d = driver(s);
    let mut events = Vec::new();
    run(&mut d, SimTime::from_secs_f64(1.0), &mut events);
    let ticks = tick_times(&events);
    assert_eq!(&ticks[..2], [4_000, 37_333], "the switch at 0 s (stats) applies before the first tick");
    for t in &ticks {
        let k = (*t as f64 - 4_000.0) * 30.0 / 1e6;
        assert!((k - k.round()).abs() * 1e6 / 30.0 <= 1.0, "tick at {t} us is off the 30 pps grid");
    }
    for w in ticks.windows(2) {
        assert!(w[1] - w[0] >= 33_332, "{w:?}");
    }
}

/// The message strategies' endpoints build no RTT samples once nothing reads them (not
/// recorded, and flow control fixed off), build them again when either wants them, and keep
/// that across a restart into another strategy; a strategy that cannot leave them out is known.
#[test]
fn rtt_samples_are_built_only_while_something_reads_them() {
    for strategy in [Strategy::Glenn, Strategy::Hybrid, Strategy::Ue4, Strategy::Dnm, Strategy::Rellikt] {
        let mut d = driver(Scenario { strategy, ..Scenario::default() });
        d.set_records_rtt_samples(false);
        assert!(d.builds_rtt_samples(), "{strategy:?}: flow control's filter still reads them");
        assert!(d.fix_flow_off());
        assert!(!d.builds_rtt_samples(), "{strategy:?}: nothing reads them");
        d.set_records_rtt_samples(true);
        assert!(d.builds_rtt_samples(), "{strategy:?}: recorded again");
        d.set_records_rtt_samples(false);
        let mut events = Vec::new();
        let _ = d.apply_action(SimTime::ZERO, &Action::Strategy(Strategy::Chunks), &mut events);
        assert!(d.builds_rtt_samples(), "{strategy:?} -> chunks: the chunk sender reports them always");
        let _ = d.apply_action(SimTime::ZERO, &Action::Strategy(strategy), &mut events);
        assert!(!d.builds_rtt_samples(), "{strategy:?}: back from chunks");
    }
}

#[test]
fn the_next_tick_follows_every_change_of_rate_with_lateness_bounded_by_the_new_rate() {
    // Seeded phases and 1 ms lateness: the driver keeps each rate's constants beside its ticker.
    let mut d = driver(Scenario { send_rate_pps: 60.0, ..Scenario::default() });
    let mut events = Vec::new();
    let mut until = SimTime::ZERO;
    for pps in [5_000.0, 30.0, 0.0, f64::NAN, 60.0, 1e6, -5.0, 20.0] {
        d.set_send_rate(until, pps);
        assert_eq!(d.next_tick(), d.ticker().next(), "{pps} pps");
        until = until.plus_micros(200_000);
        run(&mut d, until, &mut events);
        assert_eq!(d.next_tick(), d.ticker().next(), "{pps} pps, after its ticks");
    }
    let ticks = events.iter().filter(|e| matches!(e.kind, EventKind::PacketSent { .. })).count();
    assert!(ticks > 1_000, "{ticks}");
}

#[test]
fn next_due_is_the_earliest_tick_stats_sample_or_script_step_through_a_script() {
    let set = |name: &str, value: &str| Action::Set(ParamChange::parse(name, value));
    let script = vec![
        Step::new(SimTime(150_000), set("send_rate_pps", "5")),
        Step::new(SimTime(150_000), Action::Burst { side: Side::A }),
        Step::new(SimTime(420_000), Action::Restart),
        Step::new(SimTime(700_000), set("send_rate_pps", "200")),
        Step::new(SimTime(900_000), set("stats_interval_ms", "7")),
    ];
    let mut d = driver(Scenario { script, ..Scenario::default() });
    let uncached = |d: &EndpointDriver| {
        let script = d.script.get(d.next_step).map_or(SimTime(u64::MAX), |(_, s)| s.at);
        d.next_stats.min(d.next_tick()).min(script)
    };
    let mut events = Vec::new();
    let (mut instants, mut steps) = (0, 0);
    while d.next_due() <= SimTime::from_secs_f64(1.5) {
        assert_eq!(d.next_due(), uncached(&d), "after {instants} instants");
        let t = d.next_due();
        steps += usize::from(d.next_script_step(t).is_some());
        let _ = d.step(t, &mut std::collections::VecDeque::new(), &mut Vec::new(), &mut events);
        instants += 1;
    }
    assert_eq!((steps, d.next_step), (4, 5), "instants with steps, steps taken");
    assert!(instants > 200, "{instants}");
    // A live restart between instants (the simulation applies it after an instant's work).
    let now = d.now().plus_micros(1);
    let _ = d.apply_action(now, &Action::Restart, &mut events);
    assert_eq!((d.next_due(), uncached(&d)), (now, now));
}
