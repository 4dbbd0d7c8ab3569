//! Issue 25's replay control defects: opening the speed menu must not stop a replay, and Space
//! must pause it where it stood when the key was pressed, not after another frame's worth of
//! wall time (a slow frame under load made the pause land 0.5-0.66 s late). Driven headless with
//! egui_kittest on a clock the test moves, so "a slow frame" is an exact amount of wall time.

use std::time::Duration;

use crate::common::window_harness;
use ackscope::app::{AppState, ManualClock};
use ackscope::session::Session;
use ackscope::ui::WindowView;
use ackscope_protocol::{Scenario, SimTime};
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

type Window = Harness<'static, (AppState, WindowView)>;

fn recording(secs: f64) -> Session {
    ackscope::report::run_with_actions(&Scenario::default(), secs, &[]).unwrap().session
}

/// A window replaying a 60 s recording at 1x on `clock`, a few frames in.
fn playing(clock: &ManualClock) -> Window {
    playing_with_speed_menu_at(clock).0
}

/// [`playing`], and where the speed menu's box stood before Play was clicked (paused).
fn playing_with_speed_menu_at(clock: &ManualClock) -> (Window, egui::Pos2) {
    let mut state = AppState::new(Scenario::default(), || {});
    state.set_clock(clock.clone());
    let mut h = window_harness(state);
    h.state_mut().0.show_session(recording(60.0), None);
    h.step();
    let paused_at = h.get_by_role_and_label(Role::ComboBox, "speed").rect().center();
    h.get_by_label("Play").click();
    h.step();
    for _ in 0..3 {
        clock.advance(Duration::from_millis(33));
        h.step();
    }
    assert!(h.state().0.playback.is_replaying(), "the replay plays");
    (h, paused_at)
}

#[test]
fn the_replay_keeps_playing_while_the_speed_menu_is_open_and_takes_the_speed_chosen() {
    let clock = ManualClock::new();
    let (mut h, paused_at) = playing_with_speed_menu_at(&clock);
    // Seen in the real window: the user clicks the menu where it stood before Play. The play
    // button read "Play" then and "Pause replay" now, 50 px wider, so the menu had moved right
    // and the click landed on "Pause replay": the replay stopped. The button keeps one width.
    let now_at = h.get_by_role_and_label(Role::ComboBox, "speed").rect().center();
    assert_eq!(now_at, paused_at, "the speed menu moved when the replay started");
    crate::common::click_at(&h, paused_at);
    h.run_steps(2);
    // The menu is open: its entries are listed.
    assert!(h.query_by_label("16x").is_some(), "the speed menu did not open");
    let start = h.state().0.cursor();
    for _ in 0..30 {
        clock.advance(Duration::from_millis(33));
        h.step();
    }
    assert!(h.query_by_label("16x").is_some(), "the speed menu closed by itself");
    let moved_us = h.state().0.cursor().0 - start.0;
    assert_eq!(moved_us, 30 * 33_000, "the cursor must keep moving at 1x while the menu is open");
    assert!(h.state().0.playback.is_replaying(), "opening the speed menu stopped the replay");
    h.get_by_label("4x").click();
    h.run_steps(2);
    let start = h.state().0.cursor();
    clock.advance(Duration::from_millis(100));
    h.step();
    assert_eq!(h.state().0.playback.speed, 4.0);
    assert_eq!(h.state().0.cursor().0 - start.0, 400_000, "the speed chosen applies at once, still playing");
}

#[test]
fn space_pauses_the_replay_where_it_stood_when_pressed_even_after_a_slow_frame() {
    for clicked_play in [false, true] {
        let clock = ManualClock::new();
        let mut h = playing(&clock);
        if clicked_play {
            // Paused and played again with the mouse: the button the pointer used must not
            // take Space for itself too (one key, one toggle).
            h.get_by_label("Pause replay").click();
            h.run_steps(2);
            h.get_by_label("Play").click();
            h.run_steps(2);
            clock.advance(Duration::from_millis(33));
            h.step();
        }
        let shown = h.state().0.cursor();
        // The machine is loaded: the frame drawn after the one shown took 600 ms of wall time,
        // and Space was pressed while it was drawn. The next frame takes the key in.
        clock.advance(Duration::from_millis(600));
        h.key_press(egui::Key::Space);
        h.step();
        let paused_at = h.state().0.cursor();
        assert!(!h.state().0.playback.playing, "Space did not pause (clicked Play first: {clicked_play})");
        assert_eq!(
            paused_at, shown,
            "the pause waited for the slow frame's wall time: the cursor moved {} ms after the key (clicked Play first: {clicked_play})",
            (paused_at.0 - shown.0) / 1000
        );
        for _ in 0..5 {
            clock.advance(Duration::from_millis(33));
            h.step();
        }
        assert_eq!(h.state().0.cursor(), paused_at, "the cursor stays where Space paused it");
        h.get_by_label("Play");
        // Space again plays on from there, counting wall time from the key.
        h.key_press(egui::Key::Space);
        h.step();
        assert!(h.state().0.playback.is_replaying());
        clock.advance(Duration::from_millis(100));
        h.step();
        assert_eq!(h.state().0.cursor(), SimTime(paused_at.0 + 100_000));
    }
}

#[test]
fn space_pauses_a_live_view_at_the_instant_shown_while_the_events_made_before_the_pause_come_in() {
    // 1000 packets/s each way: every few ms of the run brings events, so the run thread's step
    // in progress and the batches queued for the window always hold some after the key.
    let s = Scenario { send_rate_pps: 1000.0, ..Scenario::default() };
    let mut h = window_harness(AppState::new(s, || {}));
    h.state_mut().0.start();
    assert!(
        crate::common::step_until(&mut h, 60.0, |w| w.0.end_time() > SimTime(300_000)),
        "the live run did not get going"
    );
    let shown = h.state().0.end_time();
    assert_eq!(h.state().0.cursor(), shown, "a live view follows the newest event");
    h.key_press(egui::Key::Space);
    h.step();
    assert!(h.state().0.is_paused(), "Space pauses a live run");
    assert_eq!(h.state().0.cursor(), shown, "the pause took the events that came with its own frame");
    // Everything the run made before it took the pause comes in; the view stays where it was.
    h.run_steps(10);
    assert!(crate::common::step_until(&mut h, 60.0, |w| w.0.lag.waiting_events == 0), "the events did not come in");
    assert!(h.state().0.end_time() >= shown);
    assert_eq!(h.state().0.cursor(), shown, "the paused view ran on with the queued events");
    let end = h.state().0.end_time();
    // Space again resumes, and the view follows the newest event again.
    h.key_press(egui::Key::Space);
    h.step();
    assert!(!h.state().0.is_paused());
    assert!(crate::common::step_until(&mut h, 60.0, |w| w.0.end_time() > end && w.0.cursor() == w.0.end_time()));
    h.state_mut().0.stop();
}
