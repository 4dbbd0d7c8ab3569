//! The chunk slice map: one chunk's slices as a grid of squares coloured by their state at the
//! cursor (not sent, in flight, received, acked at the sender), resent ones outlined with their
//! send count written on them (and counted by sends above the map), the sends per slice on hover,
//! the chunk's progress, rate and expected or actual completion, and a selector for earlier chunks.

use ackscope_protocol::SimTime;
use egui::{Color32, RichText, Sense, Stroke};

use crate::app::AppCommand;
use crate::model::index::{ChunkIndex, ChunkRecord, SliceRecord, SliceState};

/// Most chunks listed in the selector (the newest ones before the cursor).
pub const MAX_LISTED_CHUNKS: usize = 500;
const CELL: f32 = 14.0;
const GAP: f32 = 2.0;

/// What the slice map shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SlicesView {
    /// The chunk shown (position in [`ChunkIndex::chunks`]); `None` follows the newest chunk
    /// started by the cursor.
    pub selected: Option<usize>,
    /// The last reveal acted on (a packet's "slice ... of chunk ..." link).
    pub seen: crate::app::RevealSeen,
}

impl SlicesView {
    /// Acts on a reveal of a slice of lane `lane`: shows the chunk with that wire id sent by
    /// that side that was the latest started by the reveal's time.
    pub fn take_reveal(&mut self, index: &ChunkIndex, lane: usize, reveal: Option<&crate::app::Reveal>) {
        let Some(crate::app::RevealTarget::Slice { lane: l, side, chunk, at, .. }) = self.seen.take(reveal) else {
            return;
        };
        if l != lane {
            return;
        }
        let found = index
            .chunks()
            .iter()
            .enumerate()
            .rev()
            .find(|(_, c)| c.side == side && c.chunk == chunk && c.started_at <= at);
        if let Some((i, _)) = found {
            self.selected = Some(i);
        }
    }

    /// The chunk the view shows at `cursor`.
    pub fn shown(&self, index: &ChunkIndex, cursor: SimTime) -> Option<usize> {
        match self.selected {
            Some(i) if i < index.len() => Some(i),
            _ => index.latest_at(cursor),
        }
    }
}

pub fn state_color(s: SliceState) -> Color32 {
    match s {
        SliceState::NotSent => Color32::from_gray(70),
        SliceState::InFlight => Color32::from_rgb(230, 170, 50),
        SliceState::Received => Color32::from_rgb(90, 170, 255),
        SliceState::Acked => Color32::from_rgb(100, 210, 110),
    }
}

fn opt_secs(t: Option<SimTime>) -> String {
    t.map_or_else(|| "-".to_string(), |t| format!("{:.3} s", t.as_secs_f64()))
}

/// The hover text of slice `i` as known at `cursor`.
pub fn slice_tooltip(s: &SliceRecord, i: usize, cursor: SimTime) -> String {
    let n = s.sends_at(cursor);
    let acked = s.acked_at.filter(|&t| t <= cursor);
    let received = s.received_at.filter(|&t| t <= cursor);
    format!(
        "slice {i}: sent {n} time{}, acked at {}, received at {} ({})",
        if n == 1 { "" } else { "s" },
        opt_secs(acked),
        opt_secs(received),
        s.state_at(cursor).label()
    )
}

/// The selector's text for chunk `i`.
pub fn chunk_label(i: usize, c: &ChunkRecord) -> String {
    format!("#{i} (id {}) at {:.2} s, {:.1} KiB", c.chunk, c.started_at.as_secs_f64(), c.bytes as f64 / 1024.0)
}

/// Draws the slice map of the selected chunk as it was at `cursor`. Clicking a slice moves the
/// cursor to when it was acked (or received, or last sent).
pub fn slices_ui(
    index: &ChunkIndex,
    view: &mut SlicesView,
    cursor: SimTime,
    ui: &mut egui::Ui,
    commands: &mut Vec<AppCommand>,
) {
    crate::app::live_log_spans::span("slices", || slices_inner_ui(index, view, cursor, ui, commands));
}

