//! Send ticks at a packet rate on an endpoint's own grid, and where that grid's phase and the
//! ticks' lateness come from.

use crate::event::{round_u64, Side, SimTime};
use crate::link::draws::{stream, uniform};
use crate::scenario::{Scenario, TickPhase};

/// Stream names under the seed (no other draw uses them).
const TICK_PHASE_STREAM: u64 = 0x7469_636B_7068; // "tickph"
const TICK_LATE_STREAM: u64 = 0x7469_636B_6C74; // "ticklt"

/// When one endpoint's send ticks fall, fixed for a run: the phase of its grid and how late each
/// tick may wake.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TickTiming {
    /// Ticks fall at `phase_us + k / rate` (plus lateness).
    pub phase_us: f64,
    /// Most a tick wakes late (microseconds; 0 = exactly on the grid).
    pub late_max_us: f64,
    /// The stream the lateness of each tick is drawn from, keyed by the tick's grid instant.
    pub late_key: u64,
}

impl TickTiming {
    /// Exactly on the grid from 0 (lock-step).
    pub const EXACT: TickTiming = TickTiming { phase_us: 0.0, late_max_us: 0.0, late_key: 0 };

    /// `side`'s tick timing under `scenario`. The phase is its own `tick_phase_ms` if set, else 0
    /// in lock-step, else drawn from the seed uniformly within one tick interval of the
    /// configured rate (within one second when that rate is 0: the phase is taken modulo
    /// whatever interval applies later). Lateness is `tick_jitter_ms`, none in lock-step. Each
    /// side draws from streams of its own, so the two sides are independent and no other draw of
    /// the run moves.
    pub fn of(scenario: &Scenario, side: Side) -> TickTiming {
        Self::of_seed(scenario, side, scenario.seed)
    }

    /// [`Self::of`] drawn from `seed` instead of the scenario's: a server's connection to client
    /// k (whose scenario has the client's seed) ticks on the server's own grid, drawn from the
    /// run's seed, whoever the client is.
    pub fn of_seed(scenario: &Scenario, side: Side, seed: u64) -> TickTiming {
        let own = match side {
            Side::A => scenario.a.tick_phase_ms,
            Side::B => scenario.b.tick_phase_ms,
        };
        let own_us = own.filter(|ms| ms.is_finite()).map(|ms| ms * 1000.0);
        let n = side.index() as u64;
        match scenario.tick_phase {
            TickPhase::Lockstep => TickTiming { phase_us: own_us.unwrap_or(0.0), ..Self::EXACT },
            TickPhase::Seeded => {
                let pps = scenario.send_rate_pps;
                let interval_us = if pps.is_finite() && pps > 0.0 { 1e6 / pps } else { 1e6 };
                let drawn = || uniform(stream(seed, TICK_PHASE_STREAM), n) * interval_us;
                let late_ms = scenario.tick_jitter_ms;
                TickTiming {
                    phase_us: own_us.unwrap_or_else(drawn),
                    late_max_us: if late_ms.is_finite() { late_ms.max(0.0) * 1000.0 } else { 0.0 },
                    late_key: stream(stream(seed, TICK_LATE_STREAM), n),
                }
            }
        }
    }
}

/// Send ticks at `pps` counted from `base`, so rate changes never accumulate rounding drift.
///
/// Every endpoint's ticks come from one of these, held by its
/// [`EndpointDriver`](super::EndpointDriver), which is the only place that sets `base`: the
/// simulation and the real-time endpoints therefore tick at the same instants. `base` is the
/// endpoint's phase reduced modulo the tick interval ([`Ticker::on_grid`]); each tick wakes late
/// by its own draw, less than half an interval, so ticks never swap order.
#[derive(Debug, Clone, Copy)]
pub struct Ticker {
    pub base: SimTime,
    /// Ticks already taken since `base`.
    pub count: u64,
    pub pps: f64,
    /// Most a tick wakes late (microseconds) and the stream of its draws.
    pub late_max_us: f64,
    pub late_key: u64,
}

