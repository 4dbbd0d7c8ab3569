//! The Tune tab: sweep one parameter over a range for some strategies and seeds, and see the
//! trade-off itself: p99 latency against bytes per message, with the frontier, error bars across
//! seeds and the live settings marked, and one chosen metric against the varied parameter.
//!
//! The sweep runs in the app ([`crate::app::tune`]); this panel only builds the setup, draws the
//! rows that arrived and pushes commands: each point is labelled with its varied value, hovering
//! names all its values, clicking picks it, *Run as session* (or a double click) re-runs it as a
//! normal session ([`AppCommand::TuneOpen`]), *Apply* copies its values to the live run.
//!
//! The parameters to vary (grouped as the parameter table groups them), the strategies to sweep
//! and their colours all come from the app's [`Catalog`]: a new strategy's row and parameter
//! group appear here with no edit.

use egui::{Color32, Pos2};
use egui_plot::{Line, MarkerShape, Plot, PlotPoint, PlotPoints, PlotResponse, Points, VLine};

use super::colors::row_color;
use crate::app::tune::{self, TuneSetup};
use crate::app::{AppCommand, AppState};
use crate::params::{Catalog, Kind};
use crate::report::sweep::SweepRow;

/// The figure the second plot draws against the varied parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Metric {
    #[default]
    P99,
    P50,
    BytesPerMessage,
    SendsPerMessage,
    Spurious,
}

const METRICS: [(Metric, &str); 5] = [
    (Metric::P99, "p99 latency ms"),
    (Metric::P50, "p50 latency ms"),
    (Metric::BytesPerMessage, "bytes / message"),
    (Metric::SendsPerMessage, "sends / message"),
    (Metric::Spurious, "spurious resends"),
];

impl Metric {
    fn of(self, r: &SweepRow) -> f64 {
        match self {
            Metric::P99 => r.p99_ms,
            Metric::P50 => r.p50_ms,
            Metric::BytesPerMessage => r.bytes_per_message,
            Metric::SendsPerMessage => r.sends_per_message,
            Metric::Spurious => r.spurious_resends,
        }
    }

    fn name(self) -> &'static str {
        METRICS.iter().find(|(m, _)| *m == self).map_or("", |(_, n)| n)
    }
}

/// The Tune panel's own state: the setup being edited, the chosen metric, the point picked.
#[derive(Default)]
pub struct TuneView {
    pub setup: TuneSetup,
    pub metric: Metric,
    /// The point last clicked (its index in the sweep): what *Apply* copies.
    pub selected: Option<usize>,
    /// Where the scatter drew each point last frame (index, screen position): hover and click
    /// pick the nearest, and tests click them.
    pub drawn: Vec<(usize, Pos2)>,
}

/// The live settings' mark: orange reads on both dark and light backgrounds (yellow vanished on
/// light).
const LIVE: Color32 = Color32::from_rgb(240, 140, 0);

/// A strategy's colour in both plots: its registry row's, as everywhere in the window (grey for
/// a name the catalog does not know, which a sweep of its strategies never yields).
fn colour(ui: &egui::Ui, catalog: &Catalog, strategy: &str) -> Color32 {
    catalog.strategy(strategy).map_or(Color32::GRAY, |row| row_color(ui, row))
}

/// A point's values in one line (`glenn resend_delay_ms=50`).
fn describe(r: &SweepRow) -> String {
    let values: Vec<String> = r.values.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "{} {}\np99 {:.1} ms (spread {:.1}), {:.1} bytes/msg, p50 {:.1} ms{}",
        r.strategy,
        values.join(" "),
        r.p99_ms,
        r.p99_ms_spread,
        r.bytes_per_message,
        r.p50_ms,
        if r.pareto { ", on the frontier" } else { "" }
    )
}

/// Draws the tab.
pub fn tune_ui(state: &AppState, view: &mut TuneView, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    setup_ui(state, view, ui, cmds);
    let job = &state.tune;
    if let Some(e) = &job.error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
    let rows = job.finished();
    if rows.is_empty() {
        ui.label("Pick a parameter, its range, strategies and seeds, then Run: each point is one run per seed on virtual time.");
        return;
    }
    let param = job.setup.as_ref().map_or(view.setup.param.clone(), |s| s.param.clone());
    let live = tune::live_value(&state.scenario, &param);
    selection_ui(&rows, view, &param, ui, cmds);
    ui.columns(2, |cols| {
        scatter_ui(&rows, state, live, &param, view, &mut cols[0], cmds);
        metric_ui(&rows, &state.catalog, live, &param, view, &mut cols[1]);
    });
}

