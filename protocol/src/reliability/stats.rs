//! RTT, loss and bandwidth estimators fed by an endpoint; all plain numbers, never NaN or infinity.

use std::collections::VecDeque;

pub use super::loss::LossWindow;
use serde::{Deserialize, Serialize};

use crate::event::{SimTime, StatsSample};
use crate::link::IP_UDP_OVERHEAD_BYTES;

/// rellikt's low-pass filter, `rtt = math.clamp(deltatime, rtt, 0.8)`: a new sample weighs 0.2.
pub const RELLIKT_SAMPLE_WEIGHT: f64 = 0.2;

/// How the RTT is smoothed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RttFilter {
    /// Exponentially weighted moving average with `rtt_smoothing` (reliable.io).
    #[default]
    Ewma,
    /// rellikt's low-pass filter `rtt = lerp(rtt, sample, 1 - 0.8)`: heavier weight on history.
    Rellikt,
}

/// Estimator settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StatsConfig {
    /// EWMA factor for the smoothed RTT (first sample taken as is). reliable.io: 0.0025.
    pub rtt_smoothing: f64,
    /// EWMA factor for the faster display RTT.
    pub rtt_display_smoothing: f64,
    pub rtt_filter: RttFilter,
    /// EWMA factor for bandwidth figures (reliable.io: 0.1).
    pub bandwidth_smoothing: f64,
    /// RTT samples kept for min / max / jitter.
    pub rtt_window: usize,
    /// Judged packets the loss percentage averages at least (and every packet judged in the last
    /// two seconds, [`LOSS_WINDOW_MS`](super::loss::LOSS_WINDOW_MS); see `reliability::loss`).
    pub loss_window: usize,
    /// A packet without a verdict counts as lost once older than `loss_rtt_factor` x display RTT
    /// + `loss_margin_ms` (or `loss_margin_ms` + 1 s before any RTT sample).
    pub loss_rtt_factor: f64,
    pub loss_margin_ms: f64,
    /// Bandwidth is re-measured over intervals of this length.
    pub bandwidth_interval_ms: f64,
}

impl Default for StatsConfig {
    fn default() -> Self {
        Self {
            rtt_smoothing: 0.0025,
            rtt_display_smoothing: 0.1,
            rtt_filter: RttFilter::Ewma,
            bandwidth_smoothing: 0.1,
            rtt_window: 64,
            loss_window: 256,
            loss_rtt_factor: 2.0,
            loss_margin_ms: 100.0,
            bandwidth_interval_ms: 100.0,
        }
    }
}

fn finite(x: f64) -> f32 {
    if x.is_finite() {
        x as f32
    } else {
        0.0
    }
}

/// Smoothed and windowed RTT.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    config: StatsConfig,
    smoothed_ms: f64,
    display_ms: f64,
    have_sample: bool,
    /// No sample has reached the smoothed RTT yet (the first is taken as is).
    smoothed_unset: bool,
    samples: VecDeque<f32>,
}

impl RttEstimator {
    pub fn new(config: StatsConfig) -> Self {
        Self {
            config,
            smoothed_ms: 0.0,
            display_ms: 0.0,
            have_sample: false,
            smoothed_unset: true,
            samples: VecDeque::new(),
        }
    }

    pub fn set_config(&mut self, config: StatsConfig) {
        self.config = config;
    }

    /// Feeds one sample.
    #[inline]
    pub fn add_sample(&mut self, rtt_ms: f64) {
        if !self.add_display_sample(rtt_ms) {
            return;
        }
        if self.smoothed_unset {
            self.smoothed_ms = rtt_ms;
            self.smoothed_unset = false;
        } else {
            let f = match self.config.rtt_filter {
                RttFilter::Ewma => self.config.rtt_smoothing,
                RttFilter::Rellikt => RELLIKT_SAMPLE_WEIGHT,
            };
            self.smoothed_ms += (rtt_ms - self.smoothed_ms) * f;
        }
        if self.config.rtt_window > 0 {
            if self.samples.len() >= self.config.rtt_window {
                self.samples.pop_front();
            }
            self.samples.push_back(rtt_ms as f32);
        }
    }

    /// Feeds one sample to [`Self::display_ms`] (and [`Self::has_sample`]) only, leaving the
    /// smoothed RTT and the window of samples as they were; returns whether the sample counted
    /// (finite and not negative). For an endpoint whose stats are not read (the display RTT
    /// still steers resends and loss judging): see `AckEndpoint::set_records_stats`.
    #[inline]
    pub fn add_display_sample(&mut self, rtt_ms: f64) -> bool {
        if !rtt_ms.is_finite() || rtt_ms < 0.0 {
            return false;
        }
        if !self.have_sample {
            self.display_ms = rtt_ms;
            self.have_sample = true;
        } else {
            self.display_ms += (rtt_ms - self.display_ms) * self.config.rtt_display_smoothing;
        }
        true
    }

