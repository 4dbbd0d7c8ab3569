//! UE4's bandwidth throttle: `CurrentNetSpeed`, `QueuedBits` and `IsNetReady`.
//!
//! Why a debt counter rather than a token bucket: UE4 never refuses to flush — reliable data and
//! resends always go out — it only tells the game (`IsNetReady`) to stop producing optional
//! traffic while the connection is in debt. Each tick pays `DeltaBits = speed x dt x 8` off the
//! debt; credit is capped at `AllowedLag = 2 x DeltaBits` so an idle connection cannot save up a
//! burst.

use crate::event::SimTime;
use crate::link::IP_UDP_OVERHEAD_BYTES;

/// The per-connection throttle.
#[derive(Debug, Clone)]
pub struct Throttle {
    /// Bytes per second; 0 or less = unlimited.
    net_speed_bytes_per_sec: f64,
    /// UE4 clamps the tick's time step to `1 / DesiredTickRate`; 0 = no clamp.
    desired_tick_rate_hz: f64,
    /// Debt in bits: positive = over budget, negative = credit.
    queued_bits: i64,
    last_tick: Option<SimTime>,
    last_delta_bits: i64,
}

impl Throttle {
    pub fn new(net_speed_bytes_per_sec: f64, desired_tick_rate_hz: f64) -> Self {
        Self { net_speed_bytes_per_sec, desired_tick_rate_hz, queued_bits: 0, last_tick: None, last_delta_bits: 0 }
    }

    pub fn net_speed_bytes_per_sec(&self) -> f64 {
        self.net_speed_bytes_per_sec
    }

    /// Changes `CurrentNetSpeed` live.
    pub fn set_net_speed(&mut self, bytes_per_sec: f64) {
        self.net_speed_bytes_per_sec = if bytes_per_sec.is_finite() { bytes_per_sec } else { 0.0 };
    }

    pub fn unlimited(&self) -> bool {
        self.net_speed_bytes_per_sec <= 0.0
    }

    pub fn queued_bits(&self) -> i64 {
        self.queued_bits
    }

    /// `DeltaBits` of the last tick.
    pub fn delta_bits(&self) -> i64 {
        self.last_delta_bits
    }

    /// The connection tick: pays `DeltaBits` off the debt, floored at `-AllowedLag`.
    pub fn tick(&mut self, now: SimTime) {
        let mut dt = self.last_tick.map_or(0.0, |t| now.saturating_since(t).as_secs_f64());
        self.last_tick = Some(now);
        if self.desired_tick_rate_hz > 0.0 && self.desired_tick_rate_hz.is_finite() {
            dt = dt.clamp(0.0, 1.0 / self.desired_tick_rate_hz);
        }
        if self.unlimited() {
            self.queued_bits = 0;
            self.last_delta_bits = 0;
            return;
        }
        let delta_bits = (self.net_speed_bytes_per_sec * dt * 8.0).min(1e15);
        self.last_delta_bits = delta_bits as i64;
        self.queued_bits -= delta_bits.trunc() as i64;
        let allowed_lag = 2.0 * delta_bits;
        if (self.queued_bits as f64) < -allowed_lag {
            self.queued_bits = -(allowed_lag.trunc() as i64);
        }
    }

    /// `IsNetReady`: whether `pending_bits` more could be written without going into debt.
    pub fn is_net_ready(&self, pending_bits: i64) -> bool {
        self.unlimited() || self.queued_bits + pending_bits <= 0
    }

    /// Bytes that could still go out this tick before the connection is in debt (0 when
    /// unlimited: there is no budget).
    pub fn available_bytes(&self) -> i64 {
        -self.queued_bits / 8
    }

    /// A packet of `payload_bytes` was sent: UE4 counts the IP+UDP overhead too.
    pub fn on_packet_sent(&mut self, payload_bytes: usize) {
        if !self.unlimited() {
            self.queued_bits += (payload_bytes as i64 + IP_UDP_OVERHEAD_BYTES as i64) * 8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credit_is_capped_at_allowed_lag_and_debt_blocks() {
        let mut t = Throttle::new(10_000.0, 0.0);
        t.tick(SimTime(0));
        t.tick(SimTime(100_000)); // 0.1 s: DeltaBits = 8000
        assert_eq!(t.queued_bits(), -8000);
        t.tick(SimTime(1_100_000)); // 1 s: DeltaBits = 80000, credit within 2 x 80000
        assert_eq!(t.queued_bits(), -88_000);
        t.tick(SimTime(2_100_000)); // another idle second: credit capped at AllowedLag
        assert_eq!(t.queued_bits(), -160_000);
        t.on_packet_sent(20_000 - 28);
        assert_eq!(t.queued_bits(), 0);
        assert!(t.is_net_ready(0));
        assert!(!t.is_net_ready(8));
        t.set_net_speed(0.0);
        assert!(t.is_net_ready(1 << 40));
    }
}
