//! The time cursor: live runs follow the newest event, replays scrub. Changed only through its
//! methods (views push `AppCommand`s that the app applies here).

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
}

impl Default for Playback {
    fn default() -> Self {
        Self { follow: true, cursor: SimTime::ZERO, playing: false, speed: 1.0 }
    }
}

impl Playback {
    /// The cursor for a recording that ends at `end`.
    pub fn cursor(&self, end: SimTime) -> SimTime {
        if self.follow {
            end
        } else {
            self.cursor.min(end)
        }
    }

    /// Puts the cursor at `t` and stops following the end.
    pub fn seek(&mut self, t: SimTime) {
        self.follow = false;
        self.cursor = t;
    }

    /// Follows the newest event again.
    pub fn follow_live(&mut self) {
        self.follow = true;
        self.playing = false;
    }

    /// Starts or stops replay from the cursor (at the end, replay restarts from zero).
    pub fn toggle_play(&mut self, end: SimTime) {
        if self.playing {
            self.playing = false;
            return;
        }
        let c = self.cursor(end);
        self.follow = false;
        self.cursor = if c >= end { SimTime::ZERO } else { c };
        self.playing = true;
    }

    /// Moves the cursor by `wall_seconds x speed` while playing; stops at `end`.
    pub fn advance(&mut self, wall_seconds: f64, end: SimTime) {
        if !self.playing || self.follow {
            return;
        }
        let step = (wall_seconds.max(0.0) * self.speed * 1e6) as u64;
        self.cursor = self.cursor.plus_micros(step);
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
