//! When an endpoint's own work falls due: its send ticks (on its grid, through every change of
//! rate), its stats samples and its scripted steps, kept as instants the caller reads without
//! computing them (the simulation asks at every instant).

use super::EndpointDriver;
use crate::driver::ticker::{TickRate, TickTiming, Ticker};
use crate::event::SimTime;

impl EndpointDriver {
    /// Sets when send ticks fall from `now`: at `pps` on this endpoint's grid (its phase), the
    /// first at or after `now` or, with `one_interval_on`, after `now` and at least one new
    /// interval after the last tick. Every change of tick timing comes here (see the type's doc).
    pub(super) fn restart_ticks(&mut self, now: SimTime, pps: f64, one_interval_on: bool) {
        let mut from = if one_interval_on { now.plus_micros(1) } else { now };
        if let (true, Some(last)) = (one_interval_on, self.last_tick) {
            if pps.is_finite() && pps > 0.0 {
                // Within a microsecond of rounding: grid instants are rounded to whole microseconds.
                let interval_us = (1e6 / pps - 1.0).max(0.0).ceil() as u64;
                from = from.max(last.plus_micros(interval_us));
            }
        }
        self.set_ticker(Ticker::on_grid(&self.timing, pps, from));
    }

    /// Takes `ticker` for the send ticks from now on (every new rate or phase comes here), with
    /// its rate constants and its next tick.
    pub(super) fn set_ticker(&mut self, ticker: Ticker) {
        self.ticker = ticker;
        self.tick_rate = TickRate::of(&ticker);
        self.sync_next_tick();
    }

    /// Brings the next tick's instants up to date with the ticker: the grid instant is computed
    /// once per tick, not again when the tick is taken (0.5 M instructions per 120 s sweep
    /// run, callgrind).
    #[inline]
    pub(super) fn sync_next_tick(&mut self) {
        (self.next_tick_grid, self.next_tick_at) = self.ticker.next_with_grid_at(&self.tick_rate);
        self.sync_due();
    }

    /// Brings [`Self::next_due`] up to date after a change of the next tick, stats sample or
    /// script step.
    pub(super) fn sync_due(&mut self) {
        let mut t = self.next_stats.min(self.next_tick_at);
        if let Some((_, step)) = self.script.get(self.next_step) {
            t = t.min(step.at);
        }
        self.next_due_at = t;
    }

    /// This endpoint's send-tick phase and lateness.
    pub fn tick_timing(&self) -> &TickTiming {
        &self.timing
    }

    pub fn ticker(&self) -> &Ticker {
        &self.ticker
    }

    /// When the next send tick is due.
    pub fn next_tick(&self) -> SimTime {
        self.next_tick_at
    }

    /// When this driver next has something to do by itself: a send tick, a stats sample or a
    /// scripted action.
    pub fn next_due(&self) -> SimTime {
        self.next_due_at
    }

    /// Skips the send ticks due before `now`, keeping the tick grid: the next tick is the first
    /// one at or after `now`. For real-time callers that fell behind (a stalled thread), which
    /// would otherwise burst every missed tick at once.
    pub fn skip_ticks_to(&mut self, now: SimTime) {
        let t = &mut self.ticker;
        if t.next() >= now {
            return;
        }
        let behind_s = now.saturating_since(t.base).as_secs_f64();
        t.count = t.count.max((behind_s * t.pps).floor() as u64);
        while t.next() < now {
            t.count += 1;
        }
        self.sync_next_tick();
    }

    /// Changes the send rate from `now` (the first tick at the first grid instant from `now`).
    pub fn set_send_rate(&mut self, now: SimTime, pps: f64) {
        self.touch(now);
        self.scenario.send_rate_pps = pps;
        self.restart_ticks(now, pps, false);
    }

    /// Whether a stats sample is due at `now` ([`Self::sample_stats`] takes it).
    pub(in crate::driver) fn stats_due(&self, now: SimTime) -> bool {
        self.next_stats <= now
    }
}
