//! Nearest-rank percentiles: the one definition every figure of a run uses.
//!
//! The value at quantile `q` of `n` sorted samples is the sample of rank `ceil(q * n)` (clamped to
//! `1..=n`), so every percentile is a value that was actually observed and `q = 1` is the maximum.
//! Delivery latency ([`LatencyMs`]) and snapshot staleness ([`StalenessMs`]) are two report shapes
//! (their JSON fields differ) read from the same [`Percentiles`].

use serde::{Deserialize, Serialize};

/// A set of samples, sorted once, read by nearest rank.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Percentiles {
    sorted: Vec<f64>,
}

impl Percentiles {
    /// Sorts `samples` (total order, so a NaN cannot panic or scramble the ranks; samples equal
    /// under it are bit-identical, so the unstable sort gives the same result as a stable one).
    pub fn of(mut samples: Vec<f64>) -> Self {
        samples.sort_unstable_by(f64::total_cmp);
        Self { sorted: samples }
    }

    /// The nearest-rank value at quantile `q` in `[0, 1]`; 0 without samples.
    pub fn at(&self, q: f64) -> f64 {
        let n = self.sorted.len();
        if n == 0 {
            return 0.0;
        }
        let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
        self.sorted[rank - 1]
    }

    /// The largest sample; 0 without samples.
    pub fn max(&self) -> f64 {
        self.sorted.last().copied().unwrap_or(0.0)
    }

    pub fn count(&self) -> u64 {
        self.sorted.len() as u64
    }
}

/// Delivery latency percentiles (queued -> delivered) of reliable messages, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyMs {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl From<&Percentiles> for LatencyMs {
    fn from(p: &Percentiles) -> Self {
        Self { p50: p.at(0.50), p95: p.at(0.95), p99: p.at(0.99), max: p.at(1.0) }
    }
}

/// Staleness percentiles of held snapshots, in milliseconds, with the number of samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StalenessMs {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub samples: u64,
}

impl From<&Percentiles> for StalenessMs {
    fn from(p: &Percentiles) -> Self {
        Self { p50: p.at(0.5), p99: p.at(0.99), max: p.max(), samples: p.count() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_picks_observed_samples_and_empty_sets_read_zero() {
        let p = Percentiles::of((1..=100).rev().map(f64::from).collect());
        assert_eq!((p.at(0.5), p.at(0.95), p.at(0.99), p.at(1.0), p.max()), (50.0, 95.0, 99.0, 100.0, 100.0));
        assert_eq!(Percentiles::of(vec![7.0]).at(0.0), 7.0, "rank is clamped to the first sample");
        let three = Percentiles::of(vec![3.0, 1.0, 2.0]);
        assert_eq!(three.at(0.5), 2.0, "ceil(1.5) = rank 2");
        assert_eq!(LatencyMs::from(&Percentiles::default()), LatencyMs::default());
        assert_eq!(StalenessMs::from(&Percentiles::default()), StalenessMs::default());
        assert_eq!(StalenessMs::from(&three).samples, 3);
    }
}
