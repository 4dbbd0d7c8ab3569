//! The whole window under test, built the one way every window test needs it: 1280x800 (the
//! size TESTING-GUI.md checks), the first-run hints dismissed so the tabs sit where a returning
//! user sees them, and the frame drawn by the app's own `frame_ui`.

use std::sync::Arc;

use ackscope::app::files::Dialogs;
use ackscope::app::{AppState, Tab};
use ackscope::model::Recording;
use ackscope::ui::WindowView;
use ackscope::window::frame_ui;
use egui_kittest::Harness;

/// The window size the tests draw at.
pub const WINDOW_SIZE: egui::Vec2 = egui::vec2(1280.0, 800.0);

/// The whole window with its views' state reachable (`h.state().1`).
pub type Window = Harness<'static, (AppState, WindowView)>;

/// The whole window around `state` at [`WINDOW_SIZE`], intro dismissed.
pub fn window_harness(mut state: AppState) -> Window {
    state.settings.intro_dismissed = true;
    Harness::builder().with_size(WINDOW_SIZE).build_ui_state(
        |ui, s: &mut (AppState, WindowView)| frame_ui(&mut s.0, &mut s.1, ui),
        (state, WindowView::default()),
    )
}

/// The same window for tests that read the app state only: the views' state lives in the frame
/// closure, so `h.state()` is the [`AppState`]. `size` is [`WINDOW_SIZE`] unless a test needs
/// more room.
pub fn app_harness(mut state: AppState, size: egui::Vec2) -> Harness<'static, AppState> {
    state.settings.intro_dismissed = true;
    let mut view = WindowView::default();
    Harness::builder().with_size(size).build_ui_state(move |ui, s: &mut AppState| frame_ui(s, &mut view, ui), state)
}

/// `state` with file dialogs that cannot be shown (as rfd's portal backend on a machine without
/// a desktop portal), so the window's own path field takes over.
pub fn without_dialogs(mut state: AppState) -> AppState {
    state.set_dialogs(Dialogs::with_backend(Arc::new(|_| None)));
    state
}

/// The window replaying `lanes` on `tab` with the cursor at the end, after a few frames (the
/// panels laid out and their indexes built).
pub fn replay_window(lanes: Vec<Recording>, tab: Tab) -> Window {
    let mut state = AppState::new(lanes[0].scenario.clone().unwrap_or_default(), || {});
    state.lanes = lanes;
    state.settings.tab = tab;
    let end = state.end_time();
    state.playback.seek(end);
    let mut h = window_harness(state);
    h.run_steps(4);
    h
}
