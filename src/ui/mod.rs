//! The desktop window: a model ([`AppState`]) that owns the run and the store, and `_ui`
//! functions that draw it. Views read the state and change it only through its methods, so tests
//! drive the same methods without a display.

mod controls_ui;
pub mod packets_ui;
mod plots_ui;
pub mod slices_ui;

use ackscope_protocol::{Dir, LinkConfig, Scenario, SimTime};

use crate::runtime::{Command, LiveRun};
use crate::store::Store;

/// Something a view asks of the app. Views push commands while drawing; the app applies them at
/// the end of the frame, so no view changes shared state in the middle of another's drawing.
#[derive(Debug, Clone, PartialEq)]
pub enum UiCommand {
    /// Move the time cursor here (replay; a live run stops following the end).
    SeekTo(SimTime),
    /// Let the cursor follow the newest events again.
    FollowLive,
}

/// Everything the window shows and controls.
pub struct AppState {
    /// The scenario as currently configured (live edits included).
    pub scenario: Scenario,
    pub store: Store,
    live: Option<LiveRun>,
    paused: bool,
    /// Called by the run thread when events are ready (requests a repaint).
    wake: std::sync::Arc<dyn Fn() + Send + Sync>,
}

impl AppState {
    /// A window state; `wake` is called from the run thread when new events arrive.
    pub fn new(scenario: Scenario, wake: impl Fn() + Send + Sync + 'static) -> Self {
        Self { scenario, store: Store::new(), live: None, paused: false, wake: std::sync::Arc::new(wake) }
    }

    /// Starts (or restarts) a live run of the current scenario from time zero.
    pub fn start(&mut self) {
        self.stop();
        self.store = Store::new();
        let wake = self.wake.clone();
        self.live = Some(LiveRun::spawn(self.scenario.clone(), move || wake()));
        self.paused = false;
    }

    /// Stops the live run and joins its thread; the store keeps what was recorded.
    pub fn stop(&mut self) {
        if let Some(mut run) = self.live.take() {
            run.stop();
            self.pull_events();
        }
    }

    pub fn is_running(&self) -> bool {
        self.live.as_ref().is_some_and(LiveRun::is_running)
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    pub fn set_paused(&mut self, paused: bool) {
        if let Some(run) = &self.live {
            run.send(if paused { Command::Pause } else { Command::Resume });
            self.paused = paused;
        }
    }

    /// Moves every available event batch from the run into the store.
    pub fn pull_events(&mut self) -> usize {
        let Some(run) = &self.live else { return 0 };
        let mut n = 0;
        for batch in run.try_events() {
            n += batch.len();
            self.store.ingest(batch);
        }
        n
    }

    /// Applies `edit` to both link directions and sends the change to the run at once.
    pub fn edit_link(&mut self, edit: impl Fn(&mut LinkConfig)) {
        for dir in Dir::BOTH {
            let cfg = self.scenario.link.get_mut(dir);
            edit(cfg);
            if let Some(run) = &self.live {
                run.send(Command::SetLink(dir, *cfg));
            }
        }
    }

    /// Changes both endpoints' send rate now.
    pub fn set_send_rate(&mut self, pps: f64) {
        self.scenario.send_rate_pps = pps;
        if let Some(run) = &self.live {
            run.send(Command::SetSendRate(pps));
        }
    }

    /// Draws the whole window into `ui` (also used headless by tests).
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        self.pull_events();
        egui::Panel::top("top_bar").show(ui, |ui| self.top_bar_ui(ui));
        egui::Panel::bottom("status_bar").show(ui, |ui| self.status_bar_ui(ui));
        egui::Panel::left("controls").default_size(270.0).show(ui, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| controls_ui::controls_ui(self, ui));
        });
        egui::CentralPanel::default_margins().show(ui, |ui| plots_ui::plots_ui(&self.store, ui));
        if self.is_running() && !self.paused {
            // Keep the plots moving even between event batches.
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(50));
        }
    }

    fn top_bar_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            ui.heading("ackscope");
            ui.separator();
            if ui.button("Restart").on_hover_text("Start the scenario again from time zero").clicked() {
                self.start();
            }
            let running = self.is_running();
            let label = if self.paused { "Resume" } else { "Pause" };
            if ui.add_enabled(running, egui::Button::new(label)).on_hover_text("Pause or resume virtual time").clicked()
            {
                self.set_paused(!self.paused);
            }
            if ui
                .add_enabled(running, egui::Button::new("Stop"))
                .on_hover_text("Stop the run and keep what it recorded")
                .clicked()
            {
                self.stop();
            }
        });
    }

    fn status_bar_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            let state = if !self.is_running() {
                "stopped"
            } else if self.paused {
                "paused"
            } else {
                "live"
            };
            ui.label(format!(
                "{state} - t = {:.1} s - {} events - strategy {}",
                self.store.end_time().as_secs_f64(),
                self.store.len(),
                self.scenario.strategy.name()
            ));
        });
    }
}

impl Drop for AppState {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The eframe application around [`AppState`].
pub struct AckscopeApp {
    pub state: AppState,
}

impl AckscopeApp {
    pub fn new(cc: &eframe::CreationContext<'_>, scenario: Scenario) -> Self {
        let ctx = cc.egui_ctx.clone();
        let mut state = AppState::new(scenario, move || ctx.request_repaint());
        state.start();
        Self { state }
    }
}

impl eframe::App for AckscopeApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.state.ui(ui);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.state.stop();
    }
}
