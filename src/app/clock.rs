//! Wall time for the frame loop, injected so replay speed is testable.
//!
//! Replay moves the cursor by the wall time measured between frames times the speed. egui's own
//! frame time (`stable_dt`) is not that: when the app repaints on a timer it falls back to a
//! predicted 1/60 s per frame, which capped replay at half speed at 30 frames/s. The app reads a
//! real monotonic clock ([`SystemClock`]); tests use a [`ManualClock`] they move by hand, with
//! frame times as irregular as they like.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A monotonic wall clock.
pub trait Clock: Send {
    /// Time since a fixed origin of this clock; never goes backwards.
    fn now(&self) -> Duration;
}

/// The real clock: time since the clock was made.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        Self { origin: Instant::now() }
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// A clock that moves only when told; clones share one time, so a test keeps a handle to the
/// clock it gave the app.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    nanos: Arc<AtomicU64>,
}

impl ManualClock {
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the clock forward by `d`.
    pub fn advance(&self, d: Duration) {
        self.nanos.fetch_add(d.as_nanos() as u64, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::SeqCst))
    }
}
