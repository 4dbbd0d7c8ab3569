//! Ground truth and estimates tallied from the events of a real-time run.
//!
//! The in-process [`Simulation`](ackscope_protocol::Simulation) checks acks as it goes; a UDP run
//! has no such driver, so its consumer folds the endpoints' event batches into an [`EventTally`].
//! Batches from the two endpoint threads interleave in any order (an ack can be read before the
//! batch holding the delivery it acknowledges), so whether an ack was false is decided when asked,
//! not when the ack is seen.

use std::collections::{HashMap, HashSet};

use ackscope_protocol::{Dir, EstimateSummary, Event, EventKind, PacketTotals, Side, SimTime, StatsSample};

/// Stats samples before this time are left out of the mean loss estimate (as in the simulation:
/// the estimator has nothing to judge yet).
const LOSS_WARMUP: SimTime = SimTime(2_000_000);

/// Counters over every event observed.
#[derive(Debug, Clone, Default)]
pub struct EventTally {
    /// The send id that last carried each 16-bit sequence, per direction.
    last_uid: [HashMap<u16, u64>; 2],
    delivered: HashSet<u64>,
    acked: HashSet<u64>,
    sent_by_side: [u64; 2],
    acked_by_side: [u64; 2],
    received_by_side: [u64; 2],
    link_sent: [u64; 2],
    link_dropped: [u64; 2],
    link_delivered: [u64; 2],
    duplicated: [u64; 2],
    delay_sum_us: [f64; 2],
    duplicate_acks: u64,
    malformed: u64,
    last_stats: [Option<StatsSample>; 2],
    loss_sum: f64,
    loss_n: u64,
    events: u64,
    end: SimTime,
}

impl EventTally {
    pub fn new() -> Self {
        Self::default()
    }

    /// Folds in one batch.
    pub fn observe(&mut self, events: &[Event]) {
        self.events += events.len() as u64;
        for e in events {
            self.end = self.end.max(e.time);
            match e.kind {
                EventKind::PacketSent { side, seq, uid, .. } => {
                    self.last_uid[side.outgoing().index()].insert(seq as u16, uid);
                    self.sent_by_side[side.index()] += 1;
                }
                EventKind::PacketReceived { side, .. } => self.received_by_side[side.index()] += 1,
                EventKind::LinkSent { dir, .. } => self.link_sent[dir.index()] += 1,
                EventKind::LinkDropped { dir, .. } => self.link_dropped[dir.index()] += 1,
                EventKind::LinkDuplicated { dir, .. } => self.duplicated[dir.index()] += 1,
                EventKind::LinkDelivered { dir, uid, delay_us } => {
                    self.link_delivered[dir.index()] += 1;
                    self.delay_sum_us[dir.index()] += delay_us as f64;
                    self.delivered.insert(uid);
                }
                EventKind::PacketAcked { side, seq } => {
                    // PacketSent comes from the same thread as the ack, so it is already here.
                    let Some(&uid) = self.last_uid[side.outgoing().index()].get(&(seq as u16)) else {
                        continue;
                    };
                    if self.acked.insert(uid) {
                        self.acked_by_side[side.index()] += 1;
                    } else {
                        self.duplicate_acks += 1;
                    }
                }
                EventKind::Malformed { .. } => self.malformed += 1,
                EventKind::Stats { side, stats } => {
                    self.last_stats[side.index()] = Some(stats);
                    if e.time >= LOSS_WARMUP {
                        self.loss_sum += stats.loss_percent as f64;
                        self.loss_n += 1;
                    }
                }
                _ => {}
            }
        }
    }

    /// Events observed.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The latest event time.
    pub fn end(&self) -> SimTime {
        self.end
    }

    /// Packets `side` sent.
    pub fn sent(&self, side: Side) -> u64 {
        self.sent_by_side[side.index()]
    }

    /// Distinct sends of `side` it reported acked.
    pub fn acked(&self, side: Side) -> u64 {
        self.acked_by_side[side.index()]
    }

    /// Packets `side` accepted as well-formed.
    pub fn received(&self, side: Side) -> u64 {
        self.received_by_side[side.index()]
    }

    /// Datagrams that entered the link for `dir` (read from the receiving socket).
    pub fn link_sent(&self, dir: Dir) -> u64 {
        self.link_sent[dir.index()]
    }

    pub fn link_dropped(&self, dir: Dir) -> u64 {
        self.link_dropped[dir.index()]
    }

    pub fn link_delivered(&self, dir: Dir) -> u64 {
        self.link_delivered[dir.index()]
    }

