//! The delivery notification manager itself (MGP 7.5.1-7.5.3), free of messages and events.
//!
//! Sequence comparisons are wrap-aware (`sequence_less_than`), where the seed compares plainly and
//! only mentions wrap-around in prose. Outcomes are appended to a caller's `Vec<Outcome>`.

use std::collections::VecDeque;

use super::wire::AckRange;
use super::DnmConfig;
use crate::event::SimTime;
use crate::strategies::notify::scheme::Outcome;
use crate::wire::sequence::{sequence_greater_than, sequence_less_than, SequenceBuffer};

/// How many sequences behind the newest received `accept_late` remembers as processed: a late
/// packet further back cannot be told from a duplicate, so it is dropped as the book drops it.
pub const LATE_WINDOW: usize = 1024;

/// A packet still waiting for its delivery status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InFlight {
    pub sequence: u16,
    pub dispatched: SimTime,
}

/// One side's delivery notification state.
#[derive(Debug, Clone)]
pub struct DeliveryNotificationManager {
    config: DnmConfig,
    next_outgoing: u16,
    next_expected: u16,
    last_accept: Option<SimTime>,
    in_flight: VecDeque<InFlight>,
    /// Ranges still to be written, each with the number of packets it still goes into.
    pending_acks: VecDeque<(AckRange, u32)>,
    dispatched: u64,
    delivered: u64,
    dropped: u64,
    /// Packets refused because their sequence was older than expected.
    refused_old: u64,
    /// Sequences processed recently, so `accept_late` processes a late packet only once.
    received: SequenceBuffer<()>,
    /// Late packets processed under `accept_late`.
    accepted_late: u64,
}

impl DeliveryNotificationManager {
    /// Changes the delivery timeout from now on (in-flight packets are judged by the new value).
    pub fn set_timeout_ms(&mut self, ms: f64) {
        self.config.timeout_ms = ms;
    }

    pub fn config(&self) -> &DnmConfig {
        &self.config
    }

    pub fn new(config: DnmConfig) -> Self {
        Self {
            config,
            next_outgoing: 0,
            next_expected: 0,
            last_accept: None,
            in_flight: VecDeque::new(),
            pending_acks: VecDeque::new(),
            dispatched: 0,
            delivered: 0,
            dropped: 0,
            refused_old: 0,
            received: SequenceBuffer::new(LATE_WINDOW),
            accepted_late: 0,
        }
    }

    /// Turns `accept_late` on or off from now on.
    pub fn set_accept_late(&mut self, on: bool) {
        self.config.accept_late = on;
    }

    /// The seed's `WriteSequenceNumber`: the next sequence, now in flight.
    pub fn next_packet(&mut self, now: SimTime, out: &mut Vec<Outcome>) -> u16 {
        let sequence = self.next_outgoing;
        self.next_outgoing = sequence.wrapping_add(1);
        // Half the sequence space still unresolved would make comparisons ambiguous; the oldest
        // is given up as a failure first (only at rates near 32768 packets per timeout).
        while self.in_flight.len() >= 32768 {
            if let Some(p) = self.in_flight.pop_front() {
                self.fail(p.sequence, true, out);
            }
        }
        self.in_flight.push_back(InFlight { sequence, dispatched: now });
        self.dispatched += 1;
        sequence
    }

    /// Whether `seq` was processed among the last [`LATE_WINDOW`] sequences (to tell a duplicate
    /// from a late packet when one is refused).
    pub fn processed_recently(&self, seq: u16) -> bool {
        self.last_accept.is_some() && self.received.exists(seq)
    }

    /// The seed's `ProcessSequenceNumber`: true when the packet is to be processed (and acked).
    ///
    /// With `accept_late`, a sequence older than expected is processed too, once: only if it is
    /// within [`LATE_WINDOW`] of the newest and was not processed before (a link duplicate of a
    /// processed packet is dropped as the book drops it). It does not move the expected sequence.
    pub fn process_sequence(&mut self, now: SimTime, seq: u16) -> bool {
        let reset = self.config.receive_reset_ms > 0.0
            && self.last_accept.is_some_and(|t| now.saturating_since(t).as_millis_f64() > self.config.receive_reset_ms);
        if !reset && self.last_accept.is_some() && sequence_less_than(seq, self.next_expected) {
            let late_once = self.config.accept_late && self.received.in_window(seq) && !self.received.exists(seq);
            if !late_once {
                self.refused_old += 1;
                return false;
            }
            self.received.insert(seq);
            self.accepted_late += 1;
            self.last_accept = Some(now);
            self.add_pending_ack(seq);
            return true;
        }
        if reset || self.last_accept.is_none() {
            self.received.reset_to(seq);
        }
        self.received.insert(seq);
        self.next_expected = seq.wrapping_add(1);
        self.last_accept = Some(now);
        self.add_pending_ack(seq);
        true
    }

