//! The Tune tab, driven headless with egui_kittest: a small sweep fills the scatter point by
//! point, each labelled with its value; clicking a point picks it, Run as session runs it, Apply
//! copies its values to the live run, and Cancel stops the workers.

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
fn a_small_sweep_labels_its_points_a_click_picks_one_without_asking_and_run_as_session_runs_it() {
    let mut h = harness(Tab::Tune, small_setup());
    // A run shown and not saved: replacing it asks first (the guard), so a click must not.
    h.state_mut().0.lanes = vec![unsaved_recording()];
    assert!(h.state().0.has_unsaved());
    h.step();
    h.get_by_label("Run").click();
    // glenn x 4 delays, hybrid once (Glenn's resend delay does not concern it).
    assert!(step_until(&mut h, 60.0, |w| w.0.tune.done() == 5 && !w.0.tune.running()), "the sweep did not finish");
    h.step();
    h.step();
    let drawn = h.state().1.panels.tune.drawn.clone();
    assert_eq!(drawn.len(), 5, "every finished point is drawn");
    let i = h
        .state()
        .0
        .tune
        .points
        .iter()
        .position(|p| p.values == [("glenn.resend_delay_ms".to_string(), "150".to_string())])
        .unwrap();
    let pos = drawn.iter().find(|(j, _)| *j == i).unwrap().1;
    // Each glenn point is labelled with its resend delay, beside it.
    let texts = crate::window_defects::painted_texts(&h);
    // (a label that would overlap another is left out: most are written)
    let labelled = ["0", "50", "100", "150"]
        .iter()
        .filter(|v| {
            drawn.iter().any(|(_, p)| {
                texts.iter().any(|(t, size, r)| t == *v && *size >= 9.0 && r.left_bottom().distance(*p) < 20.0)
            })
        })
        .count();
    assert!(labelled >= 3, "{labelled} of glenn's 4 points labelled with their delay");
    let label = texts.iter().find(|(t, _, r)| t == "150" && r.left_bottom().distance(pos) < 20.0);
    assert!(label.is_some(), "the 150 ms point's label is not beside it");
    // Hovering shows its values in a tooltip inside the window, and no plot label cut at the edge.
    h.hover_at(pos);
    h.run_steps(3);
    let tip = h.get_by_label_contains("glenn.resend_delay_ms=150\np99").rect();
    assert!(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1280.0, 800.0)).contains_rect(tip), "{tip:?}");
    let coords = crate::window_defects::painted_texts(&h);
    assert!(!coords.iter().any(|(t, _, _)| t.contains("x = ") || t.contains("y = ")), "egui_plot's own hover label");
    // A click picks it: no question, no run, the tab stays.
    click_at(&mut h, pos);
    assert!(h.state().0.guard.is_none(), "a click asked Save/Discard/Cancel");
    assert_eq!(h.state().0.settings.tab, Tab::Tune);
    assert_eq!(h.state().1.panels.tune.selected, Some(i));
    assert!(!h.state().0.is_running());
    // Run as session runs it (after the question, answered Discard).
    h.step();
    h.get_by_label("Run as session").click();
    h.step();
    assert!(h.state().0.guard.is_some(), "running it replaces the unsaved run: asked first");
    h.run_steps(3);
    h.get_by_label("Discard").click();
    h.step();
    h.step();
    let s = &h.state().0;
    assert_eq!(s.settings.tab, Tab::Overview, "the session is shown in the inspector");
    assert_eq!(s.scenario.glenn.resend_delay_ms, 150.0);
    assert_eq!(s.scenario.strategy, Strategy::Glenn);
    assert!(s.is_running(), "the point runs as a live session");
    // Back on Tune, change the live setting, then Apply the point's values again.
    h.state_mut().0.set_param(ParamChange::new("glenn.resend_delay_ms", 20.0));
    h.state_mut().0.settings.tab = Tab::Tune;
    h.step();
    h.get_by_label("Apply").click();
    h.step();
    assert_eq!(h.state().0.scenario.glenn.resend_delay_ms, 150.0, "Apply copied the point's value");
    h.state_mut().0.stop();
}

/// A short recorded run that was never saved.
fn unsaved_recording() -> ackscope::model::Recording {
    let s = Scenario::default();
    let mut sim = ackscope_protocol::Simulation::new(s.clone());
    sim.run_for_secs(1.0);
    let mut rec = ackscope::model::Recording::new(s);
    rec.ingest(sim.drain_events().collect());
    rec
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