/// Parameter, range, strategies, seeds, seconds; Run and Cancel; progress.
fn setup_ui(state: &AppState, view: &mut TuneView, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    let s = &mut view.setup;
    ui.horizontal_wrapped(|ui| {
        let before = s.param.clone();
        let label = ui.label("vary").id;
        let catalog = &state.catalog;
        egui::ComboBox::from_id_salt("tune param")
            .selected_text(s.param.as_str())
            .height(600.0)
            .show_ui(ui, |ui| {
                for group in &catalog.groups {
                    let mut rows = catalog.rows_of(group).filter(|p| matches!(p.kind, Kind::Number { .. })).peekable();
                    if rows.peek().is_none() {
                        continue;
                    }
                    ui.label(egui::RichText::new(group.label).strong());
                    for p in rows {
                        ui.selectable_value(&mut s.param, p.name.to_string(), p.name).on_hover_text(p.tip);
                    }
                }
            })
            .response
            .labelled_by(label);
        if s.param != before {
            *s = TuneSetup {
                strategies: s.strategies.clone(),
                seeds: s.seeds,
                seconds: s.seconds,
                ..TuneSetup::for_param(&s.param)
            };
        }
        let range = catalog.find(&s.param).and_then(|p| p.range()).unwrap_or(0.0..=1.0);
        let label = ui.label("from").id;
        ui.add(egui::DragValue::new(&mut s.start).range(range.clone()).speed(0.1)).labelled_by(label);
        let label = ui.label("to").id;
        ui.add(egui::DragValue::new(&mut s.end).range(range.clone()).speed(0.1)).labelled_by(label);
        let label = ui.label("step").id;
        ui.add(egui::DragValue::new(&mut s.step).range(0.0..=*range.end()).speed(0.1)).labelled_by(label);
        ui.separator();
        // Sweeps measure messages: the strategies that carry them, in the catalog's order.
        let offered: Vec<_> = catalog.strategies.iter().filter(|r| r.has_messages).collect();
        for info in &offered {
            let mut on = s.strategies.iter().any(|x| x == info.name);
            let text = egui::RichText::new(info.name).color(row_color(ui, info));
            if ui.checkbox(&mut on, text).on_hover_text(info.label).changed() {
                s.strategies.retain(|x| x != info.name);
                if on {
                    s.strategies.push(info.name.to_string());
                    s.strategies.sort_by_key(|x| offered.iter().position(|r| r.name == x));
                }
            }
        }
        ui.separator();
        let label = ui.label("seeds").id;
        ui.add(egui::DragValue::new(&mut s.seeds).range(1..=10)).labelled_by(label);
        let label = ui.label("seconds").id;
        ui.add(egui::DragValue::new(&mut s.seconds).range(1.0..=600.0)).labelled_by(label);
        let job = &state.tune;
        if job.running() {
            if ui.button("Cancel").on_hover_text("Stop the sweep's workers now; the points so far stay").clicked() {
                cmds.push(AppCommand::TuneCancel);
            }
        } else if ui.button("Run").on_hover_text("Run every point on all cores, on virtual time").clicked() {
            cmds.push(AppCommand::TuneRun(s.clone()));
        }
        if !job.points.is_empty() {
            ui.label(format!("{} / {} points", job.done(), job.points.len()));
        }
    });
}

/// The picked point's values, with Run as session and Apply.
fn selection_ui(
    rows: &[(usize, SweepRow)],
    view: &mut TuneView,
    param: &str,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) {
    ui.horizontal(|ui| {
        let picked = view.selected.and_then(|i| rows.iter().find(|(j, _)| *j == i));
        match picked {
            Some((i, r)) => {
                ui.label(describe(r).replace('\n', ": "));
                if ui
                    .button("Run as session")
                    .on_hover_text("Run this point at the sweep's first seed in the inspector")
                    .clicked()
                {
                    cmds.push(AppCommand::TuneOpen(*i));
                }
                if ui.button("Apply").on_hover_text("Copy this point's values to the live run").clicked() {
                    cmds.push(AppCommand::TuneApply(*i));
                }
            }
            None => {
                ui.label(format!("Click a point to pick it (double click runs it); the live {param} is marked."));
            }
        }
    });
}

