//! The Tune tab, driven headless with egui_kittest: a small sweep fills the scatter point by
//! point, clicking a point runs it as a session, Apply copies its values to the live run, and
//! Cancel stops the workers.

use crate::common::step_until;
use ackscope::app::{AppState, Tab, TuneSetup};
use ackscope::ui::WindowView;
use ackscope::window::frame_ui;
use ackscope_protocol::{ParamChange, Scenario, Strategy};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

type Window = (AppState, WindowView);

/// The whole window, with the views' state kept beside the app state so the test can find where
/// the scatter drew its points.
fn harness(tab: Tab, setup: TuneSetup) -> Harness<'static, Window> {
    let mut state = AppState::new(Scenario::default(), || {});
    state.settings.tab = tab;
    state.settings.intro_dismissed = true;
    let mut view = WindowView::default();
    view.panels.tune.setup = setup;
    Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_ui_state(|ui, w: &mut Window| frame_ui(&mut w.0, &mut w.1, ui), (state, view))
}

fn small_setup() -> TuneSetup {
    TuneSetup {
        param: "glenn.resend_delay_ms".into(),
        start: 0.0,
        end: 150.0,
        step: 50.0,
        strategies: vec!["glenn".into(), "hybrid".into()],
        seeds: 2,
        seconds: 4.0,
    }
}

fn click_at(h: &mut Harness<'static, Window>, pos: egui::Pos2) {
    let button = |pressed| egui::Event::PointerButton {
        pos,
        button: egui::PointerButton::Primary,
        pressed,
        modifiers: Default::default(),
    };
    h.input_mut().events.push(egui::Event::PointerMoved(pos));
    h.step();
    h.input_mut().events.push(button(true));
    h.step();
    h.input_mut().events.push(button(false));
    h.step();
}

#[test]
fn a_small_sweep_shows_its_points_a_click_runs_one_and_apply_sets_it_live() {
    let mut h = harness(Tab::Tune, small_setup());
    h.step();
    h.get_by_label("Run").click();
    // glenn x 4 delays, hybrid once (Glenn's resend delay does not concern it).
    assert!(step_until(&mut h, 60.0, |w| w.0.tune.done() == 5 && !w.0.tune.running()), "the sweep did not finish");
    h.step();
    let drawn = h.state().1.panels.tune.drawn.clone();
    assert_eq!(drawn.len(), 5, "every finished point is drawn");
    // The glenn point at 150 ms: clicking it runs it as a session (its strategy and value).
    let i = h
        .state()
        .0
        .tune
        .points
        .iter()
        .position(|p| p.values == [("glenn.resend_delay_ms".to_string(), "150".to_string())])
        .unwrap();
    let pos = drawn.iter().find(|(j, _)| *j == i).unwrap().1;
    click_at(&mut h, pos);
    let s = &h.state().0;
    assert_eq!(s.settings.tab, Tab::Overview, "the session is shown in the inspector");
    assert_eq!(s.scenario.glenn.resend_delay_ms, 150.0);
    assert_eq!(s.scenario.strategy, Strategy::Glenn);
    assert!(s.is_running(), "the point runs as a live session");
    assert_eq!(h.state().1.panels.tune.selected, Some(i));
    // Back on Tune, change the live setting, then Apply the point's values again.
    h.state_mut().0.set_param(ParamChange::new("glenn.resend_delay_ms", 20.0));
    h.state_mut().0.settings.tab = Tab::Tune;
    h.step();
    h.get_by_label("Apply").click();
    h.step();
    assert_eq!(h.state().0.scenario.glenn.resend_delay_ms, 150.0, "Apply copied the point's value");
    h.state_mut().0.stop();
}

#[test]
fn cancel_stops_the_workers_at_once() {
    let setup = TuneSetup { end: 1000.0, step: 10.0, seconds: 120.0, seeds: 3, ..small_setup() };
    let mut h = harness(Tab::Tune, setup);
    h.step();
    h.get_by_label("Run").click();
    h.step();
    assert!(h.state().0.tune.running());
    h.step();
    h.get_by_label("Cancel").click();
    h.step();
    assert!(!h.state().0.tune.running(), "cancelled");
    // Every worker reads the flag at each simulated second: they all return well within one
    // run's wall time (120 simulated seconds take about 50 ms alone).
    assert!(step_until(&mut h, 2.0, |w| w.0.tune.workers_stopped()), "workers still running after the cancel");
    let done = h.state().0.tune.done();
    assert!(done < h.state().0.tune.points.len(), "{done} points finished before the cancel");
}
