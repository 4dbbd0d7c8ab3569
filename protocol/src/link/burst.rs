//! The Gilbert-Elliott burst state of one link direction, on a time grid of its own.
//!
//! The chain advances once per [`BURST_STEP_US`] (1 ms) of virtual time, not once per packet, so
//! whether the link is in its bad state at an instant depends only on the seed, the direction and
//! the instant: a strategy that sends fewer packets meets the same bursts. `p_percent` and
//! `r_percent` are therefore chances *per 1 ms step*: a burst lasts `100 / r_percent` ms on average
//! and a good spell `100 / p_percent` ms, and the link is bad `p / (p + r)` of the time. A packet
//! sent during step `k` (`k = floor(t / 1 ms)`) sees the state of step `k`.
//!
//! Each step's transition is one uniform draw `u_k` keyed by (seed, direction, k), read through a
//! coupling that makes some steps forget the past: with `p + r <= 100`, `u_k < p` sets bad,
//! `p <= u_k < p + r` sets good, anything else keeps the state. That has exactly the chain's
//! transition chances (good to bad `p`, bad to good `r`), and the state at step `k` is the value
//! set by the latest setting step at or before `k`. So the state is found by looking back from `k`
//! to the nearest setting step (on average `100 / (p + r)` steps) or to a step already known, never
//! by walking forward through a long idle gap step by step. With `p + r > 100` the chain flips more
//! often than it stays: there `u_k < p + r - 100` flips the state and the rest sets bad or good in
//! the same proportions, and the look-back counts flips.
//!
//! Live changes: new parameters apply from the grid step containing the instant of the change, the
//! state carrying over; each change is a segment, and the look-back crosses into the previous
//! segment with that segment's parameters. `p_percent = 0` turns bursts off: the state is good
//! throughout such a segment (and a later segment starts from good), as before.

use std::collections::VecDeque;

use super::config::BurstLoss;
use super::draws::uniform;
use crate::event::SimTime;

/// Length of one step of the burst chain's own time grid.
pub const BURST_STEP_US: u64 = 1000;

/// Known states kept to answer look-backs: enough for sends that reach a receiving endpoint
/// slightly out of order (the UDP runtime), few enough to search in no time.
const KNOWN_STATES: usize = 32;

/// What one step's draw does to the state.
enum Transition {
    Set(bool),
    Flip,
    Keep,
}

/// The Gilbert-Elliott state of one direction as a function of the grid step; see the module doc.
#[derive(Debug, Clone)]
pub struct BurstChain {
    key: u64,
    /// Parameter segments as (first step, parameters), in step order; the first starts at 0.
    segments: Vec<(u64, BurstLoss)>,
    /// States already found, as (step, bad), in step order.
    known: VecDeque<(u64, bool)>,
    /// Steps looked at so far (a cost figure for tests).
    looked_at: u64,
}

impl BurstChain {
    /// A chain drawing from stream `key`, with `burst` from step 0.
    pub fn new(key: u64, burst: BurstLoss) -> Self {
        Self { key, segments: vec![(0, burst)], known: VecDeque::new(), looked_at: 0 }
    }

    /// The grid step that contains `t`.
    pub fn step_of(t: SimTime) -> u64 {
        t.0 / BURST_STEP_US
    }

    /// Takes `burst` from the step containing `at` on (the same parameters are no change).
    pub fn set_params(&mut self, at: SimTime, burst: BurstLoss) {
        let step = Self::step_of(at);
        if self.segments.last().is_some_and(|&(s, b)| s <= step && b == burst) {
            return;
        }
        self.segments.retain(|&(s, _)| s < step);
        match self.segments.last() {
            None => self.segments.push((0, burst)),
            Some(&(_, b)) if b != burst => self.segments.push((step, burst)),
            Some(_) => {}
        }
        self.known.retain(|&(s, _)| s < step);
    }

    /// Whether the link is in its bad state at `t`.
    pub fn is_bad_at(&mut self, t: SimTime) -> bool {
        let step = Self::step_of(t);
        let bad = self.state_at(step);
        let i = self.known.partition_point(|(s, _)| *s < step);
        if self.known.get(i).is_none_or(|(s, _)| *s != step) {
            self.known.insert(i, (step, bad));
            if self.known.len() > KNOWN_STATES {
                self.known.pop_front();
            }
        }
        bad
    }

    /// Steps looked at so far, over all queries.
    pub fn steps_looked_at(&self) -> u64 {
        self.looked_at
    }

    /// The state at `step`: look back to the nearest setting step, a known state, or the start.
    fn state_at(&mut self, step: u64) -> bool {
        let known_i = self.known.partition_point(|(s, _)| *s <= step);
        let known = known_i.checked_sub(1).map(|i| self.known[i]);
        if let Some((s, bad)) = known {
            if s == step {
                return bad;
            }
        }
        let floor = known.map_or(0, |(s, _)| s + 1);
        let mut flips = false;
        let mut seg = self.segments.partition_point(|(s, _)| *s <= step) - 1;
        let mut k = step;
        loop {
            let (seg_start, burst) = self.segments[seg];
            let until = seg_start.max(floor);
            // Look back through this segment (down to `until`).
            let found = loop {
                self.looked_at += 1;
                match self.transition(burst, k) {
                    Transition::Set(bad) => break Some(bad),
                    Transition::Flip => flips = !flips,
                    Transition::Keep => {}
                }
                if k == until {
                    break None;
                }
                k -= 1;
            };
            if let Some(bad) = found {
                return bad ^ flips;
            }
            if until == floor {
                if let Some((_, bad)) = known {
                    return bad ^ flips;
                }
                if floor == 0 {
                    // Before step 0 the link is good.
                    return flips;
                }
            }
            // Into the previous segment.
            seg -= 1;
            k -= 1;
        }
    }

