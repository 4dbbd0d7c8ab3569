//! The marks row of the status bar: the go-to box (Ctrl+G), the bookmarks menu, the mark and
//! the selection's and cursor's distance from it; and the right-click menu of a list row.
//!
//! Keys (see [`super::input`]): Ctrl+M marks the selected row (or the cursor's instant when none
//! is selected) and clears the mark when pressed on it again; Ctrl+Shift+M marks the cursor's
//! instant; Ctrl+B bookmarks the selection or the cursor; Ctrl+G goes to the go-to box.

use egui::RichText;

use super::find;
use crate::app::{AppCommand, AppState, MarkCommand};
use crate::model::marks::Mark;

/// The go-to box's and the bookmarks menu's state.
#[derive(Debug, Default)]
pub struct MarksView {
    /// The go-to box's text.
    pub goto_text: String,
    /// Why the last go-to went nowhere.
    pub goto_error: Option<String>,
    /// Where the last go-to went (empty when there was nowhere else it could be) and the other
    /// lanes and clients that have what it asked for, to pick from.
    pub goto_went: Option<(find::Place, Vec<find::Place>)>,
    /// Give the go-to box the keyboard next frame (Ctrl+G).
    pub focus_goto: bool,
    /// A bookmark's name being edited in the menu.
    rename: Option<(usize, String)>,
}

/// The id of the go-to box (tests and Ctrl+G find it by it).
pub fn goto_id() -> egui::Id {
    egui::Id::unique("goto_box")
}

/// The marks row: go-to box, bookmarks menu, mark, and distances from it.
pub fn marks_row_ui(state: &AppState, view: &mut MarksView, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    ui.horizontal(|ui| {
        let label = ui.label("Go to");
        let edit = egui::TextEdit::singleline(&mut view.goto_text)
            .id(goto_id())
            .desired_width(190.0)
            .hint_text(find::GOTO_HINT);
        let resp = ui.add(edit).labelled_by(label.id).on_hover_text(
            "Ctrl+G. `seq 120` (or `seq b 120`, or just 120): that packet; `msg 42`: that message; `1.5 s` or \
             `1500 ms`: that instant. Start with `b` (or `lane 2`) and `client 7` to say where: `b seq 120`, \
             `client 7 msg 42`. Enter moves the cursor there and selects the row; found in several lanes or \
             clients, it says where it went and lists the others.",
        );
        if std::mem::take(&mut view.focus_goto) {
            resp.request_focus();
        }
        if resp.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
            go_to(state, view, cmds);
        }
        if let Some(e) = &view.goto_error {
            ui.label(RichText::new(e).color(ui.visuals().error_fg_color));
        }
        goto_places_ui(view, ui, cmds);
        ui.separator();
        bookmarks_menu_ui(state, view, ui, cmds);
        ui.separator();
        mark_text_ui(state, ui, cmds);
    });
}

/// Resolves the go-to box's text and pushes the commands that go there, or keeps the error.
pub fn go_to(state: &AppState, view: &mut MarksView, cmds: &mut Vec<AppCommand>) {
    let lanes = state.shown_lanes();
    let found = find::parse(&view.goto_text)
        .and_then(|q| find::resolve(q, lanes, state.focus, state.end_time(), state.settings.tab));
    match found {
        Ok(found) => {
            view.goto_error = None;
            cmds.extend(found.place.cmds.iter().cloned());
            view.goto_went = Some((found.place, found.others));
        }
        Err(e) => {
            view.goto_error = Some(e);
            view.goto_went = None;
        }
    }
}

/// Most other places listed in the menu; the rest are reached by naming them.
const MAX_PLACES: usize = 40;

/// "went to lane B (ue4)", and a menu of the other lanes and clients that have it too.
fn goto_places_ui(view: &mut MarksView, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    let Some((went, others)) = &view.goto_went else { return };
    if !went.label.is_empty() {
        ui.label(format!("went to {}", went.label));
    }
    if others.is_empty() {
        return;
    }
    let mut picked = None;
    ui.menu_button(format!("also in {} more", others.len()), |ui| {
        for (i, p) in others.iter().enumerate().take(MAX_PLACES) {
            if ui.button(&p.label).clicked() {
                picked = Some(i);
                ui.close();
            }
        }
        if others.len() > MAX_PLACES {
            ui.weak(format!("and {} more: name one (`client 7 seq 900`)", others.len() - MAX_PLACES));
        }
    })
    .response
    .on_hover_text("Lanes and clients that have it too: pick one to go there instead");
    if let Some(i) = picked {
        // The place left takes the chosen one's spot in the list, so going back is one click.
        let (went, others) = view.goto_went.as_mut().expect("shown above");
        std::mem::swap(went, &mut others[i]);
        cmds.extend(went.cmds.iter().cloned());
    }
}

