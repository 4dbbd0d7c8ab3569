//! A run's clock, shared by its real-time endpoints; pausable.

use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use ackscope_protocol::SimTime;

/// A run's clock, shared by its endpoints so their events share one time axis; pausable.
#[derive(Debug)]
pub struct RunClock {
    state: Mutex<ClockState>,
}

#[derive(Debug, Clone, Copy)]
struct ClockState {
    wall_base: Instant,
    sim_base: SimTime,
    paused: bool,
}

impl RunClock {
    /// A clock reading zero now.
    pub fn start() -> Self {
        Self { state: Mutex::new(ClockState { wall_base: Instant::now(), sim_base: SimTime::ZERO, paused: false }) }
    }

    fn lock(&self) -> MutexGuard<'_, ClockState> {
        // The state is plain data, valid even if a holder panicked.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Microseconds of running (not paused) time since the start.
    pub fn now(&self) -> SimTime {
        let s = *self.lock();
        if s.paused {
            s.sim_base
        } else {
            s.sim_base.plus_micros(s.wall_base.elapsed().as_micros() as u64)
        }
    }

    /// Freezes the clock (idempotent).
    pub fn pause(&self) {
        let mut s = self.lock();
        if !s.paused {
            s.sim_base = s.sim_base.plus_micros(s.wall_base.elapsed().as_micros() as u64);
            s.paused = true;
        }
    }

    /// Lets the clock run again from where it was frozen (idempotent).
    pub fn resume(&self) {
        let mut s = self.lock();
        if s.paused {
            s.wall_base = Instant::now();
            s.paused = false;
        }
    }

    pub fn is_paused(&self) -> bool {
        self.lock().paused
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn paused_clock_stands_still_and_resumes_where_it_stopped() {
        let c = RunClock::start();
        std::thread::sleep(Duration::from_millis(5));
        c.pause();
        let t = c.now();
        assert!(t >= SimTime(5_000), "{t:?}");
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(c.now(), t);
        c.resume();
        let after = c.now();
        assert!(after >= t && after < t.plus_micros(15_000), "{t:?} -> {after:?}");
    }
}
