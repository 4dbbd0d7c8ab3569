//! `ack.ack_expiry_ms = 0` (acks never expire: false acks once sequence numbers wrap) is refused
//! on the command line without `--allow-false-acks`, and the window, which takes it, says so
//! beside the control: the strategy parameters holding it start closed, so the test opens them as
//! a user would.

use crate::common::{app_harness, WINDOW_SIZE};
use ackscope::app::AppState;
use ackscope::cli::common::{scenario_from, ScenarioArgs};
use ackscope_protocol::Scenario;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

const WARNING: &str = "warning: 0 = acks never expire";
const GROUP: &str = "Packet acks and estimators";
const SLIDER: &str = "ack expiry ms";

/// The whole window at 1280x800 on a live run of `scenario`.
fn window(scenario: Scenario) -> Harness<'static, AppState> {
    let mut state = AppState::new(scenario, || {});
    state.start();
    let mut h = app_harness(state, WINDOW_SIZE);
    h.step();
    h
}

/// Opens *Strategy parameters* (closed at start) and in it the ack settings' group (open when
/// the running strategy uses them), by accessibility actions: the controls scroll, and the
/// groups may lie below the fold.
fn open_ack_group(h: &mut Harness<'static, AppState>) {
    h.get_by_label("Strategy parameters").click_accesskit();
    h.step();
    h.step();
    if !shows(h, SLIDER) {
        h.get_by_label(GROUP).click_accesskit();
        h.step();
        h.step();
    }
    assert!(shows(h, SLIDER), "the '{GROUP}' group did not open");
}

/// Whether any widget's label contains `text` (a slider and its number field share theirs).
fn shows(h: &Harness<'static, AppState>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

/// The scenario a run loads from `--set ack.ack_expiry_ms=0`, with or without the flag.
fn run_args(allow_false_acks: bool) -> ScenarioArgs {
    ScenarioArgs {
        scenario: None,
        seconds: Some(1.0),
        seed: None,
        set: vec!["ack.ack_expiry_ms=0".into()],
        no_verify: false,
        allow_false_acks,
    }
}

#[test]
fn ack_expiry_zero_with_allow_false_acks_shows_the_warning_in_the_controls() {
    let refused = run_args(false).load().expect_err("ack.ack_expiry_ms=0 loaded without --allow-false-acks");
    assert!(refused.contains("--allow-false-acks"), "{refused}");
    let (scenario, _) = run_args(true).load().expect("ack.ack_expiry_ms=0 with --allow-false-acks");
    assert_eq!(scenario.ack.ack_expiry_ms, 0.0);
    let mut h = window(scenario);
    assert!(!shows(&h, WARNING), "a warning while the group is closed");
    open_ack_group(&mut h);
    assert!(shows(&h, WARNING), "no ack-expiry warning in the opened '{GROUP}' group");
}

#[test]
fn the_window_started_with_expiry_zero_warns_and_the_default_does_not() {
    // `ackscope --set ack.ack_expiry_ms=0` (the window takes it and warns).
    let (scenario, _) = scenario_from(None, &["ack.ack_expiry_ms=0".into()], None).expect("the window's overrides");
    let mut h = window(scenario);
    open_ack_group(&mut h);
    assert!(shows(&h, WARNING), "no warning with ack.ack_expiry_ms=0");

    let mut h = window(Scenario::default());
    assert!(Scenario::default().ack.ack_expiry_ms > 0.0);
    open_ack_group(&mut h);
    assert!(!shows(&h, WARNING), "a warning with the default expiry");
}
