//! The drawing half of the message timeline: the canvas with its rows, marks, time axis and
//! cursor, the pointer's pan/zoom/scroll/select. Each row starts with its message id in a gutter
//! left of the time axis (never under a mark); rows are at least as tall as that label, and when
//! the window holds more messages than rows fit, a density strip above them shows all of them.
//! [`super::timeline_ui`] holds the toolbar and the selected message's list,
//! [`super::timeline_view`] the state, [`super::timeline_marks`] the palette, glyphs and legend.

use ackscope_protocol::{PacketFate, PacketLedger, SimTime};
use egui::{Align2, FontId, Pos2, Rect, Sense, Stroke, Vec2};

use super::timeline_marks::{send_mark, spurious_box, Palette};
use super::timeline_text::{at_or_before, message_details_ui};
use super::timeline_view::{rows_from_bottom_showing, x_of, zoom, TimelineLayout, TimelineState, FOLLOW_MARGIN};
use crate::model::index::{MessageIndex, MessageRecord};

/// Rows are never shorter than their id label: more rows than fit scroll, and the density strip
/// above them sums up every message in the window.
const MIN_ROW_H: f32 = 14.0;
const MAX_ROW_H: f32 = 18.0;
const AXIS_H: f32 = 18.0;
/// The left gutter where each row's message id is written, clear of its marks.
const GUTTER_W: f32 = 62.0;
/// What the gutter grows by while the window has a mark: each row's distance from it.
const DELTA_GUTTER_W: f32 = 84.0;
/// Height of the density strip shown when the window holds more messages than rows fit.
const STRIP_H: f32 = 14.0;
const LABEL_FONT: f32 = 11.0;

/// A step of about `target` seconds from the 1-2-5 series.
fn nice_step(target: f64) -> f64 {
    let target = target.max(1e-6);
    let mag = 10f64.powf(target.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if mag * m >= target {
            return mag * m;
        }
    }
    mag * 10.0
}

/// The message timeline of one lane: pointer first (so this frame draws its result), then the
/// rows in the time window, the density strip, the time axis and cursor, and hover and click.
pub(super) fn canvas_ui(
    ui: &mut egui::Ui,
    label: &str,
    index: &MessageIndex,
    ledger: &PacketLedger,
    state: &mut TimelineState,
    cursor: SimTime,
    size: Vec2,
) {
    let (response, painter) = ui.allocate_painter(size, Sense::click_and_drag());
    let name = format!("{label} message timeline");
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, &name));
    let full = response.rect;
    let pal = Palette::of(ui);
    // The time area (its x extent is final; the density strip may take its top below).
    let rows_rect = Rect::from_min_max(
        Pos2::new(full.left() + GUTTER_W + if state.mark.is_some() { DELTA_GUTTER_W } else { 0.0 }, full.top()),
        Pos2::new(full.right(), full.bottom() - AXIS_H),
    );
    painter.rect_filled(full, 2.0, ui.visuals().extreme_bg_color);
    let cursor_s = cursor.as_secs_f64();
    pan_and_zoom(ui, &response, state, rows_rect, cursor_s);
    let (t0, t1) = time_window(state, cursor_s);

    let mut rows = std::mem::take(&mut state.rows);
    index.visible(SimTime::from_secs_f64(t0), SimTime::from_secs_f64(t1.max(0.0)), cursor, &state.filter, &mut rows);
    // The display filter's matches only (none of its cache is built here: the panel updates it).
    state.expr.retain(&mut rows);
    let lay = RowsLayout::of(index, &rows, rows_rect, state);
    let shown = &rows[lay.start..lay.end];

    let painter = painter.with_clip_rect(full);
    let x = |t: SimTime| x_of(lay.rect, t0, t1, t.as_secs_f64());
    let r = (lay.row_h * 0.38).clamp(1.5, 5.0);
    let mut layout_rows = Vec::with_capacity(shown.len());
    let hovered_k = response.hover_pos().filter(|p| lay.rect.contains(*p)).map(|p| lay.row_of(p));
    for (k, &i) in shown.iter().enumerate() {
        let m = &index.messages()[i];
        let y = lay.rect.top() + (k as f32 + 0.5) * lay.row_h;
        if hovered_k == Some(k) {
            painter.rect_filled(lay.band(y), 0.0, pal.band);
        }
        layout_rows.push((m.key(), y));
        let row = Row { y, row_h: lay.row_h, r, selected: state.selected == Some(m.key()), rect: lay.rect };
        draw_row(&painter, &pal, m, &row, cursor, &x, ledger);
        id_label(&painter, &pal, m, Pos2::new(full.left() + 4.0, y), row.selected);
        let point = crate::model::marks::Mark::message(state.lane, m.side, m.id, m.queued_at);
        if let Some(d) = crate::model::marks::short_for(state.mark.as_ref(), &point) {
            let font = FontId::monospace(LABEL_FONT);
            painter.text(Pos2::new(full.left() + GUTTER_W - 4.0, y), Align2::LEFT_CENTER, d, font, pal.queued);
        }
    }
    if rows.len() > shown.len() {
        density_strip(&painter, &pal, index, &rows, lay.rect, t0, t1, cursor, ledger);
    }
    time_axis(ui, &painter, full, &lay, rows.len(), (t0, t1));
    let cx = x(cursor);
    if (lay.rect.left()..=lay.rect.right()).contains(&cx) {
        painter.line_segment([Pos2::new(cx, full.top()), Pos2::new(cx, full.bottom())], Stroke::new(1.5, pal.cursor));
    }
    if rows.is_empty() {
        let color = ui.visuals().weak_text_color();
        let font = FontId::proportional(13.0);
        painter.text(lay.rect.center(), Align2::CENTER_CENTER, "no messages in this window", font, color);
    }
    pointer(&response, index, shown, &lay, state, (cursor, cx));

    state.last_layout = Some(TimelineLayout {
        rows_rect: lay.rect,
        t0_s: t0,
        t1_s: t1,
        row_height: lay.row_h,
        rows: layout_rows,
        rows_in_window: rows.len(),
    });
    state.rows = rows;
}

