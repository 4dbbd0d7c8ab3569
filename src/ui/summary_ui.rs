//! The Summary tab: the comparison metrics for each lane (both strategies in A/B), over the events
//! up to the cursor, folded a bounded number of events per frame ([`SummaryFold`]) so a frame
//! stays cheap however long the run; until the fold has caught up with the cursor, the figures
//! shown are those of the instant the label names.

use ackscope_protocol::SimTime;

use super::lanes::PerLane;
use crate::model::index::summary::{SummaryFigures, FOLD_BUDGET, REFRESH};
use crate::model::index::SummaryFold;
use crate::model::Shown;

/// What a figure counts, for its difference: the unit it is written in and whether a percent
/// change means something (not for a percentage, whose difference is in points).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    Count,
    Ms,
    Percent,
    Bytes,
    Ratio,
}

impl Unit {
    fn decimals(self) -> usize {
        match self {
            Unit::Count => 0,
            Unit::Ms | Unit::Bytes => 1,
            Unit::Percent | Unit::Ratio => 2,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            Unit::Count | Unit::Ratio => "",
            Unit::Ms => " ms",
            Unit::Percent => " pp",
            Unit::Bytes => " B",
        }
    }
}

/// One figure of a row, for the B - A column (`None`: the lane has no such figure).
type Figure = (Option<f64>, Unit);

/// One metric of a lane: its name, its value as shown, and its figures for the difference.
struct Row {
    name: String,
    text: String,
    figures: Vec<Figure>,
}

fn row(name: &str, text: String, figures: &[Figure]) -> Row {
    Row { name: name.into(), text, figures: figures.to_vec() }
}

fn n(v: impl Into<f64>) -> Figure {
    (Some(v.into()), Unit::Count)
}

/// The table rows for one lane.
fn rows(f: &SummaryFigures) -> Vec<Row> {
    let (p, e) = (&f.packets, &f.estimates);
    let ms = |v: f64| (Some(v), Unit::Ms);
    let pct = |v: f64| (Some(v), Unit::Percent);
    let mut rows = vec![
        row("packets sent / acked", format!("{} / {}", p.sent, p.acked), &[n(p.sent as f64), n(p.acked as f64)]),
        row(
            "link dropped / duplicated",
            format!("{} / {}", p.link_dropped, p.duplicated),
            &[n(p.link_dropped as f64), n(p.duplicated as f64)],
        ),
        row("false acks (ground truth)", p.false_acks.to_string(), &[n(p.false_acks as f64)]),
        row(
            "RTT est. / true ms",
            format!("{} / {}", figure(e.rtt_ms, 1, "no sample"), figure(e.true_rtt_ms, 1, "no sample")),
            &[(e.rtt_ms, Unit::Ms), (e.true_rtt_ms, Unit::Ms)],
        ),
        row(
            "loss est. / true / effective %",
            format!(
                "{} / {:.2} / {:.2}",
                figure(e.loss_percent, 2, "no verdict"),
                e.true_loss_percent,
                e.effective_loss_percent
            ),
            &[(e.loss_percent, Unit::Percent), pct(e.true_loss_percent), pct(e.effective_loss_percent)],
        ),
        row("discarded by receiver", discards(&e.discarded), &[n(e.discarded.total() as f64)]),
    ];
    if let Some((m, s)) = &f.reliable {
        let l = &m.latency_ms;
        rows.extend([
            row(
                "reliable sent / delivered",
                format!("{} / {}", m.sent, m.delivered),
                &[n(m.sent as f64), n(m.delivered as f64)],
            ),
            // Above a strategy's capacity the drain ends with messages still held: not lost by
            // the protocol, so shown apart from those it dropped.
            row(
                "lost: dropped / still queued at end",
                format!("{} / {}", m.lost_dropped, m.still_queued_at_end),
                &[n(m.lost_dropped as f64), n(m.still_queued_at_end as f64)],
            ),
            row(
                "latency p50 / p95 / p99 / max ms",
                format!("{:.1} / {:.1} / {:.1} / {:.1}", l.p50, l.p95, l.p99, l.max),
                &[ms(l.p50), ms(l.p95), ms(l.p99), ms(l.max)],
            ),
            row(
                "wire bytes per delivered msg",
                format!("{:.1}", m.wire_bytes_per_delivered),
                &[(Some(m.wire_bytes_per_delivered), Unit::Bytes)],
            ),
            row(
                "sends per message (max)",
                format!("{:.2} ({})", m.sends_per_message, m.max_sends_per_message),
                &[(Some(m.sends_per_message), Unit::Ratio), n(m.max_sends_per_message as f64)],
            ),
            row("spurious resends", m.spurious_resends.to_string(), &[n(m.spurious_resends as f64)]),
            row("largest send queue", m.max_send_queue_depth.to_string(), &[n(m.max_send_queue_depth as f64)]),
        ]);
        rows.push(row(
            "snapshot staleness p50 / p99 ms",
            format!("{:.1} / {:.1}", s.staleness_ms.p50, s.staleness_ms.p99),
            &[ms(s.staleness_ms.p50), ms(s.staleness_ms.p99)],
        ));
    }
    if let Some(u) = &f.ue4 {
        rows.extend([
            row(
                "naks received / bunches resent",
                format!("{} / {}", u.naks_received, u.bunches_resent),
                &[n(u.naks_received as f64), n(u.bunches_resent as f64)],
            ),
            row(
                "head-of-line depth (blocked ms)",
                format!("{} ({:.0})", u.max_inrec_depth, u.max_inrec_blocked_ms),
                &[n(u.max_inrec_depth as f64), ms(u.max_inrec_blocked_ms)],
            ),
            row("connection closed", u.close_reason.clone().unwrap_or_else(|| "no".into()), &[]),
        ]);
    }
    rows
}

