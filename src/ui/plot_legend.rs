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
use crate::model::Recording;

/// Draws the title (after `heading`, the lane's name on its first plot), the legend and the
/// readout of plot `kind` of `lane`; returns the series whose name was clicked.
pub fn legend_row_ui(
    ui: &mut egui::Ui,
    heading: Option<RichText>,
    kind: Kind,
    lane: &Recording,
    series: &[Series],
    hidden: impl Fn(&str) -> bool,
    hover_t: Option<f64>,
) -> Option<&'static str> {
    let mut clicked = None;
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 4.0;
        if let Some(h) = heading {
            ui.label(h);
        }
        ui.label(RichText::new(kind.title()).strong());
        if let Some(t) = hover_t {
            ui.weak(format!("at {t:.2} s:"));
        }
        for s in series {
            let off = hidden(s.name);
            swatch_ui(ui, s, off);
            let mut text = RichText::new(s.name).small();
            if off {
                text = text.strikethrough().weak();
            }
            let tip = if off { "Hidden: click to show" } else { "Click to hide" };
            if ui.add(egui::Button::new(text).frame(false)).on_hover_text(tip).clicked() {
                clicked = Some(s.name);
            }
            if let (Some(t), false) = (hover_t, off) {
                if let Some(y) = value_at((s.data)(lane), t) {
                    ui.label(RichText::new(format_value(s, y)).small().monospace());
                }
            }
            ui.add_space(4.0);
        }
    });
    clicked
}

/// A short sample of the series' line, dots or steps in its colour (grey when hidden).
fn swatch_ui(ui: &mut egui::Ui, s: &Series, off: bool) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(16.0, 10.0), egui::Sense::hover());
    let color = if off { Color32::GRAY.gamma_multiply(0.5) } else { s.color };
    let p = ui.painter();
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
