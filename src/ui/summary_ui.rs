//! The Summary tab: the comparison metrics for each lane (both strategies in A/B), over the events
//! up to the cursor.
//!
//! The metrics are folds over the event log, kept as accumulators per lane: when the cursor moves
//! forward (live, or replay playing) only the new events are fed, so a frame stays cheap however
//! long the recording. Moving the cursor backwards needs a fresh fold over everything before it;
//! while the cursor is dragged back that happens at most every [`REFRESH`], and the table says
//! which instant it shows.

use ackscope_protocol::{
    registry, MetricsAccumulator, SimTime, SnapshotAccumulator, Strategy, SummaryAccumulator, Ue4SummaryAccumulator,
};

use super::Lane;

const REFRESH: std::time::Duration = std::time::Duration::from_millis(500);

/// The metrics folded over the first `fed` events of a lane.
#[derive(Clone, Default)]
pub struct SummaryCache {
    fed: usize,
    packets: SummaryAccumulator,
    reliable: MetricsAccumulator,
    snapshots: SnapshotAccumulator,
    ue4: Ue4SummaryAccumulator,
    rebuilt_at: Option<std::time::Instant>,
}

impl SummaryCache {
    /// Brings the folds to the first `n` events of `lane`; false when that needed a rebuild that
    /// was refused because the last one was too recent.
    fn advance(&mut self, lane: &Lane, n: usize) -> bool {
        if n < self.fed {
            if self.rebuilt_at.is_some_and(|t| t.elapsed() < REFRESH) {
                return false;
            }
            *self = SummaryCache { rebuilt_at: Some(std::time::Instant::now()), ..SummaryCache::default() };
        }
        let new = &lane.store.events()[self.fed..n];
        self.packets.observe(new);
        if registry::info(lane.scenario.strategy).has_messages {
            self.reliable.observe_all(new);
            for e in new {
                self.snapshots.observe(e);
            }
        }
        if lane.scenario.strategy == Strategy::Ue4 {
            self.ue4.observe_all(new);
        }
        self.fed = n;
        true
    }

    fn rows(&self, lane: &Lane) -> Vec<(String, String)> {
        let (p, e) = self.packets.finish();
        let mut rows = vec![
            ("packets sent / acked".into(), format!("{} / {}", p.sent, p.acked)),
            ("link dropped / duplicated".into(), format!("{} / {}", p.link_dropped, p.duplicated)),
            ("false acks (ground truth)".into(), p.false_acks.to_string()),
            ("RTT est. / true ms".into(), format!("{:.1} / {:.1}", e.rtt_ms, e.true_rtt_ms)),
            ("loss est. / true %".into(), format!("{:.2} / {:.2}", e.loss_percent, e.true_loss_percent)),
        ];
        if registry::info(lane.scenario.strategy).has_messages {
            let m = self.reliable.finish();
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
            let s = self.snapshots.finish();
            rows.push((
                "snapshot staleness p50 / p99 ms".into(),
                format!("{:.1} / {:.1}", s.staleness_ms.p50, s.staleness_ms.p99),
            ));
        }
        if lane.scenario.strategy == Strategy::Ue4 {
            let u = self.ue4.finish();
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
}

pub fn summary_ui(lanes: &mut [Lane], cursor: SimTime, ui: &mut egui::Ui) {
    let mut shown_at = cursor;
    let mut computed = Vec::with_capacity(lanes.len());
    for lane in lanes.iter_mut() {
        let n = lane.store.events_until(cursor).len();
        let mut cache = std::mem::take(&mut lane.summary);
        if !cache.advance(lane, n) {
            shown_at = cache.fed.checked_sub(1).map_or(SimTime::ZERO, |i| lane.store.events()[i].time);
            ui.ctx().request_repaint_after(REFRESH);
        }
        computed.push(cache.rows(lane));
        lane.summary = cache;
    }
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
