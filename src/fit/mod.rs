//! Links from captures: a recorded link replayed exactly (`link.trace`, [`links`]) or imitated by
//! a fitted model (`ackscope fit`, this module).
//!
//! The fit takes a capture's per-packet link records ([`crate::capture::records`]) and estimates,
//! per direction, every setting of the link in its own units, in the order the link applies them:
//!
//! 1. **MTU**: when every datagram larger than the largest delivered one was dropped (three at
//!    least), the MTU is the largest delivered plus 28 bytes and those drops are its.
//! 2. **Rate cap** ([`rate`]): the bandwidth and queue whose queue explains the delays best, if
//!    the capture shows one; its tail drops and waits are taken off before the next steps.
//! 3. **Loss** ([`loss`]): independent loss and Gilbert-Elliott bursts on the link's 1 ms grid, by
//!    maximum likelihood (the two-state hidden Markov model the link is: [`hmm`]), bursts kept
//!    only on clear evidence.
//! 4. **Duplicates**: the share of delivered datagrams that arrived more than once.
//! 5. **Delay** ([`delay`]): latency, jitter (uniform or normal), the reorder hold and its share,
//!    and whether jitter reorders (a FIFO link's path is told apart by the swaps it never makes).
//!
//! Then [`check`] simulates the fitted link over the capture's own send times with 10 seeds and
//! sets its delay distribution and burst lengths against the capture's, with their
//! Kolmogorov-Smirnov distances, so the user sees whether the model can be trusted.

pub mod check;
pub mod delay;
pub mod hmm;
pub mod links;
pub mod loss;
pub mod rate;
pub mod report;
pub mod stats;

use ackscope_protocol::{BurstLoss, Dir, JitterDistribution, LinkConfig, TraceFate, IP_UDP_OVERHEAD_BYTES};

use crate::capture::records::{LinkRecords, RecordsInfo};
use check::{Check, Outcome};
use delay::DelayFit;
use loss::{LossFit, LossObs};
use rate::{RateFit, RateObs};

/// Seeds the check simulates by default.
pub const CHECK_SEEDS: u32 = 10;

/// Fewest datagrams with a known fate a direction needs to be fitted.
pub const MIN_PACKETS: usize = 20;

/// What a direction's records held.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Counts {
    /// Datagrams with a known fate (the fit's input).
    pub packets: u64,
    pub delivered: u64,
    pub dropped: u64,
    /// Delivered more than once.
    pub duplicated: u64,
    /// Of unknown fate (left out).
    pub unknown: u64,
    /// Dropped for their size (MTU) and by the fitted queue.
    pub mtu_dropped: u64,
    pub queue_dropped: u64,
    /// Seconds from the first send to the last.
    pub span_s: f64,
}

/// One direction's fit.
#[derive(Debug, Clone, PartialEq)]
pub struct DirFit {
    pub dir: Dir,
    pub counts: Counts,
    /// The fitted link, ready to run.
    pub link: LinkConfig,
    pub loss: LossFit,
    pub delay: DelayFit,
    /// The rate fit's spreads (its per-packet waits are not kept).
    pub rate_spread_ms: (f64, f64),
    /// Whether the capture showed the queue's size (it overflowed): [`RateFit::queue_measured`].
    pub queue_measured: bool,
    pub check: Check,
}

/// A capture's fit: both directions (a direction without enough records is `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub source: String,
    pub info: RecordsInfo,
    pub dirs: [Option<DirFit>; 2],
}

/// One datagram with a known fate.
struct Obs {
    sent_us: u64,
    bytes: u32,
    /// First copy's delay (µs) and copies; `None` dropped.
    delivered: Option<(u32, u32)>,
}

/// Fits both directions of `records`, checking each against `seeds` simulations.
pub fn fit(records: &LinkRecords, seeds: u32) -> Fit {
    // The directions are independent: each on its own thread (the same results, in half the
    // time on two cores).
    let [ab, ba] = std::thread::scope(|scope| {
        let ab = scope.spawn(|| fit_dir(records, Dir::AtoB, seeds));
        let ba = fit_dir(records, Dir::BtoA, seeds);
        [ab.join().expect("the A->B fit does not panic"), ba]
    });
    let dirs = [ab, ba];
    Fit { source: records.trace.source.clone(), info: records.info.clone(), dirs }
}

