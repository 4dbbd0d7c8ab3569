//! Delay: base latency, jitter and its distribution, and the explicit reorder hold.
//!
//! Once the queue's wait is taken off ([`super::rate`]), the link delays a packet by
//! `max(0, latency + J)`, `J` uniform in `[-jitter, +jitter]` or normal with standard deviation
//! `jitter`, plus `reorder_delay` for the `reorder_percent` of packets it holds back. So the
//! delays are a two-part mixture of one shape shifted by the hold, and the fit is by minimum
//! distance: for each shape, the `(latency, jitter, reorder share, hold)` whose distribution
//! function is nearest the delays' (the Cramer-von Mises distance over 256 quantiles, minimised by
//! Nelder-Mead from the median, the spread and the outliers beyond it). The hold is kept only
//! when the shape alone (no held packets) is refused by the delays (its Kolmogorov-Smirnov
//! distance beyond the 1 % critical value) or the hold sets its packets apart from the shape:
//! two overlapping copies of a shape always fit a sample a little better than one. Of the two
//! shapes, the one with the smaller Kolmogorov-Smirnov distance. Delays that are one value (within 0.1 ms) for
//! most packets, with nothing below, are jitter 0, and whatever lies above them the reorder hold.
//!
//! **Jitter that never reorders** (`jitter_reorders = false`) follows one smooth delay path over
//! time, so packets do not overtake each other except the held ones. With independent jitter of
//! the fitted size, consecutive packets `g` apart swap with a chance the shape gives (uniform: the
//! difference of two draws is triangular; normal: normal with twice the variance); when the
//! capture has fewer than a quarter of the swaps that predicts beyond those the holds explain
//! (and the prediction is at least 10), the link is FIFO, and the jitter is scaled from the spread
//! of the path, which is `sqrt(2/3)` of its knots' (`sqrt(2/9) x jitter` uniform, `sqrt(2/3) x
//! jitter` normal; the caller picks the shape by simulation, see [`super`]).

use ackscope_protocol::JitterDistribution;

use super::stats::{logit, nelder_mead, normal_cdf, quantile_sorted, sigmoid, sorted};

/// The fitted delay, in the link's units (ms, percent).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DelayFit {
    pub latency_ms: f64,
    pub jitter_ms: f64,
    pub distribution: JitterDistribution,
    pub jitter_reorders: bool,
    pub reorder_percent: f64,
    pub reorder_delay_ms: f64,
    /// Consecutive delivered packets the capture has arriving out of send order, and how many
    /// independent jitter of the fitted size would swap.
    pub swaps: u64,
    pub expected_swaps: f64,
}

/// The link's default hold, kept when no packet is held.
const DEFAULT_HOLD_MS: f64 = 30.0;
/// Quantiles the distance is taken over.
const QUANTILES: usize = 256;

/// One shape's parameters.
#[derive(Debug, Clone, Copy)]
struct Mix {
    latency: f64,
    jitter: f64,
    held: f64,
    hold: f64,
}

fn shape_cdf(dist: JitterDistribution, latency: f64, jitter: f64, x: f64) -> f64 {
    if x < 0.0 {
        return 0.0;
    }
    // max(0, latency + J): everything below 0 is at 0.
    if jitter <= 0.0 {
        return if x >= latency { 1.0 } else { 0.0 };
    }
    match dist {
        JitterDistribution::Uniform => ((x - (latency - jitter)) / (2.0 * jitter)).clamp(0.0, 1.0),
        JitterDistribution::Normal => normal_cdf((x - latency) / jitter),
    }
}

impl Mix {
    fn cdf(&self, dist: JitterDistribution, x: f64) -> f64 {
        (1.0 - self.held) * shape_cdf(dist, self.latency, self.jitter, x)
            + self.held * shape_cdf(dist, self.latency, self.jitter, x - self.hold)
    }
    fn from_x(x: &[f64]) -> Self {
        Mix { latency: x[0], jitter: x[1].exp(), held: 0.5 * sigmoid(x[2]), hold: x[3].exp() }
    }
    fn to_x(self) -> Vec<f64> {
        vec![self.latency, self.jitter.max(1e-6).ln(), logit(self.held / 0.5), self.hold.max(1e-6).ln()]
    }
}

/// The one-sample Kolmogorov-Smirnov distance of sorted `v` from `cdf`.
fn ks_to(v: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
    let n = v.len() as f64;
    v.iter()
        .enumerate()
        .map(|(i, x)| {
            let f = cdf(*x);
            (f - i as f64 / n).abs().max((f - (i + 1) as f64 / n).abs())
        })
        .fold(0.0, f64::max)
}

