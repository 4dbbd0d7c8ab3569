//! Saving and opening from the window always work: where no file dialog can be shown the
//! window's own path field takes over, a save ends in a confirmation naming the file and its
//! size, a run nobody saved is not discarded without asking, and what interrupted saves left
//! behind is tidied. Driven headless with egui_kittest, with a dialog backend that finds no
//! dialog (as rfd's portal backend does on a machine without a desktop portal).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{app_harness, step_until, type_path, without_dialogs, WINDOW_SIZE};
use ackscope::app::{AppState, PromptKind};
use ackscope_protocol::Scenario;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

/// The whole window, with file dialogs that cannot be shown.
fn window(state: AppState) -> Harness<'static, AppState> {
    app_harness(without_dialogs(state), WINDOW_SIZE)
}

/// A fresh directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-files-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn without_a_dialog_the_path_field_opens_and_saves_a_real_file() {
    let dir = temp_dir("prompt");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/recorded-glenn.ron");
    let source = dir.join("source.ron");
    std::fs::copy(&shipped, &source).unwrap();
    let mut h = window(AppState::new(Scenario::default(), || {}));
    h.step();
    h.get_by_label("Open...").click();
    assert!(step_until(&mut h, 5.0, |s| s.prompt == Some(PromptKind::Open)), "no path field after the dialog failed");
    h.run_steps(2);
    h.get_by_label("Open a session file");
    type_path(&mut h, &source);
    assert!(step_until(&mut h, 30.0, |s| s.file_jobs().is_empty() && s.file.is_some()), "the file did not open");
    let s = h.state();
    assert!(s.error.is_none(), "{:?}", s.error);
    assert_eq!(s.file.as_deref(), Some(source.as_path()));
    assert!(s.prompt.is_none());
    let events = s.lanes[0].store.len();
    assert_eq!(events, ackscope::session::load(&source).unwrap().events.len());

    // Save: the path field again (the dialog is known to be missing now), then a confirmation.
    let target = dir.join("copy.ron");
    h.get_by_label("Save...").click();
    h.run_steps(3);
    assert_eq!(h.state().prompt, Some(PromptKind::Save));
    type_path(&mut h, &target);
    assert!(step_until(&mut h, 30.0, |s| s.file_jobs().is_empty() && s.notice.is_some()), "no confirmation");
    let size = std::fs::metadata(&target).unwrap().len();
    assert!(size > 1000);
    let notice = h.state().notice.clone().unwrap();
    assert!(notice.contains(&target.display().to_string()), "{notice}");
    assert!(notice.contains("KiB") && notice.contains(&format!("{events} events")), "{notice}");
    // The notice is an overlay: its first frame only measures it.
    h.run_steps(2);
    h.get_by_label_contains("Saved ");
    assert_eq!(ackscope::session::load(&target).unwrap().events.len(), events);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_save_says_why() {
    let dir = temp_dir("fail");
    let mut h = window(AppState::new(Scenario::default(), || {}));
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/recorded-glenn.ron");
    h.state_mut().show_session(ackscope::session::load(&shipped).unwrap(), None);
    // A directory where the file should go: the rename fails.
    let target = dir.join("taken.ron");
    std::fs::create_dir_all(target.join("inside")).unwrap();
    h.state_mut().save_path(&target);
    assert!(step_until(&mut h, 30.0, |s| s.file_jobs().is_empty()));
    let err = h.state().error.clone().expect("an error is shown");
    assert!(err.starts_with("Not saved") && err.contains("taken.ron"), "{err}");
    assert!(h.state().notice.is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn turning_ab_on_asks_before_discarding_an_unsaved_run_and_cancel_keeps_it() {
    let mut h = window(AppState::new(Scenario::default(), || {}));
    h.state_mut().start();
    assert!(step_until(&mut h, 10.0, |s| s.lanes[0].store.len() > 100));
    let lane = h.state().lanes[0].id();
    // A second lane means a new run (Restart and a strategy change are actions in the run).
    h.get_by_label("A/B").click();
    h.run_steps(3);
    h.get_by_label("Unsaved run");
    h.get_by_label_contains("Changing the strategy starts a new run and discards the run shown");
    h.get_by_label("Cancel").click();
    h.step();
    let s = h.state();
    assert!(s.guard.is_none());
    assert_eq!(s.lanes[0].id(), lane, "Cancel discarded the run");
    assert!(s.is_running());

    // Discard restarts.
    h.get_by_label("A/B").click();
    h.run_steps(3);
    h.get_by_label("Discard").click();
    h.step();
    assert_ne!(h.state().lanes[0].id(), lane, "Discard did not restart");
    h.state_mut().stop();
}

#[test]
fn save_in_the_guard_saves_first_then_carries_on() {
    let dir = temp_dir("guard-save");
    let target = dir.join("kept.ron");
    let mut h = window(AppState::new(Scenario::default(), || {}));
    h.state_mut().start();
    assert!(step_until(&mut h, 10.0, |s| s.lanes[0].store.len() > 100));
    // The run stays live while the user answers: what it records meanwhile is saved too, and
    // does not make the guard ask again once the save is done.
    let (lane, events) = (h.state().lanes[0].id(), h.state().lanes[0].store.len());
    h.state_mut().apply(ackscope::app::AppCommand::SetStrategy {
        strategy: ackscope_protocol::Strategy::Ue4,
        ab: Some(ackscope_protocol::Strategy::Glenn),
    });
    h.run_steps(3);
    h.get_by_label("Save").click();
    assert!(step_until(&mut h, 5.0, |s| s.prompt == Some(PromptKind::Save)));
    assert_eq!(h.state().lanes[0].id(), lane, "the run changed before it was saved");
    type_path(&mut h, &target);
    // The run goes on recording while the file is written.
    std::thread::sleep(Duration::from_millis(100));
    assert!(step_until(&mut h, 30.0, |s| s.file_jobs().is_empty() && s.lanes[0].id() != lane));
    assert!(ackscope::session::load(&target).unwrap().events.len() >= events);
    assert!(h.state().guard.is_none(), "asked again after saving");
    assert_eq!(h.state().scenario.strategy, ackscope_protocol::Strategy::Ue4);
    h.state_mut().stop();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn closing_the_window_with_an_unsaved_run_asks_first() {
    let mut h = window(AppState::new(Scenario::default(), || {}));
    h.state_mut().start();
    assert!(step_until(&mut h, 10.0, |s| s.lanes[0].store.len() > 100));
    let close = |h: &mut Harness<'static, AppState>| {
        h.input_mut().viewports.entry(egui::ViewportId::ROOT).or_default().events.push(egui::ViewportEvent::Close);
        h.step();
    };
    let sent = |h: &Harness<'static, AppState>, cmd: egui::ViewportCommand| {
        h.output().viewport_output.get(&egui::ViewportId::ROOT).is_some_and(|v| v.commands.contains(&cmd))
    };
    close(&mut h);
    assert!(sent(&h, egui::ViewportCommand::CancelClose), "the window closed without asking");
    assert!(!h.state().quit_requested());
    h.step();
    h.step();
    h.get_by_label_contains("Closing the window discards the run shown");
    h.get_by_label("Discard").click();
    h.step();
    assert!(h.state().quit_requested());
    h.step();
    assert!(sent(&h, egui::ViewportCommand::Close), "Discard did not close the window");
    h.state_mut().stop();
}

#[test]
fn the_window_tidies_temporary_files_interrupted_saves_left() {
    let dir = temp_dir("tidy");
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = dir.join(format!(".big.ron.tmp-{dead}"));
    let ours = dir.join(format!(".big.ron.tmp-{}", std::process::id()));
    std::fs::write(&stale, "partial").unwrap();
    std::fs::write(&ours, "partial").unwrap();
    let mut state = AppState::new(Scenario::default(), || {});
    state.settings.recent = vec![dir.join("big.ron")];
    state.remove_stale_temps();
    assert!(!stale.exists(), "the stale temporary file is still there");
    assert!(ours.exists(), "a running process's temporary file was removed");
    let notice = state.notice.clone().expect("the user is told");
    assert!(notice.contains(&stale.display().to_string()), "{notice}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn restart_in_a_live_run_is_an_action_in_it_and_discards_nothing() {
    let mut h = window(AppState::new(Scenario::default(), || {}));
    h.state_mut().start();
    assert!(step_until(&mut h, 10.0, |s| s.lanes[0].store.len() > 100));
    let (lane, events) = (h.state().lanes[0].id(), h.state().lanes[0].store.len());
    h.get_by_label("Restart").click();
    assert!(step_until(&mut h, 10.0, |s| !s.lanes[0].actions.is_empty()));
    let s = h.state();
    assert!(s.guard.is_none(), "the guard asked, but nothing is discarded");
    assert_eq!(s.lanes[0].id(), lane, "Restart replaced the recording");
    assert!(s.lanes[0].store.len() >= events);
    assert_eq!(s.lanes[0].actions[0].action, ackscope_protocol::Action::Restart);
    h.state_mut().stop();
}
