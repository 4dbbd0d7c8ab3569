//! Whether the window keeps up with a live run, and what it does when it does not.
//!
//! Two things can fall behind, and the user needs to know which (issue 25, defect 2: at 1000
//! packets/s on a loaded machine the window stopped advancing for ~30 s while the status bar
//! read "0 events/s"):
//! - the window: the run produced events faster than frames took them in (drawing took the
//!   frame). The window then *catches up*: it stops drawing the tab's views, spends the frame
//!   taking events in, and draws again once the gap is closed. No event is ever dropped: the
//!   run keeps every batch the window has not taken yet in its own backlog.
//! - the run itself: its thread could not simulate as fast as the wall clock (the machine is
//!   loaded, or the run has many clients). Nothing waits for the window then; it says so.
//!
//! Both are measured from the source's [`Progress`]; the rule has hysteresis (start catching up
//! at [`CATCH_UP_START`] behind, stop under [`CATCH_UP_STOP`]) so the views do not flicker on
//! and off at the edge.

use std::time::Duration;

use ackscope_protocol::SimTime;

use crate::model::verdict::thousands;
use crate::runtime::Progress;

/// Run time the window may trail the run by before it stops drawing views to catch up.
pub const CATCH_UP_START: Duration = Duration::from_millis(500);
/// Run time under which a window that was catching up draws its views again.
pub const CATCH_UP_STOP: Duration = Duration::from_millis(100);
/// Wall time the run may trail the wall clock by before the status bar says so.
pub const RUN_BEHIND_SHOWN: Duration = Duration::from_millis(250);
/// Most time a catching-up frame spends taking events in (a frame still comes every so often,
/// so the status bar moves and Stop or Pause still answer).
///
/// Under the 16 ms frame target with the status bar (issue 23): at 60 ms, each catching-up frame
/// of a 64-client run was a 60-70 ms frame, 20 ms of it on a core (`examples/live_clients.rs`,
/// 2026-11-28). A frame left behind asks for the next at once (`window::frame_ui`), so the
/// window still spends most of a core catching up; only a frame's fixed cost (the status bar,
/// about 1 ms) is paid more often.
pub const CATCH_UP_BUDGET: Duration = Duration::from_millis(12);
/// Most events taken in from one batch before a frame's budget is checked again: a batch is
/// whatever the run thread made since it last ran, seconds of events when it was starved.
///
/// A 64-client run's events fold at about 0.7 µs each, but at up to 5 µs while its structures
/// grow into fresh memory: 4,096 events then took 13-22 ms between two checks of the budget.
/// At 1,024, a piece in which several clients' logs outgrew their buffers at once (they grow in
/// step: the clients send at the same rate) still took 12-14 ms with 4,000-5,000 page faults
/// (`examples/live_clients.rs`, 2026-11-28); a piece of 256 holds 4 events per client of 64.
pub const INGEST_PIECE_EVENTS: usize = 256;

/// The window's lag behind its live run.
#[derive(Debug, Clone, PartialEq)]
pub struct Lag {
    /// The views are not drawn while the window takes the backlog in.
    pub catching_up: bool,
    /// Frames whose views were skipped to catch up, over this run.
    pub skipped_frames: u64,
    /// Run time between what the run reached and what the window took in (0 when nothing
    /// waits).
    pub window_behind: Duration,
    /// Events the run produced that the window has not taken yet.
    pub waiting_events: usize,
    /// Wall time the run's own thread trails the wall clock by.
    pub run_behind: Duration,
    /// Time a catching-up frame spends taking events in ([`CATCH_UP_BUDGET`]; tests shorten it
    /// to see several catching-up frames).
    pub catch_up_budget: Duration,
    /// Most events a catching-up frame takes in (no limit but the budget by default; tests set
    /// one so that catching up takes several frames however fast the machine and however the
    /// run thread cut its batches).
    pub catch_up_events: usize,
}

impl Default for Lag {
    fn default() -> Self {
        Self {
            catching_up: false,
            skipped_frames: 0,
            window_behind: Duration::ZERO,
            waiting_events: 0,
            run_behind: Duration::ZERO,
            catch_up_budget: CATCH_UP_BUDGET,
            catch_up_events: usize::MAX,
        }
    }
}