/// The quantiles the distance is taken over: `(delay, level)`.
fn quantile_points(sorted_ms: &[f64]) -> Vec<(f64, f64)> {
    (0..QUANTILES)
        .map(|k| {
            let q = (k as f64 + 0.5) / QUANTILES as f64;
            (quantile_sorted(sorted_ms, q), q)
        })
        .collect()
}

/// Fits one shape to sorted delays (ms) from a starting mixture.
fn fit_shape(sorted_ms: &[f64], dist: JitterDistribution, start: Mix) -> (Mix, f64) {
    let points = quantile_points(sorted_ms);
    let mut objective = |x: &[f64]| {
        let m = Mix::from_x(x);
        points.iter().map(|(v, q)| (m.cdf(dist, *v) - q).powi(2)).sum::<f64>()
    };
    let step = [start.jitter.max(0.5) * 0.2, 0.3, 1.0, 0.3];
    let (x, _) = nelder_mead(&mut objective, &start.to_x(), &step, 2000, 1e-12);
    let m = Mix::from_x(&x);
    (m, ks_to(sorted_ms, |v| m.cdf(dist, v)))
}

/// Fits one shape with no held packets (latency and jitter only).
fn fit_plain(sorted_ms: &[f64], dist: JitterDistribution, latency: f64, jitter: f64) -> (Mix, f64) {
    let points = quantile_points(sorted_ms);
    let mix = |x: &[f64]| Mix { latency: x[0], jitter: x[1].exp(), held: 0.0, hold: DEFAULT_HOLD_MS };
    let mut objective = |x: &[f64]| {
        let m = mix(x);
        points.iter().map(|(v, q)| (m.cdf(dist, *v) - q).powi(2)).sum::<f64>()
    };
    let start = [latency, jitter.max(1e-6).ln()];
    let (x, _) = nelder_mead(&mut objective, &start, &[jitter.max(0.5) * 0.2, 0.3], 2000, 1e-12);
    let m = mix(&x);
    (m, ks_to(sorted_ms, |v| m.cdf(dist, v)))
}

/// The Kolmogorov-Smirnov distance above which `n` delays are not the fitted shape's (the 1 %
/// critical value, `1.63 / sqrt(n)`).
fn ks_rejects(ks: f64, n: usize) -> bool {
    ks > 1.63 / (n as f64).sqrt()
}

/// Whether a hold sets its packets apart from the shape: their delays start where the
/// unheld ones end (beyond twice the uniform half-width, four normal deviations).
fn hold_is_apart(dist: JitterDistribution, m: Mix) -> bool {
    match dist {
        JitterDistribution::Uniform => m.hold >= 2.0 * m.jitter,
        JitterDistribution::Normal => m.hold >= 4.0 * m.jitter,
    }
}

