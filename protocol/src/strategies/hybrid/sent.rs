//! The hybrid endpoint's own packets from send to fate: acked, or lost as the peer's ack bits
//! tell, and the reorder window that tells a lost packet from a late one.
//!
//! A packet counts as lost (RACK's rule, RFC 8985, on reliable.io acks) when the peer's newest
//! `ack` names a packet sent more than the reorder window after it, and its own bit in `ack_bits`
//! is clear (or it fell out of the 32 bits): the peer got a later packet but not this one. On a
//! path that never reorders the window is 0 and a loss is read from the first later packet's ack;
//! when a packet read as lost is acked after all, it was only late, and the window grows to just
//! under how late it was (a Nak that was wrong costs a resend; waiting too long for every loss
//! costs time on each, and on a jittery path every loss waits for the window, while few packets
//! are as late as the latest late one). As in RACK, it halves after 16 losses that proved real without such a surprise
//! in between: a path that stopped reordering gets quick Naks back, one that never loses keeps
//! what it learned.

use std::collections::VecDeque;

use crate::event::SimTime;
use crate::wire::header::PacketHeader;
use crate::wire::sequence::{sequence_difference, sequence_less_than};

/// What became of one sent packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    Pending,
    Acked,
    /// Read as lost because the packet sent at `evidence_at` was acked.
    Lost {
        evidence_at: SimTime,
    },
}

/// One sent packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentPacket {
    pub seq: u16,
    pub at: SimTime,
    /// It carried reliable messages (its loss resends them).
    pub reliable: bool,
    pub fate: Fate,
    /// Messages whose latest copy rode in it went again on the timer: its ack says those resends
    /// were spurious, its loss that they were needed.
    pub timer_resent: bool,
}

/// Packets kept at most; beyond this (a silent peer) the oldest are forgotten unread.
const MAX_SENT: usize = 4096;
/// Acks reach this many packets back (the ack plus 32 bits); an older unacked packet stays lost.
const ACK_REACH: i32 = 33;
/// Real losses without a late packet after which the reorder window halves.
const REORDER_MEMORY_LOSSES: u32 = 16;
/// The window is set to this share of the lateness seen: just under it, so a packet as late as
/// the latest late one is read as lost (and its messages resent) rather than waited for. Under
/// jitter a Nak then comes about a tick sooner, for 0.2-0.5 bytes a message of resends of packets
/// that were only late; 1.25 (a margin over it, as before) left the p99 of 50 ms one way with
/// 30 ms jitter and bursts just inside glenn's seed spread (README, "hybrid": the grids at 0.75,
/// 0.9, 1.0 and 1.25).
const REORDER_MARGIN: f64 = 0.9;

/// The log of sent packets, in sequence order (every packet takes the next sequence).
#[derive(Debug, Clone, Default)]
pub struct SentLog {
    packets: VecDeque<SentPacket>,
    /// The newest `ack` read.
    newest_ack: Option<u16>,
    reorder_window_ms: f64,
    /// Losses that proved real since the last late packet.
    losses_since_surprise: u32,
    /// Packets with timer resends that were acked after all / proved lost, since the last
    /// [`Self::take_timer_outcomes`].
    timer_spurious: u32,
    timer_needed: u32,
}

/// What [`SentLog::read_acks`] concluded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckReading {
    /// Packets newly read as lost.
    pub lost: u32,
    /// Packets read as lost earlier that this header acked (late, not lost).
    pub late: u32,
}

impl SentLog {
    /// Packet `seq` went at `at`.
    pub fn push(&mut self, seq: u16, at: SimTime, reliable: bool) {
        if self.packets.back().is_some_and(|b| b.seq.wrapping_add(1) != seq) {
            // Not the next sequence (never, from one endpoint): the log no longer indexes by
            // distance, so it starts over rather than mis-reading acks.
            self.packets.clear();
        }
        self.packets.push_back(SentPacket { seq, at, reliable, fate: Fate::Pending, timer_resent: false });
    }

    /// Messages whose latest copy rode in `seq` go again on the timer. A packet already acked
    /// or settled is left alone.
    pub fn mark_timer_resent(&mut self, seq: u16) {
        if let Some(i) = self.index(seq) {
            if self.packets[i].fate != Fate::Acked {
                self.packets[i].timer_resent = true;
            }
        }
    }

    /// How many packets with timer resends proved, since the last call, to have arrived (the
    /// resends were spurious) and to be lost (they were needed), as `(spurious, needed)`.
    pub fn take_timer_outcomes(&mut self) -> (u32, u32) {
        let out = (self.timer_spurious, self.timer_needed);
        (self.timer_spurious, self.timer_needed) = (0, 0);
        out
    }

