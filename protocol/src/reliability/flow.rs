//! rellikt's simple flow control: a good/bad mode switch driven by RTT.
//!
//! Good conditions (RTT at or below `rtt_threshold_ms`) allow the high packet rate (30/s), bad ones
//! the low rate (10/s). The rules, from the seed:
//! - in good mode, bad conditions switch to bad mode at once;
//! - in bad mode, good conditions lasting the penalty time `t` switch back to good mode;
//! - relapsing into bad mode soon after returning to good (within `relapse_window_ms`) doubles
//!   `t`, up to `max_penalty_ms` (60 s);
//! - staying in good mode for `good_reset_ms` (10 s) resets `t` to `initial_penalty_ms` (1 s).
//!
//! It is a pure state machine on virtual time: [`FlowControl::update`] takes the time and the
//! current RTT and returns the packet rate, so the driver can apply it to any strategy. An RTT of 0
//! (no sample yet) counts as good. It starts in good mode, as the seed's walk-through does.
//!
//! Which RTT: the seed's own, "rtt = math.clamp(deltatime, rtt, 0.8)", the low-pass filter that
//! gives a new sample a weight of 0.2 — per sample, in a protocol sending 30 packets/s.
//! [`FlowControl::add_rtt_sample`] keeps that filter over every RTT sample of the endpoint,
//! whatever its strategy, and the driver switches on it ([`FlowControl::rtt_ms`]). One change:
//! the weight is per unit of time, not per sample, `1 - 0.8^(dt x 30/s)` for a sample `dt` after
//! the previous one, which is the seed's 0.2 at its 30 samples/s. Per sample, the reaction time
//! would follow the sample rate: 0.4 s at 10 packets/s, 13 ms at 300, and 2 s for the fragment
//! baseline, which measures one RTT per block; per unit of time, the RTT crosses the midpoint of
//! a step about 0.1 s after samples of the new RTT arrive, at any rate. The strategies' smoothed
//! RTTs are too slow for flow control: reliable.io's 0.0025 EWMA switched to bad 8.9 s late after
//! an RTT step from 100 to 400 ms, and back to good 20.9 s late.

use serde::{Deserialize, Serialize};

use crate::event::SimTime;
use crate::reliability::stats::RELLIKT_SAMPLE_WEIGHT;

/// The sample rate at which the low-pass filter weighs a sample exactly as the seed does: its good
/// mode's 30 packets/s.
const FILTER_SAMPLES_PER_SEC: f64 = 30.0;

/// Flow control settings (dotted names `flow.*`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlowConfig {
    /// When false the scenario's `send_rate_pps` applies unchanged.
    pub enabled: bool,
    pub rtt_threshold_ms: f64,
    pub good_rate_pps: f64,
    pub bad_rate_pps: f64,
    pub initial_penalty_ms: f64,
    pub max_penalty_ms: f64,
    /// A return to bad mode within this long after entering good mode doubles the penalty.
    pub relapse_window_ms: f64,
    /// This long in good mode resets the penalty to `initial_penalty_ms`.
    pub good_reset_ms: f64,
}

impl Default for FlowConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            rtt_threshold_ms: 250.0,
            good_rate_pps: 30.0,
            bad_rate_pps: 10.0,
            initial_penalty_ms: 1000.0,
            max_penalty_ms: 60_000.0,
            relapse_window_ms: 10_000.0,
            good_reset_ms: 10_000.0,
        }
    }
}

/// The mode switch.
#[derive(Debug, Clone)]
pub struct FlowControl {
    config: FlowConfig,
    good: bool,
    penalty_ms: f64,
    /// When the current mode was entered.
    mode_since: SimTime,
    /// In bad mode: when the current run of good conditions began.
    good_since: Option<SimTime>,
    /// Whether good mode has already reset the penalty since it was entered.
    reset_done: bool,
    /// Good mode was entered by recovering from bad mode (the start is not a recovery, so the
    /// first drop is not a relapse).
    recovered: bool,
    changed: bool,
    /// The low-pass RTT and the time of its last sample (None before any sample).
    rtt: Option<(f64, SimTime)>,
}

impl FlowControl {
    pub fn new(config: FlowConfig) -> Self {
        Self {
            config,
            good: true,
            penalty_ms: config.initial_penalty_ms,
            mode_since: SimTime::ZERO,
            good_since: None,
            reset_done: false,
            recovered: false,
            changed: false,
            rtt: None,
        }
    }

    /// Feeds one RTT sample taken at `now` to the low-pass filter (module doc); the first is
    /// taken as is.
    pub fn add_rtt_sample(&mut self, now: SimTime, rtt_ms: f64) {
        if !rtt_ms.is_finite() || rtt_ms < 0.0 {
            return;
        }
        let rtt = match self.rtt {
            Some((r, last)) => {
                let periods = now.saturating_since(last).as_secs_f64() * FILTER_SAMPLES_PER_SEC;
                let weight = 1.0 - (1.0 - RELLIKT_SAMPLE_WEIGHT).powf(periods);
                r + (rtt_ms - r) * weight
            }
            None => rtt_ms,
        };
        self.rtt = Some((rtt, now));
    }

    /// Forgets the low-pass RTT: the next sample is taken as is, as the first of a run is.
    pub fn forget_rtt(&mut self) {
        self.rtt = None;
    }

    /// The low-pass RTT flow control reads (0 before any sample, which counts as good).
    pub fn rtt_ms(&self) -> f64 {
        self.rtt.map_or(0.0, |(r, _)| r)
    }

    /// Changes thresholds and rates from now on, keeping the current mode and penalty.
    pub fn set_config(&mut self, config: FlowConfig) {
        self.config = config;
    }

    pub fn config(&self) -> &FlowConfig {
        &self.config
    }

    pub fn is_good(&self) -> bool {
        self.good
    }

    pub fn penalty_ms(&self) -> f64 {
        self.penalty_ms
    }

    /// True when the last [`FlowControl::update`] switched mode.
    pub fn changed(&self) -> bool {
        self.changed
    }

    /// The packet rate for the current mode.
    pub fn rate_pps(&self) -> f64 {
        if self.good {
            self.config.good_rate_pps
        } else {
            self.config.bad_rate_pps
        }
    }

    /// Feeds the time and the current RTT; returns the packet rate to use from now on.
    pub fn update(&mut self, now: SimTime, rtt_ms: f64) -> f64 {
        let c = self.config;
        let bad_conditions = rtt_ms.is_finite() && rtt_ms > c.rtt_threshold_ms;
        self.changed = false;
        if self.good {
            let in_mode_ms = now.saturating_since(self.mode_since).as_millis_f64();
            if bad_conditions {
                if self.recovered && in_mode_ms < c.relapse_window_ms {
                    self.penalty_ms = (self.penalty_ms * 2.0).min(c.max_penalty_ms);
                }
                self.good = false;
                self.mode_since = now;
                self.good_since = None;
                self.changed = true;
            } else if !self.reset_done && in_mode_ms >= c.good_reset_ms {
                self.penalty_ms = c.initial_penalty_ms;
                self.reset_done = true;
            }
        } else if bad_conditions {
            self.good_since = None;
        } else {
            let since = *self.good_since.get_or_insert(now);
            if now.saturating_since(since).as_millis_f64() >= self.penalty_ms {
                self.good = true;
                self.mode_since = now;
                self.reset_done = false;
                self.recovered = true;
                self.changed = true;
            }
        }
        self.rate_pps()
    }
}
