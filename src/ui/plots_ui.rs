//! Overview plots on one linked time axis: RTT (smoothed, display, raw samples, true link RTT),
//! loss (estimated beside the link's true loss) and bandwidth (sent / received / acked with the
//! send budget and the flow-control mode). In A/B mode each strategy gets a column, all axes
//! linked, so every difference on screen is caused by the strategy.
//!
//! The time axis always spans the whole recording: a replay opens with the whole run in view
//! and keeps it while scrubbing; the data after the cursor is drawn faded, so the state at the
//! cursor stands out without hiding where the run goes. A live run's cursor is its end, so
//! nothing is faded and the axis grows with the run. Series are decimated to the plot's pixel
//! width (min and max per pixel column), so a frame stays cheap with hours of data: only the
//! points drawn are turned into plot points.

use std::collections::HashMap;

use ackscope_protocol::{Side, SimTime};
use egui::Color32;
use egui_plot::{
    ColorConflictHandling, Legend, Line, LineStyle, Plot, PlotBounds, PlotPoint, PlotPoints, PlotUi, Points, VLine,
};

use crate::app::AppCommand;
use crate::model::{Recording, Sample};

/// The Overview tab's view state: each plot's bounds in the last frame, whose time range the
/// next frame's decimation cuts to, and the recordings it was drawn for (another recording
/// resets zoom and pan, so a file opens with its whole run in view).
#[derive(Debug, Default)]
pub struct OverviewView {
    bounds: HashMap<String, PlotBounds>,
    shown: Vec<u64>,
    decimated: HashMap<u64, Decimated>,
}

impl OverviewView {
    /// The bounds plot `id` (`rtt_glenn`, `loss_ue4`, `bw_...`) showed in the last frame.
    pub fn bounds(&self, id: &str) -> Option<PlotBounds> {
        self.bounds.get(id).copied()
    }
}

/// Colours used for the same quantity everywhere.
pub const COLOR_A: Color32 = Color32::from_rgb(90, 170, 255);
pub const COLOR_B: Color32 = Color32::from_rgb(255, 160, 60);
pub const COLOR_TRUTH: Color32 = Color32::from_rgb(120, 220, 120);
pub const COLOR_BUDGET: Color32 = Color32::from_rgb(200, 120, 255);
/// Opacity of what lies after the cursor.
const AFTER_CURSOR: f32 = 0.3;
const MARKER: Color32 = Color32::from_rgb(230, 200, 60);

/// The part of `pts` (sorted by time) inside `[lo, hi]` and at or before `cursor`, reduced to at
/// most two points per pixel column.
pub fn visible(pts: &[Sample], lo: f64, hi: f64, cursor: f64, width_px: f32) -> Vec<PlotPoint> {
    let end = pts.partition_point(|p| p.t_s <= cursor.min(hi));
    let start = pts[..end].partition_point(|p| p.t_s < lo).saturating_sub(1);
    decimate(&pts[start..end], width_px)
}

/// Points (in time order) split at `cursor`: those at or before it, and those after it led by
/// the last one before (so the faded line continues the bright one); the second is empty when
/// nothing lies after the cursor.
pub fn split_at_cursor(points: &[PlotPoint], cursor: f64) -> (Vec<PlotPoint>, Vec<PlotPoint>) {
    let k = points.partition_point(|p| p.x <= cursor);
    let after = if k < points.len() { points[k.saturating_sub(1)..].to_vec() } else { Vec::new() };
    (points[..k].to_vec(), after)
}

/// `slice` reduced to the smallest and largest value per pixel column, in time order.
fn decimate(slice: &[Sample], width_px: f32) -> Vec<PlotPoint> {
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

/// Width and dashes of a line.
#[derive(Clone, Copy)]
struct Pen {
    width: f32,
    style: LineStyle,
}

impl Pen {
    /// egui_plot's default width.
    const PLAIN: Pen = Pen { width: 1.5, style: LineStyle::Solid };
    const THICK: Pen = Pen { width: 2.0, style: LineStyle::Solid };

    fn styled(style: LineStyle) -> Pen {
        Pen { style, ..Pen::PLAIN }
    }
}

/// A series reduced to a plot's pixel columns, kept while the plot's time range and width and
/// the series' length stay the same: scrubbing or playing a replay then only splits it anew at
/// the cursor.
#[derive(Debug, Default)]
struct Decimated {
    key: Option<(u64, u64, u32, usize)>,
    points: Vec<PlotPoint>,
}

/// How one plot cuts its series this frame: the visible time range, the cursor, the width, and
/// the decimated series kept between frames.
struct View<'a> {
    lo: f64,
    hi: f64,
    cursor: f64,
    width: f32,
    plot: &'a str,
    cache: &'a mut HashMap<u64, Decimated>,
}