impl Ticker {
    /// Ticks at `pps` on the grid `timing.phase_us + k / pps` (k any integer), the next one the
    /// first tick at or after `from`.
    pub fn on_grid(timing: &TickTiming, pps: f64, from: SimTime) -> Ticker {
        let (late_max_us, late_key) = (timing.late_max_us, timing.late_key);
        if !(pps.is_finite() && pps > 0.0) {
            return Ticker { base: SimTime::ZERO, count: 0, pps, late_max_us, late_key };
        }
        let interval_us = 1e6 / pps;
        let phase_us = if timing.phase_us.is_finite() { timing.phase_us } else { 0.0 };
        let base = SimTime(phase_us.rem_euclid(interval_us).round() as u64);
        let mut t = Ticker { base, count: 0, pps, late_max_us, late_key };
        if from > base {
            let behind_us = from.saturating_since(base).0 as f64;
            t.count = ((behind_us / interval_us).floor() as u64).saturating_sub(1);
            while t.next() < from {
                t.count += 1;
            }
        }
        t
    }

    /// The grid instant of the next tick, before its lateness (never, at a rate of zero or
    /// below).
    pub fn next_on_grid(&self) -> SimTime {
        self.next_on_grid_with(&TickRate::of(self))
    }

    /// [`Self::next_on_grid`] with the rate's constants computed beforehand.
    #[inline]
    fn next_on_grid_with(&self, rate: &TickRate) -> SimTime {
        if !rate.ticks {
            return SimTime(u64::MAX);
        }
        self.base.plus_micros(round_u64(self.count as f64 * 1e6 / self.pps))
    }

    /// When the next tick is due (never, at a rate of zero or below).
    pub fn next(&self) -> SimTime {
        self.next_with_grid().1
    }

    /// The next tick's grid instant and when it is due ([`Self::next_on_grid`] and
    /// [`Self::next`] from one computation of the grid instant).
    pub fn next_with_grid(&self) -> (SimTime, SimTime) {
        self.next_with_grid_at(&TickRate::of(self))
    }

    /// [`Self::next_with_grid`] with the rate's constants `rate` ([`TickRate::of`] this ticker,
    /// at its latest change of `pps` or lateness): for a caller that takes every tick.
    pub(crate) fn next_with_grid_at(&self, rate: &TickRate) -> (SimTime, SimTime) {
        let on_grid = self.next_on_grid_with(rate);
        let Some(late_bound_us) = rate.late_bound_us else { return (on_grid, on_grid) };
        if on_grid == SimTime(u64::MAX) {
            return (on_grid, on_grid);
        }
        let late_us = uniform(self.late_key, on_grid.0) * late_bound_us;
        (on_grid, on_grid.plus_micros(late_us as u64))
    }
}

/// What a [`Ticker`]'s rate and lateness make of every tick, computed once per change of them
/// rather than at each tick (a finiteness test and a division: 0.3 M instructions per 120 s sweep
/// run, callgrind).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TickRate {
    /// Whether ticks come at all: a positive, finite rate (NaN is neither).
    ticks: bool,
    /// How late a tick may wake, at most (microseconds): `late_max_us`, and less than half an
    /// interval so ticks never swap order; None when ticks are exact.
    late_bound_us: Option<f64>,
}

