//! The drawing half of the message timeline: the canvas with its rows, marks, time axis and
//! cursor, the pointer's pan/zoom/scroll/select, and the legend of marks. [`super::timeline_ui`]
//! holds the toolbar and the selected message's list, [`super::timeline_view`] the state.

use ackscope_protocol::{PacketFate, PacketLedger, SendKind, SimTime};
use egui::{Align2, Color32, FontId, Pos2, Rect, Sense, Shape, Stroke, StrokeKind, Vec2};

use super::plots_ui::{COLOR_A, COLOR_B};
use super::timeline_text::{at_or_before, message_details_ui, send_kind_name};
use super::timeline_view::{rows_from_bottom_showing, x_of, zoom, TimelineLayout, TimelineState, FOLLOW_MARGIN};
use crate::model::index::{MessageIndex, MessageRecord};

const MIN_ROW_H: f32 = 3.0;
const MAX_ROW_H: f32 = 16.0;
const AXIS_H: f32 = 18.0;

pub const COLOR_FIRST: Color32 = Color32::from_rgb(225, 225, 225);
pub const COLOR_DELAY: Color32 = Color32::from_rgb(240, 200, 60);
pub const COLOR_NAK: Color32 = Color32::from_rgb(235, 90, 235);
pub const COLOR_REDUNDANT: Color32 = Color32::from_rgb(150, 150, 150);
pub const COLOR_TIMEOUT: Color32 = Color32::from_rgb(120, 200, 255);
pub const COLOR_ACK: Color32 = Color32::from_rgb(80, 225, 225);
pub const COLOR_DELIVERED: Color32 = Color32::from_rgb(120, 220, 120);
pub const COLOR_SPURIOUS: Color32 = Color32::from_rgb(255, 60, 60);
pub const COLOR_CURSOR: Color32 = Color32::from_rgb(255, 230, 120);

pub fn send_kind_color(kind: SendKind) -> Color32 {
    match kind {
        SendKind::First => COLOR_FIRST,
        SendKind::DelayResend => COLOR_DELAY,
        SendKind::NakResend => COLOR_NAK,
        SendKind::Redundant => COLOR_REDUNDANT,
        SendKind::TimeoutResend => COLOR_TIMEOUT,
    }
}

/// Draws a send mark: shape by kind, hollow when `hollow`.
fn send_mark(painter: &egui::Painter, c: Pos2, r: f32, kind: SendKind, hollow: bool) {
    let color = send_kind_color(kind);
    let (fill, stroke) = if hollow { (Color32::TRANSPARENT, Stroke::new(1.2, color)) } else { (color, Stroke::NONE) };
    match kind {
        SendKind::First => {
            painter.circle(c, r, fill, stroke);
        }
        SendKind::Redundant => {
            painter.circle(c, r * 0.7, fill, stroke);
        }
        SendKind::DelayResend => {
            let pts =
                vec![c + Vec2::new(0.0, -r), c + Vec2::new(r, 0.0), c + Vec2::new(0.0, r), c + Vec2::new(-r, 0.0)];
            painter.add(Shape::convex_polygon(pts, fill, stroke));
        }
        SendKind::NakResend => {
            let pts = vec![c + Vec2::new(-r, -r), c + Vec2::new(r, -r), c + Vec2::new(0.0, r)];
            painter.add(Shape::convex_polygon(pts, fill, stroke));
        }
        SendKind::TimeoutResend => {
            let rect = Rect::from_center_size(c, Vec2::splat(r * 1.6));
            painter.rect(rect, 0.0, fill, stroke, StrokeKind::Inside);
        }
    }
}