fn fit_dir(records: &LinkRecords, dir: Dir, seeds: u32) -> Option<DirFit> {
    let trace = records.trace.dir(dir);
    let mut counts = Counts::default();
    let mut obs: Vec<Obs> = Vec::with_capacity(trace.len());
    for p in trace.iter() {
        let delivered = match p.fate {
            TraceFate::Unknown => {
                counts.unknown += 1;
                continue;
            }
            TraceFate::Dropped(_) => None,
            TraceFate::Delivered(copies) => Some((copies[0], copies.len() as u32)),
        };
        obs.push(Obs { sent_us: p.sent.0, bytes: p.bytes, delivered });
    }
    if obs.len() < MIN_PACKETS {
        return None;
    }
    counts.packets = obs.len() as u64;
    counts.delivered = obs.iter().filter(|o| o.delivered.is_some()).count() as u64;
    counts.dropped = counts.packets - counts.delivered;
    counts.duplicated = obs.iter().filter(|o| o.delivered.is_some_and(|(_, c)| c > 1)).count() as u64;
    counts.span_s = (obs[obs.len() - 1].sent_us - obs[0].sent_us) as f64 / 1e6;
    let mut link = LinkConfig::default();

    // 1. MTU.
    let largest = obs.iter().filter(|o| o.delivered.is_some()).map(|o| o.bytes).max().unwrap_or(0);
    let too_large = |o: &Obs| o.bytes > largest;
    counts.mtu_dropped = obs.iter().filter(|o| too_large(o)).count() as u64;
    if counts.mtu_dropped >= 3 {
        link.mtu_bytes = (largest + IP_UDP_OVERHEAD_BYTES).clamp(200, 9000);
    } else {
        counts.mtu_dropped = 0;
        link.mtu_bytes = (largest + IP_UDP_OVERHEAD_BYTES).clamp(1500, 9000);
    }
    let mtu_ok: Vec<&Obs> = obs.iter().filter(|o| counts.mtu_dropped == 0 || !too_large(o)).collect();

    // 2. Rate cap.
    let rate_obs: Vec<RateObs> = mtu_ok
        .iter()
        .map(|o| RateObs {
            sent_us: o.sent_us,
            wire_bytes: o.bytes + IP_UDP_OVERHEAD_BYTES,
            delay_us: o.delivered.map(|(d, _)| f64::from(d)),
        })
        .collect();
    let rate: RateFit = rate::fit(&rate_obs);
    link.bandwidth_kbps = rate.bandwidth_kbps;
    link.queue_bytes = rate.queue_bytes;
    counts.queue_dropped =
        mtu_ok.iter().zip(&rate.queue_dropped).filter(|(o, q)| **q && o.delivered.is_none()).count() as u64;

    // 3. Loss, over what the queue let through.
    let loss_obs: Vec<LossObs> = mtu_ok
        .iter()
        .zip(&rate.queue_dropped)
        .filter(|(o, q)| !(**q && o.delivered.is_none()))
        .map(|(o, _)| LossObs { step: o.sent_us / 1000, lost: o.delivered.is_none() })
        .collect();
    let loss = loss::fit(&loss_obs);
    link.loss_percent = loss.loss_percent;
    link.burst = BurstLoss {
        p_percent: loss.p_percent,
        r_percent: loss.r_percent.clamp(0.1, 100.0),
        loss_in_bad_percent: loss.loss_in_bad_percent,
    };

    // 4. Duplicates.
    link.duplicate_percent = (100.0 * counts.duplicated as f64 / counts.delivered.max(1) as f64).min(50.0);

    // 5. Delay, after the queue's waits.
    let mut residual = Vec::new();
    let mut departures = Vec::new();
    let mut arrivals = Vec::new();
    for (o, w) in mtu_ok.iter().zip(&rate.wait_us) {
        if let Some((d, _)) = o.delivered {
            residual.push(f64::from(d) - w);
            departures.push(o.sent_us as f64 + w);
            arrivals.push(o.sent_us + u64::from(d));
        }
    }
    let gaps: Vec<f64> = departures.windows(2).map(|w| w[1] - w[0]).collect();
    let swapped: Vec<bool> = arrivals.windows(2).map(|w| w[1] < w[0]).collect();
    let mut delay = delay::fit(&residual, &gaps, &swapped);
    apply_delay(&mut link, &delay);

    let sends: Vec<(u64, u32)> = obs.iter().map(|o| (o.sent_us, o.bytes)).collect();
    let capture = Outcome::new(obs.iter().map(|o| o.delivered.map(|(d, c)| (f64::from(d), c))));
    if !delay.jitter_reorders {
        // A FIFO path's shape: the one whose simulation is nearer the capture's delays.
        let sd_of = |d: &DelayFit| match d.distribution {
            JitterDistribution::Uniform => d.jitter_ms * (2.0f64 / 9.0).sqrt(),
            JitterDistribution::Normal => d.jitter_ms * (2.0f64 / 3.0).sqrt(),
        };
        let sd = sd_of(&delay);
        let mut best: Option<(f64, DelayFit)> = None;
        for dist in [JitterDistribution::Uniform, JitterDistribution::Normal] {
            let d = DelayFit { distribution: dist, jitter_ms: delay::fifo_jitter(sd, dist), ..delay };
            let mut l = link;
            apply_delay(&mut l, &d);
            let ks = check::ks_of(&check::simulate(dir, l, 1, &sends), &capture);
            if best.as_ref().is_none_or(|(b, _)| ks < *b) {
                best = Some((ks, d));
            }
        }
        delay = best.expect("two shapes").1;
        apply_delay(&mut link, &delay);
    }
    let check = check::check(dir, link, &sends, &capture, seeds);
    Some(DirFit {
        dir,
        counts,
        link,
        loss,
        delay,
        rate_spread_ms: (rate.spread_uncapped_ms, rate.spread_capped_ms),
        queue_measured: rate.queue_measured,
        check,
    })
}

fn apply_delay(link: &mut LinkConfig, d: &DelayFit) {
    link.latency_ms = d.latency_ms.clamp(0.0, 1000.0);
    link.jitter_ms = d.jitter_ms.clamp(0.0, 500.0);
    link.jitter_distribution = d.distribution;
    link.jitter_reorders = d.jitter_reorders;
    link.reorder_percent = d.reorder_percent.clamp(0.0, 50.0);
    link.reorder_delay_ms = d.reorder_delay_ms.clamp(0.0, 1000.0);
}
