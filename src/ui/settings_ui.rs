//! The Settings menu of the top bar: the theme, and the live limits (how much of a live run
//! stays in memory). The theme lives here rather than as its own top-bar button so the top bar
//! keeps to one row at 1280 px (`--theme dark|light` sets it at launch).
//!
//! Everything older than the window is in the run's stream file on disk; the limits say how much
//! stays in memory for the views, whichever comes first. Values outside the ranges in
//! `app::settings` cannot be entered; the change applies to the run going on at once.

use crate::app::settings::{LIVE_MAX_MIB, LIVE_WINDOW_MIN};
use crate::app::{AppCommand, AppState};

/// The "Settings" menu button and its contents.
///
/// It stays open while its fields are edited (a menu closes on any click by default).
pub fn settings_menu_ui(state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    let config =
        egui::containers::menu::MenuConfig::new().close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside);
    let (response, _) = egui::containers::menu::MenuButton::new("Settings").config(config).ui(ui, |ui| {
        ui.horizontal(|ui| {
            ui.strong("Theme");
            for (dark, name) in [(true, "Dark"), (false, "Light")] {
                if ui.selectable_label(state.settings.dark == dark, name).clicked() && state.settings.dark != dark {
                    cmds.push(AppCommand::SetDark(dark));
                }
            }
        });
        ui.separator();
        ui.strong("Live runs in memory");
        let limits = state.settings.live_limits();
        let (mut window_min, mut max_mib) = (limits.window_s / 60.0, limits.max_bytes >> 20);
        let mut changed = false;
        egui::Grid::new("live_limits").num_columns(2).show(ui, |ui| {
            ui.label("Time window").on_hover_text(
                "Run time kept in memory; older events stay in the stream file and are read back when scrubbed to",
            );
            changed |= ui
                .add(egui::DragValue::new(&mut window_min).range(LIVE_WINDOW_MIN).suffix(" min").speed(1.0))
                .changed();
            ui.end_row();
            ui.label("Memory cap").on_hover_text("Memory the live recordings take at most (every lane together)");
            changed |=
                ui.add(egui::DragValue::new(&mut max_mib).range(LIVE_MAX_MIB).suffix(" MiB").speed(16.0)).changed();
            ui.end_row();
        });
        ui.weak("whichever comes first");
        if changed {
            cmds.push(AppCommand::SetLiveLimits { window_min, max_mib });
        }
    });
    response.on_hover_text("Settings: theme, live memory limits");
}