fn slices_inner_ui(
    index: &ChunkIndex,
    view: &mut SlicesView,
    cursor: SimTime,
    ui: &mut egui::Ui,
    commands: &mut Vec<AppCommand>,
) {
    let started = index.started_by(cursor);
    if index.is_empty() {
        ui.label("No chunks yet: the chunks and fragments strategies send workload.chunk_kib blocks from side A.");
        return;
    }
    selector_ui(index, view, cursor, started, ui);
    let Some(i) = view.shown(index, cursor) else {
        ui.label("No chunk started by the cursor.");
        return;
    };
    let c = &index.chunks()[i];
    summary_ui(c, cursor, ui);
    legend_ui(ui);
    grid_ui(c, cursor, ui, commands);
}

fn selector_ui(index: &ChunkIndex, view: &mut SlicesView, cursor: SimTime, started: usize, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        let shown = view.shown(index, cursor);
        let text = match (view.selected, shown) {
            (None, Some(i)) => format!("newest: {}", chunk_label(i, &index.chunks()[i])),
            (None, None) => "newest".to_string(),
            (Some(_), Some(i)) => chunk_label(i, &index.chunks()[i]),
            (Some(_), None) => "-".to_string(),
        };
        egui::ComboBox::from_label("chunk").selected_text(text).width(300.0).show_ui(ui, |ui| {
            ui.selectable_value(&mut view.selected, None, "newest (follow the cursor)");
            let from = started.saturating_sub(MAX_LISTED_CHUNKS);
            for k in (from..started).rev() {
                ui.selectable_value(&mut view.selected, Some(k), chunk_label(k, &index.chunks()[k]));
            }
        });
        let cur = shown.unwrap_or(0);
        if ui.add_enabled(cur > 0, egui::Button::new("previous")).on_hover_text("The chunk before").clicked() {
            view.selected = Some(cur - 1);
        }
        let has_next = cur + 1 < started;
        if ui.add_enabled(has_next, egui::Button::new("next")).on_hover_text("The chunk after").clicked() {
            view.selected = Some(cur + 1);
        }
        ui.label(format!("{started} chunks by the cursor"));
    });
}

fn summary_ui(c: &ChunkRecord, cursor: SimTime, ui: &mut egui::Ui) {
    let n = c.num_slices();
    ui.label(format!(
        "chunk id {} from side {:?}: {} bytes in {n} slices, started at {:.3} s",
        c.chunk,
        c.side,
        c.bytes,
        c.started_at.as_secs_f64()
    ));
    if cursor < c.started_at {
        ui.label("It starts after the cursor.");
    }
    let k = c.counts_at(cursor);
    ui.label(sends_histogram(c, cursor));
    let p = c.progress_at(cursor) as f32;
    let bar =
        format!("{}/{n} acked, {} received, {} in flight, {} not sent", k.acked, k.received, k.in_flight, k.not_sent);
    ui.add(egui::ProgressBar::new(p).text(bar));
    let first_sends = n - k.not_sent;
    ui.label(format!(
        "rate over the last second: {} kbps acked, {} kbps sent; {} sends ({} resends)",
        super::plot_series::fixed(c.acked_kbps_at(cursor), 1),
        super::plot_series::fixed(c.sent_kbps_at(cursor), 1),
        k.sends,
        k.sends.saturating_sub(first_sends)
    ));
    if let Some(done) = c.completed_by(cursor) {
        ui.label(format!(
            "completed at {:.3} s, {:.1} ms after its start",
            done.as_secs_f64(),
            done.saturating_since(c.started_at).as_millis_f64()
        ));
    } else if let Some(eta) = c.expected_completion_at(cursor) {
        ui.label(format!(
            "expected completion at {:.3} s (in {:.2} s, linear from progress so far)",
            eta.as_secs_f64(),
            eta.saturating_since(cursor).as_secs_f64()
        ));
    } else {
        ui.label("expected completion: - (nothing acked yet)");
    }
    if let Some(d) = c.delivered_at.filter(|&d| d <= cursor) {
        let ok = if c.delivered_ok == Some(false) { " (corrupt)" } else { "" };
        ui.label(format!("read by the receiving application at {:.3} s{ok}", d.as_secs_f64()));
    }
    let ignored = c.ignored.partition_point(|&t| t <= cursor);
    if ignored > 0 {
        ui.label(format!("{ignored} slices ignored by the receiver"));
    }
}

/// The outline of a resent slice: white on the dark theme, near-black on the light one (white
/// vanished on the light theme's pale cells, issue 25 defect 10).
pub fn resent_outline(ui: &egui::Ui) -> Stroke {
    let c = if ui.visuals().dark_mode { Color32::WHITE } else { Color32::from_gray(20) };
    Stroke::new(2.0, c)
}