/// p99 latency against bytes per message: points per strategy with the p99 spread across seeds
/// as a bar, the frontier, the live settings ringed.
fn scatter_ui(
    rows: &[(usize, SweepRow)],
    state: &AppState,
    live: Option<f64>,
    param: &str,
    view: &mut TuneView,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) {
    let strategy = state.scenario.strategy.name();
    let live_row = rows
        .iter()
        .filter(|(_, r)| r.strategy == strategy)
        .min_by(|a, b| distance(&a.1, param, live).total_cmp(&distance(&b.1, param, live)));
    let catalog = &state.catalog;
    let mut key: Vec<(String, Color32, Glyph)> =
        strategies_of(rows).into_iter().map(|n| (n.clone(), colour(ui, catalog, &n), Glyph::Dot)).collect();
    key.push(("frontier".into(), Color32::GRAY, Glyph::Line));
    if live_row.is_some() {
        key.push(("live settings".into(), LIVE, Glyph::Ring));
    }
    // Two rows of the same height as the metric plot's two above it, so the plots start level.
    ui.horizontal(|ui| {
        ui.set_min_height(ui.spacing().interact_size.y);
        legend_ui(&key, ui);
    });
    ui.horizontal(|ui| {
        ui.set_min_height(ui.spacing().interact_size.y);
        ui.weak("bar: p99 spread across seeds");
    });
    let colours: Vec<(String, Color32)> =
        strategies_of(rows).into_iter().map(|n| (n.clone(), colour(ui, catalog, &n))).collect();
    // egui_plot's own hover label is drawn inside the plot and was cut at its edge: the point's
    // values show in a tooltip the window keeps on screen instead.
    let resp: PlotResponse<()> = Plot::new("tune scatter")
        .show_x(false)
        .show_y(false)
        .x_axis_label("p99 latency ms")
        .y_axis_label("bytes / message")
        .height(ui.available_height().max(200.0))
        .show(ui, |p| {
            for (name, col) in &colours {
                let pts: Vec<[f64; 2]> = rows
                    .iter()
                    .filter(|(_, r)| r.strategy == *name)
                    .map(|(_, r)| [r.p99_ms, r.bytes_per_message])
                    .collect();
                for (_, r) in rows.iter().filter(|(_, r)| r.strategy == *name && r.p99_ms_spread > 0.0) {
                    let half = r.p99_ms_spread / 2.0;
                    let bar = vec![[r.p99_ms - half, r.bytes_per_message], [r.p99_ms + half, r.bytes_per_message]];
                    p.line(Line::new("", PlotPoints::from(bar)).color(col.gamma_multiply(0.5)).width(1.0));
                }
                p.points(Points::new(name.clone(), PlotPoints::from(pts)).color(*col).radius(3.5));
            }
            let mut frontier: Vec<[f64; 2]> =
                rows.iter().filter(|(_, r)| r.pareto).map(|(_, r)| [r.p99_ms, r.bytes_per_message]).collect();
            frontier.sort_by(|a, b| a[0].total_cmp(&b[0]));
            p.line(Line::new("frontier", PlotPoints::from(frontier)).color(Color32::GRAY).width(1.5));
            if let Some((_, r)) = live_row {
                let ring = Points::new("live settings", PlotPoints::from(vec![[r.p99_ms, r.bytes_per_message]]));
                p.points(ring.shape(MarkerShape::Circle).filled(false).radius(9.0).color(LIVE));
            }
        });
    view.drawn = rows
        .iter()
        .map(|(i, r)| (*i, resp.transform.position_from_point(&PlotPoint::new(r.p99_ms, r.bytes_per_message))))
        .collect();
    point_labels_ui(rows, &view.drawn, &colours, param, *resp.transform.frame(), ui);
    let near = resp.response.hover_pos().and_then(|pos| nearest(&view.drawn, pos));
    if let Some(i) = near {
        if let Some((_, r)) = rows.iter().find(|(j, _)| *j == i) {
            let text = describe(r);
            // A click picks the point (its values and Run as session / Apply above the plots);
            // only a double click runs it: running replaces the run shown, which asked
            // Save/Discard/Cancel on every click before (issue 25, defect 7).
            if resp.response.double_clicked() {
                view.selected = Some(i);
                cmds.push(AppCommand::TuneOpen(i));
            } else if resp.response.clicked() {
                view.selected = Some(i);
            }
            resp.response.on_hover_text_at_pointer(text);
        }
    }
}

/// Each point's varied value written beside it in its strategy's colour (a label that would
/// overlap one already written is left out; hovering still names it).
fn point_labels_ui(
    rows: &[(usize, SweepRow)],
    drawn: &[(usize, Pos2)],
    colours: &[(String, Color32)],
    param: &str,
    frame: egui::Rect,
    ui: &egui::Ui,
) {
    let painter = ui.painter_at(frame);
    let font = egui::TextStyle::Small.resolve(ui.style());
    let mut taken: Vec<egui::Rect> = Vec::new();
    for ((_, r), (_, pos)) in rows.iter().zip(drawn) {
        let Some(value) = r.values.get(param) else { continue };
        let colour = colours.iter().find(|(n, _)| *n == r.strategy).map_or(Color32::GRAY, |(_, c)| *c);
        let text = value.as_str().map_or_else(|| value.to_string(), str::to_string);
        let galley = painter.layout_no_wrap(text, font.clone(), colour);
        let rect = egui::Align2::LEFT_BOTTOM.anchor_size(*pos + egui::vec2(5.0, -3.0), galley.size());
        if taken.iter().any(|t| t.intersects(rect)) || !frame.contains_rect(rect) {
            continue;
        }
        taken.push(rect);
        painter.galley(rect.min, galley, colour);
    }
}

