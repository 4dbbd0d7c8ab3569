//! The Clients tab: one row per client of the first lane (RTT, loss estimated beside true,
//! bandwidth each way, message latency p95/p99, resends, anomalies, a sparkline of the chosen
//! metric), sortable by any column, filtered by group; clicking a row focuses that client in
//! every tab. Under the table, the all-clients plot of the chosen metric
//! ([`super::clients_plot`]).
//!
//! The rows are the model's ([`crate::model::clients`]), recomputed when the cursor or the
//! recording moves, at most every [`REFRESH`] while they keep moving (a live run, a replay
//! playing), so a thousand clients cost a sort now and then, not every frame. Only the rows on
//! screen are drawn.

use std::time::Instant;

use ackscope_protocol::{ClientId, SimTime};
use egui::{Color32, RichText, Sense};

use super::clients_plot::REFRESH;
use crate::app::live_log_spans::span;
use crate::app::AppCommand;
use crate::model::clients::{groups, rows_at, sort_rows, value_at, ClientRow, Column, Metric};
use crate::model::Recording;

/// Height of a table row (the sparkline's too).
const ROW_H: f32 = 20.0;
/// Points a sparkline keeps.
const SPARK_POINTS: usize = 48;

/// The Clients tab's view state.
#[derive(Default)]
pub struct ClientsView {
    pub metric: Metric,
    /// Only clients in this group (None: every group).
    pub group: Option<String>,
    pub sort: Column,
    pub descending: bool,
    /// Rows as last computed: for which recording, cursor and events, and when.
    cache: Option<(u64, SimTime, usize, Instant, Vec<ClientRow>)>,
    pub plot: super::clients_plot::PlotState,
}

impl ClientsView {
    /// Every client's row of `rec` at `cursor`, sorted and filtered as the view says; recomputed
    /// only when stale (see the module docs).
    pub fn rows(&mut self, rec: &Recording, cursor: SimTime) -> Vec<ClientRow> {
        let key = (rec.id(), cursor, rec.len());
        let fresh = match &self.cache {
            Some((id, t, n, at, _)) => *id == key.0 && ((*t, *n) == (key.1, key.2) || at.elapsed() < REFRESH),
            None => false,
        };
        if !fresh {
            self.cache = Some((key.0, key.1, key.2, Instant::now(), rows_at(rec, cursor)));
        }
        let mut rows: Vec<ClientRow> = self.cache.as_ref().map(|c| c.4.clone()).unwrap_or_default();
        if let Some(g) = &self.group {
            rows.retain(|r| &r.group == g);
        }
        sort_rows(&mut rows, self.sort, self.descending);
        rows
    }

    /// True when the rows shown may lag the cursor (a repaint brings them up to date).
    fn lagging(&self, rec: &Recording, cursor: SimTime) -> bool {
        self.cache.as_ref().is_some_and(|(id, t, n, _, _)| (*id, *t, *n) != (rec.id(), cursor, rec.len()))
    }
}

/// The columns: header, width, sort key, and how a row shows it.
const COLUMNS: [(&str, f32, Column); 10] = [
    ("client", 110.0, Column::Client),
    ("RTT ms", 62.0, Column::Rtt),
    ("loss est %", 70.0, Column::LossEstimated),
    ("loss true %", 74.0, Column::LossTrue),
    ("down kbps", 70.0, Column::DownKbps),
    ("up kbps", 62.0, Column::UpKbps),
    ("msg p95 ms", 76.0, Column::P95),
    ("msg p99 ms", 76.0, Column::P99),
    ("resends", 60.0, Column::Resends),
    ("anomalies", 66.0, Column::Anomalies),
];

fn cell(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
    }
}

fn cells(r: &ClientRow) -> [String; 9] {
    [
        cell(r.rtt_ms),
        cell(r.loss_estimated_percent),
        cell(r.loss_true_percent),
        cell(r.down_kbps),
        cell(r.up_kbps),
        cell(r.message_p95_ms),
        cell(r.message_p99_ms),
        r.resends.to_string(),
        r.anomalies.to_string(),
    ]
}

