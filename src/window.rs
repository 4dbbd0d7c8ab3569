//! The window: the frame loop that ties the application state ([`crate::app`]) to the views
//! ([`crate::ui`]), and the eframe application. It sits above both so neither imports the other
//! back: the views read the state and push commands, the state knows nothing of egui panels.
//!
//! One frame: move the live run's new events into the recordings within a small time budget
//! (a larger one, drawing no views, while the window catches up with a run it fell behind:
//! [`crate::app::lag`]), pick up finished file jobs, let the views draw (they read the state and push commands), then
//! apply the commands. A frame never waits for a run thread, a file or a dialog.

use std::time::Duration;

use ackscope_protocol::Scenario;

use crate::app::{AppCommand, AppState, Launch, Settings};
use crate::ui::WindowView;

/// Most time a frame spends moving live events into the recordings; the rest waits a frame.
///
/// A 64-client run at 60 packets/s each way brings about 2,000 events a frame, 1.5 ms of fold;
/// where its clients' structures grow into fresh memory at once it is several times that for a
/// second or so, and the fold trails by a few frames' events and catches up after, within
/// this budget. At 8 ms, with the views' 3-5 ms and the last piece's overrun, such frames came
/// within 2 ms of the 16 ms target (`examples/live_clients.rs`, 2026-11-28); at 5 ms the worst
/// of two 10-minute runs was 15.7 ms, 10.9 of them in the fold (a piece whose clients' vectors
/// grew overran the budget by 6 ms). At 3 ms the fold still has over twice the 1.2 ms an average
/// frame needs.
pub const INGEST_BUDGET: Duration = Duration::from_millis(3);
/// Frame interval while something moves on its own (live run, replay, file job).
const ANIMATION_FRAME: Duration = Duration::from_millis(33);

/// One frame of the window: ingest, draw, apply what the views asked (also used headless by
/// tests, which keep `view` beside the state they inspect).
pub fn frame_ui(state: &mut AppState, view: &mut WindowView, ui: &mut egui::Ui) {
    // Keys first (Space, Home, the arrows...): a pause must land where the cursor was shown when
    // the key was pressed. Applied after this frame's intake and replay step, a slow frame under
    // load moved the cursor on by its whole wall time, or a live view by the events queued
    // meanwhile, before the pause took (0.5-0.66 s was seen).
    let mut keys = Vec::new();
    crate::ui::keys_ui(state, view, ui.ctx(), &mut keys);
    state.apply_all(keys);
    // Behind the run: the frame takes events in for longer and draws no views (the status bar
    // says so) until the gap is closed. Nothing is dropped.
    state.update_lag();
    let (budget, max_events) = state.lag.intake(INGEST_BUDGET);
    let (_, behind) = state.pull_events_capped(budget, max_events);
    state.update_lag();
    if state.lag.catching_up {
        state.lag.skipped_frames += 1;
    }
    state.interacting = ui.ctx().input(|i| i.pointer.any_down() || !i.events.is_empty());
    let loading_behind = state.poll_files();
    state.tune.poll();
    // Replay moves by measured wall time, not egui's frame time: with timed repaints that is a
    // predicted 1/60 s whatever the real interval.
    state.advance_playback();
    state.poll_readback();
    close_request_ui(state, ui.ctx());
    let mut cmds = Vec::new();
    // The display filters' caches share this frame's budget for rows they have not checked.
    crate::filter::budget::start_frame();
    crate::ui::window_ui(state, view, ui, &mut cmds);
    if behind || loading_behind || !cmds.is_empty() || crate::filter::budget::pending() {
        // Events left for the next frame, changes this frame did not draw yet, or a filter's
        // rows not all checked yet.
        ui.ctx().request_repaint();
    }
    state.apply_all(cmds);
    if state.is_animating() {
        ui.ctx().request_repaint_after(ANIMATION_FRAME);
    }
}

/// Closing the window with an unsaved run asks first (the guard); once the user agreed, or when
/// nothing is unsaved, the window closes.
fn close_request_ui(state: &mut AppState, ctx: &egui::Context) {
    if ctx.input(|i| i.viewport().close_requested()) && !state.quit_requested() {
        if state.has_unsaved() {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
        }
        state.apply(AppCommand::Quit);
    }
    if state.quit_requested() {
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
    }
}

/// The eframe application: the state and the views' own state.
pub struct AckscopeApp {
    pub state: AppState,
    pub view: WindowView,
}

impl AckscopeApp {
    /// Starts on `scenario` live, or opens `path` (a session to replay or a scenario to run).
    pub fn new(cc: &eframe::CreationContext<'_>, scenario: Scenario, launch: Launch) -> Self {
        let ctx = cc.egui_ctx.clone();
        let mut state = AppState::new(scenario, move || ctx.request_repaint());
        if let Some(settings) = cc.storage.and_then(|s| eframe::get_value::<Settings>(s, eframe::APP_KEY)) {
            state.settings = settings;
        }
        if let Some(t) = launch.tab {
            state.settings.tab = t;
        }
        if let Some(dark) = launch.dark {
            state.settings.dark = dark;
        }
        if launch.no_intro {
            state.settings.intro_dismissed = true;
        }
        state.remove_stale_temps();
        state.ab = launch.ab.filter(|b| *b != state.scenario.strategy);
        match launch.path {
            Some(p) => state.open_path(&p),
            None => state.start(),
        }
        if let Some(p) = launch.compare_with {
            state.read_beside(&p, launch.tab.is_none());
        }
        Self { state, view: WindowView::default() }
    }
}

impl eframe::App for AckscopeApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        frame_ui(&mut self.state, &mut self.view, ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, &self.state.settings);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.state.stop();
    }
}