    fn add_pending_ack(&mut self, seq: u16) {
        let repeat = self.config.ack_repeat.max(1);
        let extended = self.pending_acks.back_mut().is_some_and(|(r, left)| {
            // A range already written is extended only while it still has all its writes left,
            // so every sequence in it is written `ack_repeat` times.
            *left == repeat && r.extend_if_should(seq)
        });
        if !extended {
            self.pending_acks.push_back((AckRange { start: seq, count: 1 }, repeat));
            while self.pending_acks.len() > self.config.max_pending_ack_ranges.max(1) as usize {
                self.pending_acks.pop_front();
            }
        }
    }

    /// The seed's `WritePendingAcks`: the oldest `max` pending ranges (of at most 256), oldest
    /// first. The seed writes each range once and forgets it (`ack_repeat` = 1), so a lost packet
    /// loses its acks and the sender later counts delivered packets as failures; with
    /// `ack_repeat` = n each range goes into n packets. Repeats are safe: the sender skips acked
    /// sequences no longer in flight.
    pub fn take_pending_acks(&mut self, max: usize) -> Vec<AckRange> {
        let mut out = Vec::new();
        for (r, left) in self.pending_acks.iter_mut().take(max) {
            out.push(*r);
            *left -= 1;
        }
        while self.pending_acks.front().is_some_and(|(_, left)| *left == 0) {
            self.pending_acks.pop_front();
        }
        out
    }

    /// True when every range names only sequences this side has sent (checked before any state
    /// changes, so a corrupt or forged range cannot fail real packets).
    pub fn ranges_plausible(&self, ranges: &[AckRange]) -> bool {
        let newest = self.next_outgoing.wrapping_sub(1);
        self.dispatched > 0
            && ranges.iter().all(|r| {
                let last = r.start.wrapping_add((r.count.max(1) - 1) as u16);
                r.count >= 1 && !sequence_greater_than(last, newest) && !sequence_greater_than(r.start, last)
            })
    }

    /// The seed's `ProcessAcks` for each range in turn.
    pub fn process_acks(&mut self, now: SimTime, ranges: &[AckRange], out: &mut Vec<Outcome>) {
        for r in ranges {
            let mut next = r.start;
            let mut remaining = r.count;
            while remaining > 0 {
                let Some(front) = self.in_flight.front().copied() else { break };
                if sequence_less_than(front.sequence, next) {
                    self.in_flight.pop_front();
                    self.fail(front.sequence, false, out);
                } else if front.sequence == next {
                    self.in_flight.pop_front();
                    self.delivered += 1;
                    let rtt_ms = now.saturating_since(front.dispatched).as_millis_f64();
                    out.push(Outcome::Delivered { sequence: next, rtt_ms });
                    next = next.wrapping_add(1);
                    remaining -= 1;
                } else {
                    // Acked sequences no longer in flight (already failed by timeout): skip them.
                    let skip = front.sequence.wrapping_sub(next) as u32;
                    if skip >= remaining {
                        break;
                    }
                    next = front.sequence;
                    remaining -= skip;
                }
            }
        }
    }

    /// The seed's `ProcessTimedOutPackets`.
    pub fn process_timeouts(&mut self, now: SimTime, out: &mut Vec<Outcome>) {
        let timeout_us = (self.config.timeout_ms.max(0.0) * 1000.0) as u64;
        while let Some(front) = self.in_flight.front().copied() {
            if now.0 < front.dispatched.0.saturating_add(timeout_us) {
                break;
            }
            self.in_flight.pop_front();
            self.fail(front.sequence, true, out);
        }
    }

