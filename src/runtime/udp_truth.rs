//! Ground truth and estimates tallied from the events of a real-time run.
//!
//! The in-process simulation folds its events as it goes; a UDP run has no such driver, so its
//! consumer folds the endpoints' event batches into an [`EventTally`]: the protocol crate's
//! [`SummaryAccumulator`] (the same packet ledger and estimate fold a simulation and `summary`
//! use, which settles false acks by delivery time, so batches from the two endpoint threads may
//! interleave in any order) plus what only a live consumer needs (event count, latest time).

use ackscope_protocol::{
    Dir, Discards, EstimateSummary, Event, PacketTotals, Side, SimTime, StatsSample, SummaryAccumulator,
};

/// Counters over every event observed.
#[derive(Debug, Clone, Default)]
pub struct EventTally {
    summary: SummaryAccumulator,
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
        if let Some(t) = events.iter().map(|e| e.time).max() {
            self.end = self.end.max(t);
        }
        self.summary.observe(events);
    }

    /// The fold itself (ground truth and estimates, per client), for a report built from it.
    pub fn summary(&self) -> &SummaryAccumulator {
        &self.summary
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
        self.summary.ledger().sent(side)
    }

    /// Distinct sends of `side` it reported acked.
    pub fn acked(&self, side: Side) -> u64 {
        self.summary.ledger().acked(side)
    }

    /// Packets `side` accepted as well-formed.
    pub fn received(&self, side: Side) -> u64 {
        self.summary.ledger().received(side)
    }

    /// Datagrams that entered the link for `dir` (read from the receiving socket).
    pub fn link_sent(&self, dir: Dir) -> u64 {
        self.summary.ledger().link_sent(dir)
    }

    pub fn link_dropped(&self, dir: Dir) -> u64 {
        self.summary.ledger().link_dropped(dir)
    }

    pub fn link_delivered(&self, dir: Dir) -> u64 {
        self.summary.ledger().link_delivered(dir)
    }

    pub fn duplicated(&self, dir: Dir) -> u64 {
        self.summary.ledger().duplicated(dir)
    }

    /// Acks repeated for a send already acked.
    pub fn duplicate_acks(&self) -> u64 {
        self.summary.ledger().duplicate_acks()
    }

    pub fn malformed(&self) -> u64 {
        self.summary.ledger().malformed()
    }

    /// Acks for sends the link had not delivered by then. Meaningful only when the link events
    /// name sends by the sender's ids (both endpoints in one process, see `UidBook`).
    pub fn false_acks(&self) -> u64 {
        self.summary.ledger().false_acks()
    }

    /// Mean link delay on `dir` over delivered copies (ms), if any was delivered.
    pub fn mean_link_delay_ms(&self, dir: Dir) -> Option<f64> {
        self.summary.ledger().mean_delay_ms(dir)
    }

    /// Share of the datagrams entering `dir`'s link that it dropped (%), if any entered.
    pub fn link_loss_percent(&self, dir: Dir) -> Option<f64> {
        let ledger = self.summary.ledger();
        let n = ledger.link_sent(dir);
        (n > 0).then(|| ledger.link_dropped(dir) as f64 * 100.0 / n as f64)
    }

    /// The last estimates `side` reported.
    pub fn last_stats(&self, side: Side) -> Option<StatsSample> {
        self.summary.last_stats(side)
    }

    /// Final smoothed RTT, mean over the sides that measured one (`None` when none did).
    pub fn rtt_ms(&self) -> Option<f64> {
        self.summary.rtt_ms()
    }

    /// Mean loss estimate over the stats samples after the warm-up that had a verdict, all sides
    /// (`None` without one).
    pub fn loss_percent(&self) -> Option<f64> {
        self.summary.loss_percent()
    }

    /// Share of the datagrams entering `dir`'s link that were effectively lost (%): dropped by
    /// the link or discarded unacked by the receiving endpoint; `None` before any entered.
    pub fn effective_loss_percent(&self, dir: Dir) -> Option<f64> {
        let ledger = self.summary.ledger();
        (ledger.link_sent(dir) > 0).then(|| ledger.effective_loss_percent(&[dir]))
    }

    /// Copies the endpoint receiving `dir` discarded, by reason.
    pub fn discards(&self, dir: Dir) -> Discards {
        self.summary.ledger().discards(&[dir])
    }

    /// Totals over both directions, as the simulation reports them (complete when both endpoints'
    /// events were observed).
    pub fn totals(&self) -> PacketTotals {
        self.summary.finish().0
    }

    /// Estimates beside the truth, as the simulation reports them.
    pub fn estimates(&self) -> EstimateSummary {
        self.summary.finish().1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackscope_protocol::EventKind;

    fn ev(t: u64, kind: EventKind) -> Event {
        Event::new(SimTime(t), kind)
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
