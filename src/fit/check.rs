//! How well a fitted link imitates the capture: the fitted link simulated over the capture's own
//! send times and sizes with several seeds, and the capture's delay distribution and
//! burst-length histogram set against each seed's, with the Kolmogorov-Smirnov distance for
//! each. Two seeds of the model differ from each other too: their mean distance, printed beside,
//! is how close a capture of the model itself would come.

use ackscope_protocol::{Dir, EventKind, Link, LinkConfig, SimTime};

use super::stats::{ks_sorted, quantile_sorted, sorted};

/// The resolution delays are compared at (µs). A link without jitter gives thousands of packets
/// one delay each; a model whose queue rounds a transmission time one microsecond the other way
/// (a fitted 93.0004 kbps for 93) gives them the next microsecond, and the Kolmogorov-Smirnov
/// distance, blind to how far apart two values are, called that 0.19-0.25 between identical
/// quantiles. No capture's clock tells such a difference from the path's own noise.
pub const DELAY_RESOLUTION_US: u64 = 100;

/// What a link did to a run of packets, as the check compares it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// First copies' delays, ms, sorted, to [`DELAY_RESOLUTION_US`].
    pub delays_ms: Vec<f64>,
    /// Lengths of the runs of consecutive lost packets (in send order), sorted.
    pub bursts: Vec<f64>,
    pub lost: u64,
    pub duplicated: u64,
}

impl Outcome {
    /// From each packet's fate in send order: `None` lost, else the first copy's delay (µs)
    /// and the number of copies.
    pub fn new(fates: impl IntoIterator<Item = Option<(f64, u32)>>) -> Self {
        let mut o = Outcome::default();
        let mut run = 0u64;
        for f in fates {
            match f {
                None => {
                    o.lost += 1;
                    run += 1;
                }
                Some((delay_us, copies)) => {
                    if run > 0 {
                        o.bursts.push(run as f64);
                    }
                    run = 0;
                    let step = DELAY_RESOLUTION_US as f64;
                    o.delays_ms.push((delay_us / step).round() * step / 1000.0);
                    o.duplicated += u64::from(copies > 1);
                }
            }
        }
        if run > 0 {
            o.bursts.push(run as f64);
        }
        o.delays_ms = sorted(&o.delays_ms);
        o.bursts = sorted(&o.bursts);
        o
    }
}

/// The fitted link `config` of `dir` with `seed` over packets sent at `sends` (µs, bytes).
pub fn simulate(dir: Dir, config: LinkConfig, seed: u64, sends: &[(u64, u32)]) -> Outcome {
    let mut link = Link::new(dir, config, seed);
    let mut fates: Vec<Option<(f64, u32)>> = vec![None; sends.len()];
    let mut events = Vec::new();
    let take = |events: &mut Vec<ackscope_protocol::Event>, fates: &mut Vec<Option<(f64, u32)>>| {
        for e in events.drain(..) {
            if let EventKind::LinkDelivered { uid, delay_us, .. } = e.kind {
                let f = &mut fates[uid as usize];
                match f {
                    Some((_, copies)) => *copies += 1,
                    None => *f = Some((f64::from(delay_us), 1)),
                }
            }
        }
    };
    for (i, (t, bytes)) in sends.iter().enumerate() {
        while link.pop_due(SimTime(*t), &mut events).is_some() {}
        link.send(SimTime(*t), i as u64, vec![0; *bytes as usize], &mut events);
        take(&mut events, &mut fates);
    }
    while link.pop_due(SimTime(u64::MAX), &mut events).is_some() {}
    take(&mut events, &mut fates);
    Outcome::new(fates)
}

/// The KS distance between two outcomes' delay distributions.
pub fn ks_of(a: &Outcome, b: &Outcome) -> f64 {
    ks_sorted(&a.delays_ms, &b.delays_ms)
}

/// Burst-length histogram buckets: 1, 2, 3, 4, 5, 6-10, 11-20, over 20 packets.
pub const BUCKETS: [&str; 8] = ["1", "2", "3", "4", "5", "6-10", "11-20", ">20"];

fn bucket(len: f64) -> usize {
    match len as u64 {
        0..=5 => (len as usize).max(1) - 1,
        6..=10 => 5,
        11..=20 => 6,
        _ => 7,
    }
}

pub fn histogram(bursts: &[f64]) -> [u64; 8] {
    let mut h = [0u64; 8];
    for b in bursts {
        h[bucket(*b)] += 1;
    }
    h
}