/// Ctrl+scroll (or pinch) zooms time around the pointer (at the cursor while following), scroll
/// moves through the rows, dragging pans time (and stops following) and rows.
fn pan_and_zoom(ui: &egui::Ui, response: &egui::Response, state: &mut TimelineState, rows_rect: Rect, cursor_s: f64) {
    let last_row_h = state.last_layout.as_ref().map_or(MAX_ROW_H, |l| l.row_height);
    if response.hovered() {
        let (z, scroll) = ui.input(|i| (i.zoom_delta(), i.smooth_scroll_delta()));
        if z != 1.0 {
            let anchor = response
                .hover_pos()
                .map_or(1.0, |p| ((p.x - rows_rect.left()) / rows_rect.width()).clamp(0.0, 1.0) as f64);
            zoom(state, 1.0 / z as f64, if state.follow_live { 1.0 } else { anchor });
        }
        state.rows_from_bottom += scroll.y / last_row_h;
    }
    if response.dragged() {
        let d = response.drag_delta();
        if d.x != 0.0 {
            if state.follow_live {
                state.follow_live = false;
                state.right_s = cursor_s.max(state.span_s);
            }
            state.right_s -= d.x as f64 * state.span_s / rows_rect.width().max(1.0) as f64;
        }
        state.rows_from_bottom += d.y / last_row_h;
    }
}

/// The time window shown, seconds: ending a little right of the cursor while following (so its
/// marks are not cut in half), else where the user left it, unless the cursor jumped left of it
/// (nothing would show), which brings the window back to end at the cursor.
fn time_window(state: &mut TimelineState, cursor_s: f64) -> (f64, f64) {
    if !state.follow_live && cursor_s < state.right_s - state.span_s {
        state.right_s = cursor_s.max(state.span_s) + state.span_s * FOLLOW_MARGIN;
    }
    if state.follow_live {
        let right = cursor_s.max(state.span_s) + state.span_s * FOLLOW_MARGIN;
        (right - state.span_s, right)
    } else {
        (state.right_s - state.span_s, state.right_s)
    }
}

