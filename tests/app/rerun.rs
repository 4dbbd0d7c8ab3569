//! Re-run equals the recording, end to end: the window is driven as a user would (A/B on, a
//! field typed, a burst, a chunk, a strategy change, a restart, stop), saved, then run again
//! headless (`ackscope run SAVED.ron --out AGAIN.ron`) and with the window's *Re-run* button;
//! every lane's events must be identical to the recording's.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::common::{app_harness, step_until};
use ackscope::app::{AppCommand, AppState};
use ackscope::session;
use ackscope_protocol::{Action, Scenario, SimTime, Strategy};
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

/// The whole window, nothing running yet.
fn window() -> Harness<'static, AppState> {
    let state = AppState::new(Scenario::default(), || {});
    app_harness(state, egui::vec2(1280.0, 900.0))
}

/// Steps frames until the first lane has recorded `secs` more of virtual time.
fn run_on(h: &mut Harness<'static, AppState>, secs: f64) {
    let until = h.state().end_time().plus_micros((secs * 1e6) as u64);
    assert!(step_until(h, 20.0, |s| s.end_time() >= until), "the live run did not advance {secs} s");
}

/// Steps frames until every lane has logged `n` actions.
fn wait_for_actions(h: &mut Harness<'static, AppState>, n: usize) {
    let ok = step_until(h, 10.0, |s| s.lanes.iter().all(|l| l.actions.len() >= n));
    let logged: Vec<usize> = h.state().lanes.iter().map(|l| l.actions.len()).collect();
    assert!(ok, "expected {n} actions per lane, got {logged:?}");
}

/// Types `text` into the number field beside the slider labelled `label`, then Enter.
fn type_into(h: &mut Harness<'static, AppState>, label: &str, text: &str) {
    let slider = h.get_by_role_and_label(Role::Slider, label).rect();
    crate::common::type_beside(h, slider, 4.0, text);
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-rerun-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `ackscope run SAVED --out AGAIN`, as a user types it.
fn cli_rerun(saved: &Path, again: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(["run", saved.to_str().unwrap(), "--out", again.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "ackscope run failed: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_session_driven_in_the_window_re_runs_to_identical_events_headless_and_with_the_button() {
    let mut h = window();
    // A/B from the top bar starts glenn vs ue4 on one trace.
    h.get_by_label("A/B").click();
    h.step();
    assert_eq!(h.state().lanes.len(), 2, "A/B did not start two lanes");
    run_on(&mut h, 1.0);

    type_into(&mut h, "latency ms", "80");
    wait_for_actions(&mut h, 1);
    run_on(&mut h, 0.4);
    h.get_by_label("Send burst").click();
    h.step();
    wait_for_actions(&mut h, 2);
    run_on(&mut h, 0.4);
    // A strategy change keeps both lanes (an action in the recording, no new run).
    h.state_mut().apply(AppCommand::SetStrategy { strategy: Strategy::Chunks, ab: Some(Strategy::Fragments) });
    h.step();
    wait_for_actions(&mut h, 3);
    run_on(&mut h, 0.3);
    h.state_mut().chunk_kib = 16;
    h.get_by_label("Send chunk").click();
    h.step();
    wait_for_actions(&mut h, 4);
    run_on(&mut h, 0.5);
    h.get_by_label("Restart").click();
    h.step();
    wait_for_actions(&mut h, 5);
    run_on(&mut h, 0.5);
    h.get_by_label("Stop").click();
    h.step();
    assert!(!h.state().is_running());
    assert!(h.state().error.is_none(), "{:?}", h.state().error);

    let names: Vec<&str> = h.state().lanes[0].actions.iter().map(|s| s.action.name()).collect();
    assert_eq!(names, ["set", "burst", "strategy", "send_chunk", "restart"], "the first lane's action log");
    assert_eq!(h.state().lanes[1].actions[2].action, Action::Strategy(Strategy::Fragments));
    assert!(h.state().lanes[0].actions.windows(2).all(|w| w[0].at <= w[1].at));
    assert!(h.state().lanes[0].actions[0].at > SimTime::ZERO);

    let dir = temp_dir();
    let (saved, again) = (dir.join("driven.ron"), dir.join("again.ron"));
    h.state_mut().save_path(&saved);
    assert!(step_until(&mut h, 30.0, |s| s.file_jobs().is_empty()), "the save did not finish");
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
    let recorded = session::load(&saved).unwrap();
    assert_eq!(recorded.ab, Some(Strategy::Ue4), "the A/B lane's starting strategy is saved");
    assert_eq!(recorded.events.len(), h.state().lanes[0].store.len());
    assert_eq!(recorded.ab_events.len(), h.state().lanes[1].store.len());
    assert_eq!(recorded.ab_actions.len(), 5);

    cli_rerun(&saved, &again);
    let rerun = session::load(&again).unwrap();
    for (lane, (a, b)) in
        [(&recorded.events, &rerun.events), (&recorded.ab_events, &rerun.ab_events)].iter().enumerate()
    {
        let first = a.iter().zip(b.iter()).position(|(x, y)| x != y);
        assert!(
            a.len() == b.len() && first.is_none(),
            "lane {lane}: {} vs {} events, first difference at {first:?}",
            a.len(),
            b.len()
        );
    }
    assert_eq!(
        (rerun.actions.clone(), rerun.ab_actions.clone()),
        (recorded.actions.clone(), recorded.ab_actions.clone())
    );

    // The window's Re-run button says the same.
    h.get_by_label("Re-run").click();
    let started = Instant::now();
    assert!(step_until(&mut h, 60.0, |s| !s.is_rerunning() && s.rerun_outcome().is_some()), "no re-run outcome");
    let outcome = h.state().rerun_outcome().unwrap().to_string();
    assert!(outcome.starts_with("Re-run identical"), "{outcome} after {:?}", started.elapsed());
    assert_eq!(h.state().lanes.len(), 2);
    assert!(h.state().lanes[1].store.events() == &rerun.ab_events[..]);
    let _ = std::fs::remove_dir_all(&dir);
}