    /// What step `k`'s draw does under `burst`.
    fn transition(&self, burst: BurstLoss, k: u64) -> Transition {
        let p = burst.p_percent.clamp(0.0, 100.0);
        let r = burst.r_percent.clamp(0.0, 100.0);
        if p <= 0.0 || p.is_nan() {
            return Transition::Set(false);
        }
        let u = uniform(self.key, k) * 100.0;
        let flip = (p + r - 100.0).max(0.0);
        if u < flip {
            Transition::Flip
        } else if u < p {
            Transition::Set(true)
        } else if u < p + r - flip {
            Transition::Set(false)
        } else {
            Transition::Keep
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn burst(p_percent: f64, r_percent: f64) -> BurstLoss {
        BurstLoss { p_percent, r_percent, loss_in_bad_percent: 100.0 }
    }

    /// The chain walked forward one step at a time, the plain way, with the same draws.
    fn walk(key: u64, segments: &[(u64, BurstLoss)], steps: u64) -> Vec<bool> {
        let mut bad = false;
        let mut out = Vec::new();
        for k in 0..steps {
            let b = segments.iter().rev().find(|(s, _)| *s <= k).unwrap().1;
            let (p, r) = (b.p_percent, b.r_percent);
            if p <= 0.0 {
                bad = false;
            } else {
                let u = uniform(key, k) * 100.0;
                let flip = (p + r - 100.0).max(0.0);
                bad = if u < flip {
                    !bad
                } else if u < p {
                    true
                } else if u < p + r - flip {
                    false
                } else {
                    bad
                };
            }
            out.push(bad);
        }
        out
    }

    #[test]
    fn looking_back_gives_the_walked_chain_in_any_query_order_across_live_changes() {
        let key = 77;
        let segments =
            [(0, burst(2.0, 10.0)), (3_000, burst(0.0, 10.0)), (4_000, burst(70.0, 60.0)), (6_000, burst(0.3, 1.0))];
        let truth = walk(key, &segments, 20_000);
        let mut chain = BurstChain::new(key, segments[0].1);
        for (s, b) in &segments[1..] {
            chain.set_params(SimTime(s * BURST_STEP_US + 400), *b);
        }
        // Forward at every step, then at scattered steps both ways (a fresh chain each).
        for (k, want) in truth.iter().enumerate() {
            assert_eq!(chain.is_bad_at(SimTime(k as u64 * BURST_STEP_US + 999)), *want, "step {k}");
        }
        let mut chain2 = BurstChain::new(key, segments[0].1);
        for (s, b) in &segments[1..] {
            chain2.set_params(SimTime(s * BURST_STEP_US), *b);
        }
        let mut k = 19_999u64;
        while k > 0 {
            assert_eq!(chain2.is_bad_at(SimTime(k * BURST_STEP_US)), truth[k as usize], "step {k} backwards");
            k = k.saturating_sub(1 + k % 37);
        }
    }

    #[test]
    fn a_change_during_the_run_applies_from_its_step_and_the_past_stays() {
        let key = 5;
        let mut chain = BurstChain::new(key, burst(2.0, 10.0));
        let before: Vec<bool> = (0..1_000).map(|k| chain.is_bad_at(SimTime(k * BURST_STEP_US))).collect();
        chain.set_params(SimTime(1_000 * BURST_STEP_US), burst(100.0, 0.0));
        assert!(chain.is_bad_at(SimTime(1_000 * BURST_STEP_US)), "p = 100 % turns bad at once");
        let again: Vec<bool> = (0..1_000).map(|k| chain.is_bad_at(SimTime(k * BURST_STEP_US))).collect();
        assert_eq!(before, again);
        chain.set_params(SimTime(2_000 * BURST_STEP_US), burst(0.0, 0.0));
        assert!(!chain.is_bad_at(SimTime(2_000 * BURST_STEP_US)), "p = 0 turns bursts off");
        chain.set_params(SimTime(3_000 * BURST_STEP_US), burst(100.0, 0.0));
        assert!((3_000..3_500).all(|k| chain.is_bad_at(SimTime(k * BURST_STEP_US))));
    }

    #[test]
    fn bursts_have_the_configured_share_and_length_in_time() {
        for (p, r) in [(2.0, 10.0), (0.5, 4.0), (80.0, 60.0)] {
            let mut chain = BurstChain::new(3, burst(p, r));
            let states: Vec<bool> = (0..400_000u64).map(|k| chain.is_bad_at(SimTime(k * BURST_STEP_US))).collect();
            let bad = states.iter().filter(|b| **b).count() as f64 / states.len() as f64;
            let runs = states.windows(2).filter(|w| !w[0] && w[1]).count() as f64;
            let share = p / (p + r);
            assert!((bad - share).abs() < 0.03, "p {p} r {r}: bad {bad} vs {share}");
            let mean_ms = bad * states.len() as f64 / runs;
            let expect_ms = 100.0 / r;
            assert!(
                (mean_ms - expect_ms).abs() < 0.1 * expect_ms,
                "p {p} r {r}: bursts of {mean_ms} ms vs {expect_ms}"
            );
        }
    }

    #[test]
    fn a_long_idle_gap_is_not_walked_step_by_step() {
        let mut chain = BurstChain::new(11, burst(0.5, 2.0));
        chain.is_bad_at(SimTime::ZERO);
        for hour in 1..=10u64 {
            chain.is_bad_at(SimTime(hour * 3_600_000_000));
        }
        // Ten gaps of 3.6 million steps each; a look-back stops at the nearest setting step
        // (40 steps on average at p + r = 2.5 %).
        assert!(chain.steps_looked_at() < 2_000, "{} steps looked at", chain.steps_looked_at());
    }
}
