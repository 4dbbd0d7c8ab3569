//! The display filter's text box, as Wireshark's filter toolbar: one per view (the Packets,
//! Messages and Anomalies tabs, the IO graph), with completion from [`crate::filter::complete`]
//! and an error that points at its character.
//!
//! The text is compiled on every edit; a valid filter applies at once (the rows come from its
//! cache, [`Matches`], extended a frame budget at a time, so typing over a million events never
//! stalls the window). While the text has an error the last valid filter stays applied and the
//! bar says so: the rows do not flash to "everything" at every keystroke of a longer filter.
//!
//! Keys while the box has focus: Up / Down choose a completion, Tab (or Enter after Up / Down)
//! takes it, Escape closes the list.

use std::hash::{Hash, Hasher};

use egui::{Color32, Key, Modifiers, RichText};

use crate::filter::{complete, Completion, FilterError, Matches, RowKind, SharedFilter, Source, Updated};
use crate::model::Shown;

/// Completions listed at most.
const MAX_LISTED: usize = 10;

/// A filter's text and what it compiled to.
pub struct FilterBar<R> {
    pub text: String,
    /// The text [`Self::filter`] and [`Self::error`] are for.
    compiled_for: String,
    /// The filter applied: the last valid text's (`None`: no filter).
    pub filter: Option<SharedFilter<R>>,
    /// What is wrong with the current text, when it cannot be used.
    pub error: Option<FilterError>,
    /// The completion highlighted in the list.
    pick: usize,
    /// Up / Down moved the highlight since the last edit: Enter takes it (else Enter only
    /// closes the list, so pressing it after a whole filter does not append `&&`).
    picked: bool,
    /// Where last frame's completion list was (a click on it must not close it).
    list_rect: Option<egui::Rect>,
    /// The list was closed with Escape (until the next edit).
    list_closed: bool,
    /// Where the text box was in the last frame (tests aim at it).
    pub last_rect: Option<egui::Rect>,
}

impl<R> Default for FilterBar<R> {
    fn default() -> Self {
        Self {
            text: String::new(),
            compiled_for: String::new(),
            filter: None,
            error: None,
            pick: 0,
            picked: false,
            list_rect: None,
            list_closed: false,
            last_rect: None,
        }
    }
}

impl<R> std::fmt::Debug for FilterBar<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FilterBar({:?}, error {:?})", self.text, self.error)
    }
}

/// The accessible label of a view's filter box (tests find it by this).
pub fn bar_label(kind: RowKind) -> String {
    format!("{} filter", kind.plural())
}

