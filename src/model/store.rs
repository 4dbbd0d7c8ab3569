//! The append-only event store and the series derived from it for the views.
//!
//! Live runs and loaded sessions feed the same [`Store`], so every view looks the same in both.
//! Series are derived incrementally as events arrive (never recomputed per frame) and are kept
//! as [`Sample`] vectors: the plots cut and decimate them at draw time to what their pixel width
//! shows, converting only the few points they draw. Ground-truth series (true RTT, true loss) are
//! sampled beside the endpoints' estimates at the same instants so they can be drawn on the same
//! axes; the true loss is read from the recording's [`PacketLedger`], which has folded exactly the
//! events up to each sample when it is taken (the recording feeds the ledger each event first).
//!
//! The event log is shared copy-on-write ([`Store::shared_events`]): a save on a worker thread
//! holds it without copying, and a live run appending meanwhile copies it once, not the saver.

use std::sync::Arc;

use ackscope_protocol::{Dir, Event, EventKind, PacketLedger, Side, SimTime};

use super::heap;

/// Link sends per direction over which the true loss is measured (the estimator's window).
pub const TRUE_LOSS_WINDOW: usize = 256;
/// Smoothing of the true one-way delay shown as "true RTT".
const TRUE_DELAY_SMOOTHING: f64 = 0.1;

/// One point of a series: time in seconds and a finite value.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Sample {
    pub t_s: f64,
    pub y: f64,
}

/// Series belonging to one endpoint.
#[derive(Debug, Default, Clone)]
pub struct SideSeries {
    pub rtt_smoothed_ms: Vec<Sample>,
    pub rtt_display_ms: Vec<Sample>,
    pub rtt_raw_ms: Vec<Sample>,
    /// The loss estimate at this side's stats instants that had judged a packet (before the
    /// first verdict an estimate is no estimate, not 0 %: those instants have no sample).
    pub loss_estimate_percent: Vec<Sample>,
    /// True loss on this side's outgoing direction, sampled at this side's stats instants.
    pub loss_true_percent: Vec<Sample>,
    /// Effective loss on this side's outgoing direction (link drops + packets the peer
    /// discarded unacked: the truth the estimate measures), at the same instants. Empty while
    /// it equals the true loss (no discards: the plot shows one truth); from the first instant
    /// it differs, it holds every instant (the earlier ones copied from `loss_true_percent`).
    pub loss_effective_percent: Vec<Sample>,
    pub sent_kbps: Vec<Sample>,
    pub received_kbps: Vec<Sample>,
    pub acked_kbps: Vec<Sample>,
    /// Send budget per tick (chunk accumulator or UE4 QueuedBits), in kbit/s equivalents of
    /// bytes available and bytes spent, so it shares the bandwidth plot's axis.
    pub budget_available: Vec<Sample>,
    pub budget_spent: Vec<Sample>,
    /// Flow-control mode: 1 = good, 0 = bad (rellikt), as steps.
    pub flow_good: Vec<Sample>,
}

/// Everything recorded for one run, plus derived series.
#[derive(Debug, Default, Clone)]
pub struct Store {
    events: Arc<Vec<Event>>,
    pub sides: [SideSeries; 2],
    /// Smoothed one-way link delay A->B plus B->A.
    pub true_rtt_ms: Vec<Sample>,
    delay_ms: [Option<f64>; 2],
    end: SimTime,
    /// Parameter changes (live edits and scripted steps): time in seconds and a label.
    pub changes: Vec<(f64, String)>,
    last_budget: [Option<SimTime>; 2],
}

/// Heap bytes of an event log's buffer. The few strings events carry (a parameter change's name
/// and value, a close reason: one per live edit) are left out, not worth a walk of the log.
pub fn log_bytes(events: &Vec<Event>) -> usize {
    heap::vec(events)
}

impl SideSeries {
    /// Heap bytes of the side's series.
    pub fn heap_bytes(&self) -> usize {
        [
            &self.rtt_smoothed_ms,
            &self.rtt_display_ms,
            &self.rtt_raw_ms,
            &self.loss_estimate_percent,
            &self.loss_true_percent,
            &self.loss_effective_percent,
            &self.sent_kbps,
            &self.received_kbps,
            &self.acked_kbps,
            &self.budget_available,
            &self.budget_spent,
            &self.flow_good,
        ]
        .into_iter()
        .map(heap::vec)
        .sum()
    }
}

