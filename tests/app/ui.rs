//! The window's state and wiring, driven headless with egui_kittest (no display needed).

use std::time::{Duration, Instant};

use crate::common::step_until;
use ackscope::app::AppState;
use ackscope::ui::WindowView;
use ackscope::window::frame_ui;
use ackscope_protocol::{Dir, EventKind, ParamChange, Scenario, Side, SimTime, Strategy};
use egui::accesskit::Role;
use egui_kittest::kittest::{NodeT, Queryable};
use egui_kittest::Harness;

/// The whole window around `scenario`; the views' own state lives in the frame closure, so tests
/// inspect the app state.
fn harness(scenario: Scenario) -> Harness<'static, AppState> {
    let state = AppState::new(scenario, || {});
    let mut view = WindowView::default();
    Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_ui_state(move |ui, s: &mut AppState| frame_ui(s, &mut view, ui), state)
}

/// Steps frames until every file job (open, save) has finished.
fn finish_file_jobs(h: &mut Harness<'static, AppState>) {
    assert!(step_until(h, 30.0, |s| s.file_jobs().is_empty()), "a file job did not finish");
}

#[test]
fn live_run_fills_the_plots() {
    let mut h = harness(Scenario::default());
    h.state_mut().start();
    assert!(h.state().is_running());
    let ok = step_until(&mut h, 10.0, |s| s.lanes[0].store.side(Side::A).rtt_smoothed_ms.len() > 5);
    assert!(ok, "no stats arrived from the live run");
    // Raw RTT samples arrive too, near the 100 ms default RTT.
    let raw = &h.state().lanes[0].store.side(Side::A).rtt_raw_ms;
    assert!(raw.iter().all(|p| (90.0..200.0).contains(&p.y)), "{:?}", &raw[..raw.len().min(5)]);
}

#[test]
fn moving_the_loss_slider_changes_the_running_link() {
    let mut s = Scenario { send_rate_pps: 200.0, ..Scenario::default() };
    s.link.a_to_b.loss_percent = 0.0;
    s.link.b_to_a.loss_percent = 0.0;
    let mut h = harness(s);
    h.state_mut().start();
    h.step();
    h.get_by_role_and_label(Role::Slider, "loss %").set_value_accesskit(60.0);
    h.step();
    let link = h.state().scenario.link.clone();
    assert_eq!(link.a_to_b.loss_percent, 60.0);
    assert_eq!(link.b_to_a.loss_percent, 60.0);
    // The running link follows: true loss over its window climbs towards 60 %.
    let ok = step_until(&mut h, 15.0, |s| s.lanes[0].store.true_loss_percent(Dir::AtoB) > 35.0);
    assert!(ok, "true loss stayed at {:.1}%", h.state().lanes[0].store.true_loss_percent(Dir::AtoB));
}

#[test]
fn latency_slider_changes_the_measured_rtt() {
    let s = Scenario { send_rate_pps: 200.0, ..Scenario::default() };
    let mut h = harness(s);
    h.state_mut().start();
    h.step();
    h.get_by_role_and_label(Role::Slider, "latency ms").set_value_accesskit(150.0);
    h.step();
    assert_eq!(h.state().scenario.link.a_to_b.latency_ms, 150.0);
    let ok = step_until(&mut h, 15.0, |s| s.lanes[0].store.true_rtt_ms.last().is_some_and(|p| p.y > 250.0));
    assert!(ok, "true RTT did not follow the new latency");
}

#[test]
fn stop_joins_the_run_and_keeps_the_recording() {
    let mut h = harness(Scenario::default());
    h.state_mut().start();
    assert!(step_until(&mut h, 10.0, |s| s.lanes[0].store.len() > 100));
    h.get_by_label("Stop").click();
    h.step();
    assert!(!h.state().is_running());
    let n = h.state().lanes[0].store.len();
    h.step();
    assert_eq!(h.state().lanes[0].store.len(), n, "a stopped run must not produce events");
}

#[test]
fn pause_freezes_virtual_time() {
    let mut h = harness(Scenario::default());
    h.state_mut().start();
    assert!(step_until(&mut h, 10.0, |s| s.lanes[0].store.len() > 100));
    h.get_by_label("Pause").click();
    h.step();
    assert!(h.state().is_paused());
    std::thread::sleep(Duration::from_millis(100));
    h.step();
    let t = h.state().lanes[0].store.end_time();
    std::thread::sleep(Duration::from_millis(300));
    h.step();
    assert_eq!(h.state().lanes[0].store.end_time(), t, "time moved while paused");
    h.get_by_label("Resume").click();
    assert!(step_until(&mut h, 10.0, |s| s.lanes[0].store.end_time() > t));
}

