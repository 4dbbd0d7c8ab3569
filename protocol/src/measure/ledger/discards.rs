//! Packets the receiver got and threw away: the second truth beside the link's drops.
//!
//! The link's drops are what the network did; a loss estimate measures what the protocol
//! experienced, which also counts every packet its receiver discarded unacked (UE4 ignores a
//! packet older than the last one it processed, dnm's book rule drops older packets, reliable.io
//! refuses sequences older than its received buffer, a malformed packet is never acked). Each
//! delivered copy gets one verdict from the receiver (`PacketReceived`, `PacketDiscarded`,
//! `Malformed`; UE4 may also refuse a packet it received with `Ue4SkipAck`), and the ledger keeps
//! per send whether any copy was accepted. A send is *effectively lost* when the link dropped it,
//! or delivered it and the receiver never accepted a copy (or accepted it and then reported it
//! lost, UE4's bSkipAck): what the sender's estimate should read.

use serde::{Deserialize, Serialize};

use super::PacketLedger;
use crate::event::{Dir, DiscardReason, Side, SimTime};

/// What the receiver did with a send's delivered copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// No verdict yet (in flight, or no receiver report: packet beliefs filtered out).
    None,
    /// A copy was accepted (later copies discarded as duplicates change nothing).
    Accepted,
    /// Every copy so far was discarded or malformed.
    Discarded,
    /// Accepted, then reported lost to its sender (UE4's bSkipAck): lost for good.
    Refused,
}

impl Verdict {
    /// Whether the send counts as effectively lost.
    pub(super) fn lost(self) -> bool {
        matches!(self, Verdict::Discarded | Verdict::Refused)
    }

    /// The verdict after the receiver's report `report` on one copy.
    fn after(self, report: Verdict) -> Verdict {
        match (self, report) {
            (Verdict::Refused, _) | (_, Verdict::Refused) => Verdict::Refused,
            (_, Verdict::Accepted) => Verdict::Accepted,
            (Verdict::None, r) => r,
            (v, _) => v,
        }
    }
}

/// Index of a [`DiscardReason`] in the per-kind counters; the kinds the ledger counts from other
/// events follow.
pub(super) fn kind_of(reason: DiscardReason) -> usize {
    DiscardReason::ALL.iter().position(|&r| r == reason).unwrap_or(0)
}
/// `Ue4SkipAck`: received, then reported lost.
pub(super) const SKIP_ACK: usize = DiscardReason::ALL.len();
/// `MessageDesync`: Glenn's receiver rejected the packet (a message beyond its window).
pub(super) const DESYNC: usize = SKIP_ACK + 1;
/// `Malformed`.
pub(super) const MALFORMED: usize = DESYNC + 1;
/// Every kind the ledger counts.
pub(super) const DISCARD_KINDS: usize = MALFORMED + 1;

/// Delivered copies the receivers discarded, by reason: `estimates.discarded` in the reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discards {
    /// Older than the newest packet processed (UE4; dnm by the book's rule).
    pub late: u64,
    /// A copy of a packet already processed (UE4, dnm).
    pub duplicate: u64,
    /// Older than the received-packets buffer holds (reliable.io's rule: acks, glenn, rellikt).
    pub stale: u64,
    /// UE4: ahead of a hole while the packet order cache was full.
    pub order_cache_full: u64,
    /// UE4: after the connection closed.
    pub closed: u64,
    /// Chunks: a slice that does not fit the chunk being received.
    pub slice_ignored: u64,
    /// UE4: received, then reported lost because a bunch could not be processed (bSkipAck).
    pub skip_ack: u64,
    /// Glenn: a reliable message beyond the receive window (the packet is rejected).
    pub desync: u64,
    /// Rejected as malformed.
    pub malformed: u64,
}

impl std::ops::Add for Discards {
    type Output = Discards;
    /// Reason by reason (the discards of several clients).
    fn add(self, o: Discards) -> Discards {
        Discards {
            late: self.late + o.late,
            duplicate: self.duplicate + o.duplicate,
            stale: self.stale + o.stale,
            order_cache_full: self.order_cache_full + o.order_cache_full,
            closed: self.closed + o.closed,
            slice_ignored: self.slice_ignored + o.slice_ignored,
            skip_ack: self.skip_ack + o.skip_ack,
            desync: self.desync + o.desync,
            malformed: self.malformed + o.malformed,
        }
    }
}

impl Discards {
    fn from_counts(c: &[u64; DISCARD_KINDS]) -> Self {
        let of = |r| c[kind_of(r)];
        Discards {
            late: of(DiscardReason::Late),
            duplicate: of(DiscardReason::Duplicate),
            stale: of(DiscardReason::Stale),
            order_cache_full: of(DiscardReason::OrderCacheFull),
            closed: of(DiscardReason::Closed),
            slice_ignored: of(DiscardReason::SliceIgnored),
            skip_ack: c[SKIP_ACK],
            desync: c[DESYNC],
            malformed: c[MALFORMED],
        }
    }

    /// Every copy counted, whatever the reason.
    pub fn total(&self) -> u64 {
        let Discards { late, duplicate, stale, order_cache_full, closed, slice_ignored, skip_ack, desync, malformed } =
            *self;
        late + duplicate + stale + order_cache_full + closed + slice_ignored + skip_ack + desync + malformed
    }