/// Fits the delays (µs, after the queue's waits) of delivered packets; `gaps_us` holds the gap
/// between each packet's departure and the next one's, and `swapped` whether the next one
/// arrived first (both in send order, one shorter than the delays).
pub fn fit(delays_us: &[f64], gaps_us: &[f64], swapped: &[bool]) -> DelayFit {
    let ms: Vec<f64> = sorted(&delays_us.iter().map(|d| d / 1000.0).collect::<Vec<_>>());
    let swaps = swapped.iter().filter(|s| **s).count() as u64;
    let mut out = DelayFit {
        latency_ms: 0.0,
        jitter_ms: 0.0,
        distribution: JitterDistribution::Uniform,
        jitter_reorders: true,
        reorder_percent: 0.0,
        reorder_delay_ms: DEFAULT_HOLD_MS,
        swaps,
        expected_swaps: 0.0,
    };
    if ms.is_empty() {
        return out;
    }
    let n = ms.len() as f64;
    let median = quantile_sorted(&ms, 0.5);
    let near = ms.iter().filter(|v| (*v - median).abs() <= 0.1).count() as f64;
    let below = ms.iter().filter(|v| **v < median - 0.1).count() as f64;
    if near >= 0.5 * n && below <= 0.01 * n {
        // No jitter: one delay, and the held packets above it.
        let core: Vec<f64> = ms.iter().copied().filter(|v| (*v - median).abs() <= 0.1).collect();
        out.latency_ms = core.iter().sum::<f64>() / core.len() as f64;
        let held: Vec<f64> = ms.iter().copied().filter(|v| *v > median + 0.1).collect();
        if held.len() as f64 >= (0.001 * n).max(1.0) {
            out.reorder_percent = 100.0 * held.len() as f64 / n;
            out.reorder_delay_ms = quantile_sorted(&held, 0.5) - out.latency_ms;
        }
        return out;
    }
    // Starting points from the body of the delays and what lies well beyond it: the quartiles
    // are `latency -+ jitter / 2` uniform, `latency -+ 0.674 jitter` normal.
    let iqr = quantile_sorted(&ms, 0.75) - quantile_sorted(&ms, 0.25);
    let mut best: Option<(JitterDistribution, Mix, f64)> = None;
    for dist in [JitterDistribution::Uniform, JitterDistribution::Normal] {
        let mut shape_best: Option<(Mix, f64)> = None;
        let jitter = match dist {
            JitterDistribution::Uniform => iqr,
            JitterDistribution::Normal => iqr / 1.349,
        }
        .max(0.01);
        let reach = match dist {
            JitterDistribution::Uniform => 1.15 * jitter,
            JitterDistribution::Normal => 3.5 * jitter,
        };
        let beyond: Vec<f64> = ms.iter().copied().filter(|v| *v > median + reach).collect();
        let (held, hold) = if beyond.len() as f64 > 0.002 * n {
            (beyond.len() as f64 / n, quantile_sorted(&beyond, 0.5) - median)
        } else {
            (0.002, 2.0 * reach)
        };
        // From what lies beyond the body, and from a few held at two and four times its reach.
        for (held, hold) in [(held, hold), (0.01, 2.0 * reach), (0.05, 4.0 * reach)] {
            let start = Mix { latency: median, jitter, held: held.min(0.45), hold: hold.max(0.1) };
            let (m, ks) = fit_shape(&ms, dist, start);
            if shape_best.is_none_or(|(_, b)| ks < b) {
                shape_best = Some((m, ks));
            }
        }
        // The shape alone, unless the delays refuse it or the hold stands apart from it: two
        // overlapping copies of one shape fit any sample a little better than one (normal
        // jitter was fitted as two normals 8 ms apart, 41 % "held"), and that gain is noise.
        let (m, ks) = shape_best.expect("three starts");
        let (plain, plain_ks) = fit_plain(&ms, dist, median, jitter);
        let (m, ks) = if ks_rejects(plain_ks, ms.len()) || (m.held >= 0.001 && hold_is_apart(dist, m)) {
            (m, ks)
        } else {
            (plain, plain_ks)
        };
        if best.is_none_or(|(_, _, b)| ks < b) {
            best = Some((dist, m, ks));
        }
    }
    let (dist, m, _) = best.expect("two shapes");
    out.distribution = dist;
    out.latency_ms = m.latency;
    out.jitter_ms = m.jitter;
    // A share of held packets under one in a thousand is noise of the fit, not a hold; so is a
    // hold no delays show (`hold_is_seen`).
    if m.held >= 0.001 && m.hold > 0.05 && hold_is_seen(&ms, dist, m) {
        out.reorder_percent = 100.0 * m.held;
        out.reorder_delay_ms = m.hold;
    }
    // Would independent jitter of this size have swapped more packets than the capture shows?
    let j = m.jitter;
    out.expected_swaps = gaps_us
        .iter()
        .map(|g| {
            let g = g / 1000.0;
            match dist {
                JitterDistribution::Uniform if g < 2.0 * j => (2.0 * j - g).powi(2) / (8.0 * j * j),
                JitterDistribution::Uniform => 0.0,
                JitterDistribution::Normal => 1.0 - normal_cdf(g / (j * 2f64.sqrt())),
            }
        })
        .sum();
    let by_holds = m.held * n;
    if out.expected_swaps >= 10.0 && (swaps as f64) < by_holds + 0.25 * out.expected_swaps {
        out.jitter_reorders = false;
        // The path's spread, from the delays that were not held.
        let cut = if out.reorder_percent > 0.0 { m.latency + m.hold / 2.0 } else { f64::INFINITY };
        let core: Vec<f64> = ms.iter().copied().filter(|v| *v < cut).collect();
        let mean = core.iter().sum::<f64>() / core.len() as f64;
        let sd = (core.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / core.len() as f64).sqrt();
        out.latency_ms = mean;
        out.jitter_ms = fifo_jitter(sd, dist);
    }
    out
}

/// Whether the delays show the fitted hold: beyond `latency + hold` (the held packets' median)
/// the mixture puts `(1 - held) x tail + held / 2` of the packets and the shape alone `tail`; the
/// hold is kept when the count seen there is nearer the first.
///
/// The minimum-distance fit can park a small held share beyond the largest delay, where it costs
/// the distance almost nothing: a capture with no reordering was fitted 0.2 % held (the starting
/// share) with a hold past every delay. No delay lies there, so the count says no hold.
fn hold_is_seen(sorted_ms: &[f64], dist: JitterDistribution, m: Mix) -> bool {
    let n = sorted_ms.len() as f64;
    let at = m.latency + m.hold;
    let tail = 1.0 - shape_cdf(dist, m.latency, m.jitter, at);
    let with_hold = n * ((1.0 - m.held) * tail + m.held / 2.0);
    let without = n * tail;
    let seen = sorted_ms.iter().filter(|v| **v > at).count() as f64;
    (seen - with_hold).abs() < (seen - without).abs()
}