/// `b - a` of one figure, signed, in its unit, with the percent change from `a` where a percent
/// means something (as `compare A B` writes it): `+12.3 ms (+15 %)`, `-4 (-2 %)`, `0`; `-` when either lane lacks it.
fn diff_text((a, unit): Figure, b: Option<f64>) -> String {
    let (Some(a), Some(b)) = (a, b) else { return "-".into() };
    let d = b - a;
    let dec = unit.decimals();
    let shown = format!("{:.dec$}", d.abs());
    // A difference that rounds to nothing reads 0, never -0.0.
    if shown.bytes().all(|c| c == b'0' || c == b'.') {
        return "0".into();
    }
    let sign = if d < 0.0 { '-' } else { '+' };
    let mut text = format!("{sign}{shown}{}", unit.suffix());
    if unit != Unit::Percent && a.abs() > f64::EPSILON {
        let change = d / a.abs() * 100.0;
        if change.abs() < 0.5 {
            text.push_str(" (<1 %)");
        } else {
            text.push_str(&format!(" ({change:+.0} %)"));
        }
    }
    text
}

/// The B - A cell of `name`: each figure of lane `b`'s row minus lane `a`'s, `-` where either has
/// no such row (or no figures, as a closing reason).
fn row_difference(a: &[Row], b: &[Row], name: &str) -> String {
    let (Some(ra), Some(rb)) = (a.iter().find(|r| r.name == name), b.iter().find(|r| r.name == name)) else {
        return "-".into();
    };
    if ra.figures.is_empty() || ra.figures.len() != rb.figures.len() {
        return "-".into();
    }
    ra.figures.iter().zip(&rb.figures).map(|(fa, fb)| diff_text(*fa, fb.0)).collect::<Vec<_>>().join(" / ")
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
/// `A glenn`, `B ue4`), else by each lane's own name; then a B - A column for each pair of
/// `diffs` (`(a, b)`: lane `b`'s figures minus lane `a`'s).
pub fn summary_ui(
    lanes: &[Shown<'_>],
    names: Option<&[String]>,
    diffs: &[(usize, usize)],
    folds: &mut PerLane<SummaryFold>,
    cursor: SimTime,
    ui: &mut egui::Ui,
) {
    let mut shown_at = cursor;
    let mut computed: Vec<Vec<Row>> = Vec::with_capacity(lanes.len());
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
            let at = lane_rows.iter().position(|r| r.name.starts_with("naks received")).unwrap_or(lane_rows.len());
            let figures = [(Some(total), Unit::Ms), (Some(max), Unit::Ms)];
            lane_rows.insert(at, row(HOL_ROW, format!("{total:.0} / {max:.0}"), &figures));
        }
        computed.push(lane_rows);
    }
    let diffs: Vec<(usize, usize)> =
        diffs.iter().copied().filter(|&(a, b)| a < computed.len() && b < computed.len()).collect();
    let name_of =
        |k: usize| names.and_then(|n| n.get(k).cloned()).unwrap_or_else(|| super::lanes::focused_label(&lanes[k]));
    ui.label(format!("Metrics over the events up to {:.2} s.", shown_at.as_secs_f64()));
    // Four lanes and their differences are wider than the window: the table scrolls sideways.
    egui::ScrollArea::horizontal().show(ui, |ui| summary_grid_ui(lanes, &computed, &diffs, &name_of, cursor, ui));
}