/// Which of the window's rows fit and where: the rows' area (below the density strip when not
/// every row fits), the row height, and the slice `start..end` of the window's rows shown.
struct RowsLayout {
    rect: Rect,
    row_h: f32,
    start: usize,
    end: usize,
}

impl RowsLayout {
    /// Lays out `rows` (the window's messages, oldest first) in `rect`, taking the scroll
    /// position from `state` (clamped, and moved to show a message asked for).
    fn of(index: &MessageIndex, rows: &[usize], mut rect: Rect, state: &mut TimelineState) -> Self {
        let n = rows.len();
        if n as f32 * MIN_ROW_H > rect.height() {
            rect.min.y += STRIP_H;
        }
        let row_h = if n == 0 { MAX_ROW_H } else { (rect.height() / n as f32).clamp(MIN_ROW_H, MAX_ROW_H) };
        let capacity = ((rect.height() / row_h).floor() as usize).max(1);
        let max_scroll = n.saturating_sub(capacity) as f32;
        if let Some(key) = state.scroll_to.take() {
            if let Some(pos) = rows.iter().position(|&i| index.messages()[i].key() == key) {
                state.rows_from_bottom = rows_from_bottom_showing(pos, n, capacity);
            }
        }
        state.rows_from_bottom = state.rows_from_bottom.clamp(0.0, max_scroll);
        let end = n - state.rows_from_bottom.round() as usize;
        Self { rect, row_h, start: end.saturating_sub(capacity), end }
    }

    /// The row (from the top of those shown) at `p`, which is in the rows' area.
    fn row_of(&self, p: Pos2) -> usize {
        ((p.y - self.rect.top()) / self.row_h).floor() as usize
    }

    /// The band of the row centred at `y`.
    fn band(&self, y: f32) -> Rect {
        Rect::from_min_max(
            Pos2::new(self.rect.left(), y - self.row_h / 2.0),
            Pos2::new(self.rect.right(), y + self.row_h / 2.0),
        )
    }
}

/// The time axis under the rows (grid lines and second labels), and which rows of how many are
/// shown when they do not all fit.
fn time_axis(ui: &egui::Ui, painter: &egui::Painter, full: Rect, lay: &RowsLayout, n: usize, (t0, t1): (f64, f64)) {
    let rows_rect = lay.rect;
    let step = nice_step((t1 - t0) / (rows_rect.width() / 90.0).max(1.0) as f64);
    let mut t = (t0 / step).ceil() * step;
    let axis_color = ui.visuals().weak_text_color();
    // Which rows are shown, written on the axis row under the gutter; tick labels keep clear.
    let mut labels_from = rows_rect.left() + 16.0;
    if n > lay.end - lay.start {
        let note = format!("rows {}-{} of {n} (scroll)", lay.start + 1, lay.end);
        let r = painter.text(
            Pos2::new(full.left() + 4.0, full.bottom() - 2.0),
            Align2::LEFT_BOTTOM,
            note,
            FontId::proportional(10.0),
            axis_color,
        );
        labels_from = labels_from.max(r.right() + 24.0);
    }
    while t <= t1 {
        let xx = x_of(rows_rect, t0, t1, t);
        painter.line_segment(
            [Pos2::new(xx, rows_rect.top()), Pos2::new(xx, rows_rect.bottom())],
            Stroke::new(1.0, axis_color.gamma_multiply(0.15)),
        );
        let decimals = if step >= 1.0 { 0 } else { (-step.log10()).ceil() as usize };
        if xx < labels_from || xx > rows_rect.right() - 16.0 {
            t += step;
            continue;
        }
        painter.text(
            Pos2::new(xx, full.bottom() - 2.0),
            Align2::CENTER_BOTTOM,
            format!("{t:.decimals$} s"),
            FontId::proportional(10.0),
            axis_color,
        );
        t += step;
    }
}