#[test]
fn switching_strategy_and_ab_runs_both_on_one_trace() {
    let mut h = harness(Scenario::default());
    h.state_mut().start();
    h.state_mut().set_strategy(Strategy::Ue4, Some(Strategy::Glenn));
    assert_eq!(h.state().lanes.len(), 2);
    // Both lanes past 6 s of virtual time: on a loaded 2-core machine (load 17) that took over 20 s.
    assert!(step_until(&mut h, 60.0, |s| s.lanes.iter().all(|l| l.store.end_time() > SimTime(6_000_000))));
    h.state_mut().stop();
    let s = h.state();
    assert_eq!(s.lanes[0].scenario.as_ref().unwrap().strategy, Strategy::Ue4);
    assert_eq!(s.lanes[1].scenario.as_ref().unwrap().strategy, Strategy::Glenn);
    // Same link trace: every link decision at a send instant both lanes used is the same.
    let fates = |lane: usize| {
        let mut m = std::collections::BTreeMap::new();
        let ev = s.lanes[lane].store.events();
        let mut sent_at = std::collections::HashMap::new();
        for e in ev {
            match e.kind {
                EventKind::LinkSent { dir: Dir::AtoB, uid, .. } => {
                    sent_at.insert(uid, e.time);
                    m.insert(e.time, false);
                }
                EventKind::LinkDropped { uid, dir: Dir::AtoB, .. } => {
                    m.insert(sent_at[&uid], true);
                }
                _ => {}
            }
        }
        m
    };
    let (f0, f1) = (fates(0), fates(1));
    let common: Vec<_> = f0.keys().filter(|t| f1.contains_key(t)).collect();
    assert!(common.len() > 100, "{}", common.len());
    assert!(common.iter().all(|t| f0[t] == f1[t]), "the lanes saw different link fates");
    assert!(common.iter().any(|t| f0[t]), "no loss at all at 5 %?");
}

#[test]
fn a_shipped_session_opens_by_path_and_the_cursor_drives_the_panels() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/recorded-glenn.ron");
    let mut h = harness(Scenario::default());
    h.state_mut().open_path(&path);
    finish_file_jobs(&mut h);
    h.step();
    let s = h.state();
    assert!(s.error.is_none(), "{:?}", s.error);
    assert!(!s.is_running(), "a recording is replayed, not run");
    assert_eq!(s.cursor(), SimTime::ZERO, "replay starts at the beginning");
    assert!(s.end_time() > SimTime(14_000_000));
    // Scrub to 5 s: the estimates shown are the ones at 5 s.
    h.state_mut().playback.seek(SimTime(5_000_000));
    h.step();
    let lane = &h.state().lanes[0];
    let at5 = lane.store.events_until(SimTime(5_000_000)).len();
    assert!(at5 > 100 && at5 < lane.store.len());
    // The packet log shows the packets sent by the cursor, not the whole recording.
    let rows_at5 = lane.packets.sent_by(SimTime(5_000_000));
    assert!(rows_at5 > 500 && rows_at5 < lane.packets.rows().len(), "{rows_at5} of {}", lane.packets.rows().len());
    // Every tab draws the recording at the cursor without trouble.
    for tab in ["Messages", "Slices", "Packets", "Summary", "Overview"] {
        h.get_by_label(tab).click();
        h.step();
    }
    // Play at 16x: the cursor moves forward on its own.
    h.state_mut().playback.speed = 16.0;
    h.get_by_label("Play").click();
    let t0 = h.state().cursor();
    assert!(step_until(&mut h, 5.0, |s| s.cursor() > t0.plus_micros(1_000_000)));
    // The summary tab reads the same store.
    h.get_by_label("Summary").click();
    h.step();
}