/// The delay quantiles reported: 1, 10, 50, 90 and 99 %.
pub const QUANTILES: [f64; 5] = [0.01, 0.10, 0.50, 0.90, 0.99];

/// The capture against the model's seeds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Check {
    pub seeds: u32,
    /// Per seed: KS distance of the delay distributions and of the burst lengths.
    pub delay_ks: Vec<f64>,
    pub burst_ks: Vec<f64>,
    /// Mean KS distance between consecutive seeds of the model: the distance sampling alone gives.
    pub delay_ks_model: f64,
    pub burst_ks_model: f64,
    pub capture_delay_ms: [f64; 5],
    /// Median over seeds of each quantile.
    pub model_delay_ms: [f64; 5],
    pub capture_bursts: [u64; 8],
    /// Mean over seeds of each bucket.
    pub model_bursts: [f64; 8],
    pub capture_lost: u64,
    pub model_lost: f64,
    pub capture_duplicated: u64,
    pub model_duplicated: f64,
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Simulates `config` over `sends` with seeds 1..=`seeds` and sets each against `capture`.
pub fn check(dir: Dir, config: LinkConfig, sends: &[(u64, u32)], capture: &Outcome, seeds: u32) -> Check {
    let runs: Vec<Outcome> = (1..=u64::from(seeds)).map(|s| simulate(dir, config, s, sends)).collect();
    let mut c = Check {
        seeds,
        capture_delay_ms: QUANTILES.map(|q| quantile_sorted(&capture.delays_ms, q)),
        capture_bursts: histogram(&capture.bursts),
        capture_lost: capture.lost,
        capture_duplicated: capture.duplicated,
        ..Default::default()
    };
    for r in &runs {
        c.delay_ks.push(ks_sorted(&capture.delays_ms, &r.delays_ms));
        c.burst_ks.push(ks_sorted(&capture.bursts, &r.bursts));
    }
    let pairs: Vec<(&Outcome, &Outcome)> = runs.iter().zip(runs.iter().skip(1)).collect();
    c.delay_ks_model = mean(&pairs.iter().map(|(a, b)| ks_sorted(&a.delays_ms, &b.delays_ms)).collect::<Vec<_>>());
    c.burst_ks_model = mean(&pairs.iter().map(|(a, b)| ks_sorted(&a.bursts, &b.bursts)).collect::<Vec<_>>());
    for (i, q) in QUANTILES.iter().enumerate() {
        let per_seed = sorted(&runs.iter().map(|r| quantile_sorted(&r.delays_ms, *q)).collect::<Vec<_>>());
        c.model_delay_ms[i] = quantile_sorted(&per_seed, 0.5);
    }
    for r in &runs {
        for (i, n) in histogram(&r.bursts).iter().enumerate() {
            c.model_bursts[i] += *n as f64 / runs.len().max(1) as f64;
        }
    }
    c.model_lost = mean(&runs.iter().map(|r| r.lost as f64).collect::<Vec<_>>());
    c.model_duplicated = mean(&runs.iter().map(|r| r.duplicated as f64).collect::<Vec<_>>());
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_set_against_its_own_simulation_is_close_and_against_another_is_not() {
        let cfg = LinkConfig { loss_percent: 5.0, jitter_ms: 10.0, ..LinkConfig::default() };
        let sends: Vec<(u64, u32)> = (0..6000u64).map(|i| (i * 16_667, 100)).collect();
        let own = simulate(Dir::AtoB, cfg, 99, &sends);
        let c = check(Dir::AtoB, cfg, &sends, &own, 4);
        assert!(c.delay_ks.iter().all(|d| *d < 0.05), "{c:?}");
        assert!(c.burst_ks.iter().all(|d| *d < 0.1), "{c:?}");
        let other = simulate(Dir::AtoB, LinkConfig { latency_ms: 60.0, ..cfg }, 99, &sends);
        let c = check(Dir::AtoB, cfg, &sends, &other, 2);
        assert!(c.delay_ks.iter().all(|d| *d > 0.3), "{c:?}");
    }

    #[test]
    fn bursts_are_runs_of_losses_in_send_order() {
        let o = Outcome::new([None, Some((1.0, 1)), None, None, Some((2.0, 2)), None]);
        assert_eq!(o.bursts, [1.0, 1.0, 2.0]);
        assert_eq!((o.lost, o.duplicated), (4, 1));
        assert_eq!(histogram(&[1.0, 7.0, 30.0, 20.0]), [1, 0, 0, 0, 0, 1, 1, 1]);
    }
}
