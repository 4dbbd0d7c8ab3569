//! The loss estimate: which sent packets count as lost, judged over a window defined in time.
//!
//! Glenn's seed defines it: look at the packets sent longer ago than your RTT estimate ("you should
//! have received an ack for them by now") and count those never acked. reliable.io does this inside
//! its 256-entry sent buffer, so the estimate only works while the judging window holds fewer
//! packets than the buffer: at 1000 packets/s and more it saw nothing and reported 0 % at any loss.
//! Here the window is a time, whatever the rate:
//!
//! - [`LossJudge`] keeps every packet sent until it is judged: when its outcome arrives (strategies
//!   whose acks say "lost" or "delivered", e.g. UE4's Nak history) or once it is older than the
//!   judging window, `loss_rtt_factor` x display RTT + `loss_margin_ms` (2 x RTT + 100 ms; 1.1 s
//!   before any RTT sample, [`StatsConfig::judge_window_us`]), when it counts as lost unless it was
//!   acked. A packet is judged once: an ack arriving after its verdict changes nothing, as in the
//!   seed. Protocols that report every packet eventually (UE4's ack history covers everything
//!   since the last acknowledged report, but rides only on packets the peer chooses to send) make
//!   the timeout verdict provisional instead: a later "delivered" revises it.
//! - [`LossWindow`] averages the verdicts of the last [`LOSS_WINDOW_MS`] (by judging time), and
//!   at least the last `loss_window` (256) of them, so slow senders keep the 256-packet average
//!   they always had (256 packets span 4.3 s at 60 packets/s) while fast ones average two seconds
//!   (2,000 verdicts at 1000 packets/s: about 0.9 points of noise at 20 % loss).
//!
//! Memory grows with rate x window (a few entries per packet in flight, reused: no allocation per
//! packet once the rings have grown), and is bounded by half the sequence space.

use std::collections::VecDeque;

use crate::event::SimTime;
use crate::reliability::stats::StatsConfig;

/// Verdicts are averaged over at least this long (and at least `loss_window` verdicts).
pub const LOSS_WINDOW_MS: f64 = 2000.0;

/// Verdicts kept at most, whatever the rate (5000 packets/s fill 5,000).
const MAX_VERDICTS: usize = 65_536;

/// Fraction of recent verdicts that said "lost": the last [`LOSS_WINDOW_MS`] of them, and at
/// least the last `capacity`.
#[derive(Debug, Clone, Default)]
pub struct LossWindow {
    /// Judging time in microseconds << 1 | lost, in judging order.
    judged: VecDeque<u64>,
    lost: usize,
    capacity: usize,
}

impl LossWindow {
    /// A window keeping at least the last `capacity` verdicts.
    pub fn new(capacity: usize) -> Self {
        Self { judged: VecDeque::with_capacity(capacity), lost: 0, capacity: capacity.max(1) }
    }

    /// Records one verdict taken at `now`.
    #[inline]
    pub fn record(&mut self, now: SimTime, lost: bool) {
        self.judged.push_back(now.0 << 1 | lost as u64);
        self.lost += lost as usize;
        let horizon = now.0.saturating_sub((LOSS_WINDOW_MS * 1000.0) as u64);
        while self.judged.len() > self.capacity {
            let front = self.judged[0];
            if front >> 1 >= horizon && self.judged.len() <= MAX_VERDICTS {
                break;
            }
            self.judged.pop_front();
            self.lost -= (front & 1) as usize;
        }
    }

    pub fn percent(&self) -> f64 {
        if self.judged.is_empty() {
            0.0
        } else {
            self.lost as f64 * 100.0 / self.judged.len() as f64
        }
    }

    /// Verdicts in the window.
    pub fn judged(&self) -> usize {
        self.judged.len()
    }

    /// Turns a "lost" verdict taken at `judged_at` into "delivered", if it is still in the window.
    fn revise(&mut self, judged_at: SimTime) {
        let lost = judged_at.0 << 1 | 1;
        if let Some(v) = self.judged.iter_mut().rev().find(|v| **v == lost) {
            *v = lost & !1;
            self.lost -= 1;
        }
    }
}

