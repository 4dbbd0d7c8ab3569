//! Bookmarks of a live run longer than the memory window (issue 25): such a run is saved by
//! copying its stream file, and the bookmarks set in the window during the run reach the saved
//! file, so opening it shows them; the save leaves nothing unsaved.

use std::path::PathBuf;

use crate::common::{app_harness, step_until};
use ackscope::app::live_log::LiveLog;
use ackscope::app::{AppCommand, AppState, MarkCommand};
use ackscope::session::{self, Verify};
use ackscope_protocol::{Scenario, SimTime};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-stream-bookmarks-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn bookmarks_set_during_a_run_longer_than_the_memory_window_reach_the_saved_stream_copy() {
    let dir = temp_dir("save");
    let mut state = AppState::new(Scenario::default(), || {});
    state.live_log = LiveLog::new(dir.clone());
    let mut h = app_harness(state, egui::vec2(1280.0, 800.0));
    h.state_mut().start();
    // A memory window far below what Settings allow, so a few seconds of run time trim it.
    h.state_mut().live_log.limits.window_s = 1.0;
    let early = step_until(&mut h, 30.0, |s| s.end_time() >= SimTime(1_000_000));
    assert!(early, "the live run did not reach 1 s");
    h.state_mut().apply(AppCommand::SeekTo(SimTime(800_000)));
    h.state_mut().apply(AppCommand::Marks(MarkCommand::AddBookmark(Some("early loss".into()))));
    let ran = step_until(&mut h, 30.0, |s| s.end_time() >= SimTime(4_000_000) && s.live_log.trimmed());
    assert!(ran, "the live run did not trim its window");
    let end = h.state().end_time();
    h.state_mut().apply(AppCommand::SeekTo(end));
    h.state_mut().apply(AppCommand::Marks(MarkCommand::AddBookmark(Some("late".into()))));
    h.state_mut().stop();
    let in_memory = h.state().lanes[0].store.len();

    let path = dir.join("saved.ron");
    h.state_mut().save_path(&path);
    assert!(step_until(&mut h, 20.0, |s| s.file_jobs().is_empty()), "the save did not finish");
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
    assert!(!h.state().has_unsaved(), "the bookmarks were saved, so nothing is left unsaved");

    let saved = session::load_verified(&path, Verify::Checksum).unwrap();
    assert!(saved.events.len() > in_memory, "saved from the stream file: {} events", saved.events.len());
    let names: Vec<(&str, u64)> = saved.bookmarks.iter().map(|b| (b.name.as_str(), b.at_us)).collect();
    assert_eq!(names[0], ("early loss", 800_000), "{names:?}");
    assert_eq!(names[1].0, "late");
    assert!(names[1].1 >= 4_000_000);

    // Opened again in the window: its bookmarks are there.
    h.state_mut().apply(AppCommand::Open(path.clone()));
    assert!(step_until(&mut h, 20.0, |s| s.bookmarks().len() == 2), "the opened file shows no bookmarks");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The mark belongs to the run, not to the recording that holds its newest part: a trim makes a
/// new recording (a new id, so views rebuild), and the mark and the selection stay.
#[test]
fn the_mark_and_the_selection_outlive_a_memory_window_trim() {
    let dir = temp_dir("mark");
    let mut state = AppState::new(Scenario::default(), || {});
    state.live_log = LiveLog::new(dir.clone());
    let mut h = app_harness(state, egui::vec2(1280.0, 800.0));
    h.state_mut().start();
    h.state_mut().live_log.limits.window_s = 1.0;
    assert!(step_until(&mut h, 30.0, |s| s.end_time() >= SimTime(1_000_000)), "the live run did not reach 1 s");
    h.state_mut().apply(AppCommand::SeekTo(SimTime(800_000)));
    h.state_mut().apply(AppCommand::Marks(MarkCommand::MarkCursor));
    let mark = h.state().current_mark().expect("marked");
    h.state_mut().apply(AppCommand::Marks(MarkCommand::Select(mark)));
    let before = h.state().lanes[0].id();
    let ran = step_until(&mut h, 30.0, |s| s.live_log.trimmed() && s.lanes[0].id() != before);
    assert!(ran, "the live run did not trim its window");
    h.state_mut().stop();
    assert_eq!(h.state().current_mark(), Some(mark), "the trim forgot the mark");
    assert_eq!(h.state().selection(), Some(mark), "the trim forgot the selection");
    let _ = std::fs::remove_dir_all(&dir);
}
