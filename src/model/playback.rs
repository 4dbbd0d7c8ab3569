//! The time cursor: live runs follow the newest event, replays scrub. Changed only through its
//! methods (views push `AppCommand`s that the app applies here).
//!
//! Replay is moved by wall time the app measures ([`Playback::advance_by`]); the fraction of a
//! microsecond each step cannot move is carried to the next, so over any number of frames the
//! cursor moves by exactly the wall time times the speed.

use std::time::Duration;

use ackscope_protocol::SimTime;

/// Playback speeds offered in replay.
pub const SPEEDS: [f64; 7] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0];

#[derive(Debug, Clone, PartialEq)]
pub struct Playback {
    /// When true the cursor is always the newest event (live view).
    pub follow: bool,
    cursor: SimTime,
    pub playing: bool,
    pub speed: f64,
    /// Nanoseconds of virtual time owed to the cursor by earlier steps (less than one microsecond).
    carry_ns: f64,
    /// A paused live view's instant: following, the cursor stays where the user paused it while
    /// the events the run had made by then still come in ([`Playback::hold_at`]).
    hold: Option<SimTime>,
}

impl Default for Playback {
    fn default() -> Self {
        Self { follow: true, cursor: SimTime::ZERO, playing: false, speed: 1.0, carry_ns: 0.0, hold: None }
    }
}

impl Playback {
    /// The cursor for a recording that ends at `end`.
    pub fn cursor(&self, end: SimTime) -> SimTime {
        if self.follow {
            self.hold.map_or(end, |h| h.min(end))
        } else {
            self.cursor.min(end)
        }
    }

    /// Puts the cursor at `t` and stops following the end.
    pub fn seek(&mut self, t: SimTime) {
        self.follow = false;
        self.hold = None;
        self.cursor = t;
        self.carry_ns = 0.0;
    }

    /// Follows the newest event again.
    pub fn follow_live(&mut self) {
        self.follow = true;
        self.hold = None;
        self.playing = false;
    }

    /// Keeps a following cursor at `t` (a live run paused there): a run thread that was behind
    /// and the window's queued batches still deliver what the run made before it took the
    /// pause, and the view must not run on with them after the user stopped it.
    pub fn hold_at(&mut self, t: SimTime) {
        if self.follow {
            self.hold = Some(t);
        }
    }

    /// Follows the newest event again after [`Playback::hold_at`] (the run resumed).
    pub fn release_hold(&mut self) {
        self.hold = None;
    }

    /// Starts or stops replay from the cursor (at the end, replay restarts from zero).
    pub fn toggle_play(&mut self, end: SimTime) {
        if self.playing {
            self.playing = false;
            return;
        }
        let c = self.cursor(end);
        self.follow = false;
        self.hold = None;
        self.cursor = if c >= end { SimTime::ZERO } else { c };
        self.carry_ns = 0.0;
        self.playing = true;
    }

    /// True while replay moves the cursor on its own.
    pub fn is_replaying(&self) -> bool {
        self.playing && !self.follow
    }

    /// Moves the cursor by `wall_seconds x speed` while playing; stops at `end`.
    pub fn advance(&mut self, wall_seconds: f64, end: SimTime) {
        self.advance_by(Duration::from_secs_f64(wall_seconds.max(0.0)), end);
    }

    /// Moves the cursor by `wall x speed` while playing; stops at `end`.
    pub fn advance_by(&mut self, wall: Duration, end: SimTime) {
        if !self.is_replaying() {
            return;
        }
        let ns = wall.as_nanos() as f64 * self.speed.max(0.0) + self.carry_ns;
        let step = (ns / 1000.0).floor();
        self.carry_ns = ns - step * 1000.0;
        self.cursor = self.cursor.plus_micros(step as u64);
        if self.cursor >= end {
            self.cursor = end;
            self.playing = false;
        }
    }

    /// Steps the cursor by `delta_us` (negative = back), clamped to the recording.
    pub fn step(&mut self, delta_us: i64, end: SimTime) {
        let c = self.cursor(end).0 as i64;
        self.seek(SimTime((c + delta_us).clamp(0, end.0 as i64) as u64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_advances_at_speed_and_stops_at_the_end() {
        let end = SimTime(10_000_000);
        let mut p = Playback::default();
        assert_eq!(p.cursor(end), end, "live follows the end");
        p.seek(SimTime(1_000_000));
        p.speed = 4.0;
        p.toggle_play(end);
        p.advance(0.5, end);
        assert_eq!(p.cursor(end), SimTime(3_000_000));
        p.advance(10.0, end);
        assert_eq!(p.cursor(end), end);
        assert!(!p.playing);
        p.toggle_play(end);
        assert_eq!(p.cursor(end), SimTime::ZERO, "play at the end restarts");
        p.step(-5, end);
        assert_eq!(p.cursor(end), SimTime::ZERO);
        p.follow_live();
        assert_eq!(p.cursor(end), end);
    }
}
