//! The time cursor row: replay play/pause and speed, follow live, the scrub slider, and the
//! previous / next anomaly buttons (the density strip under it is [`super::anomaly_ui::strip_ui`]).

use ackscope_protocol::SimTime;

use crate::app::{AppCommand, AppState};
use crate::model::SPEEDS;

const PLAY: &str = "Play";
const PAUSE: &str = "Pause replay";

/// Draws the row; returns the x range the slider's handle travels (for the strip under it).
pub fn cursor_ui(
    state: &AppState,
    anomalies: &mut super::anomaly_ui::AnomalyView,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) -> egui::Rangef {
    let end = state.end_time();
    let mut t = state.cursor().as_secs_f64();
    let play = if state.playback.playing { PAUSE } else { PLAY };
    // One width for both labels: "Pause replay" is wider than "Play", and the speed menu beside
    // it moved right when the replay started, so a click where the menu had stood landed on
    // "Pause replay" and stopped the replay (issue 25: "opening the speed menu stops the replay").
    let font = egui::TextStyle::Button.resolve(ui.style());
    let text_w = [PLAY, PAUSE]
        .map(|t| ui.painter().layout_no_wrap(t.to_string(), font.clone(), egui::Color32::WHITE).size().x)
        .into_iter()
        .fold(0.0f32, f32::max);
    let button_w = text_w + 2.0 * ui.spacing().button_padding.x;
    let button = egui::Button::new(play).min_size(egui::vec2(button_w, 0.0));
    if ui.add(button).on_hover_text("Replay from the cursor at the chosen speed (Space)").clicked() {
        cmds.push(AppCommand::TogglePlay);
    }
    let mut speed = state.playback.speed;
    egui::ComboBox::new("speed", "speed").selected_text(format!("{speed}x")).width(60.0).show_ui(ui, |ui| {
        for s in SPEEDS {
            ui.selectable_value(&mut speed, s, format!("{s}x"));
        }
    });
    if speed != state.playback.speed {
        cmds.push(AppCommand::SetSpeed(speed));
    }
    let follow = state.playback.follow;
    if ui
        .add_enabled(!follow, egui::Button::new("Follow live"))
        .on_hover_text("Let the cursor follow the newest events (End)")
        .clicked()
    {
        cmds.push(AppCommand::FollowLive);
    }
    let w = (ui.available_width() - 330.0).max(120.0);
    ui.spacing_mut().slider_width = w;
    let r = ui
        .add(egui::Slider::new(&mut t, 0.0..=end.as_secs_f64().max(0.001)).text("time cursor s").fixed_decimals(2))
        .on_hover_text("Scrub: every panel shows the state at the cursor (arrows step, Home/End)");
    // Only a user's drag, click or keys move the cursor: the slider also reports a change when it
    // rounds the value to its decimals, which must not stop a live view from following.
    if r.changed() && (r.dragged() || r.clicked() || r.has_focus()) {
        cmds.push(AppCommand::SeekTo(SimTime::from_secs_f64(t)));
    }
    super::anomaly_ui::prev_next_ui(state, anomalies, ui, cmds);
    // Where the handle travels (the slider's rail inset by its handle radius, as egui lays it
    // out), so the strip below puts an anomaly under the cursor position of its time.
    let handle_r = ui.text_style_height(&egui::TextStyle::Body).max(ui.spacing().interact_size.y) / 2.5;
    egui::Rangef::new(r.rect.left() + handle_r, r.rect.left() + w - handle_r)
}