    pub fn has_sample(&self) -> bool {
        self.have_sample
    }
    pub fn smoothed_ms(&self) -> f64 {
        self.smoothed_ms
    }
    pub fn display_ms(&self) -> f64 {
        self.display_ms
    }

    /// (min, max, standard deviation) of the recent samples.
    pub fn window(&self) -> (f64, f64, f64) {
        if self.samples.is_empty() {
            return (0.0, 0.0, 0.0);
        }
        let n = self.samples.len() as f64;
        let (mut lo, mut hi, mut sum) = (f64::MAX, f64::MIN, 0.0);
        for &s in &self.samples {
            let s = s as f64;
            lo = lo.min(s);
            hi = hi.max(s);
            sum += s;
        }
        let mean = sum / n;
        let var = self.samples.iter().map(|&s| (s as f64 - mean).powi(2)).sum::<f64>() / n;
        (lo, hi, var.sqrt())
    }
}

/// Smoothed kbit/s from bytes counted over fixed intervals (28 bytes IP+UDP added per packet).
#[derive(Debug, Clone, Default)]
pub struct BandwidthMeter {
    interval_start: SimTime,
    bytes: u64,
    kbps: f64,
    started: bool,
}

impl BandwidthMeter {
    #[inline]
    pub fn add_packet(&mut self, payload_bytes: usize) {
        self.bytes += payload_bytes as u64 + IP_UDP_OVERHEAD_BYTES as u64;
    }

    /// Closes the interval if it is long enough.
    #[inline]
    pub fn update(&mut self, now: SimTime, interval_ms: f64, smoothing: f64) {
        if !self.started {
            self.started = true;
            self.interval_start = now;
            return;
        }
        let dt_ms = now.saturating_since(self.interval_start).as_millis_f64();
        if dt_ms >= interval_ms && dt_ms > 0.0 {
            self.close(now, dt_ms, smoothing);
        }
    }

    /// Ends the interval at `now`, `dt_ms` after it began, folding its rate into the average.
    #[inline]
    fn close(&mut self, now: SimTime, dt_ms: f64, smoothing: f64) {
        let kbps = self.bytes as f64 * 8.0 / dt_ms;
        self.kbps += (kbps - self.kbps) * smoothing;
        self.bytes = 0;
        self.interval_start = now;
    }

    pub fn kbps(&self) -> f64 {
        self.kbps
    }
}

/// An endpoint's three meters (sent, received, acked), updated together: what three
/// [`BandwidthMeter`]s updated at the same instants give, bit for bit, for one clock check.
///
/// Meters updated at the same instants start and close their intervals together, so one start
/// time serves the three; and whether an interval is long enough is one integer comparison
/// against the fewest microseconds that pass `dt_ms >= interval_ms` (found once per interval
/// setting), instead of a conversion to milliseconds per meter and update (an endpoint updates
/// after every packet received).
#[derive(Debug, Clone, Default)]
pub struct BandwidthMeters {
    pub sent: BandwidthMeter,
    pub received: BandwidthMeter,
    pub acked: BandwidthMeter,
    /// `(interval_ms.to_bits(), fewest microseconds that close an interval)`, for the last
    /// interval setting seen.
    close_after: Option<(u64, Option<u64>)>,
}

impl BandwidthMeters {
    /// [`BandwidthMeter::update`] on the three meters.
    #[inline]
    pub fn update(&mut self, now: SimTime, interval_ms: f64, smoothing: f64) {
        if !self.sent.started {
            for m in [&mut self.sent, &mut self.received, &mut self.acked] {
                m.update(now, interval_ms, smoothing);
            }
            return;
        }
        let close_us = match self.close_after {
            Some((bits, us)) if bits == interval_ms.to_bits() => us,
            _ => {
                let us = first_micros_where(|dt_ms| dt_ms >= interval_ms && dt_ms > 0.0);
                self.close_after = Some((interval_ms.to_bits(), us));
                us
            }
        };
        let dt_us = now.saturating_since(self.sent.interval_start);
        if close_us.is_some_and(|us| dt_us.0 >= us) {
            let dt_ms = dt_us.as_millis_f64();
            for m in [&mut self.sent, &mut self.received, &mut self.acked] {
                m.close(now, dt_ms, smoothing);
            }
        }
    }

    /// The three, in [`sample`]'s order.
    pub fn all(&self) -> [&BandwidthMeter; 3] {
        [&self.sent, &self.received, &self.acked]
    }
}