/// One sent packet awaiting its verdict.
#[derive(Debug, Clone, Copy)]
struct Pending {
    sent_at: SimTime,
    acked: bool,
    judged: bool,
    /// When it was judged lost for want of a verdict in time (provisional while `reported` is not).
    timed_out_at: Option<SimTime>,
    /// The protocol reported its outcome.
    reported: bool,
}

/// Sent packets until judged, keyed by a sequence of `sequence_bits` bits, and the window of
/// verdicts (see the module doc).
///
/// Call [`sent`](Self::sent) for every packet in sequence order, [`acked`](Self::acked) when an
/// ack names one (judged when its window closes) or [`outcome`](Self::outcome) when the protocol
/// itself says delivered or lost (judged at once), and [`expire`](Self::expire) regularly.
#[derive(Debug, Clone)]
pub struct LossJudge {
    /// Every packet gets an outcome eventually: keep timed-out packets for a revising report.
    reports_every_packet: bool,
    mask: u32,
    /// Sequence of `pending[0]`.
    first: u32,
    pending: VecDeque<Pending>,
    window: LossWindow,
}

impl LossJudge {
    /// A judge for sequences of `sequence_bits` bits (16 for reliable.io), averaging at least
    /// `min_verdicts` verdicts; verdicts by timeout are final.
    pub fn new(sequence_bits: u32, min_verdicts: usize) -> Self {
        Self {
            reports_every_packet: false,
            mask: ((1u64 << sequence_bits.clamp(2, 31)) - 1) as u32,
            first: 0,
            pending: VecDeque::new(),
            window: LossWindow::new(min_verdicts),
        }
    }

    /// As [`LossJudge::new`], for a protocol that reports every packet's outcome eventually: a
    /// verdict by timeout is revised when a late outcome says "delivered" (module doc).
    pub fn reporting_every_packet(sequence_bits: u32, min_verdicts: usize) -> Self {
        Self { reports_every_packet: true, ..Self::new(sequence_bits, min_verdicts) }
    }

    /// The verdicts so far.
    pub fn window(&self) -> &LossWindow {
        &self.window
    }

    /// Packets sent and not yet dropped from the judge (judged ones behind an unjudged older one
    /// included): what a sent buffer must hold so that no packet is forgotten before its verdict.
    pub fn held(&self) -> usize {
        self.pending.len()
    }

    /// At most half the sequence space is held, so that a sequence names one packet.
    fn limit(&self) -> usize {
        (self.mask as usize).div_ceil(2)
    }

    fn index(&self, sequence: u32) -> Option<usize> {
        let i = (sequence.wrapping_sub(self.first) & self.mask) as usize;
        (i < self.pending.len()).then_some(i)
    }

    /// Packet `sequence` went out at `now`. Sequences are expected in order; after a jump (which
    /// no strategy makes) the packets held are dropped unjudged and judging restarts.
    #[inline]
    pub fn sent(&mut self, now: SimTime, sequence: u32) {
        let sequence = sequence & self.mask;
        let expected = self.first.wrapping_add(self.pending.len() as u32) & self.mask;
        if self.pending.is_empty() || sequence != expected {
            self.pending.clear();
            self.first = sequence;
        }
        if self.pending.len() >= self.limit() {
            // Half the sequence space in flight: the oldest gets its verdict now.
            self.judge_front(now);
        }
        self.pending.push_back(Pending {
            sent_at: now,
            acked: false,
            judged: false,
            timed_out_at: None,
            reported: false,
        });
    }

    /// An ack named `sequence`: it counts as delivered when its window closes.
    #[inline]
    pub fn acked(&mut self, sequence: u32) {
        if let Some(i) = self.index(sequence) {
            self.pending[i].acked = true;
        }
    }

    /// The protocol reported `sequence` delivered or lost: judged now, or, judged lost by timeout
    /// before, revised when delivered (with [`LossJudge::reporting_every_packet`]).
    #[inline]
    pub fn outcome(&mut self, now: SimTime, sequence: u32, delivered: bool) {
        let Some(i) = self.index(sequence) else { return };
        let p = &mut self.pending[i];
        if p.reported {
            return;
        }
        p.reported = true;
        match (p.judged, p.timed_out_at) {
            (false, _) => {
                p.judged = true;
                self.window.record(now, !delivered);
            }
            (true, Some(t)) if delivered => self.window.revise(t),
            _ => {}
        }
        if self.reports_every_packet {
            while self.pending.front().is_some_and(|p| p.reported) {
                self.judge_front(now);
            }
        }
    }

