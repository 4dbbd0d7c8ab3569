//! The Compare tab: every lane's strategy overlaid on shared axes, one plot per figure, each
//! strategy in its own colour ([`super::colors`]), under a verdict computed from the data: who
//! used fewer bytes and how the p99 compared, then why (resends by cause, the spurious share,
//! bytes in redundant copies, head-of-line waits). The lanes are a live A/B pair, or the
//! recording shown (A) and a second one opened beside it with *Compare with...* (B).
//!
//! Figures: delivery latency CDF (tail on a log scale, p50/p95/p99 marked), message latency over
//! time (a point per message, ringed when a carrying packet was dropped), wire bytes per delivered
//! message, resends per second by cause with spurious ones, and head-of-line waiting. The legend
//! is drawn above the plots, never over data; clicking a strategy in it hides or shows that
//! strategy in every plot. The figures come from [`LaneFigures`] (no egui), recomputed only when
//! the events up to the cursor changed, and at most every [`REFRESH`] while a run is live.

use std::time::{Duration, Instant};

use ackscope_protocol::SimTime;
use egui::Color32;
use egui_plot::{GridMark, Line, LineStyle, MarkerShape, Plot, PlotPoint, PlotUi, Points, Text, VLine};

use super::lanes::PerLane;
use crate::app::AppCommand;
use crate::model::compare::{height_quantile, tail_height, LaneFigures, CAUSES};
use crate::model::verdict::{human_bytes, thousands, verdict, why};
use crate::model::{LaneColor, Shown};
use crate::report::compare_sessions::pair_verdicts;

/// Shortest time between two recomputations of a lane's figures while its events change.
pub const REFRESH: Duration = Duration::from_millis(400);
/// Most points the CDF line keeps.
const CDF_POINTS: usize = 800;
/// The quantiles marked on the CDF.
const MARKED: [(f64, &str); 3] = [(0.50, "p50"), (0.95, "p95"), (0.99, "p99")];

/// One lane's figures and what they were computed from.
#[derive(Default)]
pub struct LaneCache {
    /// Events counted when computed, and when.
    fed: Option<(usize, Instant)>,
    pub figures: LaneFigures,
}

impl LaneCache {
    /// Brings the figures to the events of `rec` up to `cursor` (at most every [`REFRESH`] while
    /// they keep changing); true when they are up to date.
    fn refresh(&mut self, rec: &Shown<'_>, cursor: SimTime) -> bool {
        let cursor = cursor.min(rec.store.end_time());
        let n = rec.store.events_until(cursor).len();
        match self.fed {
            Some((fed, _)) if fed == n => true,
            Some((_, at)) if at.elapsed() < REFRESH => false,
            _ => {
                self.figures = LaneFigures::compute(*rec, cursor);
                self.fed = Some((n, Instant::now()));
                true
            }
        }
    }
}

/// The Compare tab's view state: the figures per lane and the strategies hidden in the legend.
#[derive(Default)]
pub struct CompareView {
    pub lanes: PerLane<LaneCache>,
    pub hidden: Vec<String>,
    /// Each lane over all of its events (true) or up to the cursor; unset: whole recordings
    /// while a second recording is beside (they differ in length), the cursor otherwise.
    pub whole: Option<bool>,
}

/// What the Compare tab compares: every lane with its name, how many of them are the recording
/// shown's (A; the rest are B's), and the second recording's file (or the one being read).
pub struct Sides<'a, 'r> {
    pub lanes: &'a [(String, Shown<'r>)],
    pub a_lanes: usize,
    pub beside: Option<&'a std::path::Path>,
    /// The recording shown's file, when it has one.
    pub a_file: Option<&'a std::path::Path>,
    pub reading: Option<&'a std::path::Path>,
}

/// Line style per resend cause ([`CAUSES`] order), the colour being the strategy's.
fn cause_style(i: usize) -> LineStyle {
    match i {
        0 => LineStyle::Solid,
        1 => LineStyle::dashed_loose(),
        2 => LineStyle::dotted_dense(),
        _ => LineStyle::dashed_dense(),
    }
}

/// The y axis labels of the CDF: the quantile each height stands for.
fn quantile_label(mark: GridMark, _range: &std::ops::RangeInclusive<f64>) -> String {
    let q = height_quantile(mark.value) * 100.0;
    if mark.value < 0.0 || mark.value.fract().abs() > 1e-9 {
        String::new()
    } else if q >= 99.0 {
        format!("{q:.1}%")
    } else {
        format!("{q:.0}%")
    }
}