/// The fewest microseconds `d` for which `holds(SimTime(d).as_millis_f64())`, where `holds` is
/// monotone (once true for a time, true for every longer one); `None` when no `u64` passes.
///
/// Turns a per-call test on milliseconds into one integer comparison with identical answers:
/// `d as f64` and the division by 1000 never decrease as `d` grows, so the times passing the
/// test are exactly those from the one found here on (a binary search: 64 tests, done once).
pub fn first_micros_where(holds: impl Fn(f64) -> bool) -> Option<u64> {
    let ms = |us: u64| SimTime(us).as_millis_f64();
    if holds(ms(0)) {
        return Some(0);
    }
    if !holds(ms(u64::MAX)) {
        return None;
    }
    // holds(hi) and not holds(lo) throughout.
    let (mut lo, mut hi) = (0u64, u64::MAX);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if holds(ms(mid)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Builds a [`StatsSample`] from the estimators, replacing anything non-finite with 0.
pub fn sample(rtt: &RttEstimator, loss: &LossWindow, bw: [&BandwidthMeter; 3]) -> StatsSample {
    let (lo, hi, jitter) = rtt.window();
    StatsSample {
        rtt_ms: finite(rtt.smoothed_ms()),
        rtt_display_ms: finite(rtt.display_ms()),
        rtt_min_ms: finite(lo),
        rtt_max_ms: finite(hi),
        jitter_ms: finite(jitter),
        loss_percent: finite(loss.percent()),
        sent_kbps: finite(bw[0].kbps()),
        received_kbps: finite(bw[1].kbps()),
        acked_kbps: finite(bw[2].kbps()),
        no_loss_verdict: loss.judged() == 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_rtt_sample_is_taken_as_is_then_smoothed() {
        let mut r = RttEstimator::new(StatsConfig::default());
        r.add_sample(100.0);
        assert_eq!(r.smoothed_ms(), 100.0);
        r.add_sample(200.0);
        assert!((r.smoothed_ms() - 100.25).abs() < 1e-9);
        assert!((r.display_ms() - 110.0).abs() < 1e-9);
    }

    #[test]
    fn first_micros_where_finds_the_threshold_of_the_millisecond_test() {
        for limit in [0.0, 0.0005, 0.001, 0.0015, 1.0, 99.9999, 100.0, 5000.0, 1e-300, -3.0] {
            let test = |ms: f64| ms > limit;
            let us = first_micros_where(test).unwrap();
            assert!(test(SimTime(us).as_millis_f64()), "{limit}");
            assert!(us == 0 || !test(SimTime(us - 1).as_millis_f64()), "{limit}");
        }
        assert_eq!(first_micros_where(|ms| ms >= 100.0), Some(100_000));
        assert_eq!(first_micros_where(|ms| ms > 100.0), Some(100_001));
        let nan: f64 = "NaN".parse().unwrap();
        assert_eq!(first_micros_where(|ms| ms >= nan), None);
        assert_eq!(first_micros_where(|ms| ms >= f64::INFINITY), None);
    }

    #[test]
    fn meters_updated_together_match_three_meters_updated_alone() {
        // Irregular update times, an interval setting that changes (odd values included), and
        // bytes added between updates: the trio must give the same figures bit for bit.
        let mut trio = BandwidthMeters::default();
        let mut alone = [BandwidthMeter::default(), BandwidthMeter::default(), BandwidthMeter::default()];
        let mut now = 0u64;
        for i in 0..5000u64 {
            now += (i * 7919) % 23_456;
            let iv = [100.0, 33.3337, 0.0, -5.0, 250.0005, f64::NAN][(i / 700) as usize % 6];
            for (k, m) in alone.iter_mut().enumerate() {
                let bytes = (i as usize * (k + 3)) % 1200;
                m.add_packet(bytes);
                [&mut trio.sent, &mut trio.received, &mut trio.acked][k].add_packet(bytes);
                m.update(SimTime(now), iv, 0.1);
            }
            trio.update(SimTime(now), iv, 0.1);
            for (m, t) in alone.iter().zip(trio.all()) {
                assert_eq!(m.kbps().to_bits(), t.kbps().to_bits(), "update {i}");
            }
        }
        assert!(trio.sent.kbps() > 0.0);
    }

    #[test]
    fn empty_estimators_are_zero_not_nan() {
        let s = sample(
            &RttEstimator::new(StatsConfig::default()),
            &LossWindow::new(8),
            [&BandwidthMeter::default(), &BandwidthMeter::default(), &BandwidthMeter::default()],
        );
        // Zero, and the loss marked as no estimate: nothing was judged.
        assert_eq!(s, StatsSample { no_loss_verdict: true, ..StatsSample::default() });
    }
}
