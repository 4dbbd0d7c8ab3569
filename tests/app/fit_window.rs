//! The Link panel loads a fitted link file (`ackscope fit --out`): *Load fitted link...* asks
//! for it (a native dialog, or the window's path field where none can be shown, as here), and
//! the link takes the file's values, a change per setting, in the live run; a bad file changes
//! nothing and says which file and which field. Driven headless with egui_kittest.

use std::path::PathBuf;

use crate::common::{app_harness, step_until, type_path, without_dialogs, WINDOW_SIZE};
use ackscope::app::{AppState, PromptKind};
use ackscope::fit::links::{write_link_file, LinkFile};
use ackscope_protocol::{LinkConfig, Scenario};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

fn window(state: AppState) -> Harness<'static, AppState> {
    app_harness(without_dialogs(state), WINDOW_SIZE)
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-fit-window-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Clicks *Load fitted link...*, waits for the path field (no dialog here) and types `path`.
fn load(h: &mut Harness<'static, AppState>, path: &std::path::Path) {
    h.get_by_label("Load fitted link...").click();
    assert!(step_until(h, 5.0, |s| s.prompt == Some(PromptKind::LinkFile)), "no path field after the dialog failed");
    // A modal's first frame only measures it.
    h.run_steps(2);
    h.get_by_label("Load a fitted link file (ackscope fit --out)");
    type_path(h, path);
    h.run_steps(2);
}

#[test]
fn the_link_panel_loads_a_fitted_link_and_refuses_a_bad_one_naming_file_and_field() {
    let mut h = window(AppState::new(Scenario::default(), || {}));
    h.run_steps(2);
    let fitted = LinkConfig { latency_ms: 87.5, jitter_ms: 6.25, loss_percent: 3.5, ..LinkConfig::default() };
    let back = LinkConfig { latency_ms: 31.0, duplicate_percent: 1.5, ..LinkConfig::default() };
    let good = temp("fitted.ron");
    write_link_file(&good, &LinkFile { a_to_b: Some(fitted), b_to_a: Some(back) }, "fitted by a test").unwrap();
    load(&mut h, &good);
    let s = h.state();
    assert!(s.error.is_none(), "{:?}", s.error);
    assert_eq!(s.scenario.link.a_to_b, fitted, "A->B takes the file's link");
    assert_eq!(s.scenario.link.b_to_a, back, "B->A takes the file's link");
    let notice = s.notice.clone().expect("a confirmation");
    assert!(notice.contains("fitted.ron") && notice.contains("link settings changed"), "{notice}");
    assert!(s.prompt.is_none(), "the path field closed");

    // A typo in a field: nothing changes, and the message names the file and the field.
    let bad = temp("typo.ron");
    std::fs::write(&bad, "(a_to_b: (latency_msec: 10.0))").unwrap();
    let before = h.state().scenario.clone();
    load(&mut h, &bad);
    let s = h.state();
    let e = s.error.clone().expect("refused");
    assert!(e.contains("typo.ron") && e.contains("latency_msec"), "{e}");
    assert_eq!(s.scenario, before, "a refused file changes nothing");
    // A value out of range: named with its range.
    let wide = temp("wide.ron");
    std::fs::write(&wide, "(b_to_a: (loss_percent: 250.0))").unwrap();
    h.state_mut().error = None;
    load(&mut h, &wide);
    let e = h.state().error.clone().expect("refused");
    assert!(e.contains("wide.ron") && e.contains("loss_percent") && e.contains("100"), "{e}");
    assert_eq!(h.state().scenario, before);
}
