//! The time cursor row: replay play/pause and speed, follow live, the scrub slider, and "jump to
//! the next event of a kind".

use ackscope_protocol::{EventKind, SimTime};

use crate::app::{AppCommand, AppState};
use crate::model::SPEEDS;

/// Picks events for "jump to next event of a kind".
type EventFilter = fn(&EventKind) -> bool;

pub fn cursor_ui(state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    let end = state.end_time();
    let mut t = state.cursor().as_secs_f64();
    let play = if state.playback.playing { "Pause replay" } else { "Play" };
    if ui.button(play).on_hover_text("Replay from the cursor at the chosen speed (Space)").clicked() {
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
    ui.menu_button("Next event", |ui| {
        let kinds: [(&str, EventFilter); 5] = [
            ("Link drop", |k| matches!(k, EventKind::LinkDropped { .. })),
            ("Nak / loss report", |k| matches!(k, EventKind::PacketNakked { .. })),
            (
                "Message resend",
                |k| matches!(k, EventKind::MessageSent { kind, .. } if *kind != ackscope_protocol::SendKind::First),
            ),
            ("Parameter change", |k| matches!(k, EventKind::ParamChanged { .. })),
            ("Malformed packet", |k| matches!(k, EventKind::Malformed { .. })),
        ];
        for (name, pred) in kinds {
            if ui.button(name).clicked() {
                let c = state.cursor();
                let next = state.lanes.iter().filter_map(|l| l.store.next_event_after(c, pred)).min();
                cmds.push(match next {
                    Some(t) => AppCommand::SeekTo(t),
                    None => AppCommand::ShowError(format!("no {name} after {:.2} s", c.as_secs_f64())),
                });
                ui.close();
            }
        }
    });
}
