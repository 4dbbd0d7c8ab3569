//! One parameter change, four ways in: the window's slider on a live run, `--set` text, a
//! session file's action (its text form, new and version 1) and an action sent to a live run.
//! Each becomes the same typed change, which gives the same scenario and, applied at the same
//! instant of a run, the same events.

use std::time::{Duration, Instant};

use crate::common::step_until;
use ackscope::app::AppState;
use ackscope::params::overrides;
use ackscope::runtime::{Lanes, LiveRun};
use ackscope::session::{self, Session};
use ackscope::ui::WindowView;
use ackscope::window::frame_ui;
use ackscope_protocol::{Action, EventKind, ParamChange, ParamValue, Scenario, SimTime, Step};
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

const SEED: u64 = 41;

fn base() -> Scenario {
    let mut s = Scenario { seed: SEED, ..Scenario::default() };
    s.link.a_to_b.loss_percent = 0.0;
    s.link.b_to_a.loss_percent = 0.0;
    s
}

/// The `set` change recorded in `log`.
fn the_set(log: &[Step]) -> Option<ParamChange> {
    log.iter().find_map(|s| s.as_set().cloned())
}

/// The loss slider moved to 20 on a live run in the window: the change the run recorded, and the
/// window's scenario after it.
fn from_the_window() -> (ParamChange, Scenario) {
    let mut h = Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        {
            let mut view = WindowView::default();
            move |ui, s: &mut AppState| frame_ui(s, &mut view, ui)
        },
        AppState::new(base(), || {}),
    );
    h.state_mut().settings.intro_dismissed = true;
    h.state_mut().start();
    h.step();
    h.get_by_role_and_label(Role::Slider, "loss %").set_value_accesskit(20.0);
    assert!(step_until(&mut h, 10.0, |s| the_set(&s.lanes[0].actions).is_some()), "the run recorded no change");
    (the_set(&h.state().lanes[0].actions).unwrap(), h.state().scenario.clone())
}

/// The change sent straight to a live run as an action, as it recorded it.
fn from_a_live_action() -> ParamChange {
    let mut run = LiveRun::spawn(vec![base()], || {});
    assert!(run.send(Lanes::All, Action::Set(ParamChange::parse("link.loss_percent", "20"))));
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut log = Vec::new();
    while the_set(&log).is_none() && Instant::now() < deadline {
        log.extend(run.try_batches().flat_map(|b| b.actions));
        std::thread::sleep(Duration::from_millis(10));
    }
    run.stop();
    the_set(&log).expect("the live run recorded no change")
}

/// The change as a session file holds it: written as text in today's format and in version 1's
/// `changes` list, each read back.
fn from_session_files() -> [ParamChange; 2] {
    let dir = std::env::temp_dir().join(format!("ackscope-typed-change-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut s = Session::scenario_only(base());
    s.actions = vec![Step::at_secs(1.0, Action::Set(ParamChange::parse("link.loss_percent", "20.0")))];
    let path = dir.join("typed.ron");
    session::save(&s, &path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(r#"value:"20""#), "files keep the text form, canonical:\n{text}");
    let now = the_set(&session::load(&path).unwrap().actions).unwrap();
    let v1: Step = session::Change { at_us: 1_000_000, name: "link.loss_percent".into(), value: "20".into() }.into();
    [now, v1.as_set().cloned().unwrap()]
}

/// A run of the base scenario to 3 s with `change` applied at 1 s: its events.
fn events_with(change: &ParamChange) -> Vec<ackscope_protocol::Event> {
    let step = Step::new(SimTime(1_000_000), Action::Set(change.clone()));
    session::run_lane(&base(), &[step], SimTime(3_000_000)).unwrap().1
}

#[test]
fn the_window_set_a_file_and_a_live_action_apply_one_typed_change() {
    let want = ParamChange::new("link.loss_percent", 20.0);
    assert_eq!(want.value(), &ParamValue::Int(20));
    let (window, window_scenario) = from_the_window();
    let cli = overrides::parse("link.loss_percent=20").unwrap();
    let [file, file_v1] = from_session_files();
    let live = from_a_live_action();
    for (how, change) in [("window", &window), ("--set", &cli), ("file", &file), ("v1 file", &file_v1), ("live", &live)]
    {
        assert_eq!(change, &want, "the change from the {how}");
    }
    // The same scenario: the window's, and `--set`'s from the same start.
    let mut cli_scenario = base();
    overrides::apply(&mut cli_scenario, "link.loss_percent=20").unwrap();
    let mut typed = base();
    typed.apply_change(&want).unwrap();
    assert_eq!(cli_scenario, typed);
    assert_eq!(window_scenario, typed);
    assert_eq!((typed.link.a_to_b.loss_percent, typed.link.b_to_a.loss_percent), (20.0, 20.0));
    // The same events, whichever way the change came, with the change reported once as text.
    let events = events_with(&window);
    for change in [&cli, &file, &file_v1, &live] {
        assert!(events_with(change) == events, "seed {SEED}: {change} ran otherwise than the window's");
    }
    let reported: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ParamChanged { name, value } => Some((e.time, name.as_str(), value.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(reported, [(SimTime(1_000_000), "link.loss_percent", "20")]);
    let lost_after = events
        .iter()
        .filter(|e| e.time > SimTime(1_000_000) && matches!(e.kind, EventKind::LinkDropped { .. }))
        .count();
    assert!(lost_after > 0, "seed {SEED}: 20 % loss dropped nothing");
}