impl View<'_> {
    /// `pts` in the visible range reduced to the pixel columns (from the last frame when it
    /// still holds), split at the cursor.
    fn split(&mut self, name: &str, pts: &[Sample]) -> (Vec<PlotPoint>, Vec<PlotPoint>) {
        use std::hash::{BuildHasher, BuildHasherDefault};
        let slot =
            BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one((self.plot, name));
        let key = (self.lo.to_bits(), self.hi.to_bits(), self.width.to_bits(), pts.len());
        let d = self.cache.entry(slot).or_default();
        if d.key != Some(key) {
            d.points = visible(pts, self.lo, self.hi, f64::INFINITY, self.width);
            d.key = Some(key);
        }
        split_at_cursor(&d.points, self.cursor)
    }

    /// `pts` as a line named `name`: bright up to the cursor, faded after it (one legend entry).
    fn line(&mut self, p: &mut PlotUi, name: &str, pts: &[Sample], color: Color32, pen: Pen) {
        let (before, after) = self.split(name, pts);
        self.line_points(p, name, before, after, color, pen);
    }

    /// Points already cut at the cursor as a line, bright then faded.
    fn line_points(
        &self,
        p: &mut PlotUi,
        name: &str,
        before: Vec<PlotPoint>,
        after: Vec<PlotPoint>,
        color: Color32,
        pen: Pen,
    ) {
        let line = |pts: Vec<PlotPoint>, color: Color32| {
            Line::new(name, PlotPoints::Owned(pts)).color(color).width(pen.width).style(pen.style)
        };
        p.line(line(before, color));
        if !after.is_empty() {
            p.line(line(after, color.gamma_multiply(AFTER_CURSOR)));
        }
    }

    /// `pts` as dots, bright up to the cursor, faded after it.
    fn points(&mut self, p: &mut PlotUi, name: &str, pts: &[Sample], color: Color32, radius: f32) {
        let (before, after) = self.split(name, pts);
        p.points(Points::new(name, PlotPoints::Owned(before)).color(color).radius(radius));
        if !after.is_empty() {
            let faded = color.gamma_multiply(AFTER_CURSOR);
            p.points(Points::new(name, PlotPoints::Owned(after)).color(faded).radius(radius));
        }
    }
}

