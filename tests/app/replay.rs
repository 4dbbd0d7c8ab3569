//! Replay in the window: the cursor moves at true speed (wall time from an injected clock times
//! the speed, whatever the frame times), a recording opens with its whole run in view, and the
//! left panel shows the parameters in force at the cursor. Driven headless with egui_kittest.

use crate::common::window_harness;
use std::time::Duration;

use ackscope::app::{AppState, ManualClock, MAX_FRAME_GAP};
use ackscope::session::{Change, Session};
use ackscope::ui::WindowView;
use ackscope_protocol::{ParamChange, Scenario, Side, SimTime};
use egui::accesskit::Role;
use egui_kittest::kittest::{NodeT, Queryable};
use egui_kittest::Harness;

type Window = (AppState, WindowView);

/// The whole window (state and views) at 1280x800, with replay on a clock the test moves.
fn window(clock: &ManualClock) -> Harness<'static, Window> {
    let mut state = AppState::new(Scenario::default(), || {});
    state.set_clock(clock.clone());
    window_harness(state)
}

/// A recording of `secs` seconds of the default scenario, with `changes` made live.
fn recording(secs: f64, changes: &[Change]) -> Session {
    let actions: Vec<_> = changes.iter().cloned().map(Into::into).collect();
    ackscope::report::run_with_actions(&Scenario::default(), secs, &actions).unwrap().session
}

/// Frame intervals as irregular as a real window's: fast, slow, a 200 ms hitch, near-zero.
const FRAME_MS: [u64; 8] = [33, 16, 200, 1, 47, 33, 120, 8];

#[test]
fn replay_advances_by_wall_time_times_speed_whatever_the_frame_times() {
    for speed in [1.0, 4.0, 16.0] {
        let clock = ManualClock::new();
        let mut h = window(&clock);
        h.state_mut().0.show_session(recording(200.0, &[]), None);
        h.step();
        h.state_mut().0.playback.speed = speed;
        h.get_by_label("Play").click();
        h.step();
        let start = h.state().0.cursor();
        let mut wall = Duration::ZERO;
        for i in 0..150 {
            let dt = Duration::from_millis(FRAME_MS[i % FRAME_MS.len()]);
            clock.advance(dt);
            wall += dt;
            h.step();
        }
        let moved_us = h.state().0.cursor().0 - start.0;
        let expected_us = wall.as_micros() as f64 * speed;
        assert!(
            (moved_us as f64 - expected_us).abs() <= 1.0,
            "{speed}x: the cursor moved {moved_us} us in {wall:?} of wall time (expected {expected_us})"
        );
    }
}

#[test]
fn idle_time_before_play_and_gaps_in_drawing_do_not_make_the_cursor_jump() {
    let clock = ManualClock::new();
    let mut h = window(&clock);
    h.state_mut().0.show_session(recording(60.0, &[]), None);
    h.step();
    // The window sat idle for a minute before Play: none of that counts.
    clock.advance(Duration::from_secs(60));
    h.step();
    h.get_by_label("Play").click();
    h.step();
    assert_eq!(h.state().0.cursor(), SimTime::ZERO);
    clock.advance(Duration::from_millis(500));
    h.step();
    assert_eq!(h.state().0.cursor(), SimTime(500_000));
    // The window was not drawn for 30 s (minimised): replay resumes where it was.
    clock.advance(Duration::from_secs(30));
    h.step();
    assert_eq!(h.state().0.cursor(), SimTime(500_000), "jumped after a gap over {MAX_FRAME_GAP:?}");
    clock.advance(Duration::from_millis(250));
    h.step();
    assert_eq!(h.state().0.cursor(), SimTime(750_000));
    // Paused replay does not move, and resuming counts from the click.
    h.get_by_label("Pause replay").click();
    h.step();
    clock.advance(Duration::from_secs(5));
    h.step();
    h.get_by_label("Play").click();
    h.step();
    clock.advance(Duration::from_millis(100));
    h.step();
    assert_eq!(h.state().0.cursor(), SimTime(850_000));
}

#[test]
fn a_recording_opens_with_the_whole_run_in_view_and_keeps_it_while_scrubbing() {
    let clock = ManualClock::new();
    let mut h = window(&clock);
    h.state_mut().0.show_session(recording(30.0, &[]), None);
    for _ in 0..3 {
        h.step();
    }
    let (state, view) = h.state();
    assert_eq!(state.cursor(), SimTime::ZERO, "replay starts at the beginning");
    let end = state.end_time().as_secs_f64();
    let top = state.lanes[0].store.side(Side::A).rtt_smoothed_ms.iter().map(|p| p.y).fold(0.0, f64::max);
    let at_open = view.panels.overview.bounds("rtt_glenn").expect("the RTT plot was drawn");
    assert!(at_open.min()[0] <= 0.0 && at_open.max()[0] >= end, "x {:?} is not the whole run (0 to {end})", at_open);
    assert!(at_open.max()[1] >= top && top > 50.0, "y {:?} does not show the RTT reaching {top}", at_open);
    for t in [7_500_000, 21_000_000, 2_000_000] {
        h.state_mut().0.playback.seek(SimTime(t));
        h.step();
        let now = h.state().1.panels.overview.bounds("rtt_glenn").unwrap();
        assert_eq!(now, at_open, "the axes moved while scrubbing to {t} us");
    }
}

#[test]
fn the_left_panel_shows_the_parameters_in_force_at_the_cursor() {
    let change = Change { at_us: 5_000_000, name: "link.latency_ms".into(), value: "150".into() };
    let clock = ManualClock::new();
    let mut h = window(&clock);
    h.state_mut().0.show_session(recording(10.0, &[change]), None);
    let latency = |h: &Harness<'static, Window>| {
        h.get_by_role_and_label(Role::Slider, "latency ms").accesskit_node().numeric_value().unwrap()
    };
    h.step();
    assert_eq!(latency(&h), 50.0, "the scenario's value before the change");
    h.get_by_label_contains("Replay (read-only)");
    h.state_mut().0.playback.seek(SimTime(6_000_000));
    h.step();
    assert_eq!(latency(&h), 150.0, "the recorded change is in force at 6 s");
    h.state_mut().0.playback.seek(SimTime(4_999_000));
    h.step();
    assert_eq!(latency(&h), 50.0);
    // An edit in replay sets up the next Restart; the recording stays as it was.
    let events = h.state().0.lanes[0].store.len();
    h.get_by_role_and_label(Role::Slider, "loss %").set_value_accesskit(12.0);
    h.step();
    h.step();
    let s = &h.state().0;
    assert_eq!(s.replay_edits, [ParamChange::new("link.loss_percent", 12.0)]);
    assert_eq!(s.scenario.link.a_to_b.loss_percent, 12.0, "the next Restart runs with it");
    assert!(!s.is_running() && s.lanes[0].store.len() == events, "replay edits must not run anything");
    h.get_by_label_contains("For the next Restart: link.loss_percent=12");
}
