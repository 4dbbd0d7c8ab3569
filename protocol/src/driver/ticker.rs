//! Send ticks at a packet rate, counted from a base instant.

use crate::event::SimTime;

/// Send ticks at `pps` counted from `base`, so rate changes never accumulate rounding drift.
///
/// Every endpoint's ticks come from one of these, held by its
/// [`EndpointDriver`](super::EndpointDriver), which is the only place that sets `base`: the
/// simulation and the real-time endpoints therefore tick at the same instants.
#[derive(Debug, Clone, Copy)]
pub struct Ticker {
    pub base: SimTime,
    /// Ticks already taken since `base`.
    pub count: u64,
    pub pps: f64,
}

impl Ticker {
    /// When the next tick is due (never, at a rate of zero or below).
    pub fn next(&self) -> SimTime {
        if self.pps.is_nan() || self.pps <= 0.0 || !self.pps.is_finite() {
            return SimTime(u64::MAX);
        }
        self.base.plus_micros((self.count as f64 * 1e6 / self.pps).round() as u64)
    }
}
