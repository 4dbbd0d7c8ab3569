//! The per-tick byte budget of Glenn's large-block sender (and the fragmentation baseline, which
//! must send at the same rate to be a fair contrast).
//!
//! Each send tick adds `rate x dt` bytes; unspent budget carries over only up to 100 ms of sending
//! (or one full packet, whichever is larger), so an idle sender cannot save up a burst. Every tick
//! in which something was being sent is reported as a `Budget` event (available at the start,
//! spent during the tick) for the app's bandwidth-budget plot.

use crate::event::{Event, EventKind, Side, SimTime};

/// Unspent budget kept from one tick to the next, in seconds of sending.
pub const BUDGET_CARRY_SECONDS: f64 = 0.1;

#[derive(Debug, Clone, Default)]
pub struct TickBudget {
    bytes: f64,
    last_tick: Option<SimTime>,
    tick_available: f64,
    tick_spent: f64,
    tick_active: bool,
}

impl TickBudget {
    /// Starts a tick at `now`: caps the carried budget, then adds what `bytes_per_second` earns
    /// since the previous tick. `packet_bytes` is one full packet on the wire.
    pub fn begin(&mut self, now: SimTime, bytes_per_second: f64, packet_bytes: f64) {
        let dt = self.last_tick.map_or(0.0, |t| now.saturating_since(t).as_secs_f64());
        self.last_tick = Some(now);
        let carry = (bytes_per_second * BUDGET_CARRY_SECONDS).max(packet_bytes);
        self.bytes = self.bytes.min(carry) + bytes_per_second * dt;
        self.tick_available = self.bytes;
        self.tick_spent = 0.0;
    }

    /// Whether this tick sends anything worth reporting (a block in flight).
    pub fn set_active(&mut self, active: bool) {
        self.tick_active = active;
    }

    /// Bytes that may still go out this tick.
    pub fn available(&self) -> f64 {
        self.bytes
    }

    /// Records `bytes` put on the wire (never below zero: an initial burst may overspend).
    pub fn spend(&mut self, bytes: f64) {
        self.bytes = (self.bytes - bytes).max(0.0);
        self.tick_spent += bytes;
    }

    /// Ends the tick, emitting its `Budget` event if it was active.
    pub fn end(&mut self, now: SimTime, side: Side, events: &mut Vec<Event>) {
        if std::mem::take(&mut self.tick_active) {
            let kind = EventKind::Budget {
                side,
                available_bytes: self.tick_available as f32,
                spent_bytes: self.tick_spent as f32,
            };
            events.push(Event::new(now, kind));
        }
    }
}