/// The jitter of a FIFO path with spread `sd` under `dist` (module doc).
pub fn fifo_jitter(sd: f64, dist: JitterDistribution) -> f64 {
    match dist {
        JitterDistribution::Uniform => sd / (2.0f64 / 9.0).sqrt(),
        JitterDistribution::Normal => sd / (2.0f64 / 3.0).sqrt(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        move || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Delays of `n` packets under a uniform or normal jitter with holds; no swaps observed.
    fn delays(dist: JitterDistribution, latency: f64, jitter: f64, held: f64, hold: f64, n: usize) -> Vec<f64> {
        delays_seeded(7, dist, latency, jitter, held, hold, n)
    }

    fn delays_seeded(
        seed: u64,
        dist: JitterDistribution,
        latency: f64,
        jitter: f64,
        held: f64,
        hold: f64,
        n: usize,
    ) -> Vec<f64> {
        let mut u = lcg(seed);
        (0..n)
            .map(|_| {
                let j = match dist {
                    JitterDistribution::Uniform => (u() * 2.0 - 1.0) * jitter,
                    JitterDistribution::Normal => {
                        (-2.0 * (1.0 - u()).ln()).sqrt() * (std::f64::consts::TAU * u()).cos() * jitter
                    }
                };
                let h = if u() < held { hold } else { 0.0 };
                ((latency + j).max(0.0) + h) * 1000.0
            })
            .collect()
    }

    #[test]
    fn each_shape_is_fitted_back_with_its_hold() {
        for (dist, jitter) in [(JitterDistribution::Uniform, 20.0), (JitterDistribution::Normal, 8.0)] {
            let d = delays(dist, 80.0, jitter, 0.05, 60.0, 20_000);
            let fit = fit(&d, &[], &[]);
            assert_eq!(fit.distribution, dist, "{fit:?}");
            assert!((fit.latency_ms - 80.0).abs() < 1.0, "{fit:?}");
            assert!((fit.jitter_ms - jitter).abs() < 0.05 * jitter, "{fit:?}");
            assert!((fit.reorder_percent - 5.0).abs() < 1.0, "{fit:?}");
            assert!((fit.reorder_delay_ms - 60.0).abs() < 6.0, "{fit:?}");
        }
    }

    /// The bug behind README's 0.20 %: a held share parked past every delay was reported. And
    /// normal jitter without holds was fitted as two overlapping normals (seed 1, 2262 delays:
    /// 41 % "held" 8.3 ms later, jitter 6.7 ms for 8): a hold is now kept only when the shape
    /// alone is refused by the delays or the hold stands apart from it.
    #[test]
    fn jitter_without_holds_fits_no_reorder() {
        for seed in 1..=12 {
            for (dist, jitter) in [(JitterDistribution::Uniform, 20.0), (JitterDistribution::Normal, 8.0)] {
                for n in [500, 2262, 10_000] {
                    let d = delays_seeded(seed, dist, 60.0, jitter, 0.0, 0.0, n);
                    let fit = fit(&d, &[], &[]);
                    assert_eq!(fit.reorder_percent, 0.0, "seed {seed}, {dist:?}, {n} delays: {fit:?}");
                    assert_eq!(fit.distribution, dist, "seed {seed}, {n} delays: {fit:?}");
                    assert!((fit.jitter_ms - jitter).abs() < 0.1 * jitter, "seed {seed}: {fit:?}");
                }
            }
        }
    }

    #[test]
    fn one_delay_is_no_jitter_and_the_rest_is_the_hold() {
        let mut d = vec![50_000.0; 1000];
        d.extend([80_000.0; 30]);
        let fit = fit(&d, &[], &[]);
        assert_eq!((fit.latency_ms, fit.jitter_ms), (50.0, 0.0));
        assert!((fit.reorder_percent - 100.0 * 30.0 / 1030.0).abs() < 1e-9);
        assert_eq!(fit.reorder_delay_ms, 30.0);
    }

    #[test]
    fn no_swaps_where_jitter_would_swap_many_is_a_fifo_path() {
        let d = delays(JitterDistribution::Uniform, 80.0, 20.0, 0.0, 0.0, 5000);
        let gaps = vec![16_667.0; d.len() - 1];
        let swapped = vec![false; gaps.len()];
        let fit = fit(&d, &gaps, &swapped);
        assert!(!fit.jitter_reorders && fit.expected_swaps > 100.0, "{fit:?}");
        let swapped: Vec<bool> = (0..gaps.len()).map(|i| i % 6 == 0).collect();
        assert!(super::fit(&d, &gaps, &swapped).jitter_reorders, "swaps as jitter makes them");
    }
}
