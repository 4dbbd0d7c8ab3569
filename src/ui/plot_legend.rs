//! A plot's legend as a wrapping row above the plot, never inside it: a swatch and a name per
//! series (click to hide or show it), and while the pointer is over a plot, each series' value
//! at the pointer's time.
//!
//! egui_plot's own legend floated over the newest data and grew with every parameter change;
//! this row lists the plot's series only (parameter changes are markers on the time axis), so
//! it never covers data and never grows.

use egui::{Color32, RichText, Stroke};
use egui_plot::LineStyle;

use super::plot_series::{format_value, value_at, Draw, Kind, Series};
use crate::model::Connection;

/// Where the readout reads: the pointer's time while hovering a plot, else the cursor.
#[derive(Clone, Copy, Debug)]
pub enum ReadAt {
    Pointer(f64),
    Cursor(f64),
}

impl ReadAt {
    fn t(self) -> f64 {
        match self {
            ReadAt::Pointer(t) | ReadAt::Cursor(t) => t,
        }
    }
}

/// Draws the title (after `heading`, the lane's name on its first plot), the legend and the
/// readout of plot `kind` of `lane`; returns the series whose name was clicked.
///
/// The readout is always there (at the cursor when the pointer is elsewhere), so the row
/// wraps the same way whether or not a plot is hovered and the plots below do not jump.
pub fn legend_row_ui(
    ui: &mut egui::Ui,
    heading: Option<RichText>,
    kind: Kind,
    lane: &Connection,
    series: &[Series],
    hidden: impl Fn(&str) -> bool,
    at: ReadAt,
) -> Option<&'static str> {
    let mut clicked = None;
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 4.0;
        if let Some(h) = heading {
            ui.label(h);
        }
        ui.label(RichText::new(kind.title()).strong());
        match at {
            ReadAt::Pointer(t) => ui.weak(RichText::new(format!("at {t:.2} s:")).small()),
            ReadAt::Cursor(_) => ui.weak(RichText::new("at cursor:").small()),
        };
        for s in series {
            let off = hidden(s.name);
            let value =
                (!off).then(|| value_at((s.data)(lane), at.t()).map_or("-".to_string(), |y| format_value(s, y)));
            let tip = if off { "Hidden: click to show" } else { "Click to hide" };
            if entry_ui(ui, s, off, value).on_hover_text(tip).clicked() {
                clicked = Some(s.name);
            }
            ui.add_space(4.0);
        }
    });
    clicked
}

/// One legend entry as a single widget (so wrapping never parts a swatch from its name and
/// value): the swatch, the name (struck through when hidden) and the value; clickable, and named
/// by the series for accessibility.
fn entry_ui(ui: &mut egui::Ui, s: &Series, off: bool, value: Option<String>) -> egui::Response {
    let size = egui::TextStyle::Small.resolve(ui.style()).size;
    let visuals = ui.visuals().clone();
    let name_color = if off { visuals.weak_text_color() } else { visuals.text_color() };
    let name = ui.painter().layout_no_wrap(s.name.to_string(), egui::FontId::proportional(size), name_color);
    let value =
        value.map(|v| ui.painter().layout_no_wrap(v, egui::FontId::monospace(size), visuals.strong_text_color()));
    let value_w = value.as_ref().map_or(0.0, |g| 3.0 + g.size().x);
    let size = egui::vec2(SWATCH_W + 3.0 + name.size().x + value_w, name.size().y.max(10.0));
    let (rect, resp) = ui.allocate_exact_size(size, egui::Sense::click());
    resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, s.name));
    let p = ui.painter();
    if resp.hovered() {
        p.rect_filled(rect.expand(1.0), 2.0, visuals.widgets.hovered.weak_bg_fill);
    }
    let swatch = egui::Rect::from_min_size(egui::pos2(rect.left(), rect.center().y - 5.0), egui::vec2(SWATCH_W, 10.0));
    let color =
        if off { Color32::GRAY.gamma_multiply(0.5) } else { super::plot_series::themed(s.color, visuals.dark_mode) };
    swatch_paint(p, swatch, s, color);
    let name_pos = egui::pos2(swatch.right() + 3.0, rect.top());
    let name_rect = egui::Rect::from_min_size(name_pos, name.size());
    p.galley(name_pos, name, name_color);
    if off {
        p.line_segment([name_rect.left_center(), name_rect.right_center()], Stroke::new(1.0, name_color));
    }
    if let Some(g) = value {
        p.galley(egui::pos2(name_rect.right() + 3.0, rect.top()), g, visuals.strong_text_color());
    }
    resp
}

const SWATCH_W: f32 = 16.0;

/// A short sample of the series' line, dots or steps in `color`.
fn swatch_paint(p: &egui::Painter, rect: egui::Rect, s: &Series, color: Color32) {
    let (l, r, y) = (rect.left(), rect.right(), rect.center().y);
    match s.draw {
        Draw::Dots { .. } => {
            for x in [l + 3.0, l + 8.0, l + 13.0] {
                p.circle_filled(egui::pos2(x, y), 1.8, color);
            }
        }
        Draw::Steps => {
            let pts =
                [(l, y + 3.0), (l + 8.0, y + 3.0), (l + 8.0, y - 3.0), (r, y - 3.0)].map(|(x, y)| egui::pos2(x, y));
            p.add(egui::Shape::line(pts.to_vec(), Stroke::new(1.5, color)));
        }
        Draw::Line { width, style } => {
            let stroke = Stroke::new(width, color);
            match style {
                LineStyle::Solid => {
                    p.line_segment([rect.left_center(), rect.right_center()], stroke);
                }
                _ => {
                    for x in [l, l + 6.0, l + 12.0] {
                        p.line_segment([egui::pos2(x, y), egui::pos2(x + 3.0, y)], stroke);
                    }
                }
            }
        }
    }
}
