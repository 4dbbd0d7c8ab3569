//! A live run that keeps only a window in memory, driven in the window: what a save says, what
//! scrubbing before the window shows, and the limits in Settings.

use std::path::PathBuf;

use crate::common::{app_harness, step_until};
use ackscope::app::live_log::LiveLog;
use ackscope::app::{AppCommand, AppState};
use ackscope::session::stream::read_range;
use ackscope_protocol::{Scenario, SimTime};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-live-window-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The whole window, streaming live runs to `dir`.
fn window(dir: &std::path::Path) -> Harness<'static, AppState> {
    let mut state = AppState::new(Scenario::default(), || {});
    state.live_log = LiveLog::new(dir.to_path_buf());
    app_harness(state, egui::vec2(1280.0, 900.0))
}

/// Runs live keeping `window_s` of run time in memory (below what Settings allow, to be quick)
/// until `secs` of run time are recorded and the window dropped events, then stops.
fn run_trimmed(h: &mut Harness<'static, AppState>, window_s: f64, secs: f64) {
    h.state_mut().start();
    h.state_mut().live_log.limits.window_s = window_s;
    let until = ackscope_protocol::SimTime((secs * 1e6) as u64);
    let ran = step_until(h, 30.0, |s| s.end_time() >= until && s.live_log.trimmed());
    assert!(ran, "the live run did not reach {secs} s with a trimmed window");
    h.state_mut().stop();
}

#[test]
fn saving_a_trimmed_run_names_the_events_of_the_saved_file_not_the_windows() {
    let dir = temp_dir("save");
    let mut h = window(&dir);
    run_trimmed(&mut h, 1.0, 4.0);
    let in_memory = h.state().lanes[0].store.len();
    let path = dir.join("saved.ron");
    h.state_mut().save_path(&path);
    assert!(step_until(&mut h, 20.0, |s| s.file_jobs().is_empty()), "the save did not finish");
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
    let saved = ackscope::session::load(&path).unwrap();
    assert!(saved.events.len() > in_memory, "{} saved, {in_memory} in memory", saved.events.len());
    let notice = h.state().notice.clone().unwrap_or_default();
    assert!(notice.contains(&format!("{} events", saved.events.len())), "{notice}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Types `text` into the number field on the row of the label `label`, then Enter.
fn type_beside(h: &mut Harness<'static, AppState>, label: &str, text: &str) {
    let row = h.get_by_label(label).rect();
    crate::common::type_beside(h, row, 6.0, text);
}

#[test]
fn the_live_limits_are_set_in_the_settings_menu_within_their_ranges() {
    let dir = temp_dir("settings");
    let mut h = window(&dir);
    h.state_mut().start();
    h.step();
    h.get_by_label("Settings").click();
    // The menu settles its place (kept on screen) over the first frames.
    for _ in 0..4 {
        h.step();
    }
    type_beside(&mut h, "Time window", "5");
    assert_eq!(h.state().settings.live_window_min, 5.0);
    assert_eq!(h.state().live_log.limits.window_s, 300.0, "the run going on takes the new window");
    // Below its range, the cap is brought up to the smallest allowed.
    type_beside(&mut h, "Memory cap", "100");
    assert_eq!(h.state().settings.live_max_mib, 256);
    assert_eq!(h.state().live_log.limits.max_bytes, 256 << 20);
    h.state_mut().stop();
    // The next run starts with them too.
    h.state_mut().live_log.limits = Default::default();
    h.state_mut().start();
    assert_eq!(h.state().live_log.limits.window_s, 300.0);
    h.state_mut().stop();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Lane 0's events as the panels show them.
fn shown_events(h: &Harness<'static, AppState>) -> Vec<ackscope_protocol::Event> {
    h.state().shown_lanes()[0].store.events().to_vec()
}

/// Scrubs a trimmed run to `at` and waits until the panels show a slice read back around it:
/// the slice's range, checked against the stream file and the recording in memory.
fn scrub_before_window(h: &mut Harness<'static, AppState>, at: SimTime) -> (SimTime, SimTime) {
    let window_start = h.state().lanes[0].store.events()[0].time;
    assert!(at < window_start, "{at:?} is in the window starting at {window_start:?}");
    h.state_mut().apply(AppCommand::SeekTo(at));
    let shown =
        step_until(h, 20.0, |s| s.readback().shown_range().is_some_and(|(from, until)| from <= at && at < until));
    assert!(shown, "no slice read back for {at:?}: {:?}", h.state().readback().status());
    let (from, until) = h.state().readback().shown_range().unwrap();
    assert!(until <= window_start, "the slice {from:?}..{until:?} reaches into the window");
    let status = h.state().readback().status().unwrap_or_default();
    assert!(status.contains("before the kept window") && status.contains("live-"), "{status}");
    (from, until)
}

#[test]
fn scrubbing_before_the_kept_window_shows_the_run_read_back_from_the_stream_file() {
    let dir = temp_dir("read-back");
    let mut h = window(&dir);
    // While the run goes on: the cursor stays where it was put, the run keeps trimming.
    h.state_mut().start();
    h.state_mut().live_log.limits.window_s = 1.0;
    let ran = step_until(&mut h, 30.0, |s| s.end_time() >= SimTime(3_000_000) && s.live_log.trimmed());
    assert!(ran, "the live run did not trim its window");
    let at = SimTime(500_000);
    let (from, until) = scrub_before_window(&mut h, at);
    let file = h.state_mut().live_log.files()[0].clone();
    let want = read_range(&file, from, until).unwrap();
    assert!(want.len() > 100 && want[0].time < SimTime(1_000_000), "{} events", want.len());
    assert!(shown_events(&h) == want, "{} events shown, {} in the file", shown_events(&h).len(), want.len());
    h.state_mut().stop();

    // The finished run: scrubbed back, again the file's events; into the window, the recording.
    let at = SimTime(1_200_000);
    let (from, until) = scrub_before_window(&mut h, at);
    let file = h.state().live_log.finished_files().last().unwrap().clone();
    let want = read_range(&file, from, until).unwrap();
    assert!(
        !want.is_empty() && shown_events(&h) == want,
        "{} shown, {} in the file",
        shown_events(&h).len(),
        want.len()
    );
    let end = h.state().end_time();
    h.state_mut().apply(AppCommand::SeekTo(end));
    h.step();
    assert!(h.state().readback().shown_range().is_none() && h.state().readback().status().is_none());
    assert_eq!(h.state().shown_lanes()[0].id(), h.state().lanes[0].id(), "the recording in memory again");
    let _ = std::fs::remove_dir_all(&dir);
}