pub(super) fn legend_ui(ui: &mut egui::Ui) {
    let item = |ui: &mut egui::Ui, label: &str, draw: &dyn Fn(&egui::Painter, Pos2)| {
        let (r, p) = ui.allocate_painter(Vec2::splat(12.0), Sense::hover());
        draw(&p, r.rect.center());
        ui.label(egui::RichText::new(label).small());
    };
    ui.horizontal_wrapped(|ui| {
        item(ui, "queued", &|p, c| {
            p.line_segment([c - Vec2::new(0.0, 5.0), c + Vec2::new(0.0, 5.0)], Stroke::new(1.0, Color32::GRAY));
        });
        for kind in
            [SendKind::First, SendKind::DelayResend, SendKind::NakResend, SendKind::Redundant, SendKind::TimeoutResend]
        {
            item(ui, send_kind_name(kind), &|p, c| send_mark(p, c, 4.5, kind, false));
        }
        item(ui, "packet dropped", &|p, c| send_mark(p, c, 4.5, SendKind::First, true));
        item(ui, "spurious", &|p, c| {
            send_mark(p, c, 3.5, SendKind::DelayResend, false);
            p.rect_stroke(
                Rect::from_center_size(c, Vec2::splat(11.0)),
                0.0,
                Stroke::new(1.5, COLOR_SPURIOUS),
                StrokeKind::Inside,
            );
        });
        item(ui, "acked", &|p, c| {
            p.line_segment([c - Vec2::new(0.0, 5.0), c + Vec2::new(0.0, 5.0)], Stroke::new(2.0, COLOR_ACK));
        });
        item(ui, "delivered", &|p, c| {
            p.circle_stroke(c, 4.5, Stroke::new(1.5, COLOR_DELIVERED));
        });
    });
}

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
    let rows_rect = Rect::from_min_max(full.min, Pos2::new(full.right(), full.bottom() - AXIS_H));
    painter.rect_filled(full, 2.0, ui.visuals().extreme_bg_color);

    // Interaction with the window first, so this frame draws the result.
    let cursor_s = cursor.as_secs_f64();
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
    if !state.follow_live && cursor_s < state.right_s - state.span_s {
        // The cursor went left of the window (a jump back): nothing would show, so the window
        // comes back to end at the cursor.
        state.right_s = cursor_s.max(state.span_s) + state.span_s * FOLLOW_MARGIN;
    }
    let (t0, t1) = if state.follow_live {
        // A little room right of the cursor so its marks are not cut in half.
        let right = cursor_s.max(state.span_s) + state.span_s * FOLLOW_MARGIN;
        (right - state.span_s, right)
    } else {
        (state.right_s - state.span_s, state.right_s)
    };

    // Rows in the window.
    let mut rows = std::mem::take(&mut state.rows);
    index.visible(SimTime::from_secs_f64(t0), SimTime::from_secs_f64(t1.max(0.0)), cursor, &state.filter, &mut rows);
    let n = rows.len();
    let row_h = if n == 0 { MAX_ROW_H } else { (rows_rect.height() / n as f32).clamp(MIN_ROW_H, MAX_ROW_H) };
    let capacity = ((rows_rect.height() / row_h).floor() as usize).max(1);
    let max_scroll = n.saturating_sub(capacity) as f32;
    if let Some(key) = state.scroll_to.take() {
        if let Some(pos) = rows.iter().position(|&i| index.messages()[i].key() == key) {
            state.rows_from_bottom = rows_from_bottom_showing(pos, n, capacity);
        }
    }
    state.rows_from_bottom = state.rows_from_bottom.clamp(0.0, max_scroll);
    let end = n - state.rows_from_bottom.round() as usize;
    let start = end.saturating_sub(capacity);
    let shown = &rows[start..end];

    let painter = painter.with_clip_rect(full);
    let x = |t: SimTime| x_of(rows_rect, t0, t1, t.as_secs_f64());
    let r = (row_h * 0.38).clamp(1.5, 5.0);
    let mut layout_rows = Vec::with_capacity(shown.len());
    let hovered_k = response
        .hover_pos()
        .filter(|p| rows_rect.contains(*p))
        .map(|p| ((p.y - rows_rect.top()) / row_h).floor() as usize);
    for (k, &i) in shown.iter().enumerate() {
        let m = &index.messages()[i];
        let y = rows_rect.top() + (k as f32 + 0.5) * row_h;
        if hovered_k == Some(k) {
            let band = Rect::from_min_max(
                Pos2::new(rows_rect.left(), y - row_h / 2.0),
                Pos2::new(rows_rect.right(), y + row_h / 2.0),
            );
            painter.rect_filled(band, 0.0, Color32::from_rgba_unmultiplied(255, 255, 255, 14));
        }
        layout_rows.push((m.key(), y));
        draw_row(&painter, m, y, row_h, r, state.selected == Some(m.key()), rows_rect, cursor, &x, ledger);
    }

    // Time axis and the cursor.
    let step = nice_step((t1 - t0) / (rows_rect.width() / 90.0).max(1.0) as f64);
    let mut t = (t0 / step).ceil() * step;
    let axis_color = ui.visuals().weak_text_color();
    while t <= t1 {
        let xx = x_of(rows_rect, t0, t1, t);
        painter.line_segment(
            [Pos2::new(xx, rows_rect.top()), Pos2::new(xx, rows_rect.bottom())],
            Stroke::new(1.0, axis_color.gamma_multiply(0.15)),
        );
        let decimals = if step >= 1.0 { 0 } else { (-step.log10()).ceil() as usize };
        if xx < rows_rect.left() + 16.0 || xx > rows_rect.right() - 16.0 {
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
    let cx = x(cursor);
    if (rows_rect.left()..=rows_rect.right()).contains(&cx) {
        painter.line_segment([Pos2::new(cx, full.top()), Pos2::new(cx, full.bottom())], Stroke::new(1.5, COLOR_CURSOR));
    }
    if n == 0 {
        painter.text(
            rows_rect.center(),
            Align2::CENTER_CENTER,
            "no messages in this window",
            FontId::proportional(13.0),
            axis_color,
        );
    } else if n > shown.len() {
        painter.text(
            rows_rect.right_top() + Vec2::new(-4.0, 2.0),
            Align2::RIGHT_TOP,
            format!("rows {}-{} of {} (scroll)", start + 1, end, n),
            FontId::proportional(11.0),
            axis_color,
        );
    }

    // Hover and click: the row under the pointer.
    let row_at = |p: Pos2| -> Option<usize> {
        if !rows_rect.contains(p) {
            return None;
        }
        let k = ((p.y - rows_rect.top()) / row_h).floor() as usize;
        shown.get(k).copied()
    };
    if response.clicked() {
        if let Some(i) = response.interact_pointer_pos().and_then(row_at) {
            let key = index.messages()[i].key();
            state.selected = if state.selected == Some(key) { None } else { Some(key) };
        }
    }
    if let Some(i) = response.hover_pos().and_then(row_at) {
        let m = &index.messages()[i];
        response.on_hover_ui_at_pointer(|ui| message_details_ui(ui, m, cursor));
    }

    state.last_layout =
        Some(TimelineLayout { rows_rect, t0_s: t0, t1_s: t1, row_height: row_h, rows: layout_rows, rows_in_window: n });
    state.rows = rows;
}

#[allow(clippy::too_many_arguments)]
fn draw_row(
    painter: &egui::Painter,
    m: &MessageRecord,
    y: f32,
    row_h: f32,
    r: f32,
    selected: bool,
    rect: Rect,
    cursor: SimTime,
    x: &dyn Fn(SimTime) -> f32,
    ledger: &PacketLedger,
) {
    if selected {
        let band =
            Rect::from_min_max(Pos2::new(rect.left(), y - row_h / 2.0), Pos2::new(rect.right(), y + row_h / 2.0));
        painter.rect_filled(band, 0.0, Color32::from_rgba_unmultiplied(255, 255, 255, 28));
    }
    let side_color = match m.side {
        ackscope_protocol::Side::A => COLOR_A,
        ackscope_protocol::Side::B => COLOR_B,
    };
    let (xa, xb) = (x(m.queued_at).max(rect.left() - 10.0), x(m.end_at(cursor)).min(rect.right() + 10.0));
    painter.line_segment(
        [Pos2::new(xa, y), Pos2::new(xb.max(xa + 1.0), y)],
        Stroke::new((row_h * 0.3).max(1.0), side_color.gamma_multiply(0.45)),
    );
    let half = (row_h * 0.4).max(1.0);
    painter.line_segment([Pos2::new(xa, y - half), Pos2::new(xa, y + half)], Stroke::new(1.0, Color32::GRAY));
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
        send_mark(painter, c, r, s.kind, dropped);
        if s.spurious {
            painter.rect_stroke(
                Rect::from_center_size(c, Vec2::splat(r * 2.0 + 3.0)),
                0.0,
                Stroke::new(1.5, COLOR_SPURIOUS),
                StrokeKind::Outside,
            );
        }
    }
    if let Some(t) = at_or_before(m.acked_at, cursor) {
        let xx = x(t);
        if visible(xx) {
            painter.line_segment([Pos2::new(xx, y - half), Pos2::new(xx, y + half)], Stroke::new(2.0, COLOR_ACK));
        }
    }
    if let Some(t) = at_or_before(m.delivered_at, cursor) {
        let xx = x(t);
        if visible(xx) {
            painter.circle_stroke(Pos2::new(xx, y), r + 1.0, Stroke::new(1.5, COLOR_DELIVERED));
        }
    }
    if row_h >= 12.0 {
        let label = format!("{:?}{}", m.side, m.id);
        painter.text(
            Pos2::new(xa - 4.0, y),
            Align2::RIGHT_CENTER,
            label,
            FontId::proportional(9.0),
            side_color.gamma_multiply(0.8),
        );
    }
}