/// Hover and click on the row under the pointer: a click selects its message (or clears the
/// selection), hovering shows the message's details in a card placed by [`detail_pos`].
fn pointer(
    response: &egui::Response,
    index: &MessageIndex,
    shown: &[usize],
    lay: &RowsLayout,
    state: &mut TimelineState,
    (cursor, cx): (SimTime, f32),
) {
    let row_at = |p: Pos2| -> Option<usize> {
        if !lay.rect.contains(p) {
            return None;
        }
        shown.get(lay.row_of(p)).copied()
    };
    if response.clicked() {
        if let Some(i) = response.interact_pointer_pos().and_then(row_at) {
            let key = index.messages()[i].key();
            state.selected = if state.selected == Some(key) { None } else { Some(key) };
        }
    }
    let Some((p, i)) = response.hover_pos().and_then(|p| Some((p, row_at(p)?))) else { return };
    let m = &index.messages()[i];
    let size = state.detail_size.unwrap_or(Vec2::new(240.0, 190.0));
    let row = Rect::from_x_y_ranges(lay.rect.x_range(), (p.y - lay.row_h / 2.0)..=(p.y + lay.row_h / 2.0));
    let at = detail_pos(p, row, size, cx, response.rect, response.ctx.content_rect());
    let card = egui::Area::new(response.id.with("message detail"))
        .order(egui::Order::Tooltip)
        .fixed_pos(at)
        .interactable(false)
        .show(&response.ctx, |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.set_max_width(260.0);
                message_details_ui(ui, m, cursor)
            })
        });
    state.detail_size = Some(card.response.rect.size());
}

/// Where the hovered message's card goes: clear of the pointer's row and of the time cursor's
/// line, inside the canvas when it fits there and always inside the window.
///
/// A card at the pointer covered the timeline right of it, where the cursor and the newest sends
/// are (issue 25, defect 4). Below-left of the pointer is the empty corner of the rows' diagonal
/// (newer rows start later); then above it on the side away from the cursor.
fn detail_pos(p: Pos2, row: Rect, size: Vec2, cursor_x: f32, canvas: Rect, screen: Rect) -> Pos2 {
    const GAP: f32 = 16.0;
    let left = p.x - GAP - size.x;
    let right = p.x + GAP;
    let below = row.bottom() + 4.0;
    let above = row.top() - 4.0 - size.y;
    let candidates = [(left, below), (right, above), (left, above), (right, below)];
    let clear = |x: f32, y: f32| {
        let r = Rect::from_min_size(Pos2::new(x, y), size);
        !(r.left()..=r.right()).contains(&cursor_x) && !r.intersects(row.expand2(Vec2::new(0.0, 1.0)))
    };
    let inside = |x: f32, y: f32, area: Rect| area.contains_rect(Rect::from_min_size(Pos2::new(x, y), size));
    let pick = (candidates.iter().find(|(x, y)| inside(*x, *y, canvas) && clear(*x, *y)))
        .or_else(|| candidates.iter().find(|(x, y)| inside(*x, *y, screen) && clear(*x, *y)))
        .or_else(|| candidates.iter().find(|(x, y)| inside(*x, *y, screen)))
        .copied()
        .unwrap_or((left, above));
    let max = (screen.max - size).max(screen.min);
    Pos2::new(pick.0.clamp(screen.min.x, max.x), pick.1.clamp(screen.min.y, max.y))
}

/// Where one row is drawn.
struct Row {
    y: f32,
    row_h: f32,
    /// Mark radius.
    r: f32,
    selected: bool,
    /// The time area.
    rect: Rect,
}

/// The row's message id in the gutter, in its side's colour.
fn id_label(painter: &egui::Painter, pal: &Palette, m: &MessageRecord, at: Pos2, selected: bool) {
    let font = if selected { FontId::monospace(LABEL_FONT + 0.5) } else { FontId::monospace(LABEL_FONT) };
    painter.text(at, Align2::LEFT_CENTER, format!("{:?} {}", m.side, m.id), font, pal.side(m.side));
}

