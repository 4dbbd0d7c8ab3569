//! What a hybrid endpoint learns about its path from its own packets: the round trip and how much
//! it varies, how often packets are lost and whether losses come in bursts, how fast it sends
//! reliable messages and how large they are.
//!
//! Every estimator here is fed only what the endpoint itself sees (ack arrival times, which of its
//! packets the peer's ack bits name, its own messages), never the link's settings; none yields NaN
//! or infinity, whatever it is fed.

use std::collections::VecDeque;

use crate::event::SimTime;

/// Smoothed RTT and its mean deviation, as TCP (RFC 6298), ENet and KCP keep them: a resend timer
/// of `srtt + 4 x rttvar` waits just long enough on a steady path and stretches on a jittery one,
/// where a fixed multiple of the RTT either fires early (jitter) or late (steady).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RttVar {
    srtt_ms: Option<f64>,
    rttvar_ms: f64,
}

/// Weight of a new sample in the smoothed RTT (RFC 6298's alpha).
const SRTT_GAIN: f64 = 0.125;
/// Weight of a new deviation in the RTT variation (RFC 6298's beta).
const RTTVAR_GAIN: f64 = 0.25;

impl RttVar {
    /// Takes one RTT sample; a negative or non-finite one is ignored.
    pub fn sample(&mut self, rtt_ms: f64) {
        if !rtt_ms.is_finite() || rtt_ms < 0.0 {
            return;
        }
        match self.srtt_ms {
            None => {
                self.srtt_ms = Some(rtt_ms);
                self.rttvar_ms = rtt_ms / 2.0;
            }
            Some(s) => {
                self.rttvar_ms += ((s - rtt_ms).abs() - self.rttvar_ms) * RTTVAR_GAIN;
                self.srtt_ms = Some(s + (rtt_ms - s) * SRTT_GAIN);
            }
        }
    }

    pub fn has_sample(&self) -> bool {
        self.srtt_ms.is_some()
    }

    /// The smoothed RTT, `before` until the first sample.
    pub fn srtt_ms(&self, before: f64) -> f64 {
        finite_or_zero(self.srtt_ms.unwrap_or(before))
    }

    /// The RTT variation, half of `before` until the first sample (as RFC 6298 starts it).
    pub fn rttvar_ms(&self, before: f64) -> f64 {
        finite_or_zero(if self.srtt_ms.is_some() { self.rttvar_ms } else { before / 2.0 })
    }
}

fn finite_or_zero(x: f64) -> f64 {
    if x.is_finite() {
        x.max(0.0)
    } else {
        0.0
    }
}

/// Send-time gaps at which [`LossModel`] measures the chance that a packet is lost given that an
/// earlier one was: 0 is "the very next packet". A copy sent this long after its first carrier
/// meets that chance.
pub const COPY_GAPS_MS: [f64; 5] = [0.0, 20.0, 40.0, 80.0, 160.0];

/// Packets over which the loss rate is averaged (exponentially decayed counts).
const LOSS_WINDOW_PACKETS: f64 = 512.0;
/// Loss pairs over which each gap's conditional loss is averaged.
const PAIR_WINDOW: f64 = 64.0;
/// Pseudo-pairs at the plain loss rate mixed into each conditional loss: until pairs are seen,
/// losses are taken as independent.
const PAIR_PRIOR: f64 = 2.0;
/// Outcomes kept to find, for a new one, the losses it follows at each gap.
const HISTORY: usize = 256;

/// The loss rate of the endpoint's packets and how bursty it is, from their outcomes in send
/// order (acked, or named missing by the peer's ack bits).
///
/// Burstiness is measured where it matters to a copy: for each gap `g` of [`COPY_GAPS_MS`], the
/// chance that the first packet sent at least `g` after a lost one is lost too. With independent
/// loss every gap reads the loss rate; in bursts the short gaps read far more, and the gap at
/// which the chance falls back tells how far a copy must trail its first carrier to escape.
#[derive(Debug, Clone)]
pub struct LossModel {
    /// The latest outcomes, oldest first: (send time, lost).
    history: VecDeque<(SimTime, bool)>,
    lost: f64,
    total: f64,
    /// Per gap: decayed count of (lost after a loss, pairs).
    pairs: [(f64, f64); COPY_GAPS_MS.len()],
}

impl Default for LossModel {
    fn default() -> Self {
        Self { history: VecDeque::with_capacity(HISTORY), lost: 0.0, total: 0.0, pairs: Default::default() }
    }
}

fn decay_add(count: &mut f64, window: f64, add: f64) {
    *count = *count * (1.0 - 1.0 / window) + add;
}

