//! Overview plots on one time axis: RTT (smoothed, display, raw samples, true link RTT), loss
//! (estimated beside the link's true loss), bandwidth (sent / received / acked with the
//! flow-control mode) and, for strategies that have one, the send budget on its own thin plot.
//! In A/B mode each strategy gets a column and the same plot kind shares one Y range across the
//! columns, so every difference on screen is caused by the strategy.
//!
//! The plots show the time window's range ([`TimeWindow`]: the last N seconds following the
//! newest data, the whole run, or where the user panned). Their Y range is computed from the
//! data in that whole time range, never from the data up to the cursor, so a replay keeps its
//! axes while scrubbing; the data after the cursor is drawn faded. Each plot's legend is a row
//! above it (click to hide a series; values at the pointer while hovering), parameter changes
//! are markers on the time axis, and series are decimated to the plot's pixel width.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ackscope_protocol::SimTime;
use egui::{Color32, Rect};
use egui_plot::{Line, LineStyle, Plot, PlotBounds, PlotPoint, PlotPoints, PlotUi, Points, VLine};

pub use super::plot_decimate::{split_at_cursor, visible};
use super::plot_decimate::{y_extent, DecimationCache};
use super::plot_legend::{legend_row_ui, ReadAt};
use super::plot_markers::{marker_color, marker_strip_ui};
use super::plot_series::{present, themed, Draw, Series};
pub use super::plot_series::{Kind, COLOR_A, COLOR_B, COLOR_BUDGET, COLOR_TRUTH};
pub use super::plot_window::{Span, TimeWindow};
use crate::app::AppCommand;
use crate::model::Shown;

/// Opacity of what lies after the cursor.
const AFTER_CURSOR: f32 = 0.3;
/// Room above the highest value, as a fraction of it.
const Y_MARGIN: f64 = 0.05;

/// The Overview tab's view state: the time window, hidden series, the pointer's time, and what
/// each plot showed in the last frame (bounds, screen area, series drawn, legend entries), which
/// the next frame and the tests read.
#[derive(Debug, Default)]
pub struct OverviewView {
    pub window: TimeWindow,
    hidden: BTreeSet<(Kind, &'static str)>,
    hover_t: Option<f64>,
    /// Height a lane's column took besides its plots in the last frame (legend rows, axes, the
    /// marker strip): the next frame sizes the plots to fit the rest.
    overhead: Option<f32>,
    bounds: HashMap<String, PlotBounds>,
    frames: HashMap<String, Rect>,
    drawn: HashMap<String, Vec<&'static str>>,
    legend: HashMap<String, Vec<&'static str>>,
    shown: Vec<u64>,
    decimated: DecimationCache,
    /// The IO graph under the plots (opened with its button beside the time window's).
    pub io: super::io_graph_ui::IoGraphView,
}

impl OverviewView {
    /// The bounds plot `id` (`rtt_glenn`, `loss_ue4`, `bw_...`, `budget_...`) showed in the last frame.
    pub fn bounds(&self, id: &str) -> Option<PlotBounds> {
        self.bounds.get(id).copied()
    }

    /// Where plot `id`'s data area was on screen in the last frame.
    pub fn frame(&self, id: &str) -> Option<Rect> {
        self.frames.get(id).copied()
    }

    /// The series plot `id` drew in the last frame, in drawing order.
    pub fn drawn(&self, id: &str) -> &[&'static str] {
        self.drawn.get(id).map_or(&[], Vec::as_slice)
    }

    /// The entries of plot `id`'s legend in the last frame.
    pub fn legend(&self, id: &str) -> &[&'static str] {
        self.legend.get(id).map_or(&[], Vec::as_slice)
    }

