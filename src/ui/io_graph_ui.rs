//! The Overview's IO graph, as Wireshark's IO Graphs: for any display filter over packets,
//! messages or anomalies, a value per interval (the count, the rate per second, or a numeric
//! field's sum, mean or max), one line per lane, or per client of each lane.
//!
//! The values are [`crate::filter::io_graph`]'s bins, kept between frames and extended as the
//! recording grows (a new filter, measure or interval starts over, a frame budget of rows at a
//! time); this file only chooses and draws. It shares the Overview's time range, so it pans and
//! zooms with the plots above it.

use ackscope_protocol::SimTime;
use egui::Color32;
use egui_plot::{Line, Plot, PlotPoints, VLine};

use super::filter_bar::FilterBar;
use crate::app::AppCommand;
use crate::filter::io_graph::{numeric_field, IoBins, Measure};
use crate::filter::{Budget, PacketFacts, Row, RowKind, SharedFilter, Source};
use crate::model::anomaly::Anomaly;
use crate::model::index::MessageRecord;
use crate::model::Shown;

/// What a graph plots per interval, as the user picks it (the field apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeasureKind {
    Count,
    Rate,
    Sum,
    Mean,
    Max,
}

impl MeasureKind {
    pub const ALL: [MeasureKind; 5] =
        [MeasureKind::Count, MeasureKind::Rate, MeasureKind::Sum, MeasureKind::Mean, MeasureKind::Max];

    pub fn name(self) -> &'static str {
        match self {
            MeasureKind::Count => "count",
            MeasureKind::Rate => "rate /s",
            MeasureKind::Sum => "sum",
            MeasureKind::Mean => "mean",
            MeasureKind::Max => "max",
        }
    }

    fn with_field(self, field: &'static str) -> Measure {
        match self {
            MeasureKind::Count => Measure::Count,
            MeasureKind::Rate => Measure::Rate,
            MeasureKind::Sum => Measure::Sum(field),
            MeasureKind::Mean => Measure::Mean(field),
            MeasureKind::Max => Measure::Max(field),
        }
    }
}

/// Intervals offered, in ms.
pub const INTERVALS_MS: [u64; 5] = [10, 100, 1000, 10_000, 60_000];

/// What an empty filter box means: every row (each row kind has a time).
const EVERY_ROW: &str = "time >= 0";

/// Points drawn at most per line: wider ranges are folded by taking each group's largest value,
/// so a peak is never lost to decimation.
const MAX_POINTS: usize = 2000;

/// One row kind's filter and its bins per connection.
pub struct IoSeries<R> {
    pub bar: FilterBar<R>,
    /// Matches every row, for an empty box.
    every: Option<SharedFilter<R>>,
    /// Per (lane and client id): the bins.
    bins: Vec<(u64, IoBins<R>)>,
}

impl<R> Default for IoSeries<R> {
    fn default() -> Self {
        Self { bar: FilterBar::default(), every: None, bins: Vec::new() }
    }
}

/// One line of the last frame: its name and its points (interval start in s, value).
#[derive(Debug, Clone, PartialEq)]
pub struct DrawnLine {
    pub name: String,
    pub points: Vec<[f64; 2]>,
}

/// The IO graph's view state.
pub struct IoGraphView {
    pub open: bool,
    pub kind: RowKind,
    pub measure: MeasureKind,
    /// The numeric field of sum, mean and max.
    pub field: &'static str,
    pub interval_ms: u64,
    /// A line per client of each lane (else the focused client's only).
    pub per_client: bool,
    pub packets: IoSeries<PacketFacts>,
    pub messages: IoSeries<MessageRecord>,
    pub anomalies: IoSeries<Anomaly>,
    /// What the last frame drew (tests read it).
    pub drawn: Vec<DrawnLine>,
    /// Rows the filter's caches had checked in the last frame, of all rows (equal once built).
    pub progress: (usize, usize),
}

impl Default for IoGraphView {
    fn default() -> Self {
        Self {
            open: false,
            kind: RowKind::Packet,
            measure: MeasureKind::Count,
            field: "bytes",
            interval_ms: 1000,
            per_client: false,
            packets: IoSeries::default(),
            messages: IoSeries::default(),
            anomalies: IoSeries::default(),
            drawn: Vec::new(),
            progress: (0, 0),
        }
    }
}

impl std::fmt::Debug for IoGraphView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IoGraphView({:?}, {:?}, {}, {} ms)", self.kind, self.measure, self.field, self.interval_ms)
    }
}

impl IoGraphView {
    /// The measure as the fold takes it.
    pub fn measure(&self) -> Measure {
        self.measure.with_field(self.field)
    }

    /// The filter box's text of the current row kind.
    pub fn text(&self) -> &str {
        match self.kind {
            RowKind::Packet => &self.packets.bar.text,
            RowKind::Message => &self.messages.bar.text,
            RowKind::Anomaly => &self.anomalies.bar.text,
        }
    }

    /// Sets the filter of the current row kind (what typing in its box does).
    pub fn set_text(&mut self, text: &str) {
        match self.kind {
            RowKind::Packet => self.packets.bar.set_text(text),
            RowKind::Message => self.messages.bar.set_text(text),
            RowKind::Anomaly => self.anomalies.bar.set_text(text),
        }
    }
}