impl LossModel {
    /// The outcome of the next packet in send order (sent at `sent_at`, no earlier than the last).
    pub fn observe(&mut self, sent_at: SimTime, lost: bool) {
        let add = lost as u8 as f64;
        decay_add(&mut self.lost, LOSS_WINDOW_PACKETS, add);
        decay_add(&mut self.total, LOSS_WINDOW_PACKETS, 1.0);
        let last = self.history.len().checked_sub(1);
        for (k, gap_ms) in COPY_GAPS_MS.iter().enumerate() {
            let gap_us = (gap_ms * 1000.0) as u64;
            // The losses `i` for which this packet is the first one sent at least `gap` later:
            // the previous packet if it is (its own gap reached), any older one whose gap the
            // previous packet had not reached yet.
            let prev_at = last.map(|l| self.history[l].0);
            for (n, &(at, was_lost)) in self.history.iter().enumerate().rev() {
                let due = at.plus_micros(gap_us);
                let first_after = due <= sent_at && (Some(n) == last || prev_at.is_some_and(|p| due > p));
                if was_lost && first_after {
                    let p = &mut self.pairs[k];
                    decay_add(&mut p.0, PAIR_WINDOW, add);
                    decay_add(&mut p.1, PAIR_WINDOW, 1.0);
                }
                if Some(n) != last && prev_at.is_some_and(|p| due <= p) {
                    break; // every older packet's gap was reached before the previous one
                }
            }
        }
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back((sent_at, lost));
    }

    /// Share of packets lost (0 before any outcome).
    pub fn loss(&self) -> f64 {
        if self.total > 0.0 {
            (self.lost / self.total).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// The chance that the first packet sent at least `COPY_GAPS_MS[k]` after a lost one is lost.
    pub fn loss_after_loss(&self, k: usize) -> f64 {
        let (lost, n) = self.pairs[k.min(COPY_GAPS_MS.len() - 1)];
        ((lost + PAIR_PRIOR * self.loss()) / (n + PAIR_PRIOR)).clamp(0.0, 1.0)
    }

    /// Outcomes seen (decayed over [`LOSS_WINDOW_PACKETS`]).
    pub fn weight(&self) -> f64 {
        self.total
    }
}

/// Events per second, exponentially decayed over `TAU_S`: how fast the application hands the
/// endpoint reliable messages (how many queue behind one that waits for a resend).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RateMeter {
    /// Rate as of `at`.
    rate_hz: f64,
    at: SimTime,
}

const RATE_TAU_S: f64 = 2.0;

impl RateMeter {
    fn decayed(&self, now: SimTime) -> f64 {
        let dt = now.saturating_since(self.at).as_secs_f64();
        self.rate_hz * (-dt / RATE_TAU_S).exp()
    }

    /// Counts `n` events at `now` (no earlier than the last call).
    pub fn add(&mut self, now: SimTime, n: usize) {
        self.rate_hz = self.decayed(now) + n as f64 / RATE_TAU_S;
        self.at = now;
    }

    /// Events per second as of `now`.
    pub fn rate_hz(&self, now: SimTime) -> f64 {
        finite_or_zero(self.decayed(now))
    }
}

/// Sizes (bits) of the latest reliable messages, to tell which share of them is largest.
#[derive(Debug, Clone, Default)]
pub struct SizeSample {
    recent: VecDeque<usize>,
    sorted: Vec<usize>,
}

const SIZE_SAMPLE: usize = 64;

impl SizeSample {
    pub fn add(&mut self, bits: usize) {
        if self.recent.len() == SIZE_SAMPLE {
            self.recent.pop_front();
        }
        self.recent.push_back(bits);
    }

    /// The smallest size above which at most `share` (0..=1) of the latest messages lie: messages
    /// larger than it are that largest share. None when no message was seen or `share` is 0.
    pub fn above_share(&mut self, share: f64) -> Option<usize> {
        if self.recent.is_empty() || share.is_nan() || share <= 0.0 {
            return None;
        }
        self.sorted.clear();
        self.sorted.extend(self.recent.iter().copied());
        self.sorted.sort_unstable();
        let n = self.sorted.len();
        let keep = ((1.0 - share.min(1.0)) * n as f64).ceil() as usize;
        // Sizes <= the threshold are kept: at least `keep` messages, the rest strictly larger.
        Some(if keep == 0 { 0 } else { self.sorted[keep - 1] })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime(x * 1000)
    }