#[test]
fn a_bad_file_shows_a_dismissible_error_instead_of_crashing() {
    let dir = std::env::temp_dir().join(format!("ackscope-ui-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("broken.ron");
    std::fs::write(&bad, "(format_version: 1, app_version: \"x\", scenario: (strategy: nonsense))").unwrap();
    let mut h = harness(Scenario::default());
    h.state_mut().open_path(&bad);
    finish_file_jobs(&mut h);
    h.step();
    let err = h.state().error.clone().expect("an error is shown");
    assert!(err.contains("broken.ron") && err.contains("nonsense"), "{err}");
    h.get_by_label("Dismiss").click();
    h.run();
    assert!(h.state().error.is_none(), "still shown: {:?}", h.state().error);
}

#[test]
fn send_chunk_button_queues_a_chunk_that_arrives() {
    let s = Scenario { strategy: Strategy::Chunks, ..Scenario::default() };
    let mut h = harness(s);
    h.state_mut().start();
    h.state_mut().chunk_kib = 16;
    h.step();
    h.get_by_label("Send chunk").click();
    let done = step_until(&mut h, 15.0, |s| {
        s.lanes[0].store.events().iter().any(|e| matches!(e.kind, EventKind::ChunkCompleted { .. }))
    });
    assert!(done, "the chunk did not complete");
    // The slice map's index saw it: every one of its 16 slices acked at the cursor.
    let lane = &h.state().lanes[0];
    let chunk = lane.chunks.chunks().first().expect("a chunk in the slice map");
    assert_eq!(chunk.slices.len(), 16);
    assert_eq!(chunk.progress_at(h.state().cursor()), 1.0);
}

#[test]
fn saving_from_the_window_writes_a_session_that_reloads() {
    let dir = std::env::temp_dir().join(format!("ackscope-ui-save-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("saved.ron");
    let mut h = harness(Scenario::default());
    h.state_mut().start();
    assert!(step_until(&mut h, 10.0, |s| s.lanes[0].store.len() > 500));
    h.state_mut().set_param(ParamChange::new("link.loss_percent", 30.0));
    assert!(step_until(&mut h, 10.0, |s| !s.lanes[0].actions.is_empty()));
    h.state_mut().stop();
    h.state_mut().save_path(&path);
    finish_file_jobs(&mut h);
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
    let loaded = ackscope::session::load(&path).unwrap();
    assert_eq!(loaded.events.len(), h.state().lanes[0].store.len());
    assert_eq!(loaded.actions.len(), 1);
    // A live recording re-runs identically from its header too.
    let again = ackscope::session::rerun(&loaded).unwrap();
    assert!(again == loaded.events, "live recording does not re-run identically");
    assert_eq!(h.state().settings.recent.first(), Some(&path));
}

#[test]
fn the_window_can_run_over_real_udp_sockets() {
    let mut h = harness(Scenario::default());
    h.state_mut().transport = ackscope::runtime::udp::Transport::Udp;
    h.state_mut().start();
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
    let ok = step_until(&mut h, 15.0, |s| s.lanes[0].store.side(Side::A).rtt_smoothed_ms.len() > 5);
    assert!(ok, "no stats arrived over UDP");
    h.state_mut().stop();
    assert!(!h.state().is_running());
    let acked =
        h.state().lanes[0].store.events().iter().filter(|e| matches!(e.kind, EventKind::PacketAcked { .. })).count();
    assert!(acked > 10, "{acked} acks over UDP");
}

/// A recording of about `events` events (glenn, busy workload), saved to a temporary file.
fn large_session(events: usize) -> std::path::PathBuf {
    let mut s = Scenario { send_rate_pps: 200.0, ..Scenario::default() };
    s.workload.reliable_rate_hz = 100.0;
    let mut sim = ackscope_protocol::Simulation::new(s.clone());
    let mut log = Vec::new();
    while log.len() < events {
        sim.run_for_secs(5.0);
        log.extend(sim.drain_events());
    }
    let mut session = ackscope::session::Session::scenario_only(s);
    session.duration_us = log.last().map_or(0, |e| e.time.0);
    session.events = log;
    let dir = std::env::temp_dir().join(format!("ackscope-ui-large-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("large-{events}.ron"));
    ackscope::session::save(&session, &path).unwrap();
    path
}

#[test]
fn a_large_session_opens_on_a_worker_while_the_window_draws_its_progress() {
    let path = large_session(300_000);
    let mut h = harness(Scenario::default());
    h.state_mut().open_path(&path);
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut frames, mut shown) = (0, Vec::new());
    while !h.state().file_jobs().is_empty() && Instant::now() < deadline {
        h.step();
        frames += 1;
        if let Some(bar) = h.query_by_label_contains("Opening large-300000.ron") {
            shown.push(bar.accesskit_node().numeric_value().unwrap_or(-1.0));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(h.state().file_jobs().is_empty(), "still opening after 60 s");
    assert!(frames >= 3, "only {frames} frames drawn while the session opened");
    assert!(shown.iter().any(|v| *v > 0.0 && *v < 100.0), "no progress between 0 and 100 % shown: {shown:?}");
    assert!(shown.windows(2).all(|w| w[0] <= w[1]), "progress went backwards: {shown:?}");
    h.step();
    let s = h.state();
    assert!(s.error.is_none(), "{:?}", s.error);
    assert!(s.lanes[0].store.len() >= 300_000 && !s.is_running());
    assert_eq!(s.file.as_deref(), Some(path.as_path()));
}

#[test]
fn a_whole_number_slider_sets_whole_numbers() {
    let mut h = harness(Scenario::default());
    h.step();
    h.get_by_role_and_label(Role::Slider, "queue bytes").set_value_accesskit(70000.4);
    h.step();
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
    assert_eq!(h.state().scenario.link.a_to_b.queue_bytes, 70000);
}

#[test]
fn closing_the_window_right_after_save_still_writes_the_file() {
    let path = large_session(100_000);
    let copy = path.with_file_name("copy-100000.ron");
    let _ = std::fs::remove_file(&copy);
    let mut state = AppState::new(Scenario::default(), || {});
    state.show_session(ackscope::session::load(&path).unwrap(), None);
    state.save_path(&copy);
    assert_eq!(state.file_jobs().len(), 1, "the save runs on its own thread");
    drop(state);
    assert_eq!(
        ackscope::session::load(&copy).unwrap().events.len(),
        ackscope::session::load(&path).unwrap().events.len()
    );
}
