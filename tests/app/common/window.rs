//! The whole window under test, built the one way every window test needs it: 1280x800 (the
//! size TESTING-GUI.md checks), the first-run hints dismissed so the tabs sit where a returning
//! user sees them, and the frame drawn by the app's own `frame_ui`.

use std::path::Path;
use std::sync::Arc;

use ackscope::app::files::Dialogs;
use ackscope::app::{AppState, Tab};
use ackscope::model::Recording;
use ackscope::ui::WindowView;
use ackscope::window::frame_ui;
use ackscope_protocol::{Dir, Scenario, Simulation, Strategy};
use egui::accesskit::Role;
use egui_kittest::kittest::{NodeT, Queryable};
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

/// A recording of `strategy` (seed `seed`) at `loss_percent` both ways, simulated for `secs`:
/// every fate and resend the window's lists show.
pub fn lossy_recording(seed: u64, strategy: Strategy, loss_percent: f64, secs: f64) -> Recording {
    let mut s = Scenario { seed, strategy, ..Scenario::default() };
    for d in Dir::BOTH {
        s.link.get_mut(d).loss_percent = loss_percent;
    }
    let mut sim = Simulation::new(s.clone());
    sim.run_for_secs(secs);
    let mut rec = Recording::new(s);
    rec.ingest(sim.drain_events().collect());
    rec
}

/// The window's own path field (shown where no file dialog can be), not the go-to box.
fn path_field<'h>(h: &'h Harness<'static, AppState>) -> egui_kittest::Node<'h> {
    let mut fields =
        h.get_all_by_role(Role::TextInput).filter(|n| n.accesskit_node().label().as_deref() != Some("Go to"));
    fields.next().expect("the path field")
}

/// Replaces the path field's text with `path` and presses Enter.
pub fn type_path(h: &mut Harness<'static, AppState>, path: &Path) {
    // A modal's first frame only measures it.
    h.run_steps(2);
    path_field(h).focus();
    h.step();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.step();
    path_field(h).type_text(&path.display().to_string());
    h.step();
    h.key_press(egui::Key::Enter);
    h.step();
}
