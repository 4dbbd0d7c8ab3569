//! Keyboard shortcuts and dropped files, turned into [`AppCommand`]s like any click.

use ackscope_protocol::SimTime;

use crate::app::{AppCommand, AppState};

/// Space play/pause, arrows step one stats interval, Home/End, Ctrl+O / Ctrl+S, and a file
/// dropped on the window.
pub fn input_ui(state: &AppState, ctx: &egui::Context, cmds: &mut Vec<AppCommand>) {
    let dropped =
        ctx.input(|i| i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).find(|p| !p.as_os_str().is_empty()));
    if let Some(p) = dropped {
        cmds.push(AppCommand::Open(p));
    }
    use egui::{Key, KeyboardShortcut, Modifiers};
    // Keys belong to a focused field, or to the question a modal asks.
    if ctx.egui_wants_keyboard_input() || state.guard.is_some() || state.prompt.is_some() {
        return;
    }
    let step_us = (state.scenario.stats_interval_ms.max(1.0) * 1000.0) as i64;
    let (open, save) = ctx.input_mut(|i| {
        (
            i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::O)),
            i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::S)),
        )
    });
    if open {
        cmds.push(AppCommand::OpenDialog);
    }
    if save {
        cmds.push(AppCommand::SaveDialog);
    }
    ctx.input(|i| {
        if i.key_pressed(Key::Space) {
            cmds.push(if state.is_running() && state.playback.follow {
                AppCommand::SetPaused(!state.is_paused())
            } else {
                AppCommand::TogglePlay
            });
        }
        if i.key_pressed(Key::ArrowLeft) {
            cmds.push(AppCommand::Step(-step_us));
        }
        if i.key_pressed(Key::ArrowRight) {
            cmds.push(AppCommand::Step(step_us));
        }
        if i.key_pressed(Key::Home) {
            cmds.push(AppCommand::SeekTo(SimTime::ZERO));
        }
        if i.key_pressed(Key::End) {
            cmds.push(AppCommand::FollowLive);
        }
    });
}
