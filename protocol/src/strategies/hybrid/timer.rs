//! How tight the resend timer runs: its multiple of the RTT variation, from how much the losses
//! weigh in the tail and whether the timer's own resends proved needed.
//!
//! TCP's `srtt + 4 x rttvar` is patient: on a jittery path a lost message waits for it (or for
//! the Nak, which waits for the reorder window) long after its ack could have come. A tighter
//! multiple resends sooner and on the grid wins the jittery lossy cells (README, "hybrid"), but
//! on a lossless jittery path it fires before one ack in six, and each such resend is a message
//! sent twice for nothing. So the multiple is chosen from what the endpoint measures:
//!
//! - before the first RTT sample, the loose one (`rttvar_factor`, TCP's 4): the timer is made of
//!   the assumed RTT then, and a tight one fires early on a long path;
//! - while the lost messages and those queued behind them until a Nak are more than the tail
//!   share (the measure the copies use), the tight one (`tight_rttvar_factor`): how soon a lost
//!   message goes again is the p99 then, and its spurious resends are the price of it;
//! - below that share the losses are outside the p99 and only the bytes of spurious resends
//!   count: as Eifel (RFC 3522) and F-RTO (RFC 5682) tell a spurious timeout from the
//!   original's ack, each packet whose messages went again on the timer and was acked after all
//!   moves the multiple [`BACK_OFF`] toward the loose one, and each that settled as lost moves
//!   it [`TIGHTEN`] toward the tight one. A path that never loses is back at TCP's timer after
//!   a few spurious resends.
//!
//! Backing off in lossy jittery cells as well (the rule without the tail share) gave back what
//! the tight timer won there: 52-53 of 80 on some seed sets (README lists the variants).

/// Added to the multiple for each packet whose timer resends proved spurious.
pub const BACK_OFF: f64 = 1.0;
/// Taken off the multiple for each packet whose timer resends proved needed.
pub const TIGHTEN: f64 = 0.25;

/// The timer's multiple of the RTT variation, between the tight and the loose one.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TimerFactor {
    /// Unclamped: the settings may change while running, and the value is clamped where read.
    k: f64,
    /// Spurious and needed outcomes seen.
    spurious: u64,
    needed: u64,
}

fn bounds(tight: f64, loose: f64) -> (f64, f64) {
    let loose = if loose.is_finite() { loose.max(0.0) } else { 0.0 };
    let tight = if tight.is_finite() { tight.max(0.0).min(loose) } else { loose };
    (tight, loose)
}

impl TimerFactor {
    /// The multiple in force: `loose` before the first RTT sample, `tight` while losses reach
    /// the tail share, else the learnt one (the tight one until a timer resend proves spurious).
    pub fn factor(&self, has_sample: bool, losses_in_tail: bool, tight: f64, loose: f64) -> f64 {
        let (tight, loose) = bounds(tight, loose);
        match (has_sample, losses_in_tail) {
            (false, _) => loose,
            (true, true) => tight,
            (true, false) => self.k.clamp(tight, loose),
        }
    }

    /// `spurious` packets' timer resends proved spurious and `needed` needed; while losses reach
    /// the tail share spurious ones are the price of a quick recovery and do not back it off.
    pub fn learn(&mut self, spurious: u32, needed: u32, losses_in_tail: bool, tight: f64, loose: f64) {
        let (tight, loose) = bounds(tight, loose);
        let mut k = self.k.clamp(tight, loose);
        for _ in 0..if losses_in_tail { 0 } else { spurious } {
            k = (k + BACK_OFF).min(loose);
        }
        for _ in 0..needed {
            k = (k - TIGHTEN).max(tight);
        }
        self.k = k;
        self.spurious += spurious as u64;
        self.needed += needed as u64;
    }

    /// Packets whose timer resends proved spurious and needed, since creation.
    pub fn outcomes(&self) -> (u64, u64) {
        (self.spurious, self.needed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loose_before_a_sample_tight_after_and_backs_off_on_spurious_resends() {
        let mut t = TimerFactor::default();
        assert_eq!(t.factor(false, false, 1.25, 4.0), 4.0, "the assumed RTT: TCP's patience");
        assert_eq!(t.factor(true, false, 1.25, 4.0), 1.25);
        t.learn(1, 0, false, 1.25, 4.0);
        assert_eq!(t.factor(true, false, 1.25, 4.0), 2.25);
        t.learn(5, 0, false, 1.25, 4.0);
        assert_eq!(t.factor(true, false, 1.25, 4.0), 4.0, "never past the loose one");
        t.learn(0, 4, false, 1.25, 4.0);
        assert_eq!(t.factor(true, false, 1.25, 4.0), 3.0, "needed resends tighten it again");
        t.learn(0, 100, false, 1.25, 4.0);
        assert_eq!(t.factor(true, false, 1.25, 4.0), 1.25, "never past the tight one");
        assert_eq!(t.outcomes(), (6, 104));
    }

    #[test]
    fn while_losses_reach_the_tail_it_stays_tight_and_spurious_resends_do_not_back_it_off() {
        let mut t = TimerFactor::default();
        t.learn(10, 0, true, 1.0, 4.0);
        assert_eq!(t.factor(true, true, 1.0, 4.0), 1.0);
        assert_eq!(t.factor(true, false, 1.0, 4.0), 1.0, "nothing learnt while the losses mattered");
        assert_eq!(t.factor(false, true, 1.0, 4.0), 4.0, "no sample yet: loose");
        t.learn(2, 0, false, 1.0, 4.0);
        assert_eq!(t.factor(true, false, 1.0, 4.0), 3.0);
        assert_eq!(t.factor(true, true, 1.0, 4.0), 1.0, "tight again once losses reach the tail");
    }

    #[test]
    fn a_tight_factor_above_the_loose_one_or_nonsense_keeps_the_loose_one() {
        let mut t = TimerFactor::default();
        assert_eq!(t.factor(true, false, 8.0, 4.0), 4.0);
        t.learn(0, 10, false, 8.0, 4.0);
        assert_eq!(t.factor(true, false, 8.0, 4.0), 4.0);
        assert_eq!(t.factor(true, false, f64::NAN, 4.0), 4.0);
        assert_eq!(t.factor(true, false, 1.25, f64::NAN), 0.0);
        t.learn(3, 3, false, f64::INFINITY, f64::INFINITY);
        assert!(t.factor(true, false, 1.25, 4.0).is_finite());
    }
}
