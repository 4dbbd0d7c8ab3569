//! Samples that come in runs of a fixed step (`a, a + s, a + 2s, ...`), kept as one
//! `(first, count)` pair per run, with the nearest-rank percentiles of every sample they stand for.
//!
//! Why: snapshot staleness is sampled every 5 ms, and while a receiver holds the same snapshot its
//! age grows by exactly the step from one sample to the next. A run of 1000 clients for 60 s makes
//! 24 million such samples (192 MB as `f64`, and twice that while the report gathered them),
//! but only about a tenth as many runs. The percentiles read from the runs are exactly those of
//! the samples written out ([`nearest_ranks`](super::percentile::nearest_ranks) over them; a test
//! compares the two).

/// One run: `count` samples `first_us, first_us + step, ...` (microseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub first_us: u64,
    pub count: u64,
}

/// The nearest-rank values at quantiles `qs` (each in `[0, 1]`) of every sample `runs` stand for
/// (each run a step of `step_us` apart; `step_us` > 0), in milliseconds (`us as f64 / 1000`):
/// the same values [`super::percentile::nearest_ranks`] gives over the samples written out.
///
/// How: sample `first + j * step` of a run falls in bucket `first / step + j` of width `step`,
/// so each run puts exactly one sample in each bucket it spans. The samples per bucket (a
/// difference array over the buckets) find the bucket holding each rank; the samples in that
/// bucket, one per run spanning it, are then few enough to select from. Linear in the runs and
/// the buckets (at most the largest sample over the step).
pub fn nearest_ranks<const N: usize>(runs: &[Run], step_us: u64, qs: [f64; N]) -> [f64; N] {
    let mut out = [0.0; N];
    let n: u64 = runs.iter().map(|r| r.count).sum();
    if n == 0 || step_us == 0 {
        return out;
    }
    let span = |r: &Run| (r.first_us / step_us, r.first_us / step_us + r.count);
    let (lo, hi) =
        runs.iter().filter(|r| r.count > 0).map(span).fold((u64::MAX, 0), |(lo, hi), (a, b)| (lo.min(a), hi.max(b)));
    // Samples per bucket, from a difference array: +1 where a run starts, -1 past its end.
    let mut per_bucket = vec![0i64; (hi - lo) as usize + 1];
    for r in runs.iter().filter(|r| r.count > 0) {
        let (a, b) = span(r);
        per_bucket[(a - lo) as usize] += 1;
        per_bucket[(b - lo) as usize] -= 1;
    }
    let mut open = 0i64;
    for c in per_bucket.iter_mut() {
        open += *c;
        *c = open;
    }
    // The ranks wanted (0-based), found in one pass over the buckets in rank order.
    let rank = |q: f64| ((q * n as f64).ceil() as u64).clamp(1, n) - 1;
    let mut order: [usize; N] = std::array::from_fn(|i| i);
    order.sort_by_key(|&i| rank(qs[i]));
    let (mut bucket, mut below) = (0usize, 0u64);
    let mut in_bucket = Vec::new();
    for i in order {
        let r = rank(qs[i]);
        while below + per_bucket[bucket] as u64 <= r {
            below += per_bucket[bucket] as u64;
            bucket += 1;
        }
        let b = lo + bucket as u64;
        in_bucket.clear();
        in_bucket.extend(runs.iter().filter(|x| x.count > 0).filter_map(|x| {
            let (a, end) = span(x);
            (a <= b && b < end).then(|| x.first_us + (b - a) * step_us)
        }));
        let (_, v, _) = in_bucket.select_nth_unstable((r - below) as usize);
        out[i] = *v as f64 / 1000.0;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sample the runs stand for, as the staleness fold wrote them before runs.
    fn written_out(runs: &[Run], step_us: u64) -> Vec<f64> {
        runs.iter().flat_map(|r| (0..r.count).map(move |j| (r.first_us + j * step_us) as f64 / 1000.0)).collect()
    }

    #[test]
    fn ranks_of_runs_equal_the_ranks_of_their_samples_written_out() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let qs = [0.5, 0.99, 1.0, 0.0, 0.95, 0.25, 0.999];
        for (case, step) in [(0, 5000u64), (1, 5000), (2, 1), (3, 7), (4, 5000), (5, 5000), (6, 3)].into_iter() {
            let runs: Vec<Run> = (0..[0, 1, 3, 50, 400, 2000, 17][case])
                .map(|i| Run {
                    // Ties across runs (the same start), runs of one sample, empty ones, far ones.
                    first_us: if i % 4 == 0 { 60_000 } else { next(400_000) + [0, 5_000_000][(i % 9 == 0) as usize] },
                    count: [next(200), 1, 0, next(5)][i % 4],
                })
                .collect();
            let want = crate::measure::percentile::nearest_ranks(written_out(&runs, step), qs);
            assert_eq!(nearest_ranks(&runs, step, qs), want, "case {case}, step {step}");
        }
    }
}
