//! Keyboard shortcuts and dropped files, turned into [`AppCommand`]s like any click.

use ackscope_protocol::SimTime;

use super::marks_ui::MarksView;
use crate::app::{AppCommand, AppState, MarkCommand};

/// Space play/pause, arrows step one stats interval, Home/End, Ctrl+O / Ctrl+S, the marks' keys
/// (Ctrl+M, Ctrl+Shift+M, Ctrl+B, Ctrl+G: [`super::marks_ui`]), and a file dropped on the window.
pub fn input_ui(state: &AppState, marks: &mut MarksView, ctx: &egui::Context, cmds: &mut Vec<AppCommand>) {
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
    let shortcut = |m: Modifiers, k: Key| ctx.input_mut(|i| i.consume_shortcut(&KeyboardShortcut::new(m, k)));
    // Ctrl+Shift+M first: Ctrl+M's shortcut would take it too.
    if shortcut(Modifiers::COMMAND | Modifiers::SHIFT, Key::M) {
        cmds.push(AppCommand::Marks(MarkCommand::MarkCursor));
    } else if shortcut(Modifiers::COMMAND, Key::M) {
        cmds.push(AppCommand::Marks(MarkCommand::Toggle));
    }
    if shortcut(Modifiers::COMMAND, Key::B) {
        cmds.push(AppCommand::Marks(MarkCommand::AddBookmark(None)));
    }
    if shortcut(Modifiers::COMMAND, Key::G) {
        marks.focus_goto = true;
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
