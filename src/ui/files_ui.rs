//! The window's own file questions, as modal dialogs: the path field that takes over where no
//! native file dialog can be shown, and the guard that asks before an unsaved run is discarded.

use std::path::{Path, PathBuf};

use egui::{CompletionPopup, Id, Key, Modal, RichText, Suggestion, TextEdit};

use crate::app::paths::{completions, resolve, PromptKind};
use crate::app::{AppCommand, AppState, GuardChoice};

/// The path field's own state: the text typed, and its completions (read from the disk only
/// when the text changes).
#[derive(Debug, Default)]
pub struct PromptView {
    open_for: Option<PromptKind>,
    text: String,
    completed: Option<(String, Vec<String>)>,
    /// Frames left in which the field asks for keyboard focus (a modal's first frame only
    /// measures it, so one request can be lost).
    focus_frames: u8,
}

impl PromptView {
    /// Completions of `text` (cached per text).
    fn completions(&mut self, text: &str, cwd: &Path, recent: &[PathBuf]) -> &[String] {
        if self.completed.as_ref().is_none_or(|(t, _)| t != text) {
            let mut found = completions(text, cwd, recent);
            found.retain(|s| s != text);
            self.completed = Some((text.to_string(), found));
        }
        &self.completed.as_ref().expect("just filled").1
    }
}

/// The text the field starts with: for a save, the file this run was saved to before (saving
/// again updates it), else a free name beside the file shown or in `cwd`; relative to `cwd`
/// where it lies below it. For an open, empty (the completions then list the working directory).
fn initial_text(state: &AppState, kind: PromptKind, cwd: &Path) -> String {
    if matches!(kind, PromptKind::Open | PromptKind::CompareWith | PromptKind::LinkFile) {
        return String::new();
    }
    if kind == PromptKind::Export {
        // A base name: the tables land beside it as NAME-packets.csv, NAME-messages.csv, ...
        let shown = state.file.clone().unwrap_or_else(|| cwd.join("session.ron"));
        let base = shown.with_extension("csv");
        return base.strip_prefix(cwd).unwrap_or(&base).display().to_string();
    }
    let file = match (state.saved_path(), &state.file) {
        (Some(saved), _) if state.has_unsaved() => saved.to_path_buf(),
        (_, Some(shown)) => free_name(shown.parent().unwrap_or(cwd), shown),
        (_, None) => free_name(cwd, Path::new("session.ron")),
    };
    file.strip_prefix(cwd).unwrap_or(&file).display().to_string()
}

/// `like`'s name in `dir` if no file has it, else with `-2`, `-3`... added to its stem.
fn free_name(dir: &Path, like: &Path) -> PathBuf {
    let stem = like.file_stem().map_or("session".into(), |s| s.to_string_lossy().into_owned());
    let first = dir.join(format!("{stem}.ron"));
    if !first.exists() {
        return first;
    }
    (2..).map(|n| dir.join(format!("{stem}-{n}.ron"))).find(|p| !p.exists()).expect("a free name")
}