    /// Judges every packet sent more than `window_us` before `now` that has no verdict yet: lost
    /// unless acked. Drops judged packets from the front.
    #[inline]
    pub fn expire(&mut self, now: SimTime, window_us: u64) {
        if self.reports_every_packet {
            // Judge the overdue ones but keep them until their report (or the size limit).
            for p in self.pending.iter_mut().filter(|p| !p.judged) {
                if now.0 < p.sent_at.0.saturating_add(window_us) {
                    break;
                }
                p.judged = true;
                p.timed_out_at = Some(now);
                self.window.record(now, true);
            }
            while self.pending.front().is_some_and(|p| p.reported) {
                self.judge_front(now);
            }
            return;
        }
        while let Some(p) = self.pending.front() {
            if !p.judged && now.0 < p.sent_at.0.saturating_add(window_us) {
                break;
            }
            self.judge_front(now);
        }
    }

    #[inline]
    fn judge_front(&mut self, now: SimTime) {
        if let Some(p) = self.pending.pop_front() {
            if !p.judged {
                self.window.record(now, !p.acked);
            }
            self.first = self.first.wrapping_add(1) & self.mask;
        }
    }
}

/// [`LossJudge::new`]`(16, ..)` for a protocol whose only outcome is an ack (reliable.io's): the
/// same verdicts at the same instants and the same `held()`, kept in a ring indexed by sequence.
///
/// The ack endpoint sends, acks and judges once per packet each; with [`LossJudge`]'s deque of
/// general entries (outcome reports, provisional verdicts) that was a sixth of the endpoint's
/// cost. Here a packet is its send time and ack flag in a power-of-two ring that doubles when
/// full, at the slot its sequence names: no deque bookkeeping, no index arithmetic beyond a mask.
#[derive(Debug, Clone)]
pub struct AckLossJudge {
    /// Packets `front..next` (wrapping) awaiting their verdict, at `sequence & (len - 1)`.
    ring: Vec<AckPending>,
    front: u16,
    next: u16,
    /// How many packets `front..next` is (the two alone cannot tell none from all).
    held: usize,
    window: LossWindow,
    /// Whether verdicts go to the window (see [`AckLossJudge::set_records_verdicts`]).
    records: bool,
}

#[derive(Debug, Clone, Copy, Default)]
struct AckPending {
    sent_at: SimTime,
    acked: bool,
}

/// Packets an [`AckLossJudge`] holds at most: half the 16-bit sequence space, as [`LossJudge`].
const ACK_JUDGE_LIMIT: usize = 32_768;

impl AckLossJudge {
    /// A judge averaging at least `min_verdicts` verdicts.
    pub fn new(min_verdicts: usize) -> Self {
        Self {
            ring: vec![AckPending::default(); 16],
            front: 0,
            next: 0,
            held: 0,
            window: LossWindow::new(min_verdicts),
            records: true,
        }
    }

    /// Whether verdicts are recorded in [`Self::window`] (true at first). Without, packets are
    /// still held and dropped exactly as with ([`Self::held`] is unchanged), for an endpoint
    /// whose loss figure nobody reads.
    pub fn set_records_verdicts(&mut self, records: bool) {
        self.records = records;
    }

    /// The verdicts so far.
    pub fn window(&self) -> &LossWindow {
        &self.window
    }

    /// As [`LossJudge::held`].
    #[inline]
    pub fn held(&self) -> usize {
        self.held
    }

    #[inline]
    fn slot(&self, sequence: u16) -> usize {
        sequence as usize & (self.ring.len() - 1)
    }

    /// As [`LossJudge::sent`].
    #[inline(always)]
    pub fn sent(&mut self, now: SimTime, sequence: u16) {
        if self.held == 0 || sequence != self.next {
            self.held = 0;
            self.front = sequence;
        }
        if self.held >= ACK_JUDGE_LIMIT {
            // Half the sequence space in flight: the oldest gets its verdict now.
            self.judge_front(now);
        }
        if self.held == self.ring.len() {
            self.grow();
        }
        let i = self.slot(sequence);
        self.ring[i] = AckPending { sent_at: now, acked: false };
        self.next = sequence.wrapping_add(1);
        self.held += 1;
    }