    pub fn is_hidden(&self, kind: Kind, name: &str) -> bool {
        self.hidden.iter().any(|(k, n)| *k == kind && *n == name)
    }
}

/// What every plot of this frame shares: the time range, the cursor, the Y range per kind,
/// sizes, and where the pointer's time goes.
struct Frame {
    lo: f64,
    hi: f64,
    cursor: f64,
    width: f32,
    plot_h: f32,
    y: BTreeMap<Kind, (f64, f64)>,
    budget_row: bool,
    hover_t: Option<f64>,
    overhead: f32,
}

/// A plot's id: its kind and the lane's first protocol (`rtt_glenn`, `loss_ue4`).
fn plot_id(kind: Kind, lane: &Shown<'_>) -> String {
    format!("{}_{}", kind.id(), lane.info().first().name)
}

/// The Y range of plot `kind` over every lane's visible, shown series in `lo..hi`: from 0 (or
/// below, for negative data) to a little over the highest value.
fn y_range(view: &mut OverviewView, lanes: &[Shown<'_>], kind: Kind, lo: f64, hi: f64, width: f32) -> (f64, f64) {
    let mut ext: Option<(f64, f64)> = None;
    for lane in lanes {
        let id = plot_id(kind, lane);
        for s in present(kind, lane.conn) {
            if matches!(s.draw, Draw::Steps) || view.is_hidden(kind, s.name) {
                continue;
            }
            if let Some((a, b)) = y_extent(view.decimated.get(&id, s.name, (s.data)(lane.conn), lo, hi, width)) {
                ext = Some(ext.map_or((a, b), |(x, y)| (x.min(a), y.max(b))));
            }
        }
    }
    let (a, b) = ext.unwrap_or((0.0, 1.0));
    let (a, b) = (a.min(0.0), b.max(0.0));
    let top = if b - a > f64::EPSILON { b + (b - a) * Y_MARGIN } else { a + 1.0 };
    (a, top)
}

/// Draws one series cut at the cursor: bright before, faded after.
fn series_ui(p: &mut PlotUi, s: &Series, points: &[PlotPoint], cursor: f64, y_top: f64, dark: bool) {
    let stepped;
    let points = if matches!(s.draw, Draw::Steps) {
        // Flow mode as steps in the top band of the plot: high = good, lower = bad.
        let level = |y: f64| y_top * if y >= 0.5 { 0.98 } else { 0.88 };
        stepped = points
            .windows(2)
            .flat_map(|w| [PlotPoint::new(w[0].x, level(w[0].y)), PlotPoint::new(w[1].x, level(w[0].y))])
            .collect::<Vec<_>>();
        &stepped[..]
    } else {
        points
    };
    let (before, after) = split_at_cursor(points, cursor);
    let color = themed(s.color, dark);
    for (pts, color) in [(before, color), (after, color.gamma_multiply(AFTER_CURSOR))] {
        if pts.is_empty() {
            continue;
        }
        let pts = PlotPoints::Owned(pts);
        match s.draw {
            Draw::Dots { radius } => p.points(Points::new(s.name, pts).color(color).radius(radius)),
            Draw::Line { width, style } => p.line(Line::new(s.name, pts).color(color).width(width).style(style)),
            Draw::Steps => p.line(Line::new(s.name, pts).color(color).width(1.5)),
        }
    }
}

/// One plot: its legend row above, the series of `lane` over the frame's time range, the cursor
/// and marker lines, click to seek; reads back zoom and pan into the time window.
fn plot_ui(
    ui: &mut egui::Ui,
    kind: Kind,
    lane: &Shown<'_>,
    view: &mut OverviewView,
    f: &mut Frame,
    last: bool,
    cmds: &mut Vec<AppCommand>,
) {
    let id = plot_id(kind, lane);
    let series = present(kind, lane.conn);
    let heading = (kind == Kind::Rtt).then(|| {
        let t = SimTime::from_secs_f64(f.cursor);
        let label = super::lanes::focused_label(lane);
        egui::RichText::new(label).strong().color(super::lane_colors::lane_color(ui, lane.color_at(t)))
    });
    let at = view.hover_t.map_or(ReadAt::Cursor(f.cursor), ReadAt::Pointer);
    let clicked = legend_row_ui(ui, heading, kind, lane.conn, &series, |n| view.is_hidden(kind, n), at);
    if let Some(name) = clicked {
        if !view.hidden.remove(&(kind, name)) {
            view.hidden.insert((kind, name));
        }
    }
    view.legend.insert(id.clone(), series.iter().map(|s| s.name).collect());
    let height = f.plot_h * kind.weight();
    if series.is_empty() {
        // Keep the lanes' time axes aligned when only the other lane has this plot.
        ui.allocate_ui(egui::vec2(ui.available_width(), height), |ui| {
            ui.weak(format!("{} has none", lane.label()));
            ui.allocate_space(ui.available_size());
        });
        return;
    }
    let (lo, hi, cursor) = (f.lo, f.hi, f.cursor);
    let (y_lo, y_hi) = f.y.get(&kind).copied().unwrap_or((0.0, 1.0));
    let link = egui::Id::unique("overview_time_axis");
    let mut plot = Plot::new(&id)
        .height(height)
        .link_cursor(link, [true, false])
        // Time is navigated; Y always fits the data in the time range.
        .allow_drag([true, false])
        .allow_zoom([true, false])
        .allow_scroll([true, false])
        .allow_boxed_zoom(false)
        .allow_double_click_reset(false)
        .show_y(false)
        // A fixed axis width keeps the plots' time axes aligned and leaves room for "1000".
        .y_axis_min_width(40.0)
        .y_grid_spacer(super::plot_window::value_marks)
        .x_grid_spacer(super::plot_window::time_marks)
        .x_axis_formatter(|mark, _| super::plot_window::time_label(mark));
    if last {
        plot = plot.x_axis_label("time (s)");
    }
    let hidden: Vec<&str> = view.hidden.iter().filter(|(k, _)| *k == kind).map(|(_, n)| *n).collect();
    let (cache, width, marker, dark) = (&mut view.decimated, f.width, marker_color(ui), ui.visuals().dark_mode);
    let mut drawn = Vec::new();
    let resp = plot.show(ui, |p| {
        p.set_plot_bounds_x(lo..=hi);
        p.set_plot_bounds_y(y_lo..=y_hi);
        for s in series.iter().filter(|s| !hidden.contains(&s.name)) {
            let points = cache.get(&id, s.name, (s.data)(lane.conn), lo, hi, width);
            series_ui(p, s, points, cursor, y_hi, dark);
            drawn.push(s.name);
        }
        p.vline(VLine::new("", cursor).color(Color32::GRAY).width(1.0));
        for (t, _) in lane.store.changes.iter().filter(|(t, _)| (lo..=hi).contains(t)) {
            let color = if *t <= cursor { marker } else { marker.gamma_multiply(AFTER_CURSOR) };
            p.vline(VLine::new("", *t).color(color).style(LineStyle::dotted_loose()));
        }
    });
    view.drawn.insert(id.clone(), drawn);
    let b = *resp.transform.bounds();
    view.bounds.insert(id.clone(), b);
    view.frames.insert(id, *resp.transform.frame());
    let r = &resp.response;
    let zoomed = r.contains_pointer() && ui.input(|i| i.zoom_delta() != 1.0);
    view.window.observe((lo, hi), (b.min()[0], b.max()[0]), zoomed);
    if r.double_clicked() {
        view.window.resume();
    }
    if let Some(pos) = r.hover_pos() {
        f.hover_t = Some(resp.transform.value_from_position(pos).x);
    }
    if r.clicked() {
        if let Some(pos) = r.interact_pointer_pos() {
            let v = resp.transform.value_from_position(pos);
            cmds.push(AppCommand::SeekTo(SimTime::from_secs_f64(v.x.max(0.0))));
        }
    }
}

/// One lane's column: the marker strip, then each plot kind.
fn lane_plots_ui(
    lane: &Shown<'_>,
    view: &mut OverviewView,
    f: &mut Frame,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) {
    let top = ui.cursor().top();
    ui.push_id(plot_id(Kind::Rtt, lane), |ui| {
        let frame = view.frames.get(&plot_id(Kind::Rtt, lane)).copied();
        if !lane.store.changes.is_empty() {
            marker_strip_ui(ui, &lane.store.changes, frame, f.lo, f.hi, f.cursor);
        }
        let kinds: Vec<Kind> = Kind::ALL.into_iter().filter(|k| *k != Kind::Budget || f.budget_row).collect();
        for (i, kind) in kinds.iter().enumerate() {
            plot_ui(ui, *kind, lane, view, f, i + 1 == kinds.len(), cmds);
        }
        let plots: f32 = kinds.iter().map(|k| f.plot_h * k.weight()).sum();
        f.overhead = f.overhead.max(ui.cursor().top() - top - plots);
    });
}

/// The Overview tab: the time window's controls, then each lane's plots (side by side in A/B).
pub fn overview_ui(
    lanes: &[Shown<'_>],
    view: &mut OverviewView,
    cursor: SimTime,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) {
    let ids: Vec<u64> = lanes.iter().map(Shown::id).collect();
    if ids != view.shown {
        // Another recording: start from its whole run (or the chosen span) again.
        view.shown = ids;
        view.bounds.clear();
        view.frames.clear();
        view.decimated.clear();
        view.window.resume();
    }
    ui.horizontal(|ui| {
        view.window.selector_ui(ui);
        ui.toggle_value(&mut view.io.open, "IO graph")
            .on_hover_text("A plot of any display filter's count, rate or a field per interval, under these");
    });
    let end = lanes.iter().map(|l| l.store.end_time().as_secs_f64()).fold(0.0, f64::max);
    let (lo, hi) = view.window.range(cursor.as_secs_f64(), end);
    if view.io.open {
        // No side margins: its time axis lines up with the plots' above.
        let frame = egui::Frame::NONE.inner_margin(egui::Margin::symmetric(0, 4));
        egui::Panel::bottom("io_graph").frame(frame).resizable(true).default_size(230.0).min_size(160.0).show(
            ui,
            |ui| {
                super::io_graph_ui::io_graph_ui(lanes, &mut view.io, (lo, hi), cursor, ui, cmds);
            },
        );
    }
    let n = lanes.len().max(1);
    let spacing = ui.spacing().item_spacing.x;
    let width = ((ui.available_width() - spacing * (n as f32 - 1.0)) / n as f32).max(50.0);
    let budget_row = lanes.iter().any(|l| !present(Kind::Budget, l.conn).is_empty());
    let y = Kind::ALL.into_iter().map(|k| (k, y_range(view, lanes, k, lo, hi, width))).collect();
    let weights: f32 = Kind::ALL.iter().filter(|k| **k != Kind::Budget || budget_row).map(|k| k.weight()).sum();
    let rows = if budget_row { 4.0 } else { 3.0 };
    // Each plot's legend row and axis labels, the marker strip, the last axis label: as measured
    // in the last frame, or a guess in the first.
    let overhead = view.overhead.unwrap_or(rows * 24.0 + 40.0) + 4.0;
    let plot_h = ((ui.available_height() - overhead) / weights).max(80.0);
    let mut f =
        Frame { lo, hi, cursor: cursor.as_secs_f64(), width, plot_h, y, budget_row, hover_t: None, overhead: 0.0 };
    egui::ScrollArea::vertical().id_salt("overview_scroll").show(ui, |ui| {
        if lanes.len() == 1 {
            lane_plots_ui(&lanes[0], view, &mut f, ui, cmds);
        } else {
            ui.columns(lanes.len(), |cols| {
                for (lane, col) in lanes.iter().zip(cols.iter_mut()) {
                    lane_plots_ui(lane, view, &mut f, col, cmds);
                }
            });
        }
    });
    if view.overhead.is_none_or(|o| (o - f.overhead).abs() > 0.5) {
        view.overhead = Some(f.overhead);
        ui.ctx().request_repaint();
    }
    if f.hover_t != view.hover_t {
        view.hover_t = f.hover_t;
        ui.ctx().request_repaint();
    }
}