impl<R: Source> FilterBar<R> {
    /// Replaces the text and compiles it (what typing does).
    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_string();
        self.recompile();
    }

    /// Compiles the text if it changed since the last compile.
    fn recompile(&mut self) {
        if self.text == self.compiled_for {
            return;
        }
        self.compiled_for = self.text.clone();
        if self.text.trim().is_empty() {
            self.filter = None;
            self.error = None;
            return;
        }
        match SharedFilter::<R>::compile(&self.text) {
            Ok(f) => {
                // The same filter text again keeps its identity (and its caches).
                if self.filter.as_ref().is_none_or(|old| old.compiled.text != f.compiled.text) {
                    self.filter = Some(f);
                }
                self.error = None;
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// The applied filter's text, when there is one.
    pub fn applied(&self) -> Option<&str> {
        self.filter.as_ref().map(|f| f.compiled.text.as_str())
    }

    /// Clears the filter (a reveal of a row it hides).
    pub fn clear(&mut self) {
        self.set_text("");
    }

    /// Draws the box (with its completion list and error) on one row; returns true when the
    /// applied filter changed.
    pub fn ui(&mut self, ui: &mut egui::Ui, hint: &str) -> bool {
        let before = self.filter.as_ref().map(SharedFilter::id);
        ui.horizontal(|ui| {
            let label = ui.label("filter").on_hover_text(format!(
                "A display filter over {}: e.g. {hint}.\nFields, operators and examples: README, Display filters.",
                R::KIND.plural()
            ));
            self.edit_ui(ui, &label, hint);
        });
        if let Some(e) = &self.error {
            // As the command line says it (`... at 12: did you mean `seq`?`).
            let text = e.to_string();
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new(text).color(error_color(ui)));
                if let Some(applied) = self.applied() {
                    ui.weak(format!("(still showing `{applied}`)"));
                }
            });
        }
        self.filter.as_ref().map(SharedFilter::id) != before
    }

    fn edit_ui(&mut self, ui: &mut egui::Ui, label: &egui::Response, hint: &str) {
        let id = ui.make_persistent_id(("filter_bar", R::KIND.plural()));
        let focused = ui.memory(|m| m.has_focus(id));
        // The completion list's keys, taken before the text box sees them.
        let mut completion = Completion::default();
        let mut take: Option<usize> = None;
        let list_open = focused && !self.list_closed;
        if list_open {
            let cursor = TextCursor::load(ui.ctx(), id, &self.text);
            completion = complete(R::KIND, &self.text, cursor);
            let n = completion.candidates.len().min(MAX_LISTED);
            self.pick = self.pick.min(n.saturating_sub(1));
            ui.input_mut(|i| {
                if n > 0 && i.consume_key(Modifiers::NONE, Key::ArrowDown) {
                    self.pick = (self.pick + 1) % n;
                    self.picked = true;
                }
                if n > 0 && i.consume_key(Modifiers::NONE, Key::ArrowUp) {
                    self.pick = (self.pick + n - 1) % n;
                    self.picked = true;
                }
                if n > 0 && i.consume_key(Modifiers::NONE, Key::Tab)
                    || n > 0 && self.picked && i.consume_key(Modifiers::NONE, Key::Enter)
                {
                    take = Some(self.pick);
                }
                if i.consume_key(Modifiers::NONE, Key::Escape) {
                    self.list_closed = true;
                }
            });
        }
        let stroke_color = if self.error.is_some() {
            Some(error_color(ui))
        } else if self.filter.is_some() {
            Some(applied_color(ui))
        } else {
            None
        };
        let width = (ui.available_width() - 40.0).clamp(120.0, 560.0);
        let mut edit = egui::TextEdit::singleline(&mut self.text)
            .id(id)
            .desired_width(width)
            .font(egui::TextStyle::Monospace)
            .hint_text(format!("e.g. {hint}"));
        if let Some(c) = stroke_color {
            edit = edit.background_color(c.gamma_multiply(0.12));
        }
        let out = edit.show(ui);
        let resp = out.response.response.clone().labelled_by(label.id);
        self.last_rect = Some(resp.rect);
        if let Some(c) = stroke_color {
            ui.painter().rect_stroke(resp.rect, 2.0, egui::Stroke::new(1.5, c), egui::StrokeKind::Inside);
        }
        if !self.text.is_empty() && ui.small_button("x").on_hover_text("Clear the filter").clicked() {
            self.text.clear();
        }
        if resp.changed() {
            self.list_closed = false;
            self.pick = 0;
            self.picked = false;
        }
        if let Some(k) = take {
            if let Some(c) = completion.candidates.get(k) {
                let (text, cursor) = completion.apply(&self.text, c);
                self.text = text;
                TextCursor::store(ui.ctx(), id, &self.text, cursor);
                self.pick = 0;
                self.picked = false;
            }
        }
        self.recompile();
        // The caret under the character the error names.
        if let Some(e) = &self.error {
            let ccursor = egui::text::CCursor::new(e.char_pos);
            let at = out.galley.pos_from_cursor(ccursor).translate(out.galley_pos.to_vec2());
            let x = at.left().clamp(resp.rect.left() + 2.0, resp.rect.right() - 2.0);
            let y = resp.rect.bottom() - 1.0;
            let c = error_color(ui);
            ui.painter().add(egui::Shape::convex_polygon(
                vec![egui::pos2(x, y - 5.0), egui::pos2(x + 5.0, y + 3.0), egui::pos2(x - 5.0, y + 3.0)],
                c,
                egui::Stroke::NONE,
            ));
            ui.painter().line_segment(
                [egui::pos2(x, resp.rect.top() + 3.0), egui::pos2(x, y - 4.0)],
                egui::Stroke::new(1.0, c.gamma_multiply(0.6)),
            );
        }
        // The completion list under the box.
        let pointer_on_list =
            self.list_rect.is_some_and(|r| ui.input(|i| i.pointer.hover_pos().is_some_and(|p| r.contains(p))));
        let still_focused = resp.has_focus() || (resp.lost_focus() && pointer_on_list) || pointer_on_list && focused;
        if !still_focused || self.list_closed || take.is_some() || completion.candidates.is_empty() {
            self.list_rect = None;
            return;
        }
        let mut clicked = None;
        let area = egui::Area::new(id.with("completion"))
            .order(egui::Order::Foreground)
            .fixed_pos(resp.rect.left_bottom() + egui::vec2(0.0, 4.0))
            .show(ui.ctx(), |ui| {
                egui::Frame::popup(ui.style()).show(ui, |ui| {
                    ui.set_min_width(resp.rect.width().min(420.0));
                    ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
                    for (k, c) in completion.candidates.iter().take(MAX_LISTED).enumerate() {
                        let text = RichText::new(format!("{:<14} {}", c.text, c.detail)).monospace();
                        if ui.add(egui::Button::selectable(k == self.pick, text)).clicked() {
                            clicked = Some(k);
                        }
                    }
                    if completion.candidates.len() > MAX_LISTED {
                        ui.weak(format!("... {} more: type to narrow", completion.candidates.len() - MAX_LISTED));
                    }
                    ui.weak("Tab or Enter: take; Up / Down: choose; Esc: close");
                });
            });
        self.list_rect = Some(area.response.rect);
        if let Some(k) = clicked {
            if let Some(c) = completion.candidates.get(k) {
                let (text, cursor) = completion.apply(&self.text, c);
                self.text = text;
                TextCursor::store(ui.ctx(), id, &self.text, cursor);
                ui.memory_mut(|m| m.request_focus(id));
                self.recompile();
            }
        }
    }
}