    #[cold]
    fn grow(&mut self) {
        let mut ring = vec![AckPending::default(); self.ring.len() * 2];
        let mask = ring.len() - 1;
        for k in 0..self.held {
            let s = self.front.wrapping_add(k as u16);
            ring[s as usize & mask] = self.ring[self.slot(s)];
        }
        self.ring = ring;
    }

    /// As [`LossJudge::acked`].
    #[inline]
    pub fn acked(&mut self, sequence: u16) {
        if (sequence.wrapping_sub(self.front) as usize) < self.held {
            let i = self.slot(sequence);
            self.ring[i].acked = true;
        }
    }

    /// As [`LossJudge::expire`].
    #[inline(always)]
    pub fn expire(&mut self, now: SimTime, window_us: u64) {
        while self.held > 0 {
            let p = self.ring[self.slot(self.front)];
            if now.0 < p.sent_at.0.saturating_add(window_us) {
                break;
            }
            self.judge_front(now);
        }
    }

    /// Judges the oldest held packet (there is one): lost unless acked.
    #[inline(always)]
    fn judge_front(&mut self, now: SimTime) {
        if self.records {
            let acked = self.ring[self.slot(self.front)].acked;
            self.window.record(now, !acked);
        }
        self.front = self.front.wrapping_add(1);
        self.held -= 1;
    }
}