fn pt(t: SimTime, y: f64) -> Sample {
    Sample { t_s: t.as_secs_f64(), y: if y.is_finite() { y } else { 0.0 } }
}

impl Store {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends one event (events come in time order) and extends the series; `truth` has
    /// already folded it, and every event before it.
    ///
    /// One event at a time, so a ground-truth sample is what the ledger knew at its instant. The
    /// log is copied only while a saver still holds the previous one (once, not per event).
    pub fn push(&mut self, e: Event, truth: &PacketLedger) {
        self.derive(&e, truth);
        self.end = self.end.max(e.time);
        Arc::make_mut(&mut self.events).push(e);
    }

    /// The event log, shared: holding it costs nothing until the store appends again.
    pub fn shared_events(&self) -> Arc<Vec<Event>> {
        Arc::clone(&self.events)
    }

    fn derive(&mut self, e: &Event, truth: &PacketLedger) {
        let t = e.time;
        match e.kind {
            EventKind::LinkDelivered { dir, delay_us, .. } => {
                let d = delay_us as f64 / 1000.0;
                let slot = &mut self.delay_ms[dir.index()];
                *slot = Some(match *slot {
                    None => d,
                    Some(prev) => prev + (d - prev) * TRUE_DELAY_SMOOTHING,
                });
            }
            EventKind::Budget { side, available_bytes, spent_bytes } => {
                // Bytes per tick shown as kbit/s over the tick's length, to sit beside bandwidth.
                let i = side.index();
                if let Some(prev) = self.last_budget[i] {
                    let dt_ms = t.saturating_since(prev).as_millis_f64();
                    if dt_ms > 0.0 {
                        let s = &mut self.sides[i];
                        s.budget_available.push(pt(t, available_bytes.max(0.0) as f64 * 8.0 / dt_ms));
                        s.budget_spent.push(pt(t, spent_bytes as f64 * 8.0 / dt_ms));
                    }
                }
                self.last_budget[i] = Some(t);
            }
            EventKind::FlowMode { side, good, .. } => {
                self.sides[side.index()].flow_good.push(pt(t, if good { 1.0 } else { 0.0 }));
            }
            EventKind::ParamChanged { ref name, ref value } => {
                self.changes.push((t.as_secs_f64(), format!("{name}={value}")));
            }
            EventKind::RttSample { side, rtt_ms } => {
                self.sides[side.index()].rtt_raw_ms.push(pt(t, rtt_ms as f64));
            }
            EventKind::Stats { side, stats } => {
                let s = &mut self.sides[side.index()];
                s.rtt_smoothed_ms.push(pt(t, stats.rtt_ms as f64));
                s.rtt_display_ms.push(pt(t, stats.rtt_display_ms as f64));
                if !stats.no_loss_verdict {
                    s.loss_estimate_percent.push(pt(t, stats.loss_percent as f64));
                }
                let dir = side.outgoing();
                let true_loss = truth.recent_loss_percent(dir, TRUE_LOSS_WINDOW).unwrap_or(0.0);
                s.loss_true_percent.push(pt(t, true_loss));
                let effective = truth.recent_effective_loss_percent(dir, TRUE_LOSS_WINDOW).unwrap_or(0.0);
                if s.loss_effective_percent.is_empty() && effective != true_loss {
                    let before = s.loss_true_percent.len() - 1;
                    s.loss_effective_percent.extend_from_slice(&s.loss_true_percent[..before]);
                }
                if !s.loss_effective_percent.is_empty() {
                    s.loss_effective_percent.push(pt(t, effective));
                }
                s.sent_kbps.push(pt(t, stats.sent_kbps as f64));
                s.received_kbps.push(pt(t, stats.received_kbps as f64));
                s.acked_kbps.push(pt(t, stats.acked_kbps as f64));
                if side == Side::A {
                    if let [Some(ab), Some(ba)] = self.delay_ms {
                        self.true_rtt_ms.push(pt(t, ab + ba));
                    }
                }
            }
            _ => {}
        }
    }

    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Heap bytes the store holds: its event log and series (see [`super::heap`]).
    pub fn heap_bytes(&self) -> usize {
        let series: usize = self.sides.iter().map(SideSeries::heap_bytes).sum();
        let changes: usize = self.changes.iter().map(|(_, s)| s.capacity()).sum();
        log_bytes(&self.events) + series + heap::vec(&self.true_rtt_ms) + heap::vec(&self.changes) + changes
    }

