//! The Compare tab driven headless with egui_kittest: its verdict, legend toggles and the tab's
//! wiring into the window.

use crate::common::lossy_recording;
use ackscope::app::{AppState, Tab};
use ackscope::model::{Recording, Shown};
use ackscope::ui::compare_ui::{compare_ui, CompareView};
use ackscope::ui::WindowView;
use ackscope::window::frame_ui;
use ackscope_protocol::{Scenario, Strategy};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

const SEED: u64 = 13;

/// A recording of `strategy` at 15 % loss both ways.
fn recording(strategy: Strategy, secs: f64) -> Recording {
    lossy_recording(SEED, strategy, 15.0, secs)
}

struct Panel {
    lanes: Vec<Recording>,
    view: CompareView,
}

fn panel_harness(lanes: Vec<Recording>) -> Harness<'static, Panel> {
    Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, p: &mut Panel| {
            let cursor = p.lanes[0].store.end_time();
            compare_ui(&Shown::all(&p.lanes, 1), &mut p.view, cursor, ui);
        },
        Panel { lanes, view: CompareView::default() },
    )
}

#[test]
fn compare_shows_a_verdict_and_the_legend_hides_a_strategy() {
    let mut h = panel_harness(vec![recording(Strategy::Glenn, 15.0), recording(Strategy::Ue4, 15.0)]);
    h.run();
    let verdict = h.query_by_label_contains("fewer bytes per message than");
    assert!(verdict.is_some(), "no verdict shown (seed {SEED})");
    assert!(h.query_by_label_contains("p99 was").is_some(), "the verdict names the p99 (seed {SEED})");
    h.get_by_label("show ue4").click();
    h.run();
    assert_eq!(h.state().view.hidden, vec!["ue4".to_string()]);
    h.get_by_label("show ue4").click();
    h.run();
    assert!(h.state().view.hidden.is_empty(), "a second click shows it again");
}

#[test]
fn compare_with_one_lane_says_how_to_start_an_ab_run() {
    let mut h = panel_harness(vec![recording(Strategy::Glenn, 5.0)]);
    h.run();
    assert!(h.query_by_label_contains("start an A/B run").is_some());
}

#[test]
fn the_compare_tab_is_in_the_tab_bar_and_draws_the_lanes() {
    assert_eq!(Tab::parse("compare"), Some(Tab::Compare));
    let mut state = AppState::new(Scenario::default(), || {});
    state.lanes = vec![recording(Strategy::Glenn, 10.0), recording(Strategy::Ue4, 10.0)];
    let mut view = WindowView::default();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_ui_state(move |ui, s: &mut AppState| frame_ui(s, &mut view, ui), state);
    h.run();
    assert!(h.query_by_label_contains("fewer bytes per message than").is_none(), "not on the Overview tab");
    h.get_by_label("Compare").click();
    h.run();
    assert_eq!(h.state().settings.tab, Tab::Compare);
    assert!(h.query_by_label_contains("bytes per message").is_some(), "the Compare tab shows its verdict");
}
