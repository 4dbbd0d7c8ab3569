//! The left panel's controls commit one change when the user lets go: typing a value sends it on
//! Enter (never the digits typed on the way), a slider drag sends the value it was released at.
//! Checked on what reaches the live run: the changes it records.

use crate::common::{app_harness, WINDOW_SIZE};
use std::time::{Duration, Instant};

use ackscope::app::AppState;
use ackscope::session::Change;
use ackscope_protocol::Scenario;
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

/// The whole window on a live run of the default scenario.
fn live_window() -> Harness<'static, AppState> {
    let mut state = AppState::new(Scenario::default(), || {});
    state.start();
    let mut h = app_harness(state, WINDOW_SIZE);
    h.step();
    h
}

/// Changes of parameters whose name ends in `field` that the run recorded.
fn recorded(h: &Harness<'static, AppState>, field: &str) -> Vec<Change> {
    let lane = &h.state().lanes[0];
    let sets = lane.actions.iter().filter_map(|s| s.as_set().map(|c| (s.at.0, c)));
    sets.filter(|(_, c)| c.name().ends_with(field))
        .map(|(at_us, c)| Change { at_us, name: c.name().into(), value: c.value().to_string() })
        .collect()
}

/// Steps frames for `ms` of wall time, so anything sent to the run has come back recorded.
fn settle(h: &mut Harness<'static, AppState>, ms: u64) {
    let until = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < until {
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The number field being typed into.
fn focused_field<'h>(h: &'h Harness<'static, AppState>) -> egui_kittest::Node<'h> {
    h.get_all_by_role(Role::SpinButton).find(|n| n.is_focused()).expect("a number field in edit mode")
}

/// Clicks the number field beside the slider labelled `label`, which turns it into a text field.
fn edit_value_of(h: &mut Harness<'static, AppState>, label: &str) {
    let slider = h.get_by_role_and_label(Role::Slider, label).rect();
    h.get_all_by_role(Role::SpinButton)
        .filter(|n| (n.rect().center().y - slider.center().y).abs() < 4.0 && n.rect().left() >= slider.right())
        .min_by(|a, b| a.rect().left().total_cmp(&b.rect().left()))
        .expect("a number field beside the slider")
        .click();
    h.step();
    h.step();
}

#[test]
fn typing_150_into_latency_sends_one_change_on_enter() {
    let mut h = live_window();
    let before = h.state().scenario.link.a_to_b.latency_ms;
    edit_value_of(&mut h, "latency ms");
    for digit in ["1", "5", "0"] {
        focused_field(&h).type_text(digit);
        settle(&mut h, 150);
        assert_eq!(h.state().scenario.link.a_to_b.latency_ms, before, "applied while typing '{digit}'");
        assert!(recorded(&h, "latency_ms").is_empty(), "the run got a change while typing");
    }
    h.key_press(egui::Key::Enter);
    settle(&mut h, 600);
    assert_eq!(h.state().scenario.link.a_to_b.latency_ms, 150.0);
    let changes = recorded(&h, "latency_ms");
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!((changes[0].name.as_str(), changes[0].value.as_str()), ("link.latency_ms", "150"));
}

#[test]
fn typing_into_loss_and_pressing_escape_changes_nothing() {
    let mut h = live_window();
    edit_value_of(&mut h, "loss %");
    focused_field(&h).type_text("15");
    settle(&mut h, 150);
    h.key_press(egui::Key::Escape);
    settle(&mut h, 400);
    assert_eq!(h.state().scenario.link.a_to_b.loss_percent, Scenario::default().link.a_to_b.loss_percent);
    assert!(recorded(&h, "loss_percent").is_empty());
}

#[test]
fn dragging_a_slider_sends_one_change_on_release() {
    let mut h = live_window();
    let before = h.state().scenario.glenn.resend_delay_ms;
    // The strategy group starts closed: open it, then drag along the slider in eight moves.
    h.get_by_label("Strategy parameters").click();
    h.step();
    h.step();
    let rail = h.get_by_role_and_label(Role::Slider, "resend delay ms").rect();
    let at = |f: f32| egui::pos2(rail.left() + rail.width() * f, rail.center().y);
    h.hover_at(at(0.1));
    h.step();
    h.drag_at(at(0.1));
    h.step();
    for i in 2..10 {
        h.hover_at(at(i as f32 / 10.0));
        settle(&mut h, 60);
        assert_eq!(h.state().scenario.glenn.resend_delay_ms, before, "applied during the drag");
    }
    h.drop_at(at(0.9));
    settle(&mut h, 600);
    let changes = recorded(&h, "resend_delay_ms");
    assert_eq!(changes.len(), 1, "{changes:?}");
    let v: f64 = changes[0].value.parse().unwrap();
    assert_eq!(h.state().scenario.glenn.resend_delay_ms, v);
    assert!(v != before, "the drag changed nothing");
}