    /// Events at or before `t` (events are in time order).
    pub fn events_until(&self, t: SimTime) -> &[Event] {
        let n = self.events.partition_point(|e| e.time <= t);
        &self.events[..n]
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Time of the latest event.
    pub fn end_time(&self) -> SimTime {
        self.end
    }

    pub fn side(&self, side: Side) -> &SideSeries {
        &self.sides[side.index()]
    }

    /// True loss (%) on a direction over its last [`TRUE_LOSS_WINDOW`] link sends, as of the
    /// sending side's latest stats sample (the value the plots end on); 0 before any sample.
    ///
    /// The store keeps no count of its own: the figure between samples is the recording's
    /// ledger's (`PacketLedger::recent_loss_percent`).
    pub fn true_loss_percent(&self, dir: Dir) -> f64 {
        self.side(dir.sender()).loss_true_percent.last().map_or(0.0, |s| s.y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Recording;
    use ackscope_protocol::{Scenario, Simulation};

    /// A recording of `s` run for `secs`, ingested in batches as a live run delivers them.
    fn record(s: Scenario, secs: f64) -> (Vec<Event>, Recording) {
        let mut sim = Simulation::new(s.clone());
        sim.run_for_secs(secs);
        let events: Vec<Event> = sim.drain_events().collect();
        let mut rec = Recording::new(s);
        for batch in events.chunks(997) {
            rec.ingest(batch.to_vec());
        }
        (events, rec)
    }

    #[test]
    fn series_follow_a_run_and_truth_matches_the_link() {
        let mut s = Scenario::default();
        s.link.a_to_b.loss_percent = 20.0;
        s.link.b_to_a.loss_percent = 0.0;
        let (_, rec) = record(s, 30.0);
        let store = &rec.store;
        let a = store.side(Side::A);
        assert_eq!(a.rtt_smoothed_ms.len(), 301, "one stats sample per 100 ms");
        assert!(!a.rtt_raw_ms.is_empty());
        let true_loss = store.true_loss_percent(Dir::AtoB);
        assert!((10.0..30.0).contains(&true_loss), "{true_loss}");
        assert_eq!(store.true_loss_percent(Dir::BtoA), 0.0);
        let rtt = store.true_rtt_ms.last().unwrap().y;
        assert!((rtt - 100.0).abs() < 1e-6, "{rtt}");
        assert!(store.end_time() >= SimTime(29_900_000));
    }

    #[test]
    fn true_loss_series_counts_the_drops_among_each_directions_last_link_sends() {
        let mut s = Scenario { seed: 11, ..Scenario::default() };
        for d in Dir::BOTH {
            let l = s.link.get_mut(d);
            l.loss_percent = 15.0;
            l.duplicate_percent = 5.0;
            l.jitter_ms = 30.0;
            l.reorder_percent = 5.0;
            l.reorder_delay_ms = 40.0;
            l.burst.p_percent = 2.0;
        }
        let (events, rec) = record(s, 60.0);
        // Counted straight from the log: every link send so far, and the drops so far.
        let mut sends: [Vec<u64>; 2] = Default::default();
        let mut dropped = std::collections::HashSet::new();
        let mut want: [Vec<Sample>; 2] = Default::default();
        for e in &events {
            match e.kind {
                EventKind::LinkSent { dir, uid, .. } => sends[dir.index()].push(uid),
                EventKind::LinkDropped { uid, .. } => drop(dropped.insert(uid)),
                EventKind::Stats { side, .. } => {
                    let all = &sends[side.outgoing().index()];
                    let last = &all[all.len().saturating_sub(TRUE_LOSS_WINDOW)..];
                    let lost = last.iter().filter(|u| dropped.contains(u)).count();
                    let y = if last.is_empty() { 0.0 } else { lost as f64 * 100.0 / last.len() as f64 };
                    want[side.index()].push(pt(e.time, y));
                }
                _ => {}
            }
        }
        for side in [Side::A, Side::B] {
            let got = &rec.store.side(side).loss_true_percent;
            assert_eq!(got.len(), 601, "{side:?}");
            assert_eq!(got, &want[side.index()], "{side:?} (seed 11)");
            assert!(got.iter().any(|p| p.y > 20.0) && got.iter().any(|p| p.y < 10.0), "{side:?}: a lossy, bursty run");
            let last = got.last().unwrap().y;
            assert_eq!(rec.store.true_loss_percent(side.outgoing()), last);
        }
    }
}
