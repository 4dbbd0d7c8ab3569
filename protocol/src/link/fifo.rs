//! Jitter that never reorders (`jitter_reorders = false`), as a function of the departure time.
//!
//! A FIFO link cannot deliver a packet before one that left earlier. Holding each packet behind the
//! previous one would make a packet's delay depend on what else was sent (a strategy that sends
//! less would see less queueing), so instead the delay follows one path over time that is the
//! same whoever sends: knots every `2 x span` of virtual time, each with a jitter value drawn from
//! (seed, direction, knot) with the configured distribution (uniform in `[-jitter, +jitter]`;
//! normal with standard deviation `jitter`, clipped to 3 standard deviations), joined by straight
//! lines. Knots `2 x span` apart with values within `span` make the path fall by at most one
//! microsecond per microsecond, so `departure + delay` never decreases: no packet overtakes one
//! that left earlier, and packets leaving together arrive together. The spread between knots is
//! that of a blend of two neighbouring draws (about 0.82 x the configured spread on average).
//! Integer arithmetic keeps the order exact.

use super::config::{JitterDistribution, LinkConfig};
use super::draws::{normal, uniform};
use crate::event::SimTime;

/// How far normal jitter reaches, in standard deviations, on a FIFO link.
const NORMAL_CLIP_SD: f64 = 3.0;

/// When a packet leaving at `depart` arrives on the FIFO link `c` (jitter path drawn from `key`),
/// before any explicit reorder hold.
pub(crate) fn fifo_arrival(key: u64, c: &LinkConfig, depart: SimTime) -> SimTime {
    let base_us = (c.latency_ms.max(0.0) * 1000.0).round() as i64;
    let j_us = c.jitter_ms.max(0.0) * 1000.0;
    let span_us = match c.jitter_distribution {
        JitterDistribution::Uniform => j_us,
        JitterDistribution::Normal => j_us * NORMAL_CLIP_SD,
    }
    .round() as i64;
    let jitter_us = if span_us > 0 {
        let knot_us = 2 * span_us;
        let value = |k: u64| -> i64 {
            let v = match c.jitter_distribution {
                JitterDistribution::Uniform => (uniform(key, 2 * k) * 2.0 - 1.0) * j_us,
                JitterDistribution::Normal => normal(uniform(key, 2 * k), uniform(key, 2 * k + 1)) * j_us,
            };
            (v.round() as i64).clamp(-span_us, span_us)
        };
        let t = depart.0 as i64;
        let k = t / knot_us;
        let (v0, v1) = (value(k as u64), value(k as u64 + 1));
        v0 + ((v1 - v0) * (t - k * knot_us)).div_euclid(knot_us)
    } else {
        0
    };
    depart.plus_micros((base_us + jitter_us).max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_never_decrease_and_spread_like_the_configured_jitter() {
        for dist in [JitterDistribution::Uniform, JitterDistribution::Normal] {
            let c =
                LinkConfig { latency_ms: 30.0, jitter_ms: 10.0, jitter_distribution: dist, ..LinkConfig::default() };
            let mut last = SimTime::ZERO;
            let mut delays = Vec::new();
            for t in (0..60_000_000u64).step_by(97) {
                let at = fifo_arrival(99, &c, SimTime(t));
                assert!(at >= last, "{dist:?}: departure {t} us arrives at {at:?}, before {last:?}");
                last = at;
                delays.push((at.0 - t) as f64 / 1000.0);
            }
            let n = delays.len() as f64;
            let mean = delays.iter().sum::<f64>() / n;
            let sd = (delays.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / n).sqrt();
            assert!((mean - 30.0).abs() < 1.0, "{dist:?}: mean {mean}");
            let expect = match dist {
                JitterDistribution::Uniform => 10.0 / 3f64.sqrt(),
                JitterDistribution::Normal => 10.0,
            } * (2.0f64 / 3.0).sqrt();
            assert!((sd - expect).abs() < 0.15 * expect, "{dist:?}: spread {sd} vs about {expect}");
        }
    }
}
