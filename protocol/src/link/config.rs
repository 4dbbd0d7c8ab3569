//! What a link direction is set to: delay, jitter, loss, bursts, duplicates, reordering, bandwidth,
//! MTU. Kept apart from the link itself so the pieces that model one part of it (the burst chain,
//! the FIFO delay path) read the settings without importing the link back.

use serde::{Deserialize, Serialize};

/// IPv4 + UDP header bytes counted per packet in bandwidth and MTU figures (as reliable.io).
pub const IP_UDP_OVERHEAD_BYTES: u32 = 28;

/// Shape of the jitter added to the base latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JitterDistribution {
    /// Uniform in `[-jitter, +jitter]`.
    #[default]
    Uniform,
    /// Normal with standard deviation `jitter`.
    Normal,
}

/// Gilbert-Elliott two-state burst loss, on a 1 ms time grid ([`super::burst`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BurstLoss {
    /// Chance (%) per 1 ms step of moving from the good to the bad state (a good spell lasts
    /// `100 / p_percent` ms on average).
    pub p_percent: f64,
    /// Chance (%) per 1 ms step of moving from the bad state back to good (a burst lasts
    /// `100 / r_percent` ms on average).
    pub r_percent: f64,
    /// Loss (%) while in the bad state.
    pub loss_in_bad_percent: f64,
}

impl Default for BurstLoss {
    fn default() -> Self {
        Self { p_percent: 0.0, r_percent: 25.0, loss_in_bad_percent: 100.0 }
    }
}

/// Everything about one direction of the link; any field may change while running.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LinkConfig {
    /// Base one-way latency.
    pub latency_ms: f64,
    /// Jitter amplitude (uniform half-width or normal standard deviation).
    pub jitter_ms: f64,
    pub jitter_distribution: JitterDistribution,
    /// When false, jitter never lets a packet overtake an earlier one (a FIFO link; the delay then
    /// follows one path over time, see [`super::fifo`]). Explicit reordering still overtakes.
    pub jitter_reorders: bool,
    /// Independent random loss.
    pub loss_percent: f64,
    /// Gilbert-Elliott burst loss (off while `p_percent` is 0).
    pub burst: BurstLoss,
    /// Chance of delivering an extra copy.
    pub duplicate_percent: f64,
    /// Chance of holding a packet back by `reorder_delay_ms` so later ones overtake it.
    pub reorder_percent: f64,
    pub reorder_delay_ms: f64,
    /// Bandwidth cap in kbit/s including 28 bytes of IP+UDP per packet; 0 = unlimited.
    pub bandwidth_kbps: f64,
    /// Bytes the bandwidth queue holds before tail-dropping.
    pub queue_bytes: u32,
    /// Largest IP packet (payload + 28); larger ones are dropped.
    pub mtu_bytes: u32,
}

impl Default for LinkConfig {
    fn default() -> Self {
        Self {
            latency_ms: 50.0,
            jitter_ms: 0.0,
            jitter_distribution: JitterDistribution::Uniform,
            jitter_reorders: true,
            loss_percent: 5.0,
            burst: BurstLoss::default(),
            duplicate_percent: 0.0,
            reorder_percent: 0.0,
            reorder_delay_ms: 30.0,
            bandwidth_kbps: 0.0,
            queue_bytes: 64 * 1024,
            mtu_bytes: 1500,
        }
    }
}