/// "mark: A->B seq 120 at 1.2340 s | selected A->B seq 135: Δt +0.0500 s, Δseq +15 | cursor Δt ...".
pub fn mark_status(state: &AppState) -> String {
    let Some(mark) = state.current_mark() else {
        return "no mark (Ctrl+M marks the selected row or the cursor)".into();
    };
    let mut s = format!("mark: {}", mark.describe());
    if let Some(sel) = state.selection().filter(|s| *s != mark) {
        s.push_str(&format!(" | selected {}: {}", sel.describe(), mark.delta_to(&sel).text()));
    }
    let cursor = Mark::instant(state.cursor());
    s.push_str(&format!(" | cursor {}", mark.delta_to(&cursor).text()));
    s
}

fn mark_text_ui(state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    let text = mark_status(state);
    if state.current_mark().is_some() {
        if ui.small_button("Clear mark").on_hover_text("Forget the mark (Ctrl+M on it does too)").clicked() {
            cmds.push(AppCommand::Marks(MarkCommand::Set(None)));
        }
        ui.label(text);
    } else {
        ui.weak(text);
    }
}

/// The bookmarks menu: add one, and each one to go to, rename or remove.
fn bookmarks_menu_ui(state: &AppState, view: &mut MarksView, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    let marks = state.bookmarks();
    let title = format!("Bookmarks ({})", marks.len());
    // Stays open on clicks inside, so Rename can show its field; a bookmark or "Bookmark" closes it.
    let config =
        egui::containers::menu::MenuConfig::new().close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside);
    egui::containers::menu::MenuButton::new(title).config(config).ui(ui, |ui| {
        if ui.button("Bookmark the selection or the cursor (Ctrl+B)").clicked() {
            cmds.push(AppCommand::Marks(MarkCommand::AddBookmark(None)));
            ui.close();
        }
        if marks.is_empty() {
            ui.weak("No bookmarks yet: they are saved with the session.");
            return;
        }
        ui.separator();
        for (i, b) in marks.iter().enumerate() {
            ui.horizontal(|ui| match &mut view.rename {
                Some((k, name)) if *k == i => {
                    let r = ui.add(egui::TextEdit::singleline(name).desired_width(160.0));
                    if r.lost_focus() || ui.button("OK").clicked() {
                        let name = name.trim().to_string();
                        if !name.is_empty() {
                            cmds.push(AppCommand::Marks(MarkCommand::RenameBookmark(i, name)));
                        }
                        view.rename = None;
                    }
                }
                _ => {
                    let text = format!("{:>9.4} s  {}", b.at_us as f64 / 1e6, b.name);
                    if ui.button(text).on_hover_text("Move the cursor here and show what it marks").clicked() {
                        cmds.push(AppCommand::Marks(MarkCommand::GoToBookmark(i)));
                        ui.close();
                    }
                    if ui.small_button("Rename").clicked() {
                        view.rename = Some((i, b.name.clone()));
                    }
                    if ui.small_button("Remove").clicked() {
                        cmds.push(AppCommand::Marks(MarkCommand::RemoveBookmark(i)));
                    }
                }
            });
        }
    });
}

/// The right-click menu of a list row standing for `point`.
pub fn row_menu(resp: &egui::Response, point: Mark, marked: bool, cmds: &mut Vec<AppCommand>) {
    resp.context_menu(|ui| {
        if marked {
            if ui.button("Clear the mark (Ctrl+M)").clicked() {
                cmds.push(AppCommand::Marks(MarkCommand::Set(None)));
                ui.close();
            }
        } else if ui.button("Mark this row (Ctrl+M)").clicked() {
            cmds.push(AppCommand::Marks(MarkCommand::Set(Some(point))));
            ui.close();
        }
        if ui.button("Bookmark this row (Ctrl+B)").clicked() {
            cmds.push(AppCommand::Marks(MarkCommand::Select(point)));
            cmds.push(AppCommand::Marks(MarkCommand::AddBookmark(None)));
            ui.close();
        }
    });
}