/// Every message in the window summed up per pixel column: how many sends happened there
/// (height), and whether any copy was dropped (the dropped colour).
#[allow(clippy::too_many_arguments)]
fn density_strip(
    painter: &egui::Painter,
    pal: &Palette,
    index: &MessageIndex,
    rows: &[usize],
    rows_rect: Rect,
    t0: f64,
    t1: f64,
    cursor: SimTime,
    ledger: &PacketLedger,
) {
    let strip = Rect::from_min_max(Pos2::new(rows_rect.left(), rows_rect.top() - STRIP_H), rows_rect.right_top());
    let cols = strip.width().max(1.0) as usize;
    let mut sends = vec![0u32; cols];
    let mut drops = vec![false; cols];
    for &i in rows {
        for s in index.messages()[i].sends_by(cursor) {
            let x = x_of(strip, t0, t1, s.time.as_secs_f64()) - strip.left();
            if x < 0.0 || x >= cols as f32 {
                continue;
            }
            sends[x as usize] += 1;
            if s.uid.is_some_and(|u| matches!(ledger.fate_at(u, cursor), PacketFate::Dropped(_))) {
                drops[x as usize] = true;
            }
        }
    }
    let max = sends.iter().copied().max().unwrap_or(0).max(1) as f32;
    for (k, &c) in sends.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let h = 2.0 + (strip.height() - 3.0) * (c as f32 / max).sqrt();
        let x = strip.left() + k as f32 + 0.5;
        let color = if drops[k] { pal.dropped } else { pal.first.gamma_multiply(0.7) };
        painter.line_segment(
            [Pos2::new(x, strip.bottom() - 1.0), Pos2::new(x, strip.bottom() - 1.0 - h)],
            Stroke::new(1.0, color),
        );
    }
    painter.text(
        Pos2::new(strip.left() - GUTTER_W + 4.0, strip.center().y),
        Align2::LEFT_CENTER,
        format!("all {}", rows.len()),
        FontId::proportional(LABEL_FONT - 1.0),
        pal.queued,
    );
}

fn draw_row(
    painter: &egui::Painter,
    pal: &Palette,
    m: &MessageRecord,
    row: &Row,
    cursor: SimTime,
    x: &dyn Fn(SimTime) -> f32,
    ledger: &PacketLedger,
) {
    let Row { y, row_h, r, selected, rect } = *row;
    if selected {
        let band =
            Rect::from_min_max(Pos2::new(rect.left(), y - row_h / 2.0), Pos2::new(rect.right(), y + row_h / 2.0));
        painter.rect_filled(band, 0.0, pal.band.gamma_multiply(2.0));
    }
    let side_color = pal.side(m.side);
    let (xa, xb) = (x(m.queued_at).max(rect.left() - 10.0), x(m.end_at(cursor)).min(rect.right() + 10.0));
    painter.line_segment(
        [Pos2::new(xa, y), Pos2::new(xb.max(xa + 1.0), y)],
        Stroke::new((row_h * 0.3).max(1.0), side_color.gamma_multiply(0.45)),
    );
    let half = (row_h * 0.4).max(1.0);
    painter.line_segment([Pos2::new(xa, y - half), Pos2::new(xa, y + half)], Stroke::new(1.0, pal.queued));
    let visible = |xx: f32| xx >= rect.left() - r && xx <= rect.right() + r;
    // Decimate: at most one mark per pixel column per row (the first drawn wins).
    let mut last_px = f32::NEG_INFINITY;
    for s in m.sends_by(cursor) {
        let xx = x(s.time);
        if !visible(xx) || (xx - last_px).abs() < 1.0 && !s.spurious {
            continue;
        }
        last_px = xx;
        let dropped = s.uid.is_some_and(|u| matches!(ledger.fate_at(u, cursor), PacketFate::Dropped(_)));
        let c = Pos2::new(xx, y);
        send_mark(painter, pal, c, r, s.kind, dropped);
        if s.spurious {
            spurious_box(painter, pal, c, r);
        }
    }
    if let Some(t) = at_or_before(m.acked_at, cursor) {
        let xx = x(t);
        if visible(xx) {
            painter.line_segment([Pos2::new(xx, y - half), Pos2::new(xx, y + half)], Stroke::new(2.0, pal.ack));
        }
    }
    if let Some(t) = at_or_before(m.delivered_at, cursor) {
        let xx = x(t);
        if visible(xx) {
            painter.circle_stroke(Pos2::new(xx, y), r + 1.0, Stroke::new(1.5, pal.delivered));
        }
    }
}