/// The chosen metric against the varied parameter, one line per strategy, the live value marked.
fn metric_ui(
    rows: &[(usize, SweepRow)],
    catalog: &Catalog,
    live: Option<f64>,
    param: &str,
    view: &mut TuneView,
    ui: &mut egui::Ui,
) {
    ui.horizontal(|ui| {
        let label = ui.label("against the parameter:").id;
        egui::ComboBox::from_id_salt("tune metric")
            .selected_text(view.metric.name())
            .show_ui(ui, |ui| {
                for (m, name) in METRICS {
                    ui.selectable_value(&mut view.metric, m, name);
                }
            })
            .response
            .labelled_by(label);
    });
    let colours: Vec<(String, Color32)> =
        strategies_of(rows).into_iter().map(|n| (n.clone(), colour(ui, catalog, &n))).collect();
    let mut key: Vec<(String, Color32, Glyph)> = colours.iter().map(|(n, c)| (n.clone(), *c, Glyph::Dot)).collect();
    if live.is_some() {
        key.push(("live settings".into(), LIVE, Glyph::Rule));
    }
    ui.horizontal(|ui| {
        ui.set_min_height(ui.spacing().interact_size.y);
        legend_ui(&key, ui);
    });
    let metric = view.metric;
    Plot::new("tune metric plot")
        .show_x(false)
        .show_y(false)
        .x_axis_label(param.to_string())
        .y_axis_label(metric.name())
        .height(ui.available_height().max(200.0))
        .show(ui, |p| {
            for (name, col) in &colours {
                let mut pts: Vec<[f64; 2]> = rows
                    .iter()
                    .filter(|(_, r)| r.strategy == *name)
                    .filter_map(|(_, r)| Some([r.values.get(param)?.as_f64()?, metric.of(r)]))
                    .collect();
                pts.sort_by(|a, b| a[0].total_cmp(&b[0]));
                p.line(Line::new(name.clone(), PlotPoints::from(pts.clone())).color(*col));
                p.points(Points::new("", PlotPoints::from(pts)).color(*col).radius(3.0));
            }
            if let Some(x) = live {
                p.vline(VLine::new("live settings", x).color(LIVE));
            }
        });
}

/// How a legend entry is drawn: as its series is.
#[derive(Clone, Copy)]
enum Glyph {
    Dot,
    Line,
    Ring,
    /// A vertical line (the live value on the metric plot).
    Rule,
}

/// A plot's legend in a row of its own above the plot: egui_plot's own legend sits inside the
/// plot area, where it covered points.
fn legend_ui(entries: &[(String, Color32, Glyph)], ui: &mut egui::Ui) {
    for (name, col, glyph) in entries {
        let (rect, _) = ui.allocate_exact_size(egui::vec2(14.0, 14.0), egui::Sense::hover());
        let (c, p) = (rect.center(), ui.painter());
        match glyph {
            Glyph::Dot => p.circle_filled(c, 4.0, *col),
            Glyph::Line => p.line_segment([c - egui::vec2(7.0, 0.0), c + egui::vec2(7.0, 0.0)], (1.5, *col)),
            Glyph::Ring => p.circle_stroke(c, 5.5, (1.5, *col)),
            Glyph::Rule => p.line_segment([c - egui::vec2(0.0, 7.0), c + egui::vec2(0.0, 7.0)], (1.5, *col)),
        };
        ui.label(name.as_str());
    }
}

/// The strategies among the rows, in first-seen order.
fn strategies_of(rows: &[(usize, SweepRow)]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (_, r) in rows {
        if !names.contains(&r.strategy) {
            names.push(r.strategy.clone());
        }
    }
    names
}

/// How far a row's value of `param` is from the live value (rows without it count as the live
/// settings of their strategy: the parameter does not concern them).
fn distance(r: &SweepRow, param: &str, live: Option<f64>) -> f64 {
    match (r.values.get(param).and_then(|v| v.as_f64()), live) {
        (Some(v), Some(l)) => (v - l).abs(),
        _ => 0.0,
    }
}

/// The drawn point within 10 px of `pos`, nearest first.
fn nearest(drawn: &[(usize, Pos2)], pos: Pos2) -> Option<usize> {
    drawn
        .iter()
        .map(|(i, p)| (*i, p.distance(pos)))
        .filter(|(_, d)| *d <= 10.0)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}