impl StatsConfig {
    /// How long after sending a packet without a verdict counts as lost: `loss_rtt_factor` x the
    /// display RTT + `loss_margin_ms`, or 1 s + `loss_margin_ms` before any RTT sample.
    pub fn judge_window_us(&self, display_rtt_ms: Option<f64>) -> u64 {
        let ms = match display_rtt_ms {
            Some(rtt) => rtt * self.loss_rtt_factor + self.loss_margin_ms,
            None => 1000.0 + self.loss_margin_ms,
        };
        // `(ms.max(0.0) * 1000.0) as u64` without `max`'s NaN handling (judged per packet):
        // NaN and everything not above zero give 0 either way.
        if ms > 0.0 {
            (ms * 1000.0) as u64
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1000;

    #[test]
    fn loss_window_slides_by_count_when_slow() {
        // Verdicts 1 s apart: beyond the 2 s window only the last `capacity` count.
        let mut l = LossWindow::new(4);
        for (i, lost) in [true, true, false, false, false, false].into_iter().enumerate() {
            l.record(SimTime(i as u64 * 1000 * MS), lost);
        }
        assert_eq!(l.percent(), 0.0);
        l.record(SimTime(6000 * MS), true);
        assert_eq!(l.percent(), 25.0);
    }

    #[test]
    fn loss_window_keeps_the_last_two_seconds_of_verdicts_when_fast() {
        let mut l = LossWindow::new(4);
        // 5000 verdicts within a second, every fifth lost: all of them count.
        for i in 0..5000u64 {
            l.record(SimTime(i * 200), i % 5 == 0);
        }
        assert_eq!(l.judged(), 5000);
        assert_eq!(l.percent(), 20.0);
        // Two seconds later the old ones have left; the last `capacity` stay.
        l.record(SimTime(3000 * MS), false);
        assert_eq!(l.judged(), 4);
    }

    #[test]
    fn unacked_packets_count_as_lost_once_older_than_the_window_at_any_rate() {
        // 5000 packets/s, every fourth acked, window 300 ms: nothing is blind.
        let mut j = LossJudge::new(16, 256);
        let mut now = SimTime::ZERO;
        for i in 0..20_000u32 {
            now = SimTime(i as u64 * 200);
            j.sent(now, i & 0xFFFF);
            if i % 4 == 0 {
                j.acked(i);
            }
            j.expire(now, 300 * MS);
        }
        assert!((j.window().percent() - 75.0).abs() < 0.1, "{}", j.window().percent());
        assert!(j.held() <= 1501, "held {}", j.held());
        j.expire(now.plus_micros(1000 * MS), 300 * MS);
        assert_eq!(j.held(), 0);
    }

    #[test]
    fn the_ack_judge_gives_the_general_judges_verdicts() {
        // Bursts of sends (past the ring's and the half-space limits), acks of random recent
        // sequences, expiry with a window that changes, and a jump in the sequence.
        let (mut general, mut ring) = (LossJudge::new(16, 64), AckLossJudge::new(64));
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut draw = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let (mut now, mut seq, mut most) = (0u64, 65_000u16, 0);
        for round in 0..400 {
            let burst = [1, 3, 40, 700, 9000][draw(5) as usize];
            for _ in 0..burst {
                now += draw(300);
                general.sent(SimTime(now), seq as u32);
                ring.sent(SimTime(now), seq);
                seq = seq.wrapping_add(1);
            }
            for _ in 0..draw(50) {
                let s = seq.wrapping_sub(draw(40_000) as u16);
                general.acked(s as u32);
                ring.acked(s);
            }
            // Now and then a long window, so that the half-space limit judges early.
            let window = if round % 100 < 30 { 60_000_000 } else { draw(2_000_000) };
            now += draw(100_000);
            general.expire(SimTime(now), window);
            ring.expire(SimTime(now), window);
            if round == 200 {
                seq = seq.wrapping_add(12_345);
            }
            assert_eq!(general.held(), ring.held(), "round {round}");
            most = most.max(ring.held());
            let (g, r) = (general.window(), ring.window());
            assert_eq!((g.judged(), g.percent().to_bits()), (r.judged(), r.percent().to_bits()), "round {round}");
        }
        assert!(general.window().judged() > 1000);
        assert_eq!(most, ACK_JUDGE_LIMIT, "the limit was reached");
    }

    #[test]
    fn the_judging_window_is_the_clamped_product_for_any_rtt() {
        let c = StatsConfig::default();
        let nan: f64 = "NaN".parse().unwrap();
        for rtt in [nan, -0.0, 0.0, -60.0, -50.0, 1e-9, 0.4, 37.25, 1e300, f64::INFINITY, f64::NEG_INFINITY] {
            let ms = rtt * c.loss_rtt_factor + c.loss_margin_ms;
            assert_eq!(c.judge_window_us(Some(rtt)), (ms.max(0.0) * 1000.0) as u64, "{rtt}");
        }
        assert_eq!(c.judge_window_us(None), 1_100_000);
    }

    #[test]
    fn an_outcome_is_taken_at_once_and_only_once() {
        let mut j = LossJudge::new(14, 16);
        for s in 16_380..16_388u32 {
            j.sent(SimTime(s as u64), s); // wraps at 14 bits
        }
        j.outcome(SimTime(1), 16_381, true);
        j.outcome(SimTime(1), 16_381, false);
        assert_eq!((j.window().judged(), j.window().percent()), (1, 0.0));
        j.outcome(SimTime(2), 2, false); // 16_386 after the wrap
        assert_eq!(j.window().judged(), 2);
        // Expiry judges the six without an outcome as lost and never re-judges the two.
        j.expire(SimTime(10_000_000), 1000);
        assert_eq!(j.window().judged(), 8);
        assert_eq!(j.held(), 0);
        j.outcome(SimTime(10_000_001), 16_382, true);
        assert_eq!(j.window().judged(), 8, "a late outcome changes nothing");
    }

    #[test]
    fn a_late_delivery_revises_a_timeout_verdict_when_every_packet_is_reported() {
        let mut j = LossJudge::reporting_every_packet(14, 16);
        for s in 0..4u32 {
            j.sent(SimTime(s as u64 * MS), s);
        }
        j.expire(SimTime(500 * MS), 100 * MS);
        assert_eq!((j.window().judged(), j.window().percent()), (4, 100.0));
        assert_eq!(j.held(), 4, "kept for their reports");
        j.outcome(SimTime(600 * MS), 0, true);
        j.outcome(SimTime(600 * MS), 1, false);
        j.outcome(SimTime(600 * MS), 2, true);
        assert_eq!((j.window().judged(), j.window().percent()), (4, 50.0));
        assert_eq!(j.held(), 1, "reported ones leave from the front");
        j.outcome(SimTime(700 * MS), 2, false);
        assert_eq!(j.window().percent(), 50.0, "one report per packet");
    }
}
