//! The Summary tab's metrics, folded over a recording's events up to the cursor, a bounded
//! number of events per frame.
//!
//! The metrics are folds over the event log, kept as accumulators: when the cursor moves forward
//! (live, or replay playing) only the new events are fed. Moving the cursor backwards needs a
//! fresh fold over everything before it, which at 10 million events took 0.4 s in one frame; so
//! the fold is fed for at most a few milliseconds per frame ([`FOLD_BUDGET`]) and
//! catches up over the next frames, while the view goes on showing the last finished figures and
//! says which instant they describe. Finishing the figures (percentiles over every latency and
//! staleness sample so far) also grows with the run, so it is done once the fold has caught up
//! and the cursor rests, or at most every [`REFRESH`] while it keeps moving (live). The figures
//! are those of a full fold over the events up to the instant shown, always.
//!
//! The fold belongs to the view that shows it (one per recording shown), so it is stored by the
//! UI beside its other view state.

use std::time::Instant;

use ackscope_protocol::{
    EstimateSummary, MetricsAccumulator, PacketTotals, ReliableMetrics, SimTime, SnapshotAccumulator, SnapshotSummary,
    SummaryAccumulator, Ue4Summary, Ue4SummaryAccumulator,
};

use crate::model::Shown;

/// Shortest time between two finishes while the cursor keeps moving.
pub const REFRESH: std::time::Duration = std::time::Duration::from_millis(500);

/// Time a frame spends folding at most (about 100,000 events at 30 ns each on a quiet machine);
/// with drawing and an occasional finish this keeps a 10M-event scrub under 8 ms a frame.
pub const FOLD_BUDGET: std::time::Duration = std::time::Duration::from_millis(3);
/// Events folded between two looks at the clock.
const FOLD_SLICE: usize = 8_192;

/// The accumulators, folded over the first `fed` events.
#[derive(Clone, Default)]
struct Folds {
    fed: usize,
    packets: SummaryAccumulator,
    reliable: MetricsAccumulator,
    snapshots: SnapshotAccumulator,
    ue4: Ue4SummaryAccumulator,
}

impl Folds {
    /// Back to folding from the first event. The packet fold's table is kept (reset, not
    /// dropped): a backward scrub then neither frees nor regrows it.
    fn reset(&mut self) {
        self.fed = 0;
        self.packets.reset();
        self.reliable = MetricsAccumulator::default();
        self.snapshots = SnapshotAccumulator::default();
        self.ue4 = Ue4SummaryAccumulator::default();
    }
}

/// The metrics towards the cursor, and the last figures finished.
#[derive(Clone, Default)]
pub struct SummaryFold {
    folds: Folds,
    /// The figures last finished and how many events they cover.
    shown: Option<(usize, SummaryFigures)>,
    /// The event count asked for last time, to tell a resting cursor from a moving one.
    last_target: Option<usize>,
    finished_at: Option<Instant>,
}

/// What the fold holds, finished: packet totals and estimates for every strategy, message metrics
/// for strategies with messages, UE4's own figures for UE4.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryFigures {
    pub packets: PacketTotals,
    pub estimates: EstimateSummary,
    pub reliable: Option<(ReliableMetrics, SnapshotSummary)>,
    pub ue4: Option<Ue4Summary>,
}

impl SummaryFold {
    /// Folds towards the first `n` events of `rec`, at most `budget` events this call, and
    /// finishes the figures once there (see the module docs for when); true when the figures
    /// shown describe exactly the first `n` events.
    pub fn advance(&mut self, rec: Shown<'_>, n: usize, budget: usize) -> bool {
        let n = n.min(rec.store.len());
        self.feed(rec, n, budget);
        self.settle(rec, n)
    }

    /// [`Self::advance`] with a budget of time rather than events (the window's frames: a
    /// fold's cost per event depends on the machine and how busy it is).
    pub fn advance_within(&mut self, rec: Shown<'_>, n: usize, budget: std::time::Duration) -> bool {
        let n = n.min(rec.store.len());
        let started = Instant::now();
        while self.folds.fed != n && started.elapsed() < budget {
            self.feed(rec, n, FOLD_SLICE);
        }
        self.settle(rec, n)
    }

    /// Folds at most `budget` events towards the first `n` (from scratch when `n` is behind).
    fn feed(&mut self, rec: Shown<'_>, n: usize, budget: usize) {
        if n < self.folds.fed {
            self.folds.reset();
        }
        let to = n.min(self.folds.fed.saturating_add(budget));
        let new = &rec.store.events()[self.folds.fed..to];
        let f = &mut self.folds;
        f.packets.observe(new);
        if rec.has_messages() {
            f.reliable.observe_all(new);
            for e in new {
                f.snapshots.observe(e);
            }
        }
        if rec.ran_ue4() {
            f.ue4.observe_all(new);
        }
        f.fed = to;
    }

    /// Finishes the figures for `n` when the fold is there and it is time to (see the module
    /// docs); true when the figures shown describe exactly the first `n` events.
    fn settle(&mut self, rec: Shown<'_>, n: usize) -> bool {
        let resting = self.last_target == Some(n);
        self.last_target = Some(n);
        if self.shown.as_ref().is_some_and(|s| s.0 == n) {
            return true;
        }
        let due = resting || self.shown.is_none() || self.finished_at.is_none_or(|t| t.elapsed() >= REFRESH);
        if self.folds.fed == n && due {
            self.shown = Some((n, self.folds.finish(rec)));
            self.finished_at = Some(Instant::now());
            return true;
        }
        false
    }

