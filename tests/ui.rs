//! The window's state and wiring, driven headless with egui_kittest (no display needed).

use std::time::{Duration, Instant};

use ackscope::ui::AppState;
use ackscope_protocol::{Dir, Scenario, Side};
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

fn harness(scenario: Scenario) -> Harness<'static, AppState> {
    let state = AppState::new(scenario, || {});
    Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(|ui, s: &mut AppState| s.ui(ui), state)
}

/// Steps frames until `cond` holds or `secs` of wall time pass.
fn step_until(h: &mut Harness<'static, AppState>, secs: f64, cond: impl Fn(&AppState) -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < deadline {
        h.step();
        if cond(h.state()) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn live_run_fills_the_plots() {
    let mut h = harness(Scenario::default());
    h.state_mut().start();
    assert!(h.state().is_running());
    let ok = step_until(&mut h, 10.0, |s| s.store.side(Side::A).rtt_smoothed_ms.len() > 5);
    assert!(ok, "no stats arrived from the live run");
    // Raw RTT samples arrive too, near the 100 ms default RTT.
    let raw = &h.state().store.side(Side::A).rtt_raw_ms;
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
    let link = h.state().scenario.link;
    assert_eq!(link.a_to_b.loss_percent, 60.0);
    assert_eq!(link.b_to_a.loss_percent, 60.0);
    // The running link follows: true loss over its window climbs towards 60 %.
    let ok = step_until(&mut h, 15.0, |s| s.store.true_loss_percent(Dir::AtoB) > 35.0);
    assert!(ok, "true loss stayed at {:.1}%", h.state().store.true_loss_percent(Dir::AtoB));
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
    let ok = step_until(&mut h, 15.0, |s| s.store.true_rtt_ms.last().is_some_and(|p| p.y > 250.0));
    assert!(ok, "true RTT did not follow the new latency");
}

#[test]
fn stop_joins_the_run_and_keeps_the_recording() {
    let mut h = harness(Scenario::default());
    h.state_mut().start();
    assert!(step_until(&mut h, 10.0, |s| s.store.len() > 100));
    h.get_by_label("Stop").click();
    h.step();
    assert!(!h.state().is_running());
    let n = h.state().store.len();
    h.step();
    assert_eq!(h.state().store.len(), n, "a stopped run must not produce events");
}

#[test]
fn pause_freezes_virtual_time() {
    let mut h = harness(Scenario::default());
    h.state_mut().start();
    assert!(step_until(&mut h, 10.0, |s| s.store.len() > 100));
    h.get_by_label("Pause").click();
    h.step();
    assert!(h.state().is_paused());
    std::thread::sleep(Duration::from_millis(100));
    h.step();
    let t = h.state().store.end_time();
    std::thread::sleep(Duration::from_millis(300));
    h.step();
    assert_eq!(h.state().store.end_time(), t, "time moved while paused");
    h.get_by_label("Resume").click();
    assert!(step_until(&mut h, 10.0, |s| s.store.end_time() > t));
}
