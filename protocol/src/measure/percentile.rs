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

/// The nearest-rank values at quantiles `qs` (each in `[0, 1]`) of `samples`, exactly what
/// [`Percentiles::of`] then [`Percentiles::at`] give, without sorting: each rank is selected
/// (`select_nth_unstable`, linear on average), highest first, each next selection within the part
/// below the last. A view that finishes its figures while the cursor moves does this over every
/// sample so far; sorting 170,000 staleness samples was 7-8 ms of one frame.
pub fn nearest_ranks<const N: usize>(mut samples: Vec<f64>, qs: [f64; N]) -> [f64; N] {
    let n = samples.len();
    let mut out = [0.0; N];
    if n == 0 {
        return out;
    }
    let rank = |q: f64| ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
    let mut order: [usize; N] = std::array::from_fn(|i| i);
    order.sort_by_key(|&i| std::cmp::Reverse(rank(qs[i])));
    let mut end = n;
    for i in order {
        let r = rank(qs[i]);
        let (_, v, _) = samples[..end].select_nth_unstable_by(r, f64::total_cmp);
        out[i] = *v;
        end = r + 1;
    }
    out
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

impl LatencyMs {
    /// The percentiles of `samples` ([`nearest_ranks`]: the same as through [`Percentiles`]).
    pub fn of(samples: Vec<f64>) -> Self {
        let [p50, p95, p99, max] = nearest_ranks(samples, [0.50, 0.95, 0.99, 1.0]);
        Self { p50, p95, p99, max }
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

impl StalenessMs {
    /// The percentiles of `samples` ([`nearest_ranks`]: the same as through [`Percentiles`]).
    pub fn of(samples: Vec<f64>) -> Self {
        let count = samples.len() as u64;
        let [p50, p99, max] = nearest_ranks(samples, [0.5, 0.99, 1.0]);
        Self { p50, p99, max, samples: count }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selected_ranks_equal_the_sorted_ones() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for n in [0usize, 1, 2, 3, 7, 100, 1001, 20_000] {
            let samples: Vec<f64> = (0..n)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Ties and a spread of values.
                    if i % 5 == 0 {
                        42.0
                    } else {
                        (x % 10_000) as f64 / 7.0
                    }
                })
                .collect();
            let qs = [0.5, 0.95, 0.99, 1.0, 0.0, 0.25];
            let p = Percentiles::of(samples.clone());
            let want = qs.map(|q| p.at(q));
            assert_eq!(nearest_ranks(samples.clone(), qs), want, "n = {n}");
            assert_eq!(LatencyMs::of(samples.clone()), LatencyMs::from(&p));
            assert_eq!(StalenessMs::of(samples), StalenessMs::from(&p));
        }
    }

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
