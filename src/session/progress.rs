//! How far a long load or save has got, shared between the thread doing it and the window that
//! shows a progress bar, and a way to ask it to stop.
//!
//! Plain atomics: the worker writes a phase and a count, the window reads them whenever it draws,
//! and neither ever waits for the other.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

/// The steps of opening or saving a session, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Waiting,
    /// Reading the file's bytes.
    Reading,
    /// Verifying the checksum over the text.
    Checking,
    /// Parsing the header and the events.
    Parsing,
    /// Feeding the events into the store and the panels' indexes.
    Indexing,
    /// Turning the events into text.
    Encoding,
    /// Writing the text beside the target and renaming it into place.
    Writing,
}

impl Phase {
    const ALL: [Phase; 7] = [
        Phase::Waiting,
        Phase::Reading,
        Phase::Checking,
        Phase::Parsing,
        Phase::Indexing,
        Phase::Encoding,
        Phase::Writing,
    ];

    /// What the phase is doing, for a progress bar's text.
    pub fn label(self) -> &'static str {
        match self {
            Phase::Waiting => "starting",
            Phase::Reading => "reading",
            Phase::Checking => "checking",
            Phase::Parsing => "parsing events",
            Phase::Indexing => "indexing",
            Phase::Encoding => "encoding events",
            Phase::Writing => "writing",
        }
    }

    /// Where the phase starts and how much of the whole it takes, for one overall fraction.
    ///
    /// Shares measured on a 1-million-event session (`examples/session_scale.rs`): parsing is most
    /// of a load, encoding most of a save.
    fn span(self) -> (f32, f32) {
        match self {
            Phase::Waiting => (0.0, 0.0),
            Phase::Reading => (0.0, 0.05),
            Phase::Checking => (0.05, 0.05),
            Phase::Parsing => (0.10, 0.70),
            Phase::Indexing => (0.80, 0.20),
            Phase::Encoding => (0.0, 0.85),
            Phase::Writing => (0.85, 0.15),
        }
    }
}

/// Progress of one job: its phase, and how much of the phase's `total` is `done`.
#[derive(Debug, Default)]
pub struct Progress {
    phase: AtomicU8,
    done: AtomicU64,
    total: AtomicU64,
    cancelled: AtomicBool,
}

impl Progress {
    pub fn new() -> Self {
        Self::default()
    }

    /// Enters `phase`, which has `total` units of work.
    pub fn start(&self, phase: Phase, total: u64) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        let i = Phase::ALL.iter().position(|p| *p == phase).unwrap_or(0);
        self.phase.store(i as u8, Ordering::Relaxed);
    }

    /// Records that `done` units of the current phase are finished.
    pub fn advance_to(&self, done: u64) {
        self.done.store(done, Ordering::Relaxed);
    }

    pub fn phase(&self) -> Phase {
        Phase::ALL.get(self.phase.load(Ordering::Relaxed) as usize).copied().unwrap_or(Phase::Waiting)
    }

    /// The share of the current phase done, 0 to 1.
    pub fn phase_fraction(&self) -> f32 {
        let total = self.total.load(Ordering::Relaxed);
        if total == 0 {
            return 0.0;
        }
        (self.done.load(Ordering::Relaxed) as f64 / total as f64).clamp(0.0, 1.0) as f32
    }

    /// The share of the whole job done, 0 to 1 (phases weighted by their usual cost).
    pub fn fraction(&self) -> f32 {
        let (start, len) = self.phase().span();
        (start + len * self.phase_fraction()).clamp(0.0, 1.0)
    }

    /// Asks the job to stop at its next progress report.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overall_fraction_grows_through_the_phases_of_a_load() {
        let p = Progress::new();
        let mut last = p.fraction();
        for phase in [Phase::Reading, Phase::Checking, Phase::Parsing, Phase::Indexing] {
            p.start(phase, 10);
            for done in [0, 5, 10] {
                p.advance_to(done);
                assert!(p.fraction() >= last, "{phase:?} {done}: {} < {last}", p.fraction());
                last = p.fraction();
            }
        }
        assert_eq!(last, 1.0);
        p.start(Phase::Parsing, 0);
        assert_eq!(p.phase_fraction(), 0.0, "no work known yet is no progress, not NaN");
    }
}
