//! The window's views: panels only, one file each. They read the app state and the model at the
//! time cursor, and ask for changes by pushing [`AppCommand`]s, which the frame loop
//! ([`crate::window::frame_ui`]) applies after drawing. View state (timeline zoom, packet filters,
//! slice selection...) lives here, in [`WindowView`], never in the model.

pub mod anomaly_ui;
pub mod bytes;
pub mod bytes_ui;
pub mod clients_plot;
pub mod clients_ui;
pub mod colors;
pub mod compare_ui;
mod controls_ui;
mod cursor_ui;
mod edit;
mod files_ui;
pub mod filter_bar;
pub mod find;
mod input;
pub mod io_graph_ui;
pub mod lane_colors;
mod lanes;
pub mod marks_ui;
pub mod packet_detail;
pub mod packet_detail_ui;
pub mod packets_ui;
mod plot_decimate;
mod plot_legend;
mod plot_markers;
pub mod plot_series;
pub mod plot_window;
pub mod plots_ui;
pub mod proxy_form_ui;
mod settings_ui;
pub mod slices_ui;
mod status_ui;
mod summary_ui;
pub mod tabs;
mod timeline_canvas;
mod timeline_marks;
mod timeline_text;
pub mod timeline_ui;
mod timeline_view;
mod topbar_ui;
pub mod tune_ui;

pub use controls_ui::{ControlsView, LinkDir};
pub use edit::Preview;
pub use files_ui::PromptView;
pub use tabs::{Panel, Panels};

use crate::app::{AppCommand, AppState};

/// Everything the views keep between frames: each panel's state and the left panel's.
#[derive(Default)]
pub struct WindowView {
    pub panels: Panels,
    pub controls: ControlsView,
    pub prompt: PromptView,
    /// The go-to box and the bookmarks menu.
    pub marks: marks_ui::MarksView,
}

/// The frame's keyboard shortcuts and dropped files ([`input::input_ui`]), read before replay
/// moves and the views draw: the window applies them first, so Space pauses a replay where the
/// user saw the cursor when pressing it, not a slow frame's wall time later.
pub fn keys_ui(state: &AppState, view: &mut WindowView, ctx: &egui::Context, cmds: &mut Vec<AppCommand>) {
    input::input_ui(state, &mut view.marks, ctx, cmds);
}

/// Draws the whole window into `ui`: top bar, status bar, left panel, banners, the tab bar and
/// the current tab; what the user asks for is pushed to `cmds`.
pub fn window_ui(state: &AppState, view: &mut WindowView, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    ui.ctx().set_theme(if state.settings.dark { egui::Theme::Dark } else { egui::Theme::Light });
    egui::Panel::top("top_bar").show(ui, |ui| topbar_ui::top_bar_ui(state, &mut view.panels.anomalies, ui, cmds));
    egui::Panel::bottom("status_bar").show(ui, |ui| {
        marks_ui::marks_row_ui(state, &mut view.marks, ui, cmds);
        status_ui::status_bar_ui(state, ui);
    });
    egui::Panel::left("controls").default_size(300.0).show(ui, |ui| {
        egui::Panel::bottom("estimates").show(ui, |ui| controls_ui::estimates_ui(state, ui));
        egui::ScrollArea::vertical().show(ui, |ui| controls_ui::controls_ui(state, &mut view.controls, ui, cmds));
    });
    let central = egui::CentralPanel::default_margins().show(ui, |ui| {
        status_ui::banners_ui(state, ui, cmds);
        let tab = tabs::tab_bar_ui(state.settings.tab, ui, cmds);
        ui.separator();
        if state.lag.catching_up {
            status_ui::catching_up_ui(state, ui);
        } else {
            view.panels.get_mut(tab).ui(state, ui, cmds);
        }
    });
    status_ui::notices_ui(state, central.response.rect, ui.ctx(), cmds);
    view.panels.take_anomaly_selection(&crate::model::Shown::all(&state.lanes, state.focus));
    files_ui::guard_ui(state, ui.ctx(), cmds);
    files_ui::path_prompt_ui(state, &mut view.prompt, ui.ctx(), cmds);
}