    fn index(&self, seq: u16) -> Option<usize> {
        let front = self.packets.front()?;
        let d = seq.wrapping_sub(front.seq) as usize;
        (d < self.packets.len()).then_some(d)
    }

    pub fn get(&self, seq: u16) -> Option<&SentPacket> {
        self.index(seq).map(|i| &self.packets[i])
    }

    pub fn reorder_window_ms(&self) -> f64 {
        self.reorder_window_ms
    }

    /// Marks `seq` acked. Returns the packet as it was before (None when not in the log).
    pub fn ack(&mut self, seq: u16) -> Option<SentPacket> {
        let i = self.index(seq)?;
        let before = self.packets[i];
        if let Fate::Lost { evidence_at } = before.fate {
            // Late, not lost: the window must cover at least this much.
            let lateness_ms = evidence_at.saturating_since(before.at).as_millis_f64();
            self.reorder_window_ms = self.reorder_window_ms.max(lateness_ms * REORDER_MARGIN);
            self.losses_since_surprise = 0;
        }
        if before.fate != Fate::Acked && before.timer_resent {
            self.timer_spurious += 1;
        }
        self.packets[i].fate = Fate::Acked;
        Some(before)
    }

    /// A loss proved real: after [`REORDER_MEMORY_LOSSES`] of them without a surprise the
    /// window halves.
    fn real_loss(&mut self) {
        self.losses_since_surprise += 1;
        if self.losses_since_surprise >= REORDER_MEMORY_LOSSES {
            self.losses_since_surprise = 0;
            self.reorder_window_ms /= 2.0;
            if self.reorder_window_ms < 0.1 {
                self.reorder_window_ms = 0.0;
            }
        }
    }

    /// Reads the peer's newest acks after they were applied ([`Self::ack`]): calls `lost` for
    /// each packet newly read as lost (see the module doc), oldest first. Only a header whose
    /// `ack` is the newest seen and whose `ack_bits` are not empty (an expired receiver acks
    /// nothing) is read; `tolerance` packets at least must separate a lost packet from the ack.
    pub fn read_acks(&mut self, header: &PacketHeader, tolerance: u32, mut lost: impl FnMut(&SentPacket)) -> u32 {
        if header.ack_bits == 0 || self.newest_ack.is_some_and(|n| sequence_less_than(header.ack, n)) {
            return 0;
        }
        self.newest_ack = Some(header.ack);
        let Some(evidence_at) = self.get(header.ack).map(|p| p.at) else { return 0 };
        let window_us = (self.reorder_window_ms * 1000.0).round() as u64;
        let tolerance = tolerance.max(1) as i32;
        let mut n = 0;
        for p in self.packets.iter_mut() {
            let behind = sequence_difference(header.ack, p.seq);
            if behind < tolerance || evidence_at.saturating_since(p.at).0 <= window_us {
                break; // every later packet is closer still
            }
            if p.fate != Fate::Pending {
                continue;
            }
            if behind < 32 && header.ack_bits & (1 << behind) != 0 {
                p.fate = Fate::Acked; // acked by this header (its ack was not reported)
                self.timer_spurious += p.timer_resent as u32;
                continue;
            }
            p.fate = Fate::Lost { evidence_at };
            n += 1;
            lost(p);
        }
        n
    }

    /// Removes the oldest packets whose fate is settled (acked, or lost and beyond any later
    /// ack's reach) and hands each to `settled` in send order, as `(sent at, lost)`.
    pub fn settle(&mut self, mut settled: impl FnMut(SimTime, bool)) {
        while let Some(&front) = self.packets.front() {
            let out_of_reach = self.newest_ack.is_some_and(|a| sequence_difference(a, front.seq) >= ACK_REACH);
            let done = match front.fate {
                Fate::Acked => true,
                Fate::Lost { .. } => out_of_reach,
                Fate::Pending => false,
            };
            if !done && self.packets.len() <= MAX_SENT {
                break;
            }
            self.packets.pop_front();
            match front.fate {
                Fate::Acked => settled(front.at, false),
                Fate::Lost { .. } => {
                    self.real_loss();
                    self.timer_needed += front.timer_resent as u32;
                    settled(front.at, true);
                }
                Fate::Pending => {} // forgotten unread (a silent peer)
            }
        }
    }

    pub fn len(&self) -> usize {
        self.packets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime(x * 1000)
    }

