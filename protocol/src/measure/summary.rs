//! The run summary: ground-truth totals and the endpoints' estimates beside the truth they
//! estimate, folded from events on top of the [`PacketLedger`].

use serde::{Deserialize, Serialize};

use super::ledger::{PacketLedger, PacketTotals};
use crate::event::{Event, EventKind, Side, SimTime, StatsSample};

/// Stats samples before this time are left out of the mean loss estimate: for its first seconds an
/// estimator has judged too few packets to say anything (the loss window needs a full RTT of
/// history), and averaging its zeros would flatter every strategy alike.
pub const LOSS_WARMUP: SimTime = SimTime(2_000_000);

/// Estimates beside the truth they estimate, for a whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct EstimateSummary {
    /// Final smoothed RTT, mean over the sides that reported estimates (both, in a simulation).
    pub rtt_ms: f64,
    /// Mean one-way link delay A->B plus B->A over delivered packets.
    pub true_rtt_ms: f64,
    /// Mean of both sides' loss estimates over the stats samples after [`LOSS_WARMUP`].
    pub loss_percent: f64,
    /// Packets dropped by the link / packets sent, both directions.
    pub true_loss_percent: f64,
}

/// Ground truth and estimates recomputed from a recorded event log (e.g. a loaded session).
///
/// The simulation folds its own events with the same [`SummaryAccumulator`], so `ackscope summary`
/// of a recording prints bit for bit what the `run` that wrote it printed; `rtt_ms` comes from each
/// side's last `Stats` event.
pub fn summarize(events: &[Event]) -> (PacketTotals, EstimateSummary) {
    let mut a = SummaryAccumulator::default();
    a.observe(events);
    a.finish()
}

/// [`summarize`] fed in pieces, for views that extend it as time moves forward.
#[derive(Debug, Clone, Default)]
pub struct SummaryAccumulator {
    ledger: PacketLedger,
    /// Each side's last estimates (None until it reports).
    last_stats: [Option<StatsSample>; 2],
    loss_sum: f64,
    loss_n: u64,
}

impl SummaryAccumulator {
    pub fn observe(&mut self, events: &[Event]) {
        self.ledger.observe(events);
        for e in events {
            if let EventKind::Stats { side, stats } = e.kind {
                self.last_stats[side.index()] = Some(stats);
                if e.time >= LOSS_WARMUP {
                    self.loss_sum += stats.loss_percent as f64;
                    self.loss_n += 1;
                }
            }
        }
    }

    /// The packet ledger behind the totals.
    pub fn ledger(&self) -> &PacketLedger {
        &self.ledger
    }

    /// The last estimates `side` reported.
    pub fn last_stats(&self, side: Side) -> Option<StatsSample> {
        self.last_stats[side.index()]
    }

    /// The final smoothed RTT, mean over the sides that reported (0 when none did).
    pub fn rtt_ms(&self) -> f64 {
        let rtts: Vec<f64> = self.last_stats.iter().flatten().map(|s| s.rtt_ms as f64).collect();
        if rtts.is_empty() {
            0.0
        } else {
            rtts.iter().sum::<f64>() / rtts.len() as f64
        }
    }

    /// Mean loss estimate over the stats samples after [`LOSS_WARMUP`], all sides together.
    pub fn loss_percent(&self) -> f64 {
        if self.loss_n == 0 {
            0.0
        } else {
            self.loss_sum / self.loss_n as f64
        }
    }

    pub fn finish(&self) -> (PacketTotals, EstimateSummary) {
        let est = EstimateSummary {
            rtt_ms: self.rtt_ms(),
            true_rtt_ms: self.ledger.true_rtt_ms(),
            loss_percent: self.loss_percent(),
            true_loss_percent: self.ledger.true_loss_percent(),
        };
        (self.ledger.totals(), est)
    }
}
