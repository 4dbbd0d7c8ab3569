//! Live plots on one linked time axis: RTT (smoothed, display, raw samples, true) and loss
//! (estimated beside the link's true loss).

use ackscope_protocol::Side;
use egui::Color32;
use egui_plot::{Legend, Line, Plot, PlotPoint, Points};

use crate::store::Store;

/// Colours used for the same quantity everywhere.
pub const COLOR_A: Color32 = Color32::from_rgb(90, 170, 255);
pub const COLOR_B: Color32 = Color32::from_rgb(255, 160, 60);
pub const COLOR_TRUTH: Color32 = Color32::from_rgb(120, 220, 120);

fn line<'a>(name: &str, pts: &'a [PlotPoint], color: Color32) -> Line<'a> {
    Line::new(name, pts).color(color)
}

pub fn plots_ui(store: &Store, ui: &mut egui::Ui) {
    let link = egui::Id::unique("time_axis");
    let h = (ui.available_height() / 2.0 - 8.0).max(120.0);
    let a = store.side(Side::A);
    let b = store.side(Side::B);
    ui.label("RTT (ms)");
    Plot::new("rtt_plot")
        .height(h)
        .legend(Legend::default())
        .link_axis(link, [true, false])
        .link_cursor(link, [true, false])
        .include_y(0.0)
        .x_axis_label("time (s)")
        .show(ui, |p| {
            p.points(Points::new("A raw samples", &a.rtt_raw_ms[..]).color(COLOR_A.gamma_multiply(0.5)).radius(1.5));
            p.line(line("A smoothed (0.0025)", &a.rtt_smoothed_ms, COLOR_A).width(2.0));
            p.line(line("A display (0.1)", &a.rtt_display_ms, COLOR_A.gamma_multiply(0.7)));
            p.line(line("B smoothed (0.0025)", &b.rtt_smoothed_ms, COLOR_B).width(2.0));
            p.line(line("true link RTT", &store.true_rtt_ms, COLOR_TRUTH).style(egui_plot::LineStyle::dashed_loose()));
        });
    ui.label("Packet loss (%)");
    Plot::new("loss_plot")
        .height(h)
        .legend(Legend::default())
        .link_axis(link, [true, false])
        .link_cursor(link, [true, false])
        .include_y(0.0)
        .x_axis_label("time (s)")
        .show(ui, |p| {
            p.line(line("A estimate", &a.loss_estimate_percent, COLOR_A).width(2.0));
            p.line(line("B estimate", &b.loss_estimate_percent, COLOR_B).width(2.0));
            p.line(line("true A->B", &a.loss_true_percent, COLOR_TRUTH).style(egui_plot::LineStyle::dashed_loose()));
            p.line(
                line("true B->A", &b.loss_true_percent, COLOR_TRUTH.gamma_multiply(0.6))
                    .style(egui_plot::LineStyle::dotted_dense()),
            );
        });
}
