//! The ledger's read side: per-send records and fates, per-direction figures, and the senders'
//! reports checked against the link.

use super::{PacketFate, PacketLedger, PacketRecord, NO_UID};
use crate::event::{Dir, Side, SimTime};

/// Per-packet queries.
impl PacketLedger {
    /// The latest send of `sender` that carried `seq` (the one an ack of `seq` refers to).
    pub fn uid_of(&self, sender: Side, seq: u16) -> Option<u64> {
        let uid = *self.last_uid[sender.outgoing().index()].get(seq as usize)?;
        (uid != NO_UID).then_some(uid)
    }

    /// What the ledger knows of send `uid`.
    pub fn packet(&self, uid: u64) -> Option<PacketRecord> {
        let r = self.record(uid)?;
        let known = r.dir.is_some() || r.seq.is_some();
        known.then(|| PacketRecord {
            uid,
            dir: r.dir,
            seq: r.seq,
            bytes: r.bytes,
            sent_at: r.sent_at.get().or(r.link_sent_at.get()),
            dropped: r.dropped,
            duplicates: r.duplicates,
            delivered_at: r.delivered_at.get(),
            delay_us: r.delay_us,
            copies_delivered: r.copies,
            received_at: r.received_at.get(),
            malformed_at: r.malformed_at.get(),
            acked_at: r.acked_at.get(),
            nakked_at: r.nakked_at.get(),
            acks: r.acks,
            naks: r.naks,
        })
    }

    /// Sends the per-send table holds room for (the live window's memory figure watches it).
    pub fn table_len(&self) -> usize {
        self.records.len()
    }

    /// Heap bytes the ledger holds, from its tables' capacities: what a live window's memory
    /// cap counts (the per-send table grows with the run, the sequence tables with the
    /// clients).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let records = self.records.capacity() * size_of::<super::Record>();
        let last_uid: usize = self.last_uid.iter().map(|v| v.capacity() * size_of::<u64>()).sum();
        let link_sends: usize = self.link_sends.iter().map(|v| v.capacity() * size_of::<(SimTime, u64)>()).sum();
        // A B-tree node holds up to 11 entries and is about two thirds full.
        let stragglers = self.retired.stragglers.len() * (size_of::<u64>() + size_of::<super::Record>()) * 3 / 2;
        records + last_uid + link_sends + stragglers
    }

    /// One past the largest send id folded so far (0 before any): the table ends there.
    pub fn uid_end(&self) -> u64 {
        self.uid_base + self.records.len() as u64
    }

    /// Every send known, in uid order.
    pub fn packets(&self) -> impl Iterator<Item = PacketRecord> + '_ {
        (self.uid_base..self.uid_end()).filter_map(|uid| self.packet(uid))
    }

    /// The link's verdict on send `uid` as known at `t`.
    pub fn fate_at(&self, uid: u64, t: SimTime) -> PacketFate {
        let Some(p) = self.packet(uid) else { return PacketFate::Unknown };
        if p.sent_at.is_some_and(|s| s > t) {
            return PacketFate::Unknown;
        }
        if let Some(reason) = p.dropped {
            return PacketFate::Dropped(reason);
        }
        match p.delivered_at {
            Some(at) if at <= t => PacketFate::Delivered { at, delay_us: p.delay_us, duplicated: p.duplicates > 0 },
            _ => PacketFate::InFlight,
        }
    }

    pub fn delivered_at(&self, uid: u64) -> Option<SimTime> {
        self.packet(uid)?.delivered_at
    }

    pub fn acked_at(&self, uid: u64) -> Option<SimTime> {
        self.packet(uid)?.acked_at
    }

    pub fn nakked_at(&self, uid: u64) -> Option<SimTime> {
        self.packet(uid)?.nakked_at
    }
}

/// Per-direction and per-side figures.
impl PacketLedger {
    /// Packets `side` sent (`PacketSent`).
    pub fn sent(&self, side: Side) -> u64 {
        self.sent[side.index()]
    }

    /// Packets `side` accepted as well-formed (`PacketReceived`).
    pub fn received(&self, side: Side) -> u64 {
        self.received[side.index()]
    }

    /// Distinct sends of `side` it reported acked (acks of sequences it never sent included).
    pub fn acked(&self, side: Side) -> u64 {
        self.acked[side.index()]
    }