/// One plot over the whole run with the cursor line, parameter-change markers, x range
/// remembered for decimation, and click-to-seek.
#[allow(clippy::too_many_arguments)]
fn plot_ui(
    ui: &mut egui::Ui,
    id: &str,
    height: f32,
    lane: &Recording,
    view: &mut OverviewView,
    cursor: SimTime,
    reset: bool,
    cmds: &mut Vec<AppCommand>,
    draw: impl FnOnce(&mut PlotUi, &mut View),
) {
    let link = egui::Id::unique("time_axis");
    let (lo, hi) = view.bounds.get(id).map_or((f64::MIN, f64::MAX), |b| (b.min()[0], b.max()[0]));
    let end = lane.store.end_time().as_secs_f64();
    let width = ui.available_width();
    let mut cut = View { lo, hi, cursor: cursor.as_secs_f64(), width, plot: id, cache: &mut view.decimated };
    let mut plot = Plot::new(id);
    if reset {
        plot = plot.reset();
    }
    let resp = plot
        .height(height)
        // The bright part of a series names its legend entry (the faded part shares it).
        .legend(Legend::default().color_conflict_handling(ColorConflictHandling::PickFirst))
        .link_axis(link, [true, false])
        .link_cursor(link, [true, false])
        .include_y(0.0)
        // The whole run, however far the cursor is.
        .include_x(0.0)
        .include_x(end)
        .x_axis_label("time (s)")
        // A fixed axis width keeps the plots' time axes aligned and leaves room for "1000".
        .y_axis_min_width(40.0)
        // Steps of 1, 5, 25... keep a few labelled ticks on short plots (base 10 leaves one).
        .y_grid_spacer(egui_plot::log_grid_spacer(5))
        .show(ui, |p| {
            draw(p, &mut cut);
            p.vline(VLine::new("", cut.cursor).color(Color32::GRAY).width(1.0));
            for (t, label) in &lane.store.changes {
                let color = if *t <= cut.cursor { MARKER } else { MARKER.gamma_multiply(AFTER_CURSOR) };
                p.vline(VLine::new(label.as_str(), *t).color(color).style(LineStyle::dotted_loose()));
            }
        });
    view.bounds.insert(id.to_string(), *resp.transform.bounds());
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
    reset: bool,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) {
    let name = lane.scenario.strategy.name();
    let h = ((ui.available_height() - 70.0) / 3.0).max(110.0);
    let a = lane.store.side(Side::A);
    let b = lane.store.side(Side::B);
    let (thick, plain) = (Pen::THICK, Pen::PLAIN);
    ui.label(format!("{name}: RTT (ms)"));
    plot_ui(ui, &format!("rtt_{name}"), h, lane, view, cursor, reset, cmds, |p, v| {
        v.points(p, "A raw samples", &a.rtt_raw_ms, COLOR_A.gamma_multiply(0.5), 1.5);
        v.line(p, "A smoothed (0.0025)", &a.rtt_smoothed_ms, COLOR_A, thick);
        v.line(p, "A display (0.1)", &a.rtt_display_ms, COLOR_A.gamma_multiply(0.7), plain);
        v.line(p, "B smoothed (0.0025)", &b.rtt_smoothed_ms, COLOR_B, thick);
        v.line(p, "true link RTT", &lane.store.true_rtt_ms, COLOR_TRUTH, Pen::styled(LineStyle::dashed_loose()));
    });
    ui.label(format!("{name}: packet loss (%)"));
    plot_ui(ui, &format!("loss_{name}"), h, lane, view, cursor, reset, cmds, |p, v| {
        v.line(p, "A estimate", &a.loss_estimate_percent, COLOR_A, thick);
        v.line(p, "B estimate", &b.loss_estimate_percent, COLOR_B, thick);
        v.line(p, "true A->B", &a.loss_true_percent, COLOR_TRUTH, Pen::styled(LineStyle::dashed_loose()));
        let dense = Pen::styled(LineStyle::dotted_dense());
        v.line(p, "true B->A", &b.loss_true_percent, COLOR_TRUTH.gamma_multiply(0.6), dense);
    });
    ui.label(format!("{name}: bandwidth (kbps), budget and flow mode"));
    plot_ui(ui, &format!("bw_{name}"), h, lane, view, cursor, reset, cmds, |p, v| {
        v.line(p, "A sent", &a.sent_kbps, COLOR_A, thick);
        v.line(p, "A acked", &a.acked_kbps, COLOR_A.gamma_multiply(0.6), plain);
        v.line(p, "B received", &b.received_kbps, COLOR_B, plain);
        if !a.budget_available.is_empty() {
            v.line(p, "A budget available", &a.budget_available, COLOR_BUDGET, plain);
            let dense = Pen::styled(LineStyle::dotted_dense());
            v.line(p, "A budget spent", &a.budget_spent, COLOR_BUDGET.gamma_multiply(0.6), dense);
        }
        if !a.flow_good.is_empty() {
            // Flow mode as a step at the top of the plot: high = good (30 pps), low = bad (10 pps).
            let top = a.sent_kbps.iter().map(|p| p.y).fold(1.0, f64::max);
            let steps = |pts: Vec<PlotPoint>| -> Vec<PlotPoint> {
                pts.windows(2)
                    .flat_map(|w| [PlotPoint::new(w[0].x, w[0].y * top), PlotPoint::new(w[1].x, w[0].y * top)])
                    .collect()
            };
            let (before, after) = v.split("A flow mode", &a.flow_good);
            let (before, after) = (steps(before), steps(after));
            v.line_points(p, "A flow mode (high = good)", before, after, Color32::LIGHT_RED, plain);
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
    let ids: Vec<u64> = lanes.iter().map(Recording::id).collect();
    let reset = ids != view.shown;
    if reset {
        view.shown = ids;
        view.bounds.clear();
        view.decimated.clear();
    }
    if lanes.len() == 1 {
        lane_plots_ui(&lanes[0], view, cursor, reset, ui, cmds);
        return;
    }
    ui.columns(lanes.len(), |cols| {
        for (lane, col) in lanes.iter().zip(cols.iter_mut()) {
            lane_plots_ui(lane, view, cursor, reset, col, cmds);
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

    #[test]
    fn the_part_after_the_cursor_continues_from_the_last_point_before_it() {
        let pts: Vec<PlotPoint> = (0..100).map(|i| PlotPoint::new(i as f64, (i % 7) as f64)).collect();
        let (before, after) = split_at_cursor(&pts, 49.5);
        assert_eq!((before.len(), before.last().unwrap().x), (50, 49.0));
        assert_eq!(after[0].x, 49.0, "the faded part starts where the bright part ends");
        assert_eq!((after.len(), after.last().unwrap().x), (51, 99.0));
        let (all, none) = split_at_cursor(&pts, 99.0);
        assert!(all.len() == 100 && none.is_empty(), "nothing after the cursor at the end");
        let (none, all) = split_at_cursor(&pts, -1.0);
        assert!(none.is_empty() && all.len() == 100);
    }
}
