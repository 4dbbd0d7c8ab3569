//! Overview plots on one linked time axis: RTT (smoothed, display, raw samples, true link RTT),
//! loss (estimated beside the link's true loss) and bandwidth (sent / received / acked with the
//! send budget and the flow-control mode). In A/B mode each strategy gets a column, all axes
//! linked, so every difference on screen is caused by the strategy.
//!
//! Series are cut at the time cursor (the state at the cursor) and decimated to the plot's pixel
//! width (min and max per pixel column), so a frame stays cheap with hours of data: only the
//! points drawn are turned into plot points.

use std::collections::HashMap;

use ackscope_protocol::{Side, SimTime};
use egui::Color32;
use egui_plot::{Legend, Line, LineStyle, Plot, PlotPoint, PlotPoints, Points, VLine};

use crate::app::AppCommand;
use crate::model::{Recording, Sample};

/// The Overview tab's view state: each plot's visible time range in the last frame, which the
/// next frame's decimation cuts to.
#[derive(Debug, Default)]
pub struct OverviewView {
    x_ranges: HashMap<String, (f64, f64)>,
}

/// Colours used for the same quantity everywhere.
pub const COLOR_A: Color32 = Color32::from_rgb(90, 170, 255);
pub const COLOR_B: Color32 = Color32::from_rgb(255, 160, 60);
pub const COLOR_TRUTH: Color32 = Color32::from_rgb(120, 220, 120);
pub const COLOR_BUDGET: Color32 = Color32::from_rgb(200, 120, 255);

/// The part of `pts` (sorted by time) inside `[lo, hi]` and at or before `cursor`, reduced to at
/// most two points per pixel column.
pub fn visible(pts: &[Sample], lo: f64, hi: f64, cursor: f64, width_px: f32) -> Vec<PlotPoint> {
    let end = pts.partition_point(|p| p.t_s <= cursor.min(hi));
    let start = pts[..end].partition_point(|p| p.t_s < lo).saturating_sub(1);
    let slice = &pts[start..end];
    let point = |p: Sample| PlotPoint::new(p.t_s, p.y);
    let columns = (width_px.max(50.0) as usize).max(1);
    if slice.len() <= columns * 2 {
        return slice.iter().copied().map(point).collect();
    }
    let (x0, x1) = (slice[0].t_s, slice[slice.len() - 1].t_s);
    let span = (x1 - x0).max(f64::EPSILON);
    let mut out = Vec::with_capacity(columns * 2);
    let mut i = 0;
    for c in 0..columns {
        let edge = x0 + span * (c + 1) as f64 / columns as f64;
        let (mut lo_p, mut hi_p): (Option<Sample>, Option<Sample>) = (None, None);
        while i < slice.len() && (slice[i].t_s <= edge || c + 1 == columns) {
            let p = slice[i];
            if lo_p.is_none_or(|q| p.y < q.y) {
                lo_p = Some(p);
            }
            if hi_p.is_none_or(|q| p.y > q.y) {
                hi_p = Some(p);
            }
            i += 1;
        }
        match (lo_p, hi_p) {
            (Some(a), Some(b)) if a.t_s <= b.t_s => out.extend([point(a), point(b)]),
            (Some(a), Some(b)) => out.extend([point(b), point(a)]),
            _ => {}
        }
    }
    out.dedup_by(|a, b| a.x == b.x && a.y == b.y);
    out
}

struct View {
    lo: f64,
    hi: f64,
    cursor: f64,
    width: f32,
}

impl View {
    fn cut(&self, pts: &[Sample]) -> PlotPoints<'static> {
        PlotPoints::Owned(visible(pts, self.lo, self.hi, self.cursor, self.width))
    }

    fn cut_vec(&self, pts: &[Sample]) -> Vec<PlotPoint> {
        visible(pts, self.lo, self.hi, self.cursor, self.width)
    }
}

/// One plot with the cursor line, parameter-change markers, x range remembered for decimation,
/// and click-to-seek.
#[allow(clippy::too_many_arguments)]
fn plot_ui(
    ui: &mut egui::Ui,
    id: &str,
    height: f32,
    lane: &Recording,
    view: &mut OverviewView,
    cursor: SimTime,
    cmds: &mut Vec<AppCommand>,
    draw: impl FnOnce(&mut egui_plot::PlotUi, &View),
) {
    let link = egui::Id::unique("time_axis");
    let (lo, hi) = view.x_ranges.get(id).copied().unwrap_or((f64::MIN, f64::MAX));
    let cut = View { lo, hi, cursor: cursor.as_secs_f64(), width: ui.available_width() };
    let resp = Plot::new(id)
        .height(height)
        .legend(Legend::default())
        .link_axis(link, [true, false])
        .link_cursor(link, [true, false])
        .include_y(0.0)
        .x_axis_label("time (s)")
        // A fixed axis width keeps the plots' time axes aligned and leaves room for "1000".
        .y_axis_min_width(40.0)
        // Steps of 1, 5, 25... keep a few labelled ticks on short plots (base 10 leaves one).
        .y_grid_spacer(egui_plot::log_grid_spacer(5))
        .show(ui, |p| {
            draw(p, &cut);
            p.vline(VLine::new("", cut.cursor).color(Color32::GRAY).width(1.0));
            for (t, label) in lane.store.changes.iter().filter(|(t, _)| *t <= cut.cursor) {
                p.vline(
                    VLine::new(label.as_str(), *t)
                        .color(Color32::from_rgb(230, 200, 60))
                        .style(LineStyle::dotted_loose()),
                );
            }
        });
    let r = resp.transform.bounds().range_x();
    view.x_ranges.insert(id.to_string(), (*r.start(), *r.end()));
    if resp.response.clicked() {
        if let Some(pos) = resp.response.interact_pointer_pos() {
            let v = resp.transform.value_from_position(pos);
            cmds.push(AppCommand::SeekTo(SimTime::from_secs_f64(v.x)));
        }
    }
}