    /// Sends that entered `dir`'s link.
    pub fn link_sent(&self, dir: Dir) -> u64 {
        self.link_sent[dir.index()]
    }

    pub fn link_dropped(&self, dir: Dir) -> u64 {
        self.link_dropped[dir.index()]
    }

    /// Copies `dir`'s link delivered (duplicates count twice).
    pub fn link_delivered(&self, dir: Dir) -> u64 {
        self.link_delivered[dir.index()]
    }

    pub fn duplicated(&self, dir: Dir) -> u64 {
        self.duplicated[dir.index()]
    }

    /// Mean link delay on `dir` over delivered copies (ms), if any was delivered.
    pub fn mean_delay_ms(&self, dir: Dir) -> Option<f64> {
        let n = self.link_delivered[dir.index()];
        (n > 0).then(|| self.delay_sum_us[dir.index()] / n as f64 / 1000.0)
    }

    /// Mean one-way delay A->B plus B->A over delivered copies; `None` unless both directions
    /// delivered one (a direction with none has no delay: counting it 0 printed half an RTT, or
    /// 0.0 ms with nothing delivered at all).
    pub fn true_rtt_ms(&self) -> Option<f64> {
        Some(self.mean_delay_ms(Dir::AtoB)? + self.mean_delay_ms(Dir::BtoA)?)
    }

    /// Packets the link dropped / packets it was given, both directions, in percent.
    pub fn true_loss_percent(&self) -> f64 {
        let sent: u64 = self.link_sent.iter().sum();
        let dropped: u64 = self.link_dropped.iter().sum();
        if sent == 0 {
            0.0
        } else {
            dropped as f64 * 100.0 / sent as f64
        }
    }

    /// Share (%) of the sends entering `dir`'s link in `[from, until)` that it dropped; `None`
    /// when none entered then.
    pub fn loss_percent_between(&self, dir: Dir, from: SimTime, until: SimTime) -> Option<f64> {
        let sends = &self.link_sends[dir.index()];
        let lo = sends.partition_point(|&(t, _)| t < from);
        let hi = sends.partition_point(|&(t, _)| t < until).max(lo);
        self.dropped_share(&sends[lo..hi])
    }

    /// Share (%) of the last `count` sends entering `dir`'s link that it dropped; `None` before
    /// any send.
    pub fn recent_loss_percent(&self, dir: Dir, count: usize) -> Option<f64> {
        let sends = &self.link_sends[dir.index()];
        self.dropped_share(&sends[sends.len().saturating_sub(count)..])
    }

    fn dropped_share(&self, sends: &[(SimTime, u64)]) -> Option<f64> {
        if sends.is_empty() {
            return None;
        }
        let dropped = sends.iter().filter(|(_, uid)| self.record(*uid).is_some_and(|r| r.dropped.is_some())).count();
        Some(dropped as f64 * 100.0 / sends.len() as f64)
    }
}

/// What the senders reported, checked against the link.
impl PacketLedger {
    /// Acks of sends the link had not delivered before them, acks of sequences never sent included.
    pub fn false_acks(&self) -> u64 {
        self.false_acks
    }

    /// Naks of sends the link had delivered before them.
    pub fn false_naks(&self) -> u64 {
        self.false_naks
    }

    /// Acks repeated for a send already acked.
    pub fn duplicate_acks(&self) -> u64 {
        self.duplicate_acks
    }

    /// Acks and naks naming a sequence the side had sent (repeats included).
    pub fn acks_reported(&self) -> u64 {
        self.ack_events
    }

    pub fn naks_reported(&self) -> u64 {
        self.nak_events
    }

    /// Acks and naks naming a sequence the side never sent.
    pub fn unnamed_acks(&self) -> u64 {
        self.unnamed_acks
    }

    pub fn unnamed_naks(&self) -> u64 {
        self.unnamed_naks
    }

    /// Outcomes reported beyond the first for one send (an ack and a nak, or either twice).
    pub fn repeated_outcomes(&self) -> u64 {
        self.repeated_outcomes
    }

    /// Packets the endpoints rejected as malformed.
    pub fn malformed(&self) -> u64 {
        self.malformed
    }
}