/// The Clients tab over `lanes`' first lane.
pub fn clients_ui(
    lanes: &[Recording],
    focus: ClientId,
    view: &mut ClientsView,
    cursor: SimTime,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) {
    let Some(rec) = lanes.first() else { return };
    let rows = span("clients.rows", || view.rows(rec, cursor));
    if view.lagging(rec, cursor) {
        ui.ctx().request_repaint_after(REFRESH);
    }
    let all = rec.clients().len();
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(format!("{all} clients")).strong());
        if rows.len() != all {
            ui.weak(format!("({} in the group shown)", rows.len()));
        }
        ui.label(format!("at {:.2} s; focused: {}", cursor.as_secs_f64(), rec.info.client(focus).label()));
        ui.separator();
        ui.label("metric");
        egui::ComboBox::from_id_salt("clients_metric").selected_text(view.metric.label()).show_ui(ui, |ui| {
            for m in Metric::ALL {
                ui.selectable_value(&mut view.metric, m, m.label());
            }
        });
        let gs = groups(rec);
        if gs.len() > 1 || view.group.is_some() {
            ui.label("group");
            let shown = view.group.clone().unwrap_or_else(|| "all groups".into());
            egui::ComboBox::from_id_salt("clients_group").selected_text(shown).show_ui(ui, |ui| {
                ui.selectable_value(&mut view.group, None, "all groups");
                for g in gs {
                    let name = if g.is_empty() { "(no group)".to_string() } else { g.clone() };
                    ui.selectable_value(&mut view.group, Some(g), name);
                }
            });
        }
    });
    let plot_h = (ui.available_height() * 0.42).clamp(140.0, 320.0);
    let table_h = (ui.available_height() - plot_h - 40.0).max(ROW_H * 3.0);
    header_ui(view, ui);
    let dark = ui.visuals().dark_mode;
    span("clients.table", || {
        egui::ScrollArea::vertical().id_salt("clients_rows").max_height(table_h).auto_shrink([false, true]).show_rows(
            ui,
            ROW_H,
            rows.len(),
            |ui, range| {
                for (k, r) in rows.iter().enumerate().skip(range.start).take(range.len()) {
                    let conn = rec.client(r.client);
                    let spark = conn.map(|c| view.metric.series(c)).unwrap_or(&[]);
                    if row_ui(ui, r, r.client == focus, k, spark, cursor, dark) {
                        cmds.push(AppCommand::FocusClient(r.client));
                    }
                }
            },
        )
    });
    ui.separator();
    let shown: Vec<ClientId> = rows.iter().map(|r| r.client).collect();
    span("clients.plot", || {
        super::clients_plot::all_clients_plot_ui(rec, &shown, focus, view.metric, &mut view.plot, cursor, ui, cmds)
    });
}

/// The header: a button per column that sorts by it (again: the other way).
fn header_ui(view: &mut ClientsView, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        for (name, w, col) in COLUMNS {
            let arrow = match (view.sort == col, view.descending) {
                (true, true) => " v",
                (true, false) => " ^",
                _ => "",
            };
            let b = egui::Button::new(RichText::new(format!("{name}{arrow}")).small().strong()).frame(false);
            if ui.add_sized([w, ROW_H], b).on_hover_text("Sort by this column (again: the other way)").clicked() {
                view.descending = if view.sort == col { !view.descending } else { col != Column::Client };
                view.sort = col;
            }
        }
        ui.label(RichText::new("sparkline (whole run)").small().strong());
    });
}

/// One client's row; true when clicked.
fn row_ui(
    ui: &mut egui::Ui,
    r: &ClientRow,
    focused: bool,
    k: usize,
    spark: &[crate::model::Sample],
    cursor: SimTime,
    dark: bool,
) -> bool {
    let mut clicked = false;
    ui.horizontal(|ui| {
        let name = if r.group.is_empty() { r.label() } else { format!("{} ({})", r.label(), r.group) };
        let text = RichText::new(name).color(super::lane_colors::client_color(k, dark));
        let resp = ui.add_sized([COLUMNS[0].1, ROW_H], egui::Button::selectable(focused, text));
        clicked |= resp.on_hover_text("Show this client in every tab").clicked();
        for ((_, w, _), text) in COLUMNS[1..].iter().zip(cells(r)) {
            ui.add_sized([*w, ROW_H], egui::Label::new(RichText::new(text).monospace()));
        }
        sparkline_ui(ui, spark, cursor, dark);
    });
    clicked
}

/// A small line of `pts` over the whole run, brighter up to the cursor.
fn sparkline_ui(ui: &mut egui::Ui, pts: &[crate::model::Sample], cursor: SimTime, dark: bool) {
    let w = (ui.available_width() - 8.0).clamp(60.0, 240.0);
    let (rect, _) = ui.allocate_exact_size(egui::vec2(w, ROW_H - 4.0), Sense::hover());
    let Some(last) = pts.last() else { return };
    let end = last.t_s.max(1e-9);
    let top = pts.iter().map(|p| p.y).fold(0.0f64, f64::max).max(1e-9);
    let color = if dark { Color32::from_gray(200) } else { Color32::from_gray(60) };
    let cut = cursor.as_secs_f64();
    let points: Vec<(f64, f64)> = (0..SPARK_POINTS)
        .filter_map(|i| {
            let t = end * i as f64 / (SPARK_POINTS - 1) as f64;
            value_at(pts, t).map(|y| (t, y))
        })
        .collect();
    let to_pos = |(t, y): (f64, f64)| {
        egui::pos2(rect.left() + (t / end) as f32 * rect.width(), rect.bottom() - (y / top) as f32 * rect.height())
    };
    let painter = ui.painter_at(rect);
    for w in points.windows(2) {
        let c = if w[1].0 <= cut { color } else { color.gamma_multiply(0.3) };
        painter.line_segment([to_pos(w[0]), to_pos(w[1])], egui::Stroke::new(1.2, c));
    }
}