/// `100 ms`, `1 s`.
fn interval_label(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{} s", ms / 1000)
    }
}

/// The numeric fields of rows `R` (what sum, mean and max read).
fn numeric_fields<R: Row>() -> Vec<&'static str> {
    R::fields().iter().map(|f| f.name).filter(|n| numeric_field::<R>(n).is_some()).collect()
}

fn numeric_fields_of(kind: RowKind) -> Vec<&'static str> {
    match kind {
        RowKind::Packet => numeric_fields::<PacketFacts>(),
        RowKind::Message => numeric_fields::<MessageRecord>(),
        RowKind::Anomaly => numeric_fields::<Anomaly>(),
    }
}

/// The choices row: rows, filter, measure, field, interval, per client.
fn choices_ui(view: &mut IoGraphView, many_clients: bool, ui: &mut egui::Ui) {
    ui.horizontal_wrapped(|ui| {
        ui.strong("IO graph");
        let before = view.kind;
        let text = view.text().to_string();
        egui::ComboBox::from_id_salt("io_rows").selected_text(view.kind.plural()).show_ui(ui, |ui| {
            for k in RowKind::ALL {
                ui.selectable_value(&mut view.kind, k, k.plural());
            }
        });
        if view.kind != before && view.text().is_empty() {
            // The same text for the new kind: it may not apply, and the bar says why.
            view.set_text(&text);
        }
        egui::ComboBox::from_id_salt("io_measure").selected_text(view.measure.name()).show_ui(ui, |ui| {
            for m in MeasureKind::ALL {
                ui.selectable_value(&mut view.measure, m, m.name());
            }
        });
        let fields = numeric_fields_of(view.kind);
        if !matches!(view.measure, MeasureKind::Count | MeasureKind::Rate) {
            if !fields.contains(&view.field) {
                view.field = fields.first().copied().unwrap_or("time");
            }
            egui::ComboBox::from_id_salt("io_field").selected_text(view.field).show_ui(ui, |ui| {
                for f in fields {
                    ui.selectable_value(&mut view.field, f, f);
                }
            });
        }
        ui.label("per");
        egui::ComboBox::from_id_salt("io_interval").selected_text(interval_label(view.interval_ms)).show_ui(ui, |ui| {
            for ms in INTERVALS_MS {
                ui.selectable_value(&mut view.interval_ms, ms, interval_label(ms));
            }
        });
        if many_clients {
            ui.checkbox(&mut view.per_client, "each client").on_hover_text("A line per client of each lane");
        }
    });
}