    /// The figures last finished, if any.
    pub fn figures(&self) -> Option<&SummaryFigures> {
        self.shown.as_ref().map(|s| &s.1)
    }

    /// The time of the last event the figures shown describe.
    pub fn shown_at(&self, rec: Shown<'_>) -> SimTime {
        let n = self.shown.as_ref().map_or(0, |s| s.0);
        n.checked_sub(1).and_then(|i| rec.store.events().get(i)).map_or(SimTime::ZERO, |e| e.time)
    }
}

impl Folds {
    /// The figures for `rec`'s strategy.
    fn finish(&self, rec: Shown<'_>) -> SummaryFigures {
        let (packets, estimates) = self.packets.finish();
        SummaryFigures {
            packets,
            estimates,
            reliable: rec.has_messages().then(|| (self.reliable.finish(), self.snapshots.finish())),
            ue4: rec.ran_ue4().then(|| self.ue4.finish()),
        }
    }
}

#[cfg(test)]
mod tests {
    use ackscope_protocol::{registry, reliable_metrics, Dir, Event, Scenario, Simulation, Strategy};

    use super::*;
    use crate::model::Recording;

    /// The figures of a fold over `events` from scratch, straight from the protocol's folds.
    fn full_fold(strategy: Strategy, events: &[Event]) -> SummaryFigures {
        let mut packets = SummaryAccumulator::default();
        packets.observe(events);
        let (totals, estimates) = packets.finish();
        let reliable = registry::info(strategy).has_messages.then(|| {
            let mut snaps = SnapshotAccumulator::default();
            events.iter().for_each(|e| snaps.observe(e));
            (reliable_metrics(events), snaps.finish())
        });
        let ue4 = (strategy == Strategy::Ue4).then(|| {
            let mut u = Ue4SummaryAccumulator::default();
            u.observe_all(events);
            u.finish()
        });
        SummaryFigures { packets: totals, estimates, reliable, ue4 }
    }

    #[test]
    fn budgeted_figures_equal_a_full_fold_at_every_cursor_scrubbed_to() {
        for strategy in [Strategy::Glenn, Strategy::Ue4, Strategy::Chunks] {
            let mut s = Scenario { seed: 9, strategy, ..Scenario::default() };
            for d in Dir::BOTH {
                s.link.get_mut(d).loss_percent = 10.0;
            }
            s.workload.chunk_kib = 256;
            let mut sim = Simulation::new(s.clone());
            sim.run_for_secs(20.0);
            let events: Vec<Event> = sim.drain_events().collect();
            let mut rec = Recording::new(s);
            rec.ingest(events.clone());
            let len = events.len();
            let mut fold = SummaryFold::default();
            // Forward, back, far back, forward again, and the ends.
            let cursors = [len / 3, len / 2, len / 5, 7, len * 9 / 10, len / 2 + 1, len, 0, len - 1];
            for n in cursors {
                let mut frames = 0;
                while !fold.advance((&rec).into(), n, 1_000) {
                    frames += 1;
                    assert!(frames <= len / 1_000 + 2, "{strategy:?}: the fold never catches up with {n}");
                }
                let want = full_fold(strategy, &events[..n]);
                assert_eq!(fold.figures(), Some(&want), "{strategy:?} at {n} of {len} events (seed 9)");
                let at = n.checked_sub(1).map_or(SimTime::ZERO, |i| events[i].time);
                assert_eq!(fold.shown_at((&rec).into()), at);
            }
            assert!(len > 5_000, "{strategy:?}: {len} events");
        }
    }

    #[test]
    fn a_far_move_back_is_folded_over_several_frames_showing_the_old_figures_meanwhile() {
        let s = Scenario { seed: 3, ..Scenario::default() };
        let mut sim = Simulation::new(s.clone());
        sim.run_for_secs(10.0);
        let mut rec = Recording::new(s);
        rec.ingest(sim.drain_events().collect());
        let len = rec.store.len();
        let mut fold = SummaryFold::default();
        assert!(fold.advance((&rec).into(), len, usize::MAX));
        let end = fold.figures().cloned();
        assert!(!fold.advance((&rec).into(), len / 2, len / 8), "half the run does not fit an eighth of it");
        assert_eq!(fold.figures().cloned(), end, "the old figures stay until the new are done");
        assert_eq!(fold.shown_at((&rec).into()), rec.store.end_time());
        let mut frames = 1;
        while !fold.advance((&rec).into(), len / 2, len / 8) {
            frames += 1;
        }
        assert!((4..=5).contains(&frames), "len/2 events in frames of len/8: {frames}");
        assert_ne!(fold.figures().cloned(), end);
    }

    #[test]
    fn a_frame_folds_only_within_its_time_budget() {
        let s = Scenario { seed: 4, ..Scenario::default() };
        let mut sim = Simulation::new(s.clone());
        sim.run_for_secs(10.0);
        let events: Vec<Event> = sim.drain_events().collect();
        let mut rec = Recording::new(s);
        rec.ingest(events.clone());
        let mut fold = SummaryFold::default();
        assert!(!fold.advance_within((&rec).into(), events.len(), std::time::Duration::ZERO));
        assert!(fold.figures().is_none(), "no time, nothing folded");
        assert!(fold.advance_within((&rec).into(), events.len(), std::time::Duration::from_secs(60)));
        assert_eq!(fold.figures(), Some(&full_fold(Strategy::Glenn, &events)), "seed 4");
    }
}
