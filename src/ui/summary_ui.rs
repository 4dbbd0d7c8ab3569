//! The Summary tab: the comparison metrics for each lane (both strategies in A/B), over the events
//! up to the cursor, folded a bounded number of events per frame ([`SummaryFold`]) so a frame
//! stays cheap however long the run; until the fold has caught up with the cursor, the figures
//! shown are those of the instant the label names.

use ackscope_protocol::SimTime;

use super::lanes::PerLane;
use crate::model::index::summary::{SummaryFigures, FOLD_BUDGET, REFRESH};
use crate::model::index::SummaryFold;
use crate::model::Shown;

/// The table rows for one lane: metric name and value.
fn rows(f: &SummaryFigures) -> Vec<(String, String)> {
    let (p, e) = (&f.packets, &f.estimates);
    let mut rows = vec![
        ("packets sent / acked".into(), format!("{} / {}", p.sent, p.acked)),
        ("link dropped / duplicated".into(), format!("{} / {}", p.link_dropped, p.duplicated)),
        ("false acks (ground truth)".into(), p.false_acks.to_string()),
        ("RTT est. / true ms".into(), format!("{} / {:.1}", figure(e.rtt_ms, 1, "no sample"), e.true_rtt_ms)),
        (
            "loss est. / true / effective %".into(),
            format!(
                "{} / {:.2} / {:.2}",
                figure(e.loss_percent, 2, "no verdict"),
                e.true_loss_percent,
                e.effective_loss_percent
            ),
        ),
        ("discarded by receiver".into(), discards(&e.discarded)),
    ];
    if let Some((m, s)) = &f.reliable {
        rows.extend([
            ("reliable sent / delivered".into(), format!("{} / {}", m.sent, m.delivered)),
            // Above a strategy's capacity the drain ends with messages still held: not lost by
            // the protocol, so shown apart from those it dropped.
            ("lost: dropped / still queued at end".into(), format!("{} / {}", m.lost_dropped, m.still_queued_at_end)),
            (
                "latency p50 / p95 / p99 / max ms".into(),
                format!(
                    "{:.1} / {:.1} / {:.1} / {:.1}",
                    m.latency_ms.p50, m.latency_ms.p95, m.latency_ms.p99, m.latency_ms.max
                ),
            ),
            ("wire bytes per delivered msg".into(), format!("{:.1}", m.wire_bytes_per_delivered)),
            ("sends per message (max)".into(), format!("{:.2} ({})", m.sends_per_message, m.max_sends_per_message)),
            ("spurious resends".into(), m.spurious_resends.to_string()),
            ("largest send queue".into(), m.max_send_queue_depth.to_string()),
        ]);
        rows.push((
            "snapshot staleness p50 / p99 ms".into(),
            format!("{:.1} / {:.1}", s.staleness_ms.p50, s.staleness_ms.p99),
        ));
    }
    if let Some(u) = &f.ue4 {
        rows.extend([
            ("naks received / bunches resent".into(), format!("{} / {}", u.naks_received, u.bunches_resent)),
            (
                "head-of-line depth (blocked ms)".into(),
                format!("{} ({:.0})", u.max_inrec_depth, u.max_inrec_blocked_ms),
            ),
            ("connection closed".into(), u.close_reason.clone().unwrap_or_else(|| "no".into())),
        ]);
    }
    rows
}

/// The head-of-line row's name, as the Compare tab's.
pub const HOL_ROW: &str = "head-of-line wait total / max ms";

/// The lane's head-of-line wait up to `at` (the instant its figures are for), computed again only
/// when `at` moves (its figures finish at most every [`REFRESH`] while the cursor moves).
fn head_of_line_ui(ui: &egui::Ui, lane: Shown<'_>, at: SimTime) -> (f64, f64) {
    let id = ui.make_persistent_id(("summary head-of-line", lane.id(), lane.conn.client));
    let cached = ui.ctx().data(|d| d.get_temp::<(SimTime, usize, (f64, f64))>(id));
    let n = lane.messages.messages().len();
    match cached {
        Some((t, len, v)) if t == at && len == n => v,
        _ => {
            let v = crate::model::compare::head_of_line_ms(lane, at);
            ui.ctx().data_mut(|d| d.insert_temp(id, (at, n, v)));
            v
        }
    }
}

/// `v` with `decimals`, or `none` when there is no such figure.
fn figure(v: Option<f64>, decimals: usize, none: &str) -> String {
    v.map_or_else(|| none.to_string(), |v| format!("{v:.decimals$}"))
}

/// The count of discarded copies and, when there are any, the reasons: `12 (late 10, duplicate 2)`.
fn discards(d: &ackscope_protocol::Discards) -> String {
    let parts: Vec<String> = d
        .by_reason()
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{} {n}", name.replace('_', " ")))
        .collect();
    if parts.is_empty() {
        "0".into()
    } else {
        format!("{} ({})", d.total(), parts.join(", "))
    }
}

/// The table: a column per lane, headed by `names` when given (a second recording beside:
/// `A glenn`, `B ue4`), else by each lane's own name.
pub fn summary_ui(
    lanes: &[Shown<'_>],
    names: Option<&[String]>,
    folds: &mut PerLane<SummaryFold>,
    cursor: SimTime,
    ui: &mut egui::Ui,
) {
    let mut shown_at = cursor;
    let mut computed = Vec::with_capacity(lanes.len());
    for (lane, fold) in folds.zip(lanes) {
        let n = lane.store.events_until(cursor).len();
        if !fold.advance_within(*lane, n, FOLD_BUDGET) {
            shown_at = fold.shown_at(*lane);
            // Folding goes on next frame; finishing waits for the cursor to rest or REFRESH.
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(16).min(REFRESH));
        }
        let mut lane_rows = fold.figures().map(rows).unwrap_or_default();
        if fold.figures().is_some_and(|f| f.reliable.is_some()) {
            let (total, max) = head_of_line_ui(ui, *lane, fold.shown_at(*lane));
            // After the message rows, before UE4's own, so every lane's rows line up.
            let at = lane_rows.iter().position(|r| r.0.starts_with("naks received")).unwrap_or(lane_rows.len());
            lane_rows.insert(at, (HOL_ROW.into(), format!("{total:.0} / {max:.0}")));
        }
        computed.push(lane_rows);
    }
    ui.label(format!("Metrics over the events up to {:.2} s.", shown_at.as_secs_f64()));
    egui::Grid::new("summary_grid").striped(true).num_columns(lanes.len() + 1).show(ui, |ui| {
        ui.strong("metric");
        for (k, lane) in lanes.iter().enumerate() {
            let color = super::lane_colors::lane_color(ui, lane.color_at(cursor));
            let name = names.and_then(|n| n.get(k).cloned()).unwrap_or_else(|| super::lanes::focused_label(lane));
            ui.label(egui::RichText::new(name).strong().color(color));
        }
        ui.end_row();
        let n = computed.iter().map(Vec::len).max().unwrap_or(0);
        for i in 0..n {
            let label = computed.iter().find_map(|r| r.get(i)).map(|r| r.0.clone()).unwrap_or_default();
            ui.label(label);
            for rows in &computed {
                ui.monospace(rows.get(i).map(|r| r.1.as_str()).unwrap_or("-"));
            }
            ui.end_row();
        }
    });
}