/// Smallest cell that has room for its send count.
const COUNT_MIN_CELL: f32 = 12.0;

fn legend_ui(ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        for s in SliceState::ALL {
            let (r, _) = ui.allocate_exact_size(egui::vec2(CELL, CELL), Sense::hover());
            ui.painter().rect_filled(r, 2.0, state_color(s));
            ui.label(s.label());
        }
        let (r, _) = ui.allocate_exact_size(egui::vec2(CELL, CELL), Sense::hover());
        ui.painter().rect_filled(r, 2.0, state_color(SliceState::Received));
        ui.painter().rect_stroke(r.shrink(1.0), 2.0, resent_outline(ui), egui::StrokeKind::Inside);
        ui.label("resent (the number: its sends)");
    });
}

/// How many slices were sent once, twice... by `cursor`: `sends per slice: 1x 180, 2x 40, 3x 4`.
pub fn sends_histogram(c: &ChunkRecord, cursor: SimTime) -> String {
    let mut counts: std::collections::BTreeMap<usize, usize> = std::collections::BTreeMap::new();
    for s in &c.slices {
        let n = s.sends_at(cursor);
        if n > 0 {
            *counts.entry(n).or_default() += 1;
        }
    }
    if counts.is_empty() {
        return "sends per slice: none sent yet".into();
    }
    let parts: Vec<String> = counts.iter().map(|(n, k)| format!("{n}x {k}")).collect();
    format!("sends per slice: {}", parts.join(", "))
}

fn grid_ui(c: &ChunkRecord, cursor: SimTime, ui: &mut egui::Ui, commands: &mut Vec<AppCommand>) {
    let n = c.num_slices();
    let cols = if n <= 256 { 16 } else { 64 };
    let rows = n.div_ceil(cols);
    // Squares as large as the width allows, within reason.
    let cell = (ui.available_width() / cols as f32 - GAP).clamp(8.0, 24.0);
    let step = cell + GAP;
    egui::ScrollArea::vertical().id_salt("slice_grid").max_height(ui.available_height().max(200.0)).show(ui, |ui| {
        let size = egui::vec2(cols as f32 * step, rows as f32 * step);
        let (rect, resp) = ui.allocate_exact_size(size, Sense::click());
        resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Image, true, "slice grid"));
        let clip = ui.clip_rect();
        let outline = resent_outline(ui);
        let count_font = egui::TextStyle::Small.resolve(ui.style());
        let painter = ui.painter();
        let cell_rect = |i: usize| {
            let min = rect.min + egui::vec2((i % cols) as f32 * step, (i / cols) as f32 * step);
            egui::Rect::from_min_size(min, egui::vec2(cell, cell))
        };
        for (i, s) in c.slices.iter().enumerate() {
            let r = cell_rect(i);
            if !clip.intersects(r) {
                continue;
            }
            painter.rect_filled(r, 2.0, state_color(s.state_at(cursor)));
            let sends = s.sends_at(cursor);
            if sends > 1 {
                painter.rect_stroke(r.shrink(1.0), 2.0, outline, egui::StrokeKind::Inside);
                // The count on the cell (dark on every state colour a sent slice has).
                if cell >= COUNT_MIN_CELL {
                    let text = if sends > 99 { "99+".to_string() } else { sends.to_string() };
                    let at = r.center();
                    painter.text(at, egui::Align2::CENTER_CENTER, text, count_font.clone(), Color32::from_gray(15));
                }
            }
        }
        let at = |p: egui::Pos2| -> Option<usize> {
            let v = p - rect.min;
            let (col, row) = ((v.x / step) as usize, (v.y / step) as usize);
            let i = row * cols + col;
            (v.x >= 0.0 && v.y >= 0.0 && col < cols && i < n).then_some(i)
        };
        let hovered = resp.hover_pos().and_then(at);
        if resp.clicked() {
            if let Some(s) = resp.interact_pointer_pos().and_then(at).map(|i| &c.slices[i]) {
                let t = s.acked_at.or(s.received_at).or(s.sends.last().copied());
                if let Some(t) = t {
                    commands.push(AppCommand::SeekTo(t));
                }
            }
        }
        if let Some(i) = hovered {
            let text = slice_tooltip(&c.slices[i], i, cursor);
            resp.on_hover_ui_at_pointer(|ui| {
                ui.label(RichText::new(text));
                ui.label("click: move the cursor to its ack");
            });
        }
    });
}
