//! A rate cap, when the capture shows one: the bandwidth and queue size whose queue explains the
//! delays best.
//!
//! The link serialises every packet it does not drop for its MTU through a transmitter of
//! `bandwidth_kbps` (28 bytes of IP+UDP counted) behind a queue that tail-drops a packet which
//! would take the backlog past `queue_bytes`; the departure is when its transmission ends, and
//! latency, jitter and a reorder hold come after it. [`queue`] replays exactly that over the
//! capture's own send times and sizes. For a candidate bandwidth, the queue size is the smallest
//! one no delivered packet would have been tail-dropped by (found by iterating: a smaller queue
//! drops more, which shortens the backlog the others saw), and what is left of each delivered
//! packet's delay after its simulated wait should be latency plus jitter alone. The bandwidth is
//! the one that leaves the least spread (median absolute deviation, which the few reordered
//! packets do not move): a log-spaced scan from the delivered throughput to the table's 10,000
//! kbps, refined by golden-section search. A cap is reported only when it takes at least 30 % and
//! 0.2 ms off the spread of the delays taken as they are; otherwise the capture shows none.

use super::stats::mad;

/// One packet for the rate fit, in send order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateObs {
    pub sent_us: u64,
    /// Payload + 28 bytes of IP and UDP headers.
    pub wire_bytes: u32,
    /// The first copy's delay, `None` when it was dropped.
    pub delay_us: Option<f64>,
}

/// The fitted cap, and what its queue did to each packet.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RateFit {
    /// 0 when the capture shows no cap.
    pub bandwidth_kbps: f64,
    pub queue_bytes: u32,
    /// True when the queue overflowed in the capture, so its size was measured; otherwise
    /// `queue_bytes` is only a size big enough for the backlog seen (the link's default or the
    /// backlog, if larger): any larger queue fits the capture as well.
    pub queue_measured: bool,
    /// Per packet: the wait before it left the transmitter (0 without a cap), µs.
    pub wait_us: Vec<f64>,
    /// Per packet: whether the queue would have tail-dropped it.
    pub queue_dropped: Vec<bool>,
    /// The delays' spread (median absolute deviation, ms) as they are, and after the waits.
    pub spread_uncapped_ms: f64,
    pub spread_capped_ms: f64,
}

/// Largest bandwidth and queue the link takes (its parameter table).
const MAX_KBPS: f64 = 10_000.0;
const MIN_QUEUE_BYTES: f64 = 1500.0;
const MAX_QUEUE_BYTES: f64 = 1_000_000.0;

/// The link's queue over `obs` at `kbps` with `queue_bytes`: each packet's wait (µs), whether it
/// was tail-dropped, and the backlog plus its own size it met (bytes).
pub fn queue(obs: &[RateObs], kbps: f64, queue_bytes: f64) -> (Vec<f64>, Vec<bool>, Vec<f64>) {
    let mut busy_until = 0u64;
    let (mut wait, mut dropped, mut need) =
        (Vec::with_capacity(obs.len()), Vec::with_capacity(obs.len()), Vec::with_capacity(obs.len()));
    for o in obs {
        // As `Link::send`: the backlog in bytes at this rate, the transmission rounded to µs.
        let start = busy_until.max(o.sent_us);
        let backlog_bytes = (start - o.sent_us) as f64 * kbps / 8000.0;
        let n = backlog_bytes + f64::from(o.wire_bytes);
        need.push(n);
        if n > queue_bytes {
            wait.push(0.0);
            dropped.push(true);
            continue;
        }
        let tx_us = (f64::from(o.wire_bytes) * 8000.0 / kbps).round() as u64;
        busy_until = start + tx_us;
        wait.push((busy_until - o.sent_us) as f64);
        dropped.push(false);
    }
    (wait, dropped, need)
}

/// How far the delays after the waits at `kbps` with `queue_bytes` are from one value: their
/// median absolute deviation (ms), plus 1 ms for each 0.1 % of delivered packets the queue would
/// have dropped (none may be: they arrived).
fn objective(obs: &[RateObs], kbps: f64, queue_bytes: f64) -> f64 {
    let (wait, dropped, _) = queue(obs, kbps, queue_bytes);
    let mut contradictions = 0usize;
    let mut residual: Vec<f64> = Vec::with_capacity(obs.len());
    for (o, (w, d)) in obs.iter().zip(wait.iter().zip(&dropped)) {
        match (o.delay_us, d) {
            (Some(_), true) => contradictions += 1,
            (Some(delay), false) => residual.push(delay - w),
            (None, _) => {}
        }
    }
    let delivered = (residual.len() + contradictions).max(1) as f64;
    mad(&mut residual) / 1000.0 + 1000.0 * contradictions as f64 / delivered
}