fn lane_plots_ui(
    lane: &Recording,
    view: &mut OverviewView,
    cursor: SimTime,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) {
    let name = lane.scenario.strategy.name();
    let h = ((ui.available_height() - 70.0) / 3.0).max(110.0);
    let a = lane.store.side(Side::A);
    let b = lane.store.side(Side::B);
    ui.label(format!("{name}: RTT (ms)"));
    plot_ui(ui, &format!("rtt_{name}"), h, lane, view, cursor, cmds, |p, v| {
        p.points(Points::new("A raw samples", v.cut(&a.rtt_raw_ms)).color(COLOR_A.gamma_multiply(0.5)).radius(1.5));
        p.line(Line::new("A smoothed (0.0025)", v.cut(&a.rtt_smoothed_ms)).color(COLOR_A).width(2.0));
        p.line(Line::new("A display (0.1)", v.cut(&a.rtt_display_ms)).color(COLOR_A.gamma_multiply(0.7)));
        p.line(Line::new("B smoothed (0.0025)", v.cut(&b.rtt_smoothed_ms)).color(COLOR_B).width(2.0));
        p.line(
            Line::new("true link RTT", v.cut(&lane.store.true_rtt_ms))
                .color(COLOR_TRUTH)
                .style(LineStyle::dashed_loose()),
        );
    });
    ui.label(format!("{name}: packet loss (%)"));
    plot_ui(ui, &format!("loss_{name}"), h, lane, view, cursor, cmds, |p, v| {
        p.line(Line::new("A estimate", v.cut(&a.loss_estimate_percent)).color(COLOR_A).width(2.0));
        p.line(Line::new("B estimate", v.cut(&b.loss_estimate_percent)).color(COLOR_B).width(2.0));
        p.line(Line::new("true A->B", v.cut(&a.loss_true_percent)).color(COLOR_TRUTH).style(LineStyle::dashed_loose()));
        p.line(
            Line::new("true B->A", v.cut(&b.loss_true_percent))
                .color(COLOR_TRUTH.gamma_multiply(0.6))
                .style(LineStyle::dotted_dense()),
        );
    });
    ui.label(format!("{name}: bandwidth (kbps), budget and flow mode"));
    plot_ui(ui, &format!("bw_{name}"), h, lane, view, cursor, cmds, |p, v| {
        p.line(Line::new("A sent", v.cut(&a.sent_kbps)).color(COLOR_A).width(2.0));
        p.line(Line::new("A acked", v.cut(&a.acked_kbps)).color(COLOR_A.gamma_multiply(0.6)));
        p.line(Line::new("B received", v.cut(&b.received_kbps)).color(COLOR_B));
        if !a.budget_available.is_empty() {
            p.line(Line::new("A budget available", v.cut(&a.budget_available)).color(COLOR_BUDGET));
            p.line(
                Line::new("A budget spent", v.cut(&a.budget_spent))
                    .color(COLOR_BUDGET.gamma_multiply(0.6))
                    .style(LineStyle::dotted_dense()),
            );
        }
        if !a.flow_good.is_empty() {
            // Flow mode as a step at the top of the plot: high = good (30 pps), low = bad (10 pps).
            let top = a.sent_kbps.iter().map(|p| p.y).fold(1.0, f64::max);
            let steps: Vec<PlotPoint> = v
                .cut_vec(&a.flow_good)
                .windows(2)
                .flat_map(|w| [PlotPoint::new(w[0].x, w[0].y * top), PlotPoint::new(w[1].x, w[0].y * top)])
                .collect();
            p.line(Line::new("A flow mode (high = good)", PlotPoints::Owned(steps)).color(Color32::LIGHT_RED));
        }
    });
}

pub fn overview_ui(
    lanes: &[Recording],
    view: &mut OverviewView,
    cursor: SimTime,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) {
    if lanes.len() == 1 {
        lane_plots_ui(&lanes[0], view, cursor, ui, cmds);
        return;
    }
    ui.columns(lanes.len(), |cols| {
        for (lane, col) in lanes.iter().zip(cols.iter_mut()) {
            lane_plots_ui(lane, view, cursor, col, cmds);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_keeps_extremes_and_respects_the_cursor() {
        let pts: Vec<Sample> = (0..100_000).map(|i| Sample { t_s: i as f64 / 1000.0, y: (i % 997) as f64 }).collect();
        let v = visible(&pts, f64::MIN, f64::MAX, 50.0, 500.0);
        assert!(v.len() <= 1000, "{}", v.len());
        assert!(v.iter().all(|p| p.x <= 50.0));
        assert_eq!(v.iter().map(|p| p.y).fold(0.0, f64::max), 996.0, "the maximum survives");
        assert!(v.windows(2).all(|w| w[0].x <= w[1].x), "x stays sorted");
        let few = visible(&pts[..10], f64::MIN, f64::MAX, 1.0, 500.0);
        assert_eq!(few.len(), 10);
    }
}