    /// A header acking `ack` and, of the 31 before it, those in `received` (older ones are
    /// beyond its bits).
    fn header(ack: u16, received: &[u16]) -> PacketHeader {
        let mut bits = 1u32;
        for &r in received {
            let behind = ack.wrapping_sub(r);
            if behind < 32 {
                bits |= 1 << behind;
            }
        }
        PacketHeader { sequence: 0, ack, ack_bits: bits }
    }

    fn log(n: u16) -> SentLog {
        let mut l = SentLog::default();
        for s in 0..n {
            l.push(s, ms(s as u64 * 20), true);
        }
        l
    }

    #[test]
    fn a_gap_before_an_acked_packet_is_lost_and_acked_ones_are_not() {
        let mut l = log(6);
        for s in [0, 1, 3] {
            l.ack(s);
        }
        let mut lost = Vec::new();
        assert_eq!(l.read_acks(&header(3, &[0, 1]), 1, |p| lost.push(p.seq)), 1);
        assert_eq!(lost, vec![2]);
        // Read once only, and never from an older ack.
        assert_eq!(l.read_acks(&header(3, &[0, 1]), 1, |_| panic!("read twice")), 0);
        assert_eq!(l.read_acks(&header(2, &[0, 1]), 1, |_| panic!("older ack")), 0);
        // An expired receiver's empty acks say nothing.
        assert_eq!(l.read_acks(&PacketHeader { sequence: 0, ack: 5, ack_bits: 0 }, 1, |_| panic!()), 0);
    }

    #[test]
    fn the_tolerance_and_a_late_packet_widen_what_counts_as_lost() {
        let mut l = log(6);
        l.ack(3);
        // Packet 2 is one behind the ack: a tolerance of 2 waits.
        assert_eq!(l.read_acks(&header(3, &[]), 2, |_| {}), 2, "0 and 1 are lost, 2 waits");
        l.ack(4);
        assert_eq!(l.read_acks(&header(4, &[3]), 2, |_| {}), 1, "now 2 is lost");
        // Packet 2 arrives after all: it was 40 ms late (sent at 40, read lost by 4's ack, sent
        // at 80); the window becomes 36 ms.
        let before = l.ack(2).expect("in the log");
        assert_eq!(before.fate, Fate::Lost { evidence_at: ms(80) });
        assert_eq!(l.reorder_window_ms(), 36.0);
        // Packet 5 (sent at 100) is missing when 6 (sent at 120) is acked: within the window.
        l.push(6, ms(120), true);
        l.ack(6);
        assert_eq!(l.read_acks(&header(6, &[4, 3, 2]), 1, |_| {}), 0);
        // The window halves after 16 losses proved real without a surprise.
        for _ in 0..15 {
            l.real_loss();
        }
        assert_eq!(l.reorder_window_ms(), 36.0);
        l.real_loss();
        assert_eq!(l.reorder_window_ms(), 18.0);
    }

    #[test]
    fn settled_packets_leave_in_send_order_and_lost_ones_only_beyond_reach() {
        let mut l = log(40);
        l.ack(0);
        l.ack(2);
        let mut out = Vec::new();
        l.read_acks(&header(2, &[0]), 1, |_| {});
        l.settle(|at, lost| out.push((at.0 / 1000, lost)));
        assert_eq!(out, vec![(0, false)], "1 is lost but a later ack could still name it");
        for s in 3..40 {
            l.ack(s);
        }
        l.read_acks(&header(39, &(3..39).collect::<Vec<_>>()), 1, |_| {});
        l.settle(|at, lost| out.push((at.0 / 1000, lost)));
        assert_eq!(out.len(), 40);
        assert_eq!(out[1], (20, true));
        assert!(out[2..].iter().all(|&(_, lost)| !lost));
        assert!(l.is_empty());
    }

    #[test]
    fn a_timer_resent_packet_acked_is_spurious_and_one_settled_lost_is_needed() {
        let mut l = log(40);
        l.mark_timer_resent(1);
        l.mark_timer_resent(2);
        l.ack(0);
        l.ack(2); // arrived after all
        l.ack(2); // an ack read twice counts once
        assert_eq!(l.take_timer_outcomes(), (1, 0));
        // 1 is read as lost and settles as lost once beyond any ack's reach.
        for s in 3..40 {
            l.ack(s);
        }
        l.read_acks(&header(39, &(2..39).collect::<Vec<_>>()), 1, |_| {});
        l.settle(|_, _| {});
        assert_eq!(l.take_timer_outcomes(), (0, 1));
        assert_eq!(l.take_timer_outcomes(), (0, 0), "taken once");
    }
}