    /// `(name, count)` of every reason, in the order reports list them.
    pub fn by_reason(&self) -> [(&'static str, u64); DISCARD_KINDS] {
        [
            ("late", self.late),
            ("duplicate", self.duplicate),
            ("stale", self.stale),
            ("order_cache_full", self.order_cache_full),
            ("closed", self.closed),
            ("slice_ignored", self.slice_ignored),
            ("skip_ack", self.skip_ack),
            ("desync", self.desync),
            ("malformed", self.malformed),
        ]
    }
}

/// Folding the receivers' verdicts.
impl PacketLedger {
    /// Counts one copy discarded by `receiver` (of the packets on the direction into it).
    pub(super) fn count_discard(&mut self, receiver: Side, kind: usize) {
        self.discards[receiver.other().outgoing().index()][kind] += 1;
    }

    /// `receiver`'s report at `t` on the latest send of `seq` by its peer; when the ledger knows
    /// no send of `seq` (a process that sees only its own end: `ackscope peer`), on the copy the
    /// link delivered to it at this instant.
    pub(super) fn judge_latest(&mut self, t: SimTime, receiver: Side, seq: u32, report: Verdict) {
        let dir = receiver.other().outgoing();
        match self.uid_of(receiver.other(), seq as u16) {
            // Left the table settled (a counting ledger's): its verdict is kept by sequence.
            Some(uid) if uid < self.retired.below && !self.retired.stragglers.contains_key(&uid) => {
                let Some(s) = self.settled_mut(dir, seq as u16) else { return };
                let (was, now) = (s.verdict(), s.verdict().after(report));
                s.set_verdict(now);
                self.count_verdict_change(dir, was, now);
            }
            Some(uid) => self.judge_uid(dir, uid, report),
            None => self.judge_last_delivery(t, receiver, report),
        }
    }

    /// `receiver`'s report on the copy delivered to it at this instant, `t` (a malformed packet
    /// names no sequence: the delivery it was is the direction's last one, at the same instant).
    pub(super) fn judge_last_delivery(&mut self, t: SimTime, receiver: Side, report: Verdict) {
        let dir = receiver.other().outgoing();
        if let Some((at, uid)) = self.last_delivery[dir.index()] {
            if at == t {
                self.judge_uid(dir, uid, report);
            }
        }
    }

    fn judge_uid(&mut self, dir: Dir, uid: u64, report: Verdict) {
        let Some(r) = self.record_mut(uid) else { return };
        let (was, now) = (r.verdict, r.verdict.after(report));
        r.verdict = now;
        self.count_verdict_change(dir, was, now);
    }

    fn count_verdict_change(&mut self, dir: Dir, was: Verdict, now: Verdict) {
        let n = &mut self.discarded_sends[dir.index()];
        match (was.lost(), now.lost()) {
            (false, true) => *n += 1,
            (true, false) => *n -= 1,
            _ => {}
        }
    }
}

/// The discards' read side.
impl PacketLedger {
    /// Copies discarded on their way into the receiver of `dirs`, by reason.
    pub fn discards(&self, dirs: &[Dir]) -> Discards {
        let mut c = [0u64; DISCARD_KINDS];
        for d in dirs {
            for (sum, n) in c.iter_mut().zip(self.discards[d.index()]) {
                *sum += n;
            }
        }
        Discards::from_counts(&c)
    }

    /// Sends on `dir` the link delivered and the receiver never accepted (only discarded, or
    /// refused after accepting: module doc).
    pub fn discarded_sends(&self, dir: Dir) -> u64 {
        self.discarded_sends[dir.index()]
    }

    /// (Link drops + sends discarded) / sends on `dirs`, in percent (0 before any send).
    pub fn effective_loss_percent(&self, dirs: &[Dir]) -> f64 {
        let sent: u64 = dirs.iter().map(|d| self.link_sent[d.index()]).sum();
        let lost: u64 = dirs.iter().map(|d| self.link_dropped[d.index()] + self.discarded_sends[d.index()]).sum();
        if sent == 0 {
            0.0
        } else {
            lost as f64 * 100.0 / sent as f64
        }
    }

    /// Link drops / sends on `dirs`, in percent (0 before any send).
    pub fn loss_percent_of(&self, dirs: &[Dir]) -> f64 {
        let sent: u64 = dirs.iter().map(|d| self.link_sent[d.index()]).sum();
        let dropped: u64 = dirs.iter().map(|d| self.link_dropped[d.index()]).sum();
        if sent == 0 {
            0.0
        } else {
            dropped as f64 * 100.0 / sent as f64
        }
    }

    /// Share (%) of the last `count` sends entering `dir`'s link that were effectively lost
    /// (dropped, or discarded by the receiver: module doc); `None` before any send. A send still
    /// on its way counts as not lost, as in [`PacketLedger::recent_loss_percent`].
    pub fn recent_effective_loss_percent(&self, dir: Dir, count: usize) -> Option<f64> {
        let sends = &self.link_sends[dir.index()];
        let recent = &sends[sends.len().saturating_sub(count)..];
        if recent.is_empty() {
            return None;
        }
        let lost = recent
            .iter()
            .filter(|(_, uid)| self.record(*uid).is_some_and(|r| r.dropped.is_some() || r.verdict.lost()))
            .count();
        Some(lost as f64 * 100.0 / recent.len() as f64)
    }
}