impl Lag {
    /// Reads the source's progress against the latest instant the window took in (`shown`);
    /// no progress (no live run, or a source that does not pace itself) is no lag.
    pub fn update(&mut self, progress: Option<Progress>, shown: SimTime) {
        let Some(p) = progress else {
            let skipped = self.skipped_frames;
            *self = Self { skipped_frames: skipped, ..self.settings_only() };
            return;
        };
        self.waiting_events = p.waiting_events;
        self.window_behind = if p.waiting_events == 0 {
            Duration::ZERO
        } else {
            Duration::from_micros(p.reached.0.saturating_sub(shown.0))
        };
        self.run_behind = p.behind_wall;
        if self.window_behind >= CATCH_UP_START {
            self.catching_up = true;
        } else if self.window_behind < CATCH_UP_STOP {
            self.catching_up = false;
        }
    }

    /// A new run: nothing skipped yet.
    pub fn reset(&mut self) {
        *self = self.settings_only();
    }

    /// No lag, with this one's catch-up budget and event limit.
    fn settings_only(&self) -> Self {
        Self { catch_up_budget: self.catch_up_budget, catch_up_events: self.catch_up_events, ..Self::default() }
    }

    /// The budget and event limit of this frame's intake: the catch-up ones while catching up,
    /// else `normal_budget` and no limit.
    pub fn intake(&self, normal_budget: Duration) -> (Duration, usize) {
        if self.catching_up {
            (self.catch_up_budget, self.catch_up_events)
        } else {
            (normal_budget, usize::MAX)
        }
    }

    /// What the status bar says about it, when there is anything to say: how far behind, and
    /// why.
    pub fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.catching_up || self.window_behind >= CATCH_UP_START {
            parts.push(format!(
                "window behind by {:.1} s ({} events waiting): drawing paused to catch up, no event dropped",
                self.window_behind.as_secs_f64(),
                thousands(self.waiting_events as u64)
            ));
        }
        if self.run_behind >= RUN_BEHIND_SHOWN {
            parts.push(format!(
                "run behind the wall clock by {:.1} s: the simulation cannot keep up (machine busy or too many clients)",
                self.run_behind.as_secs_f64()
            ));
        }
        if parts.is_empty() && self.skipped_frames > 0 {
            parts.push(format!("caught up ({} frames not drawn)", thousands(self.skipped_frames)));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(reached_ms: u64, waiting: usize, run_behind_ms: u64) -> Option<Progress> {
        Some(Progress {
            reached: SimTime(reached_ms * 1000),
            behind_wall: Duration::from_millis(run_behind_ms),
            waiting_events: waiting,
        })
    }

    #[test]
    fn the_window_catches_up_past_half_a_second_and_stops_under_a_tenth() {
        let mut lag = Lag::default();
        lag.update(progress(10_300, 900, 0), SimTime(10_000_000));
        assert!(!lag.catching_up && lag.describe().is_none(), "0.3 s behind: normal");
        lag.update(progress(12_400, 41_234, 0), SimTime(10_000_000));
        assert!(lag.catching_up);
        let text = lag.describe().unwrap();
        assert!(text.contains("window behind by 2.4 s (41,234 events waiting)"), "{text}");
        lag.skipped_frames = 3;
        lag.update(progress(12_400, 800, 0), SimTime(12_200_000));
        assert!(lag.catching_up, "0.2 s behind: still catching up (hysteresis)");
        lag.update(progress(12_400, 0, 0), SimTime(12_200_000));
        assert!(!lag.catching_up, "nothing waits: caught up");
        assert_eq!(lag.describe().unwrap(), "caught up (3 frames not drawn)");
    }

    #[test]
    fn a_run_behind_the_wall_clock_is_named_as_the_runs_not_the_windows() {
        let mut lag = Lag::default();
        lag.update(progress(5_000, 0, 1_800), SimTime(5_000_000));
        assert!(!lag.catching_up);
        let text = lag.describe().unwrap();
        assert!(text.starts_with("run behind the wall clock by 1.8 s"), "{text}");
        assert!(!text.contains("window behind"), "{text}");
        lag.update(None, SimTime(5_000_000));
        assert_eq!(lag.describe(), None, "no live run, no lag");
    }
}