/// Golden-section search for the minimum of `f` on `[lo, hi]`: the point and its value.
fn golden(mut lo: f64, mut hi: f64, iterations: usize, f: &mut dyn FnMut(f64) -> f64) -> (f64, f64) {
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut x1, mut x2) = (hi - g * (hi - lo), lo + g * (hi - lo));
    let (mut f1, mut f2) = (f(x1), f(x2));
    for _ in 0..iterations {
        if f1 <= f2 {
            hi = x2;
            (x2, f2) = (x1, f1);
            x1 = hi - g * (hi - lo);
            f1 = f(x1);
        } else {
            lo = x1;
            (x1, f1) = (x2, f2);
            x2 = lo + g * (hi - lo);
            f2 = f(x2);
        }
    }
    if f1 <= f2 {
        (x1, f1)
    } else {
        (x2, f2)
    }
}

/// The best queue size at `kbps` and its objective: the smallest queue no delivered packet would
/// have been tail-dropped by, or no limit, when that explains the delays better. The smallest is
/// found by climbing from the largest packet: each round raises the queue to the backlog the
/// first delivered packet it would drop met. (A larger queue is not always safer: it admits
/// packets the capture lost, whose backlog then drops later ones, so no bisection.)
fn best_queue(obs: &[RateObs], kbps: f64) -> (f64, f64) {
    let unlimited = (UNLIMITED, objective(obs, kbps, UNLIMITED));
    let mut q = obs.iter().map(|o| f64::from(o.wire_bytes)).fold(MIN_QUEUE_BYTES, f64::max);
    for _ in 0..256 {
        match first_contradiction(obs, kbps, q) {
            None => {
                let limited = (q, objective(obs, kbps, q));
                return if unlimited.1 <= limited.1 { unlimited } else { limited };
            }
            Some(need) if need > MAX_QUEUE_BYTES => break,
            Some(need) => q = need,
        }
    }
    unlimited
}

/// The backlog (plus its own size) met by the first delivered packet the queue at `kbps` with
/// `queue_bytes` would tail-drop, if any (as [`queue`], stopping there).
fn first_contradiction(obs: &[RateObs], kbps: f64, queue_bytes: f64) -> Option<f64> {
    let mut busy_until = 0u64;
    for o in obs {
        let start = busy_until.max(o.sent_us);
        let n = (start - o.sent_us) as f64 * kbps / 8000.0 + f64::from(o.wire_bytes);
        if n > queue_bytes {
            if o.delay_us.is_some() {
                return Some(n);
            }
            continue;
        }
        busy_until = start + (f64::from(o.wire_bytes) * 8000.0 / kbps).round() as u64;
    }
    None
}

/// The rate consecutive delivered packets left a busy transmitter at: when the second waited
/// (its delay more than 1 ms above the lowest) and arrived sooner after the first than it was
/// sent, their arrival gap is its transmission time; the median of its size over that gap.
fn backlogged_rate(obs: &[RateObs], lowest_us: f64) -> Option<f64> {
    let delivered: Vec<(f64, f64, f64)> =
        obs.iter().filter_map(|o| o.delay_us.map(|d| (o.sent_us as f64, d, f64::from(o.wire_bytes)))).collect();
    let mut rates: Vec<f64> = delivered
        .windows(2)
        .filter_map(|w| {
            let (s0, d0, _) = w[0];
            let (s1, d1, bytes) = w[1];
            let gap = (s1 + d1) - (s0 + d0);
            (d1 > lowest_us + 1000.0 && gap > 0.0 && gap < s1 - s0).then(|| bytes * 8000.0 / gap)
        })
        .collect();
    if rates.len() < 10 {
        return None;
    }
    rates.sort_by(f64::total_cmp);
    Some(rates[rates.len() / 2])
}

/// A queue no capture fills.
const UNLIMITED: f64 = 1e12;

