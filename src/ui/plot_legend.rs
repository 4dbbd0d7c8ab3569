//! A plot legend drawn as a row above the plot instead of inside it, so it never covers data and
//! never grows into the plot however many series there are.
//!
//! egui_plot's own legend floats over a corner of the plot area, on top of the newest data; this
//! one takes its own line (wrapping when narrow) and paints each entry's swatch in the series'
//! colour and dash.

use egui::{Color32, Stroke};

/// How an entry's swatch is drawn.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Swatch {
    Line,
    Dashed,
    Dot,
}

/// One legend entry: its name, colour and swatch.
pub type Entry<'a> = (&'a str, Color32, Swatch);

/// Draws `entries` on one wrapping row.
pub fn legend_row_ui(ui: &mut egui::Ui, entries: &[Entry<'_>]) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 4.0;
        for &(name, color, swatch) in entries {
            let (rect, _) = ui.allocate_exact_size(egui::vec2(16.0, 10.0), egui::Sense::hover());
            let p = ui.painter();
            let y = rect.center().y;
            match swatch {
                Swatch::Line => {
                    p.line_segment([rect.left_center(), rect.right_center()], Stroke::new(2.0, color));
                }
                Swatch::Dashed => {
                    for x in [rect.left(), rect.left() + 6.0, rect.left() + 12.0] {
                        p.line_segment([egui::pos2(x, y), egui::pos2(x + 3.5, y)], Stroke::new(2.0, color));
                    }
                }
                Swatch::Dot => {
                    p.circle_filled(rect.center(), 3.0, color);
                }
            }
            ui.label(egui::RichText::new(name).small());
            ui.add_space(6.0);
        }
    });
}