    fn fail(&mut self, sequence: u16, timeout: bool, out: &mut Vec<Outcome>) {
        self.dropped += 1;
        out.push(Outcome::Failed { sequence, timeout });
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
    pub fn pending_ack_ranges(&self) -> usize {
        self.pending_acks.len()
    }
    pub fn dispatched_count(&self) -> u64 {
        self.dispatched
    }
    pub fn delivered_count(&self) -> u64 {
        self.delivered
    }
    pub fn dropped_count(&self) -> u64 {
        self.dropped
    }
    pub fn refused_old_count(&self) -> u64 {
        self.refused_old
    }
    /// Late packets processed under `accept_late`.
    pub fn accepted_late_count(&self) -> u64 {
        self.accepted_late
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mgr() -> DeliveryNotificationManager {
        DeliveryNotificationManager::new(DnmConfig::default())
    }

    #[test]
    fn receiver_accepts_expected_or_newer_and_builds_ranges() {
        let mut m = mgr();
        let t = SimTime::ZERO;
        for s in [0u16, 1, 2, 5, 4, 6, 9] {
            m.process_sequence(t, s);
        }
        // 4 is older than the expected 6: neither processed nor acked.
        assert_eq!(m.refused_old_count(), 1);
        let r = m.take_pending_acks(8);
        assert_eq!(
            r,
            vec![AckRange { start: 0, count: 3 }, AckRange { start: 5, count: 2 }, AckRange { start: 9, count: 1 }]
        );
        assert_eq!(m.pending_ack_ranges(), 0);
    }

    #[test]
    fn accept_late_processes_a_late_packet_once_and_the_book_never() {
        for accept_late in [false, true] {
            let mut m = DeliveryNotificationManager::new(DnmConfig { accept_late, ..DnmConfig::default() });
            let t = SimTime::ZERO;
            let got: Vec<bool> = [0u16, 2, 1, 1, 2, 3, 0].iter().map(|&s| m.process_sequence(t, s)).collect();
            let r = m.take_pending_acks(8);
            if accept_late {
                assert_eq!(got, [true, true, true, false, false, true, false]);
                let ranges = [AckRange { start: 0, count: 1 }, AckRange { start: 2, count: 1 }];
                assert_eq!(r[..2], ranges);
                assert_eq!(r[2..], [AckRange { start: 1, count: 1 }, AckRange { start: 3, count: 1 }]);
                assert_eq!((m.accepted_late_count(), m.refused_old_count()), (1, 3));
            } else {
                assert_eq!(got, [true, true, false, false, false, true, false]);
                assert_eq!(r, vec![AckRange { start: 0, count: 1 }, AckRange { start: 2, count: 2 }]);
                assert_eq!((m.accepted_late_count(), m.refused_old_count()), (0, 4));
            }
        }
    }

    #[test]
    fn a_late_ack_for_a_packet_already_failed_changes_nothing() {
        let mut m = mgr();
        let mut out = Vec::new();
        for i in 0..3u64 {
            m.next_packet(SimTime(i * 1000), &mut out);
        }
        m.process_acks(SimTime(10_000), &[AckRange { start: 1, count: 2 }], &mut out);
        m.process_acks(SimTime(20_000), &[AckRange { start: 0, count: 1 }], &mut out);
        assert_eq!(out.len(), 3, "{out:?}");
        assert_eq!(out[0], Outcome::Failed { sequence: 0, timeout: false });
        assert_eq!((m.delivered_count(), m.dropped_count(), m.in_flight()), (2, 1, 0));
    }

    #[test]
    fn ranges_ack_in_order_skipped_packets_fail_and_timeouts_fail_once() {
        let mut m = mgr();
        let mut out = Vec::new();
        for i in 0..6u64 {
            m.next_packet(SimTime(i * 1000), &mut out);
        }
        let ranges = [AckRange { start: 1, count: 2 }, AckRange { start: 4, count: 1 }];
        assert!(m.ranges_plausible(&ranges));
        m.process_acks(SimTime(10_000), &ranges, &mut out);
        m.process_timeouts(SimTime(2_000_000), &mut out);
        m.process_timeouts(SimTime(3_000_000), &mut out);
        let f = |s| Outcome::Failed { sequence: s, timeout: false };
        assert_eq!(out[0], f(0));
        assert!(matches!(out[1], Outcome::Delivered { sequence: 1, .. }));
        assert!(matches!(out[2], Outcome::Delivered { sequence: 2, .. }));
        assert_eq!(out[3], f(3));
        assert!(matches!(out[4], Outcome::Delivered { sequence: 4, .. }));
        assert_eq!(out[5], Outcome::Failed { sequence: 5, timeout: true });
        assert_eq!(out.len(), 6);
        assert_eq!((m.delivered_count(), m.dropped_count()), (3, 3));
        assert!(!m.ranges_plausible(&[AckRange { start: 5, count: 2 }]), "names sequence 6, never sent");
    }
}