    #[test]
    fn rttvar_follows_rfc_6298_and_ignores_nonsense() {
        let mut r = RttVar::default();
        assert_eq!((r.srtt_ms(100.0), r.rttvar_ms(100.0)), (100.0, 50.0), "before any sample");
        r.sample(f64::NAN);
        r.sample(-1.0);
        r.sample(f64::INFINITY);
        assert!(!r.has_sample());
        r.sample(200.0);
        assert_eq!((r.srtt_ms(0.0), r.rttvar_ms(0.0)), (200.0, 100.0));
        r.sample(100.0);
        // rttvar = 0.75 x 100 + 0.25 x |200 - 100|; srtt = 0.875 x 200 + 0.125 x 100.
        assert_eq!((r.srtt_ms(0.0), r.rttvar_ms(0.0)), (187.5, 100.0));
        for _ in 0..200 {
            r.sample(100.0);
        }
        assert!((r.srtt_ms(0.0) - 100.0).abs() < 1e-6 && r.rttvar_ms(0.0) < 1e-6, "{r:?}");
    }

    #[test]
    fn loss_model_reads_independent_loss_as_the_same_chance_at_every_gap() {
        let mut m = LossModel::default();
        assert_eq!(m.loss(), 0.0);
        // 20 % independent loss (a fixed xorshift stream), packets 30 ms apart.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            m.observe(ms(i * 30), x.is_multiple_of(5));
        }
        assert!((m.loss() - 0.2).abs() < 0.05, "{}", m.loss());
        for (k, gap_ms) in COPY_GAPS_MS.iter().enumerate() {
            let q = m.loss_after_loss(k);
            assert!((q - 0.2).abs() < 0.12, "gap {gap_ms} ms: {q}");
        }
    }

    #[test]
    fn loss_model_reads_a_loss_never_followed_by_another_as_no_burst() {
        let mut m = LossModel::default();
        // Every 4th packet lost, 30 ms apart: the first packet at least 0, 20, 40, 80 or 160 ms
        // after a loss is 1, 1, 2, 3 or 6 packets later, never a multiple of 4.
        for i in 0..2000u64 {
            m.observe(ms(i * 30), i % 4 == 0);
        }
        assert!((m.loss() - 0.25).abs() < 0.01, "{}", m.loss());
        for (k, gap_ms) in COPY_GAPS_MS.iter().enumerate() {
            assert!(m.loss_after_loss(k) < 0.05, "gap {gap_ms} ms: {}", m.loss_after_loss(k));
        }
    }

    #[test]
    fn loss_model_sees_bursts_at_short_gaps_only() {
        let mut m = LossModel::default();
        // Packets every 10 ms; a burst of 5 lost packets (50 ms) every 500 ms: 10 % loss.
        for i in 0..5000u64 {
            m.observe(ms(i * 10), i % 50 < 5);
        }
        assert!((m.loss() - 0.1).abs() < 0.01);
        let q: Vec<f64> = (0..COPY_GAPS_MS.len()).map(|k| m.loss_after_loss(k)).collect();
        // Next packet: 4 of a burst's 5 losses are followed by a loss.
        assert!((q[0] - 0.8).abs() < 0.05, "{q:?}");
        // 80 ms and 160 ms after any loss of the burst the burst is over.
        assert!(q[3] < 0.05 && q[4] < 0.05, "{q:?}");
        assert!(q[1] > q[2] && q[2] > q[3], "the chance falls with the gap: {q:?}");
    }

    #[test]
    fn loss_model_pairs_each_loss_once_per_gap_with_irregular_spacing() {
        let mut m = LossModel::default();
        // Lost at 0; then packets at 5, 15, 30, 100 ms, all received.
        for (t, lost) in [(0, true), (5, false), (15, false), (30, false), (100, false)] {
            m.observe(ms(t), lost);
        }
        // One pair per gap (the loss at 0 has one "first packet at least g later" each; at
        // 160 ms there is none yet).
        let n: Vec<f64> = m.pairs.iter().map(|p| p.1).collect();
        assert_eq!(n, vec![1.0, 1.0, 1.0, 1.0, 0.0]);
    }

    #[test]
    fn rate_meter_reads_a_steady_rate() {
        let mut r = RateMeter::default();
        for i in 0..600u64 {
            r.add(ms(i * 100), 1);
        }
        let hz = r.rate_hz(ms(60_000));
        assert!((hz - 10.0).abs() < 0.5, "{hz}");
        assert!(r.rate_hz(ms(100_000)) < 0.01, "decays when idle");
    }

    #[test]
    fn size_sample_names_the_largest_share() {
        let mut s = SizeSample::default();
        assert_eq!(s.above_share(0.5), None);
        for b in 1..=100 {
            s.add(b);
        }
        // The last 64 are 37..=100.
        assert_eq!(s.above_share(0.0), None);
        assert_eq!(s.above_share(0.25), Some(84), "16 of 64 are above 84");
        assert_eq!(s.above_share(1.0), Some(0), "all of them");
        assert_eq!(s.above_share(f64::NAN), None);
    }
}