/// One whole-number mark per CDF height unit (0 %, 90 %, 99 %, 99.9 %...).
fn quantile_marks(input: egui_plot::GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    ((lo.floor().max(0.0) as i64)..=(hi.ceil() as i64)).map(|v| GridMark { value: v as f64, step_size: 1.0 }).collect()
}

/// The tab for a live A/B pair (or one lane), each lane by its own name.
pub fn compare_ui(lanes: &[Shown<'_>], view: &mut CompareView, cursor: SimTime, ui: &mut egui::Ui) {
    let named: Vec<(String, Shown<'_>)> = lanes.iter().map(|s| (s.label(), *s)).collect();
    let sides = Sides { lanes: &named, a_lanes: named.len(), beside: None, a_file: None, reading: None };
    compare_sides_ui(&sides, view, cursor, ui, &mut Vec::new());
}

/// The tab: the second recording's line, the verdicts, the legend, the totals and the plots.
pub fn compare_sides_ui(
    sides: &Sides<'_, '_>,
    view: &mut CompareView,
    cursor: SimTime,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) {
    let whole = view.whole.unwrap_or(sides.beside.is_some());
    let shown: Vec<Shown<'_>> = sides.lanes.iter().map(|(_, s)| *s).collect();
    let mut stale = false;
    for (lane, cache) in view.lanes.zip(&shown) {
        let until = if whole { lane.store.end_time() } else { cursor };
        stale |= !cache.refresh(lane, until);
    }
    if stale {
        ui.ctx().request_repaint_after(REFRESH);
    }
    // Names and colours for this comparison: the side's name, and a colour of its own where two
    // lanes ran the same strategy (A glenn against B glenn).
    let mut seen: Vec<LaneColor> = Vec::new();
    for (k, ((_, cache), (name, _))) in view.lanes.zip(&shown).zip(sides.lanes).enumerate() {
        cache.figures.label = name.clone();
        if let Some(c) = cache.figures.color {
            if seen.contains(&c) {
                cache.figures.color = Some(LaneColor::Slot(k as u8));
            }
            seen.extend(cache.figures.color);
        }
    }
    sides_line_ui(sides, &mut view.whole, whole, ui, cmds);
    let figures: Vec<&LaneFigures> = view.lanes.zip(&shown).map(|(_, c)| &c.figures).collect();
    verdicts_ui(sides, &figures, ui);
    if whole {
        let ends: Vec<String> = shown
            .iter()
            .zip(&figures)
            .map(|(s, f)| format!("{} {:.1} s", f.label, s.store.end_time().as_secs_f64()))
            .collect();
        ui.label(format!("Figures over each lane's whole recording ({}).", ends.join(", ")));
    } else {
        ui.label(format!("Figures over the events up to {:.2} s.", cursor.as_secs_f64()));
    }
    legend_ui(&figures, &mut view.hidden, ui);
    totals_ui(&figures, ui);
    resends_ui(&figures, ui);
    let shown: Vec<&LaneFigures> = figures.iter().copied().filter(|f| !view.hidden.contains(&f.label)).collect();
    let colors: Vec<Color32> = shown.iter().map(|f| figure_color(ui, f)).collect();
    let end = cursor.as_secs_f64();
    egui::ScrollArea::vertical().show(ui, |ui| {
        without_messages_ui(sides, ui);
        let h = ((ui.available_height() - 90.0) / 3.0).clamp(150.0, 320.0);
        ui.columns(2, |cols| {
            cols[0].label("Delivery latency CDF (ms; tail on a log scale)");
            cdf_plot_ui(&mut cols[0], &shown, &colors, h);
            cols[1].label("Message latency over time (ms; ringed: a carrying packet was dropped)");
            time_plot_ui(&mut cols[1], "cmp_latency", h, end, |p| {
                for (f, &c) in shown.iter().zip(&colors) {
                    let name = f.label.as_str();
                    p.points(Points::new(name, f.latency_clean.clone()).color(c).radius(1.5));
                    let dropped = format!("{name} dropped copy");
                    let ring = Points::new(dropped, f.latency_dropped.clone()).color(c).radius(3.0).filled(false);
                    p.points(ring.shape(MarkerShape::Circle));
                }
            });
        });
        ui.columns(2, |cols| {
            cols[0]
                .label("Wire bytes per delivered message (reliable + snapshot)")
                .on_hover_text(BYTES_PER_MESSAGE_TIP);
            time_plot_ui(&mut cols[0], "cmp_bytes", h, end, |p| {
                for (f, &c) in shown.iter().zip(&colors) {
                    p.line(Line::new(f.label.as_str(), f.bytes_per_message.clone()).color(c).width(1.5));
                }
            });
            cols[1].label("Head-of-line wait (ms per s: arrived, waiting for an earlier message)");
            time_plot_ui(&mut cols[1], "cmp_hol", h, end, |p| {
                for (f, &c) in shown.iter().zip(&colors) {
                    p.line(Line::new(f.label.as_str(), f.hol_ms_per_s.clone()).color(c).width(1.5));
                }
            });
        });
        ui.label(
            "Resends per second by cause (solid delay, dashed Nak, dotted redundant, dash-dot timeout; x spurious)",
        );
        time_plot_ui(ui, "cmp_resends", h, end, |p| {
            for (f, &c) in shown.iter().zip(&colors) {
                let name = f.label.as_str();
                for (i, (_, cause)) in CAUSES.iter().enumerate() {
                    if f.totals.resends[i] > 0 {
                        let line = Line::new(format!("{name} {cause}"), f.resends_per_s[i].clone());
                        p.line(line.color(c).style(cause_style(i)).width(1.5));
                    }
                }
                if f.totals.spurious > 0 {
                    let pts: Vec<[f64; 2]> = f.spurious_per_s.iter().copied().filter(|p| p[1] > 0.0).collect();
                    let spurious = Points::new(format!("{name} spurious"), pts).shape(MarkerShape::Cross);
                    p.points(spurious.color(c).radius(3.5));
                }
            }
        });
    });
}

/// Says which lanes the message plots cannot show and why, rather than leaving them blank: a
/// lane whose events queue no messages (a capture, whose decoder reads packets off the wire; a
/// stream that logged none) has no delivery latency, bytes per message or head-of-line wait.
fn without_messages_ui(sides: &Sides<'_, '_>, ui: &mut egui::Ui) {
    for (name, lane) in sides.lanes.iter().filter(|(_, s)| s.messages.is_empty()) {
        let origin = lane.info().origin.describe();
        let text = format!("{name} ({origin}) has no messages in its events: nothing of it in the message plots below");
        ui.label(egui::RichText::new(text).color(ui.visuals().warn_fg_color)).on_hover_text(
            "A capture's decoder reads packets, acks and resends off the wire, not the application's messages, \
             so a lane read from one has no delivery latency, bytes per message or head-of-line wait. Its \
             packets, losses and resends are compared above.",
        );
    }
    // The CDF's top axis label stands above its plot, over whatever is just above it.
    ui.add_space(14.0);
}

/// The strategies with their colours and what each mark means; a click hides or shows one.
fn legend_ui(figures: &[&LaneFigures], hidden: &mut Vec<String>, ui: &mut egui::Ui) {
    ui.horizontal_wrapped(|ui| {
        ui.label("Legend:");
        for f in figures {
            let s = &f.label;
            let mut on = !hidden.contains(s);
            let text = egui::RichText::new(format!("show {s}")).strong().color(figure_color(ui, f));
            if ui.checkbox(&mut on, text).on_hover_text("hide or show this strategy in every plot").changed() {
                hidden.retain(|h| h != s);
                if !on {
                    hidden.push(s.clone());
                }
            }
        }
        ui.separator();
        ui.weak("dot: a message; ring: a carrying packet dropped; x: spurious resend");
    });
}

/// A lane's colour in every plot.
fn figure_color(ui: &egui::Ui, f: &LaneFigures) -> Color32 {
    f.color.map_or(ui.visuals().text_color(), |c| super::lane_colors::lane_color(ui, c))
}

/// What the bytes-per-message figures divide by (the row's and the plot's hover text).
const BYTES_PER_MESSAGE_TIP: &str = "Packet bytes sent both ways / messages delivered, reliable messages and \
     unreliable snapshots alike (JSON: reliable.wire_bytes_per_delivered = wire_bytes / (delivered + \
     unreliable_delivered)). A strategy sending more snapshots per second reads lower per message.";

/// How a totals row reads one lane's figures.
type Cell = fn(&LaneFigures) -> String;

/// The run-wide figures per strategy, as one compact grid.
fn totals_ui(figures: &[&LaneFigures], ui: &mut egui::Ui) {
    // Wide column gaps: two lanes' "a / b / c" cells must not read as one.
    egui::Grid::new("compare_totals").striped(true).spacing([28.0, 4.0]).num_columns(figures.len() + 1).show(
        ui,
        |ui| {
            ui.weak("");
            for f in figures {
                ui.label(egui::RichText::new(&f.label).strong().color(figure_color(ui, f)));
            }
            ui.end_row();
            let rows: [(&str, Cell); 4] = [
                ("latency p50 / p95 / p99 ms", |f| {
                    let l = f.totals.latency_ms;
                    format!("{:.0} / {:.0} / {:.0}", l.p50, l.p95, l.p99)
                }),
                ("bytes per delivered msg (reliable + snapshot)", |f| format!("{:.1}", f.totals.bytes_per_message())),
                ("bytes in redundant copies", |f| human_bytes(f.totals.redundant_copy_bytes)),
                ("head-of-line wait total / max ms", |f| {
                    format!("{:.0} / {:.0}", f.totals.hol_total_ms, f.totals.hol_max_ms)
                }),
            ];
            for (name, value) in rows {
                let label = ui.label(name);
                if name.starts_with("bytes per delivered") {
                    label.on_hover_text(BYTES_PER_MESSAGE_TIP);
                }
                for f in figures {
                    ui.monospace(value(f));
                }
                ui.end_row();
            }
        },
    );
}

/// Resends by cause, one row per lane, with the spurious share and the bytes of copies that
/// brought nothing.
fn resends_ui(figures: &[&LaneFigures], ui: &mut egui::Ui) {
    ui.add_space(4.0);
    egui::Grid::new("compare_resends").striped(true).spacing([28.0, 4.0]).num_columns(CAUSES.len() + 3).show(
        ui,
        |ui| {
            ui.weak("resends by cause");
            for (_, cause) in CAUSES {
                ui.label(cause);
            }
            ui.label("total");
            ui.label("spurious").on_hover_text("Resent after the peer's application already had the message");
            ui.end_row();
            for f in figures {
                let t = &f.totals;
                ui.label(egui::RichText::new(&f.label).strong().color(figure_color(ui, f)));
                for n in t.resends {
                    ui.monospace(thousands(n));
                }
                let total = t.resends_total();
                ui.monospace(thousands(total));
                let share = if total == 0 { 0.0 } else { t.spurious as f64 * 100.0 / total as f64 };
                ui.monospace(format!("{} ({share:.0} %)", thousands(t.spurious)));
                ui.end_row();
            }
        },
    );
}

/// The second recording: which file each side is, and the buttons that open or close it.
fn sides_line_ui(
    sides: &Sides<'_, '_>,
    choice: &mut Option<bool>,
    whole: bool,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) {
    ui.horizontal_wrapped(|ui| {
        if let Some(b) = sides.beside {
            let a: Vec<&str> = sides.lanes[..sides.a_lanes].iter().map(|(n, _)| n.as_str()).collect();
            let a_file = sides.a_file.map_or("the run shown".to_string(), |f| f.display().to_string());
            let b_lanes: Vec<&str> = sides.lanes[sides.a_lanes..].iter().map(|(n, _)| n.as_str()).collect();
            ui.label(format!("A: {a_file} ({}); B: {} ({})", a.join(", "), b.display(), b_lanes.join(", ")));
            if ui.button("Close B").on_hover_text("Stop comparing with the second recording").clicked() {
                cmds.push(AppCommand::CloseCompared);
            }
        } else if ui
            .button("Compare with...")
            .on_hover_text("Open a second saved session beside this one: did my change make it better?")
            .clicked()
        {
            cmds.push(AppCommand::CompareWithDialog);
        }
        if let Some(p) = sides.reading {
            ui.spinner();
            ui.label(format!("reading {}", p.display()));
        }
        let mut on = whole;
        if ui
            .checkbox(&mut on, "whole recordings")
            .on_hover_text("Each lane over all of its events; off: every lane up to the time cursor")
            .changed()
        {
            *choice = Some(on);
        }
    });
}

/// The verdict and its reasons: for each B lane against its A lane with a second recording
/// beside, else for the two lanes of an A/B run.
fn verdicts_ui(sides: &Sides<'_, '_>, figures: &[&LaneFigures], ui: &mut egui::Ui) {
    let named: Vec<(String, &crate::model::compare::CompareTotals)> =
        figures.iter().map(|f| (f.label.clone(), &f.totals)).collect();
    if sides.beside.is_some() && sides.a_lanes < named.len() {
        let (a, b) = named.split_at(sides.a_lanes);
        let pairs = pair_verdicts(a, b);
        for v in &pairs {
            if pairs.len() > 1 {
                ui.strong(format!("{} vs {}", v.a, v.b));
            }
            ui.heading(&v.verdict);
            if let Some(w) = &v.why {
                ui.label(w);
            }
        }
        return;
    }
    match figures {
        [a, b] => {
            ui.heading(verdict((&a.label, &a.totals), (&b.label, &b.totals)));
            if let Some(w) = why((&a.label, &a.totals), (&b.label, &b.totals)) {
                ui.label(w);
            }
        }
        _ => {
            ui.label(
                "One strategy shown: start an A/B run (--ab, or \"A/B\" in the left panel), or Compare with... a \
                 saved session, to compare two.",
            );
        }
    }
}

/// The CDF plot: x latency in ms, y the quantile on a log tail scale, p50/p95/p99 marked.
fn cdf_plot_ui(ui: &mut egui::Ui, shown: &[&LaneFigures], colors: &[Color32], height: f32) {
    Plot::new("cmp_cdf")
        .height(height)
        .include_y(0.0)
        .include_y(tail_height(0.999))
        .include_x(0.0)
        .x_axis_label("latency (ms)")
        .y_axis_formatter(quantile_label)
        .y_grid_spacer(quantile_marks)
        .y_axis_min_width(44.0)
        .label_formatter(|pos| {
            let (name, p) = match pos {
                egui_plot::HoverPosition::NearDataPoint { plot_name, position, .. } => (*plot_name, *position),
                egui_plot::HoverPosition::Elsewhere { position } => ("", *position),
            };
            Some(format!("{name}\n{:.1} ms at {:.2} %", p.x, height_quantile(p.y) * 100.0))
        })
        .show(ui, |p| {
            // A lane that delivered nothing has no distribution: its quantiles would mark 0 ms.
            for (f, &c) in shown.iter().zip(colors).filter(|(f, _)| !f.latencies_sorted_ms.is_empty()) {
                let name = f.label.as_str();
                p.line(Line::new(name, f.cdf_points(CDF_POINTS)).color(c).width(2.0).allow_band(false));
                let l = f.totals.latency_ms;
                for ((q, label), ms) in MARKED.iter().zip([l.p50, l.p95, l.p99]) {
                    let at = PlotPoint::new(ms, tail_height(*q));
                    p.points(Points::new(format!("{name} {label}"), vec![[at.x, at.y]]).color(c).radius(4.0));
                    let text = egui::RichText::new(format!("{label} {ms:.0}")).color(c).small();
                    let anchor = egui::Align2::LEFT_TOP;
                    p.text(Text::new(format!("{name} {label}"), at, text).anchor(anchor));
                }
            }
        });
}

/// A plot over time, from zero to `end` seconds, with the other time plots' axes linked.
fn time_plot_ui(ui: &mut egui::Ui, id: &str, height: f32, end: f64, draw: impl FnOnce(&mut PlotUi)) {
    let link = egui::Id::unique("compare_time_axis");
    Plot::new(id)
        .height(height)
        .include_y(0.0)
        .include_x(0.0)
        .include_x(end.max(1.0))
        .link_axis(link, [true, false])
        .link_cursor(link, [true, false])
        .x_axis_label("time (s)")
        .y_axis_min_width(44.0)
        .label_formatter(|pos| match pos {
            egui_plot::HoverPosition::NearDataPoint { plot_name, position, .. } => {
                Some(format!("{plot_name}\n{:.2} s: {:.1}", position.x, position.y))
            }
            egui_plot::HoverPosition::Elsewhere { position } => Some(format!("{:.2} s", position.x)),
        })
        .show(ui, |p| {
            draw(p);
            p.vline(VLine::new("", end).color(Color32::GRAY).width(1.0));
        });
}