impl TickRate {
    pub(crate) fn of(t: &Ticker) -> TickRate {
        TickRate {
            ticks: t.pps > 0.0 && t.pps < f64::INFINITY,
            late_bound_us: if t.late_max_us <= 0.0 { None } else { Some(t.late_max_us.min(5e5 / t.pps)) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(phase_us: f64) -> TickTiming {
        TickTiming { phase_us, ..TickTiming::EXACT }
    }

    #[test]
    fn the_grid_keeps_its_phase_across_rates_and_starts_at_or_after_from() {
        // Phase 5 ms: at 60 pps ticks at 5, 21.667, 38.333 ms ...; at 30 pps at 5, 38.333 ms ...
        let t = Ticker::on_grid(&exact(5_000.0), 60.0, SimTime::ZERO);
        assert_eq!((t.next(), t.count), (SimTime(5_000), 0));
        let t = Ticker::on_grid(&exact(5_000.0), 30.0, SimTime(1_000_000));
        assert_eq!(t.next(), SimTime(1_005_000));
        let t = Ticker::on_grid(&exact(5_000.0), 30.0, SimTime(1_005_000));
        assert_eq!(t.next(), SimTime(1_005_000), "a grid instant at `from` is the next tick");
        let t = Ticker::on_grid(&exact(5_000.0), 30.0, SimTime(1_005_001));
        assert_eq!(t.next(), SimTime(1_038_333));
        // A phase beyond one interval is taken modulo it.
        let t = Ticker::on_grid(&exact(105_000.0), 60.0, SimTime::ZERO);
        assert_eq!(t.next(), SimTime(5_000));
        assert_eq!(Ticker::on_grid(&exact(5_000.0), 0.0, SimTime::ZERO).next(), SimTime(u64::MAX));
    }

    #[test]
    fn late_ticks_stay_within_their_bound_and_in_order() {
        let timing = TickTiming { phase_us: 2_000.0, late_max_us: 1_000.0, late_key: 3 };
        for (pps, bound_us) in [(60.0, 1_000.0), (5_000.0, 100.0)] {
            let mut t = Ticker::on_grid(&timing, pps, SimTime::ZERO);
            let (mut last, mut lates) = (SimTime::ZERO, Vec::new());
            for _ in 0..5_000 {
                let next = t.next();
                assert!(next > last || t.count == 0, "{pps} pps: tick {} at {next:?} after {last:?}", t.count);
                lates.push((next.0 - t.next_on_grid().0) as f64);
                last = next;
                t.count += 1;
            }
            let max = lates.iter().cloned().fold(0.0, f64::max);
            let mean = lates.iter().sum::<f64>() / lates.len() as f64;
            assert!(lates.iter().all(|l| (0.0..bound_us).contains(l)), "{pps} pps: max {max}");
            assert!((mean - bound_us / 2.0).abs() < bound_us * 0.05, "{pps} pps: mean lateness {mean}");
        }
    }

    #[test]
    fn seeded_phases_differ_per_side_and_seed_and_stay_within_one_interval() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let s = Scenario { seed, ..Scenario::default() };
            let (a, b) = (TickTiming::of(&s, Side::A), TickTiming::of(&s, Side::B));
            let interval = 0.0..1e6 / 60.0;
            assert!(interval.contains(&a.phase_us) && interval.contains(&b.phase_us), "seed {seed}: {a:?} {b:?}");
            assert!(a.phase_us != b.phase_us && a.late_key != b.late_key, "seed {seed}");
            assert_eq!((a.late_max_us, b.late_max_us), (1_000.0, 1_000.0));
            seen.insert((a.phase_us / 1e6 * 60.0 * 10.0) as u32);
        }
        assert_eq!(seen.len(), 10, "phases cover the interval: {seen:?}");
        let mut s = Scenario { tick_phase: TickPhase::Lockstep, ..Scenario::default() };
        assert_eq!((TickTiming::of(&s, Side::A), TickTiming::of(&s, Side::B)), (TickTiming::EXACT, TickTiming::EXACT));
        s.b.tick_phase_ms = Some(4.5);
        assert_eq!(TickTiming::of(&s, Side::B), exact(4_500.0));
        s.tick_phase = TickPhase::Seeded;
        s.tick_jitter_ms = 0.0;
        assert_eq!(TickTiming::of(&s, Side::B).phase_us, 4_500.0);
        assert_eq!(TickTiming::of(&s, Side::B).late_max_us, 0.0);
    }
}