/// Brings `series`' bins up to date for `conns` (this frame's budget shared by all of them) and
/// returns each connection's values, and the rows checked so far of all rows.
fn fold<R: Source>(
    series: &mut IoSeries<R>,
    conns: &[(u64, Shown<'_>)],
    measure: Measure,
    interval_us: u64,
) -> (Vec<Vec<Option<f64>>>, (usize, usize)) {
    let filter = match &series.bar.filter {
        Some(f) => f.clone(),
        None => series.every.get_or_insert_with(|| SharedFilter::compile(EVERY_ROW).expect("valid")).clone(),
    };
    series.bins.retain(|(id, _)| conns.iter().any(|(c, _)| c == id));
    let interval_s = interval_us as f64 / 1e6;
    let mut progress = (0, 0);
    let values = conns
        .iter()
        .map(|(id, shown)| {
            let k = match series.bins.iter().position(|(b, _)| b == id) {
                Some(k) => k,
                None => {
                    series.bins.push((*id, IoBins::default()));
                    series.bins.len() - 1
                }
            };
            let bins = &mut series.bins[k].1;
            bins.update(*shown, &filter, measure, interval_us, Budget::frame());
            progress.0 += bins.rows_binned();
            progress.1 += R::len(shown.conn);
            bins.bins.iter().map(|b| b.value(measure, interval_s)).collect()
        })
        .collect();
    (values, progress)
}

/// The points of `values` (one per interval from 0) in `lo..hi`, folded to at most
/// [`MAX_POINTS`] by each group's largest value.
pub fn points_in(values: &[Option<f64>], interval_s: f64, lo: f64, hi: f64) -> Vec<[f64; 2]> {
    let first = ((lo / interval_s).floor().max(0.0)) as usize;
    let last = (((hi / interval_s).ceil()) as usize + 1).min(values.len());
    if first >= last {
        return Vec::new();
    }
    let group = (last - first).div_ceil(MAX_POINTS).max(1);
    let mut out = Vec::with_capacity((last - first) / group + 1);
    for start in (first..last).step_by(group) {
        let end = (start + group).min(last);
        let best = values[start..end]
            .iter()
            .enumerate()
            .filter_map(|(k, v)| v.map(|v| (start + k, v)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((b, v)) = best {
            out.push([b as f64 * interval_s, v]);
        }
    }
    out
}

/// The IO graph under the Overview's plots, over the time range `lo..hi` (seconds) of `lanes`.
pub fn io_graph_ui(
    lanes: &[Shown<'_>],
    view: &mut IoGraphView,
    (lo, hi): (f64, f64),
    cursor: SimTime,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) {
    let many_clients = lanes.iter().any(|l| l.rec.clients().len() > 1);
    choices_ui(view, many_clients, ui);
    let hint = match view.kind {
        RowKind::Packet => "dropped && dir == a_to_b",
        RowKind::Message => "resend.cause == nak",
        RowKind::Anomaly => "kind == stall",
    };
    match view.kind {
        RowKind::Packet => view.packets.bar.ui(ui, hint),
        RowKind::Message => view.messages.bar.ui(ui, hint),
        RowKind::Anomaly => view.anomalies.bar.ui(ui, hint),
    };
    // Every connection drawn: the focused one of each lane, or each client of each lane.
    let mut conns: Vec<(u64, Shown<'_>, String, Color32)> = Vec::new();
    for lane in lanes {
        let color = super::lane_colors::lane_color(ui, lane.color_at(cursor));
        if view.per_client && lane.rec.clients().len() > 1 {
            let n = lane.rec.clients().len();
            for (k, conn) in lane.rec.clients().iter().enumerate() {
                let shown = Shown { rec: lane.rec, conn };
                let name = format!("{} - {}", lane.label(), lane.info().client(conn.client).label());
                // Clients of one lane: its colour, lighter to darker.
                let c = color.gamma_multiply(1.0 - 0.6 * k as f32 / n as f32);
                conns.push((shown.id(), shown, name, c));
            }
        } else {
            conns.push((lane.id(), *lane, super::lanes::focused_label(lane), color));
        }
    }
    let ids: Vec<(u64, Shown<'_>)> = conns.iter().map(|(id, s, _, _)| (*id, *s)).collect();
    let (measure, interval_us) = (view.measure(), view.interval_ms.max(1) * 1000);
    let (values, (checked, rows)) = match view.kind {
        RowKind::Packet => fold(&mut view.packets, &ids, measure, interval_us),
        RowKind::Message => fold(&mut view.messages, &ids, measure, interval_us),
        RowKind::Anomaly => fold(&mut view.anomalies, &ids, measure, interval_us),
    };
    view.progress = (checked, rows);
    let interval_s = interval_us as f64 / 1e6;
    view.drawn = conns
        .iter()
        .zip(&values)
        .map(|((_, _, name, _), v)| DrawnLine { name: name.clone(), points: points_in(v, interval_s, lo, hi) })
        .collect();
    // Said in the legend rather than on a Y axis label, which would shift this plot's time axis
    // off the plots' above.
    let per = interval_label(view.interval_ms);
    let y_label = match measure {
        Measure::Count => format!("{} per {per}", view.kind.plural()),
        Measure::Rate => format!("{} /s over {per}", view.kind.plural()),
        _ => format!("{} per {per}", measure.label()),
    };
    let link = egui::Id::unique("overview_time_axis");
    let resp = Plot::new("io_graph")
        .height(ui.available_height().max(80.0))
        .link_cursor(link, [true, false])
        .allow_drag([true, false])
        .allow_zoom([true, false])
        .allow_scroll([true, false])
        .allow_boxed_zoom(false)
        .y_axis_min_width(40.0)
        .y_grid_spacer(super::plot_window::value_marks)
        .x_grid_spacer(super::plot_window::time_marks)
        .x_axis_formatter(|mark, _| super::plot_window::time_label(mark))
        .x_axis_label("time (s)")
        .legend(egui_plot::Legend::default().position(egui_plot::Corner::LeftTop))
        .show(ui, |p| {
            p.set_plot_bounds_x(lo..=hi);
            let top = view.drawn.iter().flat_map(|l| l.points.iter().map(|p| p[1])).fold(0.0f64, f64::max);
            p.set_plot_bounds_y(0.0..=if top > 0.0 { top * 1.08 } else { 1.0 });
            for ((_, _, _, color), line) in conns.iter().zip(&view.drawn) {
                let pts: Vec<[f64; 2]> = line.points.iter().map(|&[x, y]| [x + interval_s / 2.0, y]).collect();
                let name = format!("{}: {}", line.name, y_label);
                p.line(Line::new(name, PlotPoints::from(pts)).color(*color).width(1.5));
            }
            p.vline(VLine::new("", cursor.as_secs_f64()).color(Color32::GRAY).width(1.0));
        });
    if checked < rows {
        // Over the plot, so the plot does not move while the filter's rows are checked.
        let text = super::filter_bar::progress_text(checked, rows);
        let font = egui::TextStyle::Body.resolve(ui.style());
        let at = resp.response.rect.right_top() + egui::vec2(-8.0, 6.0);
        ui.painter().text(at, egui::Align2::RIGHT_TOP, text, font, ui.visuals().weak_text_color());
    }
    if resp.response.clicked() {
        if let Some(pos) = resp.response.interact_pointer_pos() {
            let v = resp.transform.value_from_position(pos);
            cmds.push(AppCommand::SeekTo(SimTime::from_secs_f64(v.x.max(0.0))));
        }
    }
}