/// Fits the cap (module doc).
pub fn fit(obs: &[RateObs]) -> RateFit {
    let mut delays: Vec<f64> = obs.iter().filter_map(|o| o.delay_us).collect();
    let uncapped = mad(&mut delays) / 1000.0;
    let none = || RateFit {
        bandwidth_kbps: 0.0,
        queue_bytes: 64 * 1024,
        queue_measured: false,
        wait_us: vec![0.0; obs.len()],
        queue_dropped: vec![false; obs.len()],
        spread_uncapped_ms: uncapped,
        spread_capped_ms: uncapped,
    };
    let (Some(first), Some(last)) = (obs.first(), obs.last()) else { return none() };
    let span_s = (last.sent_us.saturating_sub(first.sent_us)) as f64 / 1e6;
    if obs.len() < 20 || span_s <= 0.0 {
        return none();
    }
    let delivered_bits: f64 = obs.iter().filter(|o| o.delay_us.is_some()).map(|o| f64::from(o.wire_bytes) * 8.0).sum();
    let low = (delivered_bits / span_s / 1000.0 * 0.9).clamp(1.0, MAX_KBPS);
    let lowest = obs.iter().filter_map(|o| o.delay_us).fold(f64::INFINITY, f64::min);
    // A log-spaced scan, then golden-section search around the best point (on log kbps).
    const SCAN: usize = 40;
    let ratio = (MAX_KBPS / low).ln();
    let at = |i: usize| low * (ratio * i as f64 / (SCAN - 1) as f64).exp();
    let scan: Vec<f64> = (0..SCAN).map(|i| best_queue(obs, at(i)).1).collect();
    let best_i = (0..SCAN).min_by(|a, b| scan[*a].total_cmp(&scan[*b])).expect("a scan");
    let (lo, hi) = (at(best_i.saturating_sub(1)).ln(), at((best_i + 1).min(SCAN - 1)).ln());
    let (x, mut capped) = golden(lo, hi, 25, &mut |x| best_queue(obs, x.exp()).1);
    let mut kbps = x.exp();
    if scan[best_i] < capped {
        (kbps, capped) = (at(best_i), scan[best_i]);
    }
    // A saturated queue's optimum is a needle the scan steps over (a little off the rate, the
    // queue drops other packets than the capture's): the rate the backlogged packets' spacing
    // shows, and a fine grid around it.
    if let Some(direct) = backlogged_rate(obs, lowest) {
        for k in -20..=20 {
            let at = direct * (1.0 + f64::from(k) * 0.0025);
            if !(1.0..MAX_KBPS).contains(&at) {
                continue;
            }
            let v = best_queue(obs, at).1;
            if v < capped {
                (kbps, capped) = (at, v);
            }
        }
        let (x, v) = golden((kbps * 0.997).ln(), (kbps * 1.003).ln(), 20, &mut |x| best_queue(obs, x.exp()).1);
        if v < capped {
            (kbps, capped) = (x.exp(), v);
        }
    }
    if !(capped <= 0.7 * uncapped && uncapped - capped >= 0.2) || kbps >= MAX_KBPS * 0.999 {
        return none();
    }
    let (mut queue_bytes, _) = best_queue(obs, kbps);
    let queue_measured = queue_bytes < UNLIMITED;
    if !queue_measured {
        // Nothing overflowed: any queue holding the largest backlog seen fits; the link's default
        // unless that is smaller.
        let (_, _, need) = queue(obs, kbps, UNLIMITED);
        queue_bytes = need.iter().copied().fold(64.0 * 1024.0, f64::max);
    }
    let (wait_us, queue_dropped, _) = queue(obs, kbps, queue_bytes);
    RateFit {
        bandwidth_kbps: kbps,
        queue_bytes: queue_bytes.clamp(MIN_QUEUE_BYTES, MAX_QUEUE_BYTES).round() as u32,
        queue_measured,
        wait_us,
        queue_dropped,
        spread_uncapped_ms: uncapped,
        spread_capped_ms: capped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packets of alternating sizes at `pps` through a cap of `kbps` with `queue` bytes and a
    /// fixed 20 ms latency.
    fn through_cap(pps: u64, kbps: f64, queue_bytes: f64, seconds: u64) -> Vec<RateObs> {
        let mut obs: Vec<RateObs> = (0..pps * seconds)
            .map(|i| RateObs { sent_us: i * 1_000_000 / pps, wire_bytes: 200 + (i % 3) as u32 * 150, delay_us: None })
            .collect();
        let (wait, dropped, _) = queue(&obs, kbps, queue_bytes);
        for (o, (w, d)) in obs.iter_mut().zip(wait.iter().zip(&dropped)) {
            o.delay_us = (!d).then_some(w + 20_000.0);
        }
        obs
    }

    #[test]
    fn a_saturated_cap_and_its_queue_are_found() {
        // 60 packets/s of 350 bytes on average: 168 kbps offered into 120 kbps.
        let obs = through_cap(60, 120.0, 20_000.0, 60);
        assert!(obs.iter().any(|o| o.delay_us.is_none()), "the queue must overflow");
        let fit = fit(&obs);
        assert!((fit.bandwidth_kbps - 120.0).abs() < 1.2, "{}", fit.bandwidth_kbps);
        assert!((f64::from(fit.queue_bytes) - 20_000.0).abs() < 1000.0, "{}", fit.queue_bytes);
        assert!(fit.queue_measured, "the queue overflowed: its size shows");
        assert!(fit.spread_capped_ms < 0.01, "{}", fit.spread_capped_ms);
    }

    #[test]
    fn a_cap_whose_queue_never_overflowed_leaves_the_queue_size_unknown() {
        // 168 kbps offered into 180 kbps: packets wait behind each other, none is dropped.
        let obs = through_cap(60, 180.0, 1e9, 60);
        assert!(obs.iter().all(|o| o.delay_us.is_some()), "nothing overflows");
        let fit = fit(&obs);
        // (Evenly spaced sends let several rates explain the waits: the rate is not the point.)
        assert!(fit.bandwidth_kbps > 0.0, "a cap shows");
        assert!(!fit.queue_measured, "no overflow, no measured queue: {}", fit.queue_bytes);
    }

    #[test]
    fn a_link_without_a_cap_shows_none() {
        let obs: Vec<RateObs> = (0..3000u64)
            .map(|i| RateObs { sent_us: i * 16_667, wire_bytes: 100 + (i % 7) as u32 * 30, delay_us: Some(50_000.0) })
            .collect();
        let fit = fit(&obs);
        assert_eq!(fit.bandwidth_kbps, 0.0);
        assert!(!fit.queue_measured);
    }
}
