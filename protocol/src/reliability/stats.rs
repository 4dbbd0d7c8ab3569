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
    samples: VecDeque<f32>,
}

impl RttEstimator {
    pub fn new(config: StatsConfig) -> Self {
        Self { config, smoothed_ms: 0.0, display_ms: 0.0, have_sample: false, samples: VecDeque::new() }
    }

    pub fn set_config(&mut self, config: StatsConfig) {
        self.config = config;
    }

    /// Feeds one sample.
    #[inline]
    pub fn add_sample(&mut self, rtt_ms: f64) {
        if !rtt_ms.is_finite() || rtt_ms < 0.0 {
            return;
        }
        if !self.have_sample {
            self.smoothed_ms = rtt_ms;
            self.display_ms = rtt_ms;
            self.have_sample = true;
        } else {
            let f = match self.config.rtt_filter {
                RttFilter::Ewma => self.config.rtt_smoothing,
                RttFilter::Rellikt => RELLIKT_SAMPLE_WEIGHT,
            };
            self.smoothed_ms += (rtt_ms - self.smoothed_ms) * f;
            self.display_ms += (rtt_ms - self.display_ms) * self.config.rtt_display_smoothing;
        }
        if self.config.rtt_window > 0 {
            if self.samples.len() >= self.config.rtt_window {
                self.samples.pop_front();
            }
            self.samples.push_back(rtt_ms as f32);
        }
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
            let kbps = self.bytes as f64 * 8.0 / dt_ms;
            self.kbps += (kbps - self.kbps) * smoothing;
            self.bytes = 0;
            self.interval_start = now;
        }
    }

    pub fn kbps(&self) -> f64 {
        self.kbps
    }
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
    fn empty_estimators_are_zero_not_nan() {
        let s = sample(
            &RttEstimator::new(StatsConfig::default()),
            &LossWindow::new(8),
            [&BandwidthMeter::default(), &BandwidthMeter::default(), &BandwidthMeter::default()],
        );
        assert_eq!(s, StatsSample::default());
    }
}
