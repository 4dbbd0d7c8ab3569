//! The Summary tab's metrics, folded over a recording's events up to the cursor.
//!
//! The metrics are folds over the event log, kept as accumulators: when the cursor moves forward
//! (live, or replay playing) only the new events are fed, so a frame stays cheap however long the
//! recording. Moving the cursor backwards needs a fresh fold over everything before it; while the
//! cursor is dragged back that happens at most every [`REFRESH`], and the fold says which instant
//! it shows. The fold belongs to the view that shows it (one per recording shown), so it is
//! stored by the UI beside its other view state.

use ackscope_protocol::{
    registry, EstimateSummary, MetricsAccumulator, PacketTotals, ReliableMetrics, SimTime, SnapshotAccumulator,
    SnapshotSummary, Strategy, SummaryAccumulator, Ue4Summary, Ue4SummaryAccumulator,
};

use crate::model::Recording;

/// Shortest time between two full refolds while the cursor moves backwards.
pub const REFRESH: std::time::Duration = std::time::Duration::from_millis(500);

/// The metrics folded over the first `fed` events of a recording.
#[derive(Clone, Default)]
pub struct SummaryFold {
    fed: usize,
    packets: SummaryAccumulator,
    reliable: MetricsAccumulator,
    snapshots: SnapshotAccumulator,
    ue4: Ue4SummaryAccumulator,
    rebuilt_at: Option<std::time::Instant>,
}

/// What the fold holds, finished: packet totals and estimates for every strategy, message metrics
/// for strategies with messages, UE4's own figures for UE4.
pub struct SummaryFigures {
    pub packets: PacketTotals,
    pub estimates: EstimateSummary,
    pub reliable: Option<(ReliableMetrics, SnapshotSummary)>,
    pub ue4: Option<Ue4Summary>,
}

impl SummaryFold {
    /// Brings the folds to the first `n` events of `rec`; false when that needed a rebuild that
    /// was refused because the last one was too recent.
    pub fn advance(&mut self, rec: &Recording, n: usize) -> bool {
        if n < self.fed {
            if self.rebuilt_at.is_some_and(|t| t.elapsed() < REFRESH) {
                return false;
            }
            *self = SummaryFold { rebuilt_at: Some(std::time::Instant::now()), ..SummaryFold::default() };
        }
        let new = &rec.store.events()[self.fed..n];
        self.packets.observe(new);
        if registry::info(rec.scenario.strategy).has_messages {
            self.reliable.observe_all(new);
            for e in new {
                self.snapshots.observe(e);
            }
        }
        if rec.scenario.strategy == Strategy::Ue4 {
            self.ue4.observe_all(new);
        }
        self.fed = n;
        true
    }

    /// The time of the last event folded in (what the figures describe).
    pub fn shown_at(&self, rec: &Recording) -> SimTime {
        self.fed.checked_sub(1).map_or(SimTime::ZERO, |i| rec.store.events()[i].time)
    }

    /// The figures for `rec`'s strategy.
    pub fn finish(&self, rec: &Recording) -> SummaryFigures {
        let (packets, estimates) = self.packets.finish();
        let strategy = rec.scenario.strategy;
        SummaryFigures {
            packets,
            estimates,
            reliable: registry::info(strategy).has_messages.then(|| (self.reliable.finish(), self.snapshots.finish())),
            ue4: (strategy == Strategy::Ue4).then(|| self.ue4.finish()),
        }
    }
}