/// The text box's cursor as a byte offset of its text (completion works in bytes, egui in chars).
struct TextCursor;

impl TextCursor {
    fn load(ctx: &egui::Context, id: egui::Id, text: &str) -> usize {
        let chars = egui::TextEdit::load_state(ctx, id)
            .and_then(|s| s.cursor.char_range())
            .map_or(text.chars().count(), |r| r.primary.index.0);
        text.char_indices().nth(chars).map_or(text.len(), |(b, _)| b)
    }

    fn store(ctx: &egui::Context, id: egui::Id, text: &str, byte: usize) {
        let chars = text[..byte.min(text.len())].chars().count();
        let mut state = egui::TextEdit::load_state(ctx, id).unwrap_or_default();
        state.cursor.set_char_range(Some(egui::text::CCursorRange::one(egui::text::CCursor::new(chars))));
        state.store(ctx, id);
    }
}

fn error_color(ui: &egui::Ui) -> Color32 {
    if ui.visuals().dark_mode {
        Color32::from_rgb(255, 110, 100)
    } else {
        Color32::from_rgb(190, 20, 10)
    }
}

fn applied_color(ui: &egui::Ui) -> Color32 {
    if ui.visuals().dark_mode {
        Color32::from_rgb(110, 200, 120)
    } else {
        Color32::from_rgb(30, 130, 50)
    }
}

/// What a view says while its filter's cache is being built: `checked` of `rows` so far. Short,
/// so it fits beside a view's count line without wrapping it (which would move the list).
pub fn progress_text(checked: usize, rows: usize) -> String {
    // Never "100 %" before the last row.
    let pct = if rows == 0 { 0 } else { (checked as u128 * 100 / rows as u128).min(99) };
    format!("filtering... {pct} %")
}

/// A view's filter and its rows in one lane: the bar, and the filter's cache of matching rows.
pub struct FilteredBy<R> {
    pub bar: FilterBar<R>,
    pub matches: Matches<R>,
    /// The last update (how far a rebuild has got).
    pub progress: Option<Updated>,
}

impl<R> Default for FilteredBy<R> {
    fn default() -> Self {
        Self { bar: FilterBar::default(), matches: Matches::default(), progress: None }
    }
}

impl<R> std::fmt::Debug for FilteredBy<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FilteredBy({:?}, {:?})", self.bar, self.matches)
    }
}

/// An identity for a view's own extra test (its checkboxes): changes whenever they do.
pub fn extra_id(x: &impl std::fmt::Debug) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    format!("{x:?}").hash(&mut h);
    h.finish() | 1
}

impl<R: Source> FilteredBy<R> {
    /// Brings the matches up to date with `view` (a frame's budget of rows); `extra` is the
    /// view's own test, ANDed with the filter. Nothing to do without a filter.
    pub fn update(&mut self, view: Shown, extra: Option<crate::filter::cache::Extra<R>>) {
        self.progress =
            self.bar.filter.as_ref().map(|f| self.matches.update(view, f, extra, crate::filter::Budget::frame()));
        if self.bar.filter.is_none() {
            self.matches.reset();
        }
    }

    /// The matches, when a filter applies.
    pub fn active(&self) -> Option<&Matches<R>> {
        self.bar.filter.as_ref().map(|_| &self.matches)
    }

    /// "filtering... 30 %" while a rebuild is under way.
    pub fn progress_text(&self, rows: usize) -> Option<String> {
        let p = self.progress?;
        (!p.complete).then(|| progress_text(self.matches.rows_checked(), rows))
    }

    /// Keeps in `rows` (indices of the view's rows) those the filter matches, when one applies.
    pub fn retain(&self, rows: &mut Vec<usize>) {
        if let Some(m) = self.active() {
            rows.retain(|&i| m.contains(i));
        }
    }
}
