//! The `bandwidth` section of `run --json` and `peer --json`: each side's own rates (what its
//! `Stats` events report: sent, received and acked kbps, reliable.io's smoothed figures), as the
//! mean and the 95th percentile over the run's samples.
//!
//! A plot shows bandwidth over time; a report needs two numbers a script can compare across runs:
//! the mean (what the link carried on average) and the p95 (the peak a link must carry without
//! queueing). Samples are kept in log-spaced buckets (0.5 % wide), so memory stays a few KiB per
//! side however long the run or however many clients, and the p95 is within 0.5 % of the exact
//! sample's.

use ackscope_protocol::{Event, EventKind, Side};
use serde::Serialize;

/// One side's rates over a run, kbit/s (IP+UDP headers as the endpoint counts them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Bandwidth {
    pub sent_kbps_mean: f64,
    pub sent_kbps_p95: f64,
    pub received_kbps_mean: f64,
    pub received_kbps_p95: f64,
    pub acked_kbps_mean: f64,
    pub acked_kbps_p95: f64,
    /// `Stats` samples the figures are over (every client's, in a run of several).
    pub samples: u64,
}

/// Both sides' [`Bandwidth`] (`bandwidth` in `run --json`); a side that reported no `Stats` is
/// null.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RunBandwidth {
    pub a: Option<Bandwidth>,
    pub b: Option<Bandwidth>,
}

/// Bucket width in natural-log units: bucket `i` holds rates in `[e^(i/W) - 1, e^((i+1)/W) - 1)`.
const BUCKETS_PER_E: f64 = 200.0;

/// One rate's samples: exact sum, log-bucketed counts.
#[derive(Debug, Clone, Default)]
struct RateFold {
    sum: f64,
    n: u64,
    buckets: Vec<u64>,
}

impl RateFold {
    fn push(&mut self, kbps: f32) {
        // Estimators never yield NaN (STYLE), but a hand-edited recording might: skip it.
        if !kbps.is_finite() {
            return;
        }
        let v = f64::from(kbps.max(0.0));
        self.sum += v;
        self.n += 1;
        let i = ((1.0 + v).ln() * BUCKETS_PER_E) as usize;
        if i >= self.buckets.len() {
            self.buckets.resize(i + 1, 0);
        }
        self.buckets[i] += 1;
    }

    fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum / self.n as f64
        }
    }

    /// The nearest-rank 95th percentile, as its bucket's midpoint.
    fn p95(&self) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let rank = ((self.n as f64) * 0.95).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                if i == 0 {
                    // The bucket of (near) zero: report zero exactly, not half a bucket.
                    return 0.0;
                }
                return ((i as f64 + 0.5) / BUCKETS_PER_E).exp() - 1.0;
            }
        }
        0.0
    }
}

/// [`RunBandwidth`] fed one event at a time.
#[derive(Debug, Clone, Default)]
pub struct BandwidthFold {
    /// Per side: sent, received, acked.
    sides: [[RateFold; 3]; 2],
}

impl BandwidthFold {
    pub fn observe(&mut self, e: &Event) {
        if let EventKind::Stats { side, stats } = &e.kind {
            let [sent, received, acked] = &mut self.sides[side.index()];
            sent.push(stats.sent_kbps);
            received.push(stats.received_kbps);
            acked.push(stats.acked_kbps);
        }
    }

    /// `side`'s figures, None when it reported no `Stats`.
    pub fn side(&self, side: Side) -> Option<Bandwidth> {
        let [sent, received, acked] = &self.sides[side.index()];
        (sent.n > 0).then(|| Bandwidth {
            sent_kbps_mean: sent.mean(),
            sent_kbps_p95: sent.p95(),
            received_kbps_mean: received.mean(),
            received_kbps_p95: received.p95(),
            acked_kbps_mean: acked.mean(),
            acked_kbps_p95: acked.p95(),
            samples: sent.n,
        })
    }

    /// Both sides' figures.
    pub fn finish(&self) -> RunBandwidth {
        RunBandwidth { a: self.side(Side::A), b: self.side(Side::B) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackscope_protocol::{SimTime, StatsSample};

    fn stats(side: Side, sent: f32) -> Event {
        let stats = StatsSample { sent_kbps: sent, received_kbps: sent / 2.0, acked_kbps: 0.0, ..Default::default() };
        Event::new(SimTime(0), EventKind::Stats { side, stats })
    }

    #[test]
    fn mean_is_exact_and_p95_within_half_a_percent() {
        let mut f = BandwidthFold::default();
        for i in 1..=100 {
            f.observe(&stats(Side::A, i as f32 * 10.0));
        }
        let b = f.side(Side::A).unwrap();
        assert_eq!(b.samples, 100);
        assert!((b.sent_kbps_mean - 505.0).abs() < 1e-9, "{b:?}");
        assert!((b.sent_kbps_p95 / 950.0 - 1.0).abs() < 0.005, "{b:?}");
        assert!((b.received_kbps_p95 / 475.0 - 1.0).abs() < 0.005, "{b:?}");
        assert_eq!((b.acked_kbps_mean, b.acked_kbps_p95), (0.0, 0.0));
        assert!(f.side(Side::B).is_none(), "no samples: null");
    }
}
