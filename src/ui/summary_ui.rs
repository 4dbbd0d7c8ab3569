//! The Summary tab: the comparison metrics for each lane (both strategies in A/B), computed from
//! the events up to the cursor and cached until the events or the cursor change.

use ackscope_protocol::{reliable_metrics, snapshot_summary, summarize, SimTime, Ue4Summary};

use super::Lane;

/// Recomputing scans every event up to the cursor; keep the result while nothing changed, and
/// while the cursor is being dragged recompute at most every [`REFRESH`] so scrubbing a long
/// session stays smooth (the table then says which instant it shows).
#[derive(Clone)]
struct Cached {
    key: (usize, SimTime),
    at: std::time::Instant,
    rows: Vec<(String, String)>,
}

const REFRESH: std::time::Duration = std::time::Duration::from_millis(500);

fn metrics_rows(lane: &Lane, cursor: SimTime) -> Vec<(String, String)> {
    let events = lane.store.events_until(cursor);
    let (p, e) = summarize(events);
    let mut rows = vec![
        ("packets sent / acked".into(), format!("{} / {}", p.sent, p.acked)),
        ("link dropped / duplicated".into(), format!("{} / {}", p.link_dropped, p.duplicated)),
        ("false acks (ground truth)".into(), p.false_acks.to_string()),
        ("RTT est. / true ms".into(), format!("{:.1} / {:.1}", e.rtt_ms, e.true_rtt_ms)),
        ("loss est. / true %".into(), format!("{:.2} / {:.2}", e.loss_percent, e.true_loss_percent)),
    ];
    if lane.scenario.strategy.has_messages() {
        let m = reliable_metrics(events);
        rows.extend([
            ("reliable sent / delivered".into(), format!("{} / {}", m.sent, m.delivered)),
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
        let s = snapshot_summary(events);
        rows.push((
            "snapshot staleness p50 / p99 ms".into(),
            format!("{:.1} / {:.1}", s.staleness_ms.p50, s.staleness_ms.p99),
        ));
    }
    if lane.scenario.strategy == ackscope_protocol::Strategy::Ue4 {
        let u = Ue4Summary::from_events(events);
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

pub fn summary_ui(lanes: &mut [Lane], cursor: SimTime, ui: &mut egui::Ui) {
    let mut shown_at = cursor;
    let computed: Vec<Vec<(String, String)>> = lanes
        .iter()
        .map(|lane| {
            let id = egui::Id::unique(("summary", lane.scenario.strategy.name()));
            let key = (lane.store.len(), cursor);
            let cached: Option<Cached> = ui.data(|d| d.get_temp(id));
            match cached {
                Some(c) if c.key == key => c.rows,
                Some(c) if c.at.elapsed() < REFRESH => {
                    shown_at = c.key.1;
                    ui.ctx().request_repaint_after(REFRESH);
                    c.rows
                }
                _ => {
                    let rows = metrics_rows(lane, cursor);
                    let at = std::time::Instant::now();
                    ui.data_mut(|d| d.insert_temp(id, Cached { key, at, rows: rows.clone() }));
                    rows
                }
            }
        })
        .collect();
    ui.label(format!("Metrics over the events up to {:.2} s.", shown_at.as_secs_f64()));
    egui::Grid::new("summary_grid").striped(true).num_columns(lanes.len() + 1).show(ui, |ui| {
        ui.strong("metric");
        for lane in lanes.iter() {
            ui.strong(lane.scenario.strategy.name());
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