/// The grid of [`summary_ui`]: a column per lane, then one per difference.
fn summary_grid_ui(
    lanes: &[Shown<'_>],
    computed: &[Vec<Row>],
    diffs: &[(usize, usize)],
    name_of: &dyn Fn(usize) -> String,
    cursor: SimTime,
    ui: &mut egui::Ui,
) {
    egui::Grid::new("summary_grid").striped(true).num_columns(lanes.len() + diffs.len() + 1).show(ui, |ui| {
        ui.strong("metric");
        for (k, lane) in lanes.iter().enumerate() {
            let color = super::lane_colors::lane_color(ui, lane.color_at(cursor));
            ui.label(egui::RichText::new(name_of(k)).strong().color(color));
        }
        for &(a, b) in diffs {
            let head = if diffs.len() == 1 { "B - A".to_string() } else { format!("{} - {}", name_of(b), name_of(a)) };
            ui.strong(head).on_hover_text(format!(
                "{} minus {}, figure by figure, with the percent change from {} (pp: percentage points)",
                name_of(b),
                name_of(a),
                name_of(a)
            ));
        }
        ui.end_row();
        let n = computed.iter().map(Vec::len).max().unwrap_or(0);
        for i in 0..n {
            let label = computed.iter().find_map(|r| r.get(i)).map(|r| r.name.clone()).unwrap_or_default();
            ui.label(&label);
            for rows in computed {
                ui.monospace(rows.get(i).map(|r| r.text.as_str()).unwrap_or("-"));
            }
            for &(a, b) in diffs {
                ui.monospace(row_difference(&computed[a], &computed[b], &label));
            }
            ui.end_row();
        }
    });
}

/// The B - A pairs of the Summary: with a second recording beside (its lanes after the `a`
/// lanes of the one shown), each of its lanes against the lane of the one shown it is judged
/// against in Compare; else the two lanes of an A/B run; else none.
pub fn diff_pairs(labels: &[String], a: usize, compared: bool) -> Vec<(usize, usize)> {
    if compared {
        let (la, lb) = labels.split_at(a.min(labels.len()));
        crate::report::compare_sessions::pairs(la, lb).into_iter().map(|(i, j)| (i, a + j)).collect()
    } else if labels.len() == 2 {
        vec![(0, 1)]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_difference_has_its_sign_unit_and_percent_change_and_never_reads_minus_zero() {
        assert_eq!(diff_text((Some(100.0), Unit::Ms), Some(112.34)), "+12.3 ms (+12 %)");
        assert_eq!(diff_text((Some(200.0), Unit::Count), Some(196.0)), "-4 (-2 %)");
        assert_eq!(diff_text((Some(0.0), Unit::Count), Some(7.0)), "+7");
        assert_eq!(diff_text((Some(1.0), Unit::Ms), Some(1.01)), "0");
        assert_eq!(diff_text((Some(0.02), Unit::Ms), Some(-0.01)), "0");
        assert_eq!(diff_text((Some(5.0), Unit::Percent), Some(7.5)), "+2.50 pp");
        assert_eq!(diff_text((Some(1000.0), Unit::Count), Some(1001.0)), "+1 (<1 %)");
        assert_eq!(diff_text((None, Unit::Ms), Some(3.0)), "-");
        assert_eq!(diff_text((Some(3.0), Unit::Ms), None), "-");
    }

    #[test]
    fn pairs_are_the_ab_lanes_or_each_compared_lane_against_its_match() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(diff_pairs(&l(&["glenn", "ue4"]), 2, false), vec![(0, 1)]);
        assert_eq!(diff_pairs(&l(&["glenn"]), 1, false), vec![]);
        assert_eq!(diff_pairs(&l(&["glenn", "ue4", "ue4", "glenn"]), 2, true), vec![(1, 2), (0, 3)]);
        assert_eq!(diff_pairs(&l(&["glenn", "kcp"]), 1, true), vec![(0, 1)]);
    }
}