/// The path field, while the app asks for a path (see [`crate::app::paths`]).
pub fn path_prompt_ui(state: &AppState, view: &mut PromptView, ctx: &egui::Context, cmds: &mut Vec<AppCommand>) {
    let Some(kind) = state.prompt else {
        view.open_for = None;
        return;
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let field = Id::unique("path_prompt_field");
    if view.open_for != Some(kind) {
        view.open_for = Some(kind);
        view.text = initial_text(state, kind, &cwd);
        view.focus_frames = 3;
    }
    let modal = Modal::new(Id::unique("path_prompt")).show(ctx, |ui| {
        ui.set_width(560.0);
        ui.heading(match kind {
            PromptKind::CompareWith => "Compare with a saved session (shown beside this one)".to_string(),
            PromptKind::LinkFile => "Load a fitted link file (ackscope fit --out)".to_string(),
            _ => format!("{} a session file", kind.verb()),
        });
        if state.dialogs_missing() {
            ui.label("No file dialog can be shown here: type the path instead.");
        }
        ui.weak(format!("Relative to {}. Tab completes; directories end in /.", cwd.display()));
        let mut text = std::mem::take(&mut view.text);
        let out = CompletionPopup::new(field)
            .word_boundary(|_| false)
            .accept_keys([Key::Tab])
            // Below the field, so the question above it stays readable.
            .align(egui::RectAlign::BOTTOM_START)
            .show(
                ui,
                TextEdit::singleline(&mut text).desired_width(f32::INFINITY).hint_text("runs/session.ron"),
                |q| view.completions(q.text, &cwd, &state.settings.recent).iter().map(Suggestion::new).collect(),
            );
        view.text = text;
        if view.focus_frames > 0 {
            view.focus_frames -= 1;
            out.text_edit.response.response.request_focus();
        }
        let target = resolve(&view.text, &cwd, kind);
        let problem = match (&target, kind) {
            (None, _) if view.text.trim().is_empty() => Some(String::new()),
            (None, _) => Some("Type a file name.".to_string()),
            (Some(p), PromptKind::Open | PromptKind::CompareWith | PromptKind::LinkFile) if !p.is_file() => {
                Some(format!("{} is not a file.", p.display()))
            }
            (Some(p), PromptKind::Save | PromptKind::Export) if p.parent().is_some_and(|d| !d.is_dir()) => {
                Some(format!("No directory {}.", p.parent().unwrap_or(p).display()))
            }
            _ => None,
        };
        match (&target, &problem) {
            (_, Some(problem)) if problem.is_empty() => {
                ui.weak(" ");
            }
            (_, Some(problem)) => {
                ui.label(RichText::new(problem).color(ui.visuals().warn_fg_color));
            }
            (Some(p), None) if kind == PromptKind::Save && p.exists() => {
                ui.label(
                    RichText::new(format!("{} exists and will be replaced.", p.display()))
                        .color(ui.visuals().warn_fg_color),
                );
            }
            (Some(p), None) => {
                ui.weak(p.display().to_string());
            }
            (None, None) => {}
        }
        let entered = out.text_edit.response.response.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter));
        ui.horizontal(|ui| {
            let go = ui.add_enabled(problem.is_none(), egui::Button::new(kind.verb())).clicked();
            if (go || entered) && problem.is_none() {
                if let Some(p) = target.clone() {
                    cmds.push(AppCommand::PromptChosen(p));
                }
            }
            if ui.button("Cancel").clicked() {
                cmds.push(AppCommand::CancelPrompt);
            }
        });
        if entered && problem.is_some() {
            view.focus_frames = 1;
        }
    });
    if modal.should_close() && !cmds.iter().any(|c| matches!(c, AppCommand::PromptChosen(_))) {
        cmds.push(AppCommand::CancelPrompt);
    }
}

/// Asks before a command discards an unsaved run: Save (then carry on), Discard, or Cancel.
pub fn guard_ui(state: &AppState, ctx: &egui::Context, cmds: &mut Vec<AppCommand>) {
    let Some(question) = state.guard_question() else { return };
    let modal = Modal::new(Id::unique("discard_guard")).show(ctx, |ui| {
        ui.set_width(460.0);
        ui.heading("Unsaved run");
        ui.label(question);
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            if ui.button("Save").on_hover_text("Save the run first, then carry on").clicked() {
                cmds.push(AppCommand::Guard(GuardChoice::Save));
            }
            if ui.button("Discard").on_hover_text("Carry on without saving the run").clicked() {
                cmds.push(AppCommand::Guard(GuardChoice::Discard));
            }
            if ui.button("Cancel").on_hover_text("Keep the run as it is").clicked() {
                cmds.push(AppCommand::Guard(GuardChoice::Cancel));
            }
        });
    });
    if modal.should_close() && !cmds.iter().any(|c| matches!(c, AppCommand::Guard(_))) {
        cmds.push(AppCommand::Guard(GuardChoice::Cancel));
    }
}