    pub fn duplicated(&self, dir: Dir) -> u64 {
        self.duplicated[dir.index()]
    }

    /// Acks repeated for a send already acked.
    pub fn duplicate_acks(&self) -> u64 {
        self.duplicate_acks
    }

    pub fn malformed(&self) -> u64 {
        self.malformed
    }

    /// Acks for sends whose datagram no link event shows delivered. Meaningful only when the link
    /// events name sends by the sender's ids (both endpoints in one process, see `UidBook`).
    pub fn false_acks(&self) -> u64 {
        self.acked.iter().filter(|uid| !self.delivered.contains(uid)).count() as u64
    }

    /// Mean link delay on `dir` over delivered copies (ms), if any was delivered.
    pub fn mean_link_delay_ms(&self, dir: Dir) -> Option<f64> {
        let n = self.link_delivered[dir.index()];
        (n > 0).then(|| self.delay_sum_us[dir.index()] / n as f64 / 1000.0)
    }

    /// Share of the datagrams entering `dir`'s link that it dropped (%), if any entered.
    pub fn link_loss_percent(&self, dir: Dir) -> Option<f64> {
        let n = self.link_sent[dir.index()];
        (n > 0).then(|| self.link_dropped[dir.index()] as f64 * 100.0 / n as f64)
    }

    /// The last estimates `side` reported.
    pub fn last_stats(&self, side: Side) -> Option<StatsSample> {
        self.last_stats[side.index()]
    }

    /// Final smoothed RTT, mean over the sides that reported.
    pub fn rtt_ms(&self) -> f64 {
        let s: Vec<f64> = self.last_stats.iter().flatten().map(|s| s.rtt_ms as f64).collect();
        if s.is_empty() {
            0.0
        } else {
            s.iter().sum::<f64>() / s.len() as f64
        }
    }

    /// Mean loss estimate over the stats samples after the first 2 s, all sides.
    pub fn loss_percent(&self) -> f64 {
        if self.loss_n == 0 {
            0.0
        } else {
            self.loss_sum / self.loss_n as f64
        }
    }

    /// Totals over both directions, as the simulation reports them (complete when both endpoints'
    /// events were observed).
    pub fn totals(&self) -> PacketTotals {
        PacketTotals {
            sent: self.sent_by_side.iter().sum(),
            link_dropped: self.link_dropped.iter().sum(),
            delivered: self.link_delivered.iter().sum(),
            duplicated: self.duplicated.iter().sum(),
            acked: self.acked_by_side.iter().sum(),
            false_acks: self.false_acks(),
            duplicate_acks: self.duplicate_acks,
            malformed: self.malformed,
        }
    }

    /// Estimates beside the truth, as the simulation reports them.
    pub fn estimates(&self) -> EstimateSummary {
        let sent: u64 = self.link_sent.iter().sum();
        let dropped: u64 = self.link_dropped.iter().sum();
        EstimateSummary {
            rtt_ms: self.rtt_ms(),
            true_rtt_ms: Dir::BOTH.iter().map(|d| self.mean_link_delay_ms(*d).unwrap_or(0.0)).sum(),
            loss_percent: self.loss_percent(),
            true_loss_percent: if sent == 0 { 0.0 } else { dropped as f64 * 100.0 / sent as f64 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: u64, kind: EventKind) -> Event {
        Event { time: SimTime(t), kind }
    }

    #[test]
    fn an_ack_is_false_only_if_its_send_is_never_delivered_whatever_the_batch_order() {
        let mut t = EventTally::new();
        t.observe(&[
            ev(0, EventKind::PacketSent { side: Side::A, seq: 0, bytes: 10, uid: 0 }),
            ev(1, EventKind::PacketSent { side: Side::A, seq: 1, bytes: 10, uid: 2 }),
            ev(9, EventKind::PacketAcked { side: Side::A, seq: 0 }),
            ev(9, EventKind::PacketAcked { side: Side::A, seq: 1 }),
            ev(9, EventKind::PacketAcked { side: Side::A, seq: 1 }),
        ]);
        // The receiver's batch arrives after the acks; uid 2 was never delivered.
        t.observe(&[ev(5, EventKind::LinkDelivered { dir: Dir::AtoB, uid: 0, delay_us: 5 })]);
        let p = t.totals();
        assert_eq!((p.sent, p.acked, p.false_acks, p.duplicate_acks), (2, 2, 1, 1));
        assert_eq!(t.mean_link_delay_ms(Dir::AtoB), Some(0.005));
    }
}
