//! How much of a frame the filter caches may spend checking rows they have not checked yet.
//!
//! A new filter over a million-event recording checks every row once (2-15 ms of work in a
//! release build, far more in a debug one): done in one frame it is the frame that misses the
//! 8 ms target. A count of rows per frame cannot bound that time, since a row of one filter costs
//! 20 times another's (`ack` follows the header through the log), so the caches share a
//! deadline per frame instead: the window starts a frame's budget ([`start_frame`]) before it
//! draws its views, every cache updated in that frame reads the same deadline, and one that
//! runs out stops and says how far it got (the views show "filtering... N %"). A cache always
//! checks at least [`MIN_ROWS`] rows per update, so it finishes even on a machine too loaded to
//! meet any deadline. Rows whose facts changed (a live packet acked) are always checked again:
//! that work is the new events', not the recording's.
//!
//! The clock is the app's (a frame's wall time); the protocol crate never sees it, and what a
//! filter matches never depends on it: only how many frames the answer takes.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// Time per frame the caches may spend on rows not yet checked: with a frame of 1.5-3.5 ms
/// without a filter (headless, 1280x800, a million events), a frame that builds stays near
/// half the 8 ms target.
pub const FRAME_BUDGET: Duration = Duration::from_millis(2);

/// Rows an update checks whatever the time left (progress under any load).
pub const MIN_ROWS: usize = 1024;

/// Rows between two reads of the clock.
const CHUNK_ROWS: usize = 256;

thread_local! {
    /// The time each frame may spend ([`FRAME_BUDGET`] unless a test sets another).
    static PER_FRAME: Cell<Duration> = const { Cell::new(FRAME_BUDGET) };
    /// This frame's deadline (`None`: no frame started on this thread, each update has its own).
    static FRAME_DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    /// A cache ran out of budget this frame: the window draws another.
    static PENDING: Cell<bool> = const { Cell::new(false) };
}

/// Starts a frame's budget: every [`Budget::frame`] until the next call shares its deadline.
pub fn start_frame() {
    FRAME_DEADLINE.with(|d| d.set(Some(Instant::now() + PER_FRAME.with(Cell::get))));
    PENDING.with(|p| p.set(false));
}

/// Sets the time per frame on this thread (tests: zero makes every update check exactly
/// [`MIN_ROWS`] new rows, so a build takes a known number of frames).
pub fn set_frame_budget(d: Duration) {
    PER_FRAME.with(|p| p.set(d));
}

/// Whether a cache stopped short since [`start_frame`] (the window asks for another frame).
pub fn pending() -> bool {
    PENDING.with(Cell::get)
}

/// How many rows not yet checked an update may check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Rows at most.
    rows: usize,
    /// Stop at this instant (after [`MIN_ROWS`]).
    deadline: Option<Instant>,
}

impl Budget {
    /// Every row (`export --filter`, `summary --filter`, tests that want the whole answer).
    pub const UNLIMITED: Budget = Budget { rows: usize::MAX, deadline: None };

    /// At most `rows` rows, whatever the time (tests that step a build row by row).
    pub const fn rows(rows: usize) -> Budget {
        Budget { rows, deadline: None }
    }

    /// The current frame's share: its deadline when the window started one, else
    /// [`FRAME_BUDGET`] from now.
    pub fn frame() -> Budget {
        let deadline = FRAME_DEADLINE.with(Cell::get).unwrap_or_else(|| Instant::now() + PER_FRAME.with(Cell::get));
        Budget { rows: usize::MAX, deadline: Some(deadline) }
    }

    /// Runs `check(i)` for rows `from..to` until the budget is spent; returns the end reached.
    /// Notes a pending frame when it stops short.
    pub fn run(self, from: usize, to: usize, mut check: impl FnMut(usize)) -> usize {
        let cap = to.min(from.saturating_add(self.rows));
        let mut i = from;
        while i < cap {
            let end = cap.min(i + CHUNK_ROWS);
            for k in i..end {
                check(k);
            }
            i = end;
            if i - from >= MIN_ROWS && self.deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
        }
        if i < to {
            PENDING.with(|p| p.set(true));
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spent_deadline_still_checks_the_minimum_and_says_more_is_pending() {
        start_frame();
        let spent = Budget { rows: usize::MAX, deadline: Some(Instant::now() - Duration::from_millis(1)) };
        let mut seen = Vec::new();
        let end = spent.run(10, 100_000, |i| seen.push(i));
        assert_eq!(end, 10 + MIN_ROWS);
        assert_eq!(seen, (10..10 + MIN_ROWS).collect::<Vec<_>>());
        assert!(pending());
        start_frame();
        assert!(!pending());
    }

    #[test]
    fn a_row_budget_checks_exactly_that_many_and_unlimited_checks_all() {
        let mut n = 0;
        assert_eq!(Budget::rows(300).run(0, 1000, |_| n += 1), 300);
        assert_eq!(n, 300);
        assert_eq!(Budget::UNLIMITED.run(5, 1000, |_| n += 1), 1000);
        assert_eq!(n, 300 + 995);
        assert_eq!(Budget::frame().run(7, 7, |_| n += 1), 7);
    }
}
