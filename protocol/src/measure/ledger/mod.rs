//! Ground truth per packet: what the link really did with every send, beside what the sender
//! reported about it, for one client's connection (send ids and sequences are per connection;
//! [`crate::SummaryAccumulator`] keeps one ledger per client).
//!
//! The link tags every send with a run-unique id (`uid`; 16-bit sequences wrap), and the driver's
//! `PacketSent` ties that id to the sender's sequence. The [`PacketLedger`] folds events into one
//! record per send: its side and sequence, what the link did (dropped and why, duplicated,
//! delivered when and after what delay), whether the receiver accepted or rejected it, and when the
//! sender reported it acked or nakked. An ack or nak names a sequence; it is charged to the latest
//! send of that sequence by that side, as the sender itself can only mean that one.
//!
//! Batches may be folded out of order (the UDP runtime folds the two endpoint threads' batches as
//! they come, so an ack can be folded before the batch holding the delivery it acknowledges).
//! Whether an ack is false is therefore settled by the delivery, not by the fold order: an ack is
//! true when its send was delivered before it — at an earlier time, or at the same instant and
//! folded first (the simulation's order within one instant). A nak is false by the same rule
//! when its send was delivered before it. Folded in time order, as the simulation does, the
//! counts are exactly those of the moment each ack was reported.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::event::{ClientId, Dir, DropReason, Event, EventKind, Side, SimTime};

mod discards;
mod queries;
mod retire;

pub use discards::Discards;
use discards::{Verdict, DISCARD_KINDS};

/// Ground-truth counters, totals over both directions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PacketTotals {
    /// Packets the endpoints sent.
    pub sent: u64,
    /// Packets the link dropped.
    pub link_dropped: u64,
    /// Copies the link delivered (duplicates count twice).
    pub delivered: u64,
    /// Extra copies the link made.
    pub duplicated: u64,
    /// Distinct sends the endpoints reported acked.
    pub acked: u64,
    /// Sends reported acked before the link had delivered them (judged on each send's first ack).
    pub false_acks: u64,
    /// Acks reported more than once for the same send.
    pub duplicate_acks: u64,
    /// Packets the endpoints rejected as malformed.
    pub malformed: u64,
}

impl PacketTotals {
    /// Adds `other`'s counts (totals over several clients).
    pub fn add(&mut self, other: &PacketTotals) {
        self.sent += other.sent;
        self.link_dropped += other.link_dropped;
        self.delivered += other.delivered;
        self.duplicated += other.duplicated;
        self.acked += other.acked;
        self.false_acks += other.false_acks;
        self.duplicate_acks += other.duplicate_acks;
        self.malformed += other.malformed;
    }
}

/// What the link had done with a send at some instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketFate {
    /// No event names this send (or it was sent after the instant asked about).
    Unknown,
    /// Sent, neither dropped nor delivered yet.
    InFlight,
    /// The link dropped it (it decides on send).
    Dropped(DropReason),
    /// The first copy reached the receiver at `at`, `delay_us` after entering the link.
    Delivered { at: SimTime, delay_us: u32, duplicated: bool },
}

/// One send as the ledger knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketRecord {
    pub uid: u64,
    /// The direction it travels (from `PacketSent` or any link event).
    pub dir: Option<Dir>,
    /// The sender's 16-bit sequence (from `PacketSent`).
    pub seq: Option<u16>,
    pub bytes: u32,
    /// When the endpoint sent it (`PacketSent`), or else when it entered the link.
    pub sent_at: Option<SimTime>,
    pub dropped: Option<DropReason>,
    /// Extra copies the link made.
    pub duplicates: u32,
    /// First copy delivered, and its link delay.
    pub delivered_at: Option<SimTime>,
    pub delay_us: u32,
    /// Copies delivered (first and duplicates).
    pub copies_delivered: u32,
    /// The receiver accepted it (first time), or rejected a delivered copy as malformed.
    pub received_at: Option<SimTime>,
    pub malformed_at: Option<SimTime>,
    /// The sender's first ack and nak of it, and how many of each it reported.
    pub acked_at: Option<SimTime>,
    pub nakked_at: Option<SimTime>,
    pub acks: u32,
    pub naks: u32,
}

/// The latest send of a sequence, as [`PacketLedger::latest`] finds it.
enum Latest<'a> {
    Record(&'a mut Record),
    Settled(&'a mut retire::Settled),
}

/// A time that may not have happened yet, in 8 bytes (records are kept for every send of a run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct At(u64);

impl At {
    const NEVER: At = At(u64::MAX);
    fn get(self) -> Option<SimTime> {
        (self != At::NEVER).then_some(SimTime(self.0))
    }
    fn set_once(&mut self, t: SimTime) {
        if *self == At::NEVER {
            *self = At(t.0);
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Record {
    sent_at: At,
    link_sent_at: At,
    delivered_at: At,
    received_at: At,
    malformed_at: At,
    acked_at: At,
    nakked_at: At,
    bytes: u32,
    delay_us: u32,
    copies: u32,
    duplicates: u32,
    acks: u32,
    naks: u32,
    /// 1 while the first ack, folded before any delivery, counts as false: a delivery earlier than
    /// that ack settles it.
    unsettled_acks: u32,
    seq: Option<u16>,
    dir: Option<Dir>,
    dropped: Option<DropReason>,
    /// What the receiver did with the copies the link delivered (see [`Discards`]).
    verdict: Verdict,
}

impl Default for Record {
    fn default() -> Self {
        Self {
            sent_at: At::NEVER,
            link_sent_at: At::NEVER,
            delivered_at: At::NEVER,
            received_at: At::NEVER,
            malformed_at: At::NEVER,
            acked_at: At::NEVER,
            nakked_at: At::NEVER,
            bytes: 0,
            delay_us: 0,
            copies: 0,
            duplicates: 0,
            acks: 0,
            naks: 0,
            unsettled_acks: 0,
            seq: None,
            dir: None,
            dropped: None,
            verdict: Verdict::None,
        }
    }
}

/// Ids further than this beyond the highest seen get no record (a corrupt log must not make the
/// ledger allocate gigabytes); their events still count in the totals.
const MAX_UID_JUMP: u64 = 1 << 24;
const NO_UID: u64 = u64::MAX;

/// Every send of a run with its ground truth, folded from events; see the module doc.
#[derive(Debug, Clone, Default)]
pub struct PacketLedger {
    /// Indexed by uid minus `uid_base` (ids are dense: the simulation counts from 0, and a live
    /// window rebuilt from a run's newest events starts wherever its first send is, so the
    /// table covers the window's ids, not every id of the run).
    /// A deque, so a counting ledger drops its oldest records without moving the rest (a
    /// `Vec`'s drain moved the 12 MB left behind every 131,072 sends: 2.4 ms in one event).
    records: VecDeque<Record>,
    /// The uid of `records[0]`.
    uid_base: u64,
    /// A counting ledger's forgotten and unsettled records (see [`PacketLedger::counting`]).
    retired: retire::Retired,
    /// Per direction: the send that last carried each 16-bit sequence (allocated on first use).
    last_uid: [Vec<u64>; 2],
    /// Per direction: (time entering the link, uid), in time order.
    link_sends: [Vec<(SimTime, u64)>; 2],
    /// Per direction: the last delivery, to charge a `Malformed` of the same instant to it.
    last_delivery: [Option<(SimTime, u64)>; 2],
    sent: [u64; 2],
    received: [u64; 2],
    acked: [u64; 2],
    link_sent: [u64; 2],
    link_dropped: [u64; 2],
    link_delivered: [u64; 2],
    duplicated: [u64; 2],
    delay_sum_us: [f64; 2],
    ack_events: u64,
    nak_events: u64,
    duplicate_acks: u64,
    false_acks: u64,
    false_naks: u64,
    /// Acks and naks of a sequence the side never sent.
    unnamed_acks: u64,
    unnamed_naks: u64,
    /// Outcomes beyond the first for one send (an ack and a nak, or either twice).
    repeated_outcomes: u64,
    malformed: u64,
    /// The client whose events it folds, less 1 (so that a default ledger is client 1's).
    client_index: ClientId,
    /// Per direction (of the discarded packets): copies discarded, by kind (see [`Discards`]).
    discards: [[u64; DISCARD_KINDS]; 2],
    /// Per direction: sends delivered and never accepted, only discarded (see [`Discards`]).
    discarded_sends: [u64; 2],
}

impl PacketLedger {
    pub fn new() -> Self {
        Self::default()
    }

    /// Back to an empty ledger of the same kind (full or counting), keeping the per-send table's
    /// allocation (see [`crate::SummaryAccumulator::reset`]).
    pub fn reset(&mut self) {
        let mut records = std::mem::take(&mut self.records);
        records.clear();
        let retired = self.retired.fresh();
        *self = Self { records, retired, client_index: self.client_index, ..Self::default() };
    }

    /// Folds a batch of events (batches may come in any order; see the module doc).
    pub fn observe(&mut self, events: &[Event]) {
        for e in events {
            self.observe_event(e);
        }
    }

    /// A ledger of client `client`'s connection: it folds that client's events only (a new
    /// ledger is client 1's).
    pub fn for_client(client: ClientId) -> Self {
        Self { client_index: client.wrapping_sub(1), ..Self::default() }
    }

    /// The client whose events this ledger folds.
    pub fn client(&self) -> ClientId {
        self.client_index.wrapping_add(1)
    }

    /// Folds one event (of this ledger's client: any other is left out).
    ///
    /// Inlined into its callers (the summary fold per client, the recording per event): as a
    /// call per event once folds went per client it cost a run's summary path about 1 M
    /// instructions per 120 s (callgrind, `sim_speed 120 1 1`).
    #[inline]
    pub fn observe_event(&mut self, e: &Event) {
        if e.client.wrapping_sub(1) != self.client_index {
            return;
        }
        let t = e.time;
        match e.kind {
            EventKind::PacketSent { side, seq, bytes, uid } => {
                self.sent[side.index()] += 1;
                let dir = side.outgoing();
                let table = &mut self.last_uid[dir.index()];
                let i = seq as u16 as usize;
                if i >= table.len() {
                    // Grown as sequences are used (a run of many clients has a ledger each: a
                    // full table per direction up front was 1 MB per client).
                    table.resize(i + 1, NO_UID);
                }
                table[i] = uid;
                self.unsettle(dir, seq as u16);
                if let Some(r) = self.record_mut(uid) {
                    r.dir = Some(dir);
                    r.seq = Some(seq as u16);
                    r.bytes = bytes;
                    r.sent_at.set_once(t);
                }
            }
            EventKind::LinkSent { dir, uid, bytes } => {
                self.link_sent[dir.index()] += 1;
                let sends = &mut self.link_sends[dir.index()];
                // One direction's sends come in time order; a late batch is put in its place.
                if self.retired.on {
                    // A counting ledger answers no loss-over-time question: it keeps none.
                } else if sends.last().is_none_or(|&(s, _)| s <= t) {
                    sends.push((t, uid));
                } else {
                    let at = sends.partition_point(|&(s, _)| s <= t);
                    sends.insert(at, (t, uid));
                }
                if let Some(r) = self.record_mut(uid) {
                    r.dir = Some(dir);
                    r.link_sent_at.set_once(t);
                    if r.bytes == 0 {
                        r.bytes = bytes;
                    }
                }
            }
            EventKind::LinkDropped { dir, uid, reason } => {
                self.link_dropped[dir.index()] += 1;
                if let Some(r) = self.record_mut(uid) {
                    r.dir = Some(dir);
                    r.dropped = Some(reason);
                }
            }
            EventKind::LinkDuplicated { dir, uid } => {
                self.duplicated[dir.index()] += 1;
                if let Some(r) = self.record_mut(uid) {
                    r.dir = Some(dir);
                    r.duplicates += 1;
                }
            }
            EventKind::LinkDelivered { dir, uid, delay_us } => self.on_delivered(t, dir, uid, delay_us),
            EventKind::PacketReceived { side, seq, .. } => {
                self.received[side.index()] += 1;
                if let Some(r) = self.latest_mut(side.other(), seq) {
                    r.received_at.set_once(t);
                }
                self.judge_latest(t, side, seq, Verdict::Accepted);
            }
            EventKind::PacketDiscarded { side, seq, reason } => {
                self.count_discard(side, discards::kind_of(reason));
                self.judge_latest(t, side, seq, Verdict::Discarded);
            }
            EventKind::Ue4SkipAck { side, seq } => {
                self.count_discard(side, discards::SKIP_ACK);
                self.judge_latest(t, side, seq, Verdict::Refused);
            }
            EventKind::MessageDesync { side, .. } => {
                self.count_discard(side, discards::DESYNC);
                self.judge_last_delivery(t, side, Verdict::Discarded);
            }
            EventKind::PacketAcked { side, seq } => self.on_acked(t, side, seq),
            EventKind::PacketNakked { side, seq } => self.on_nakked(t, side, seq),
            EventKind::Malformed { side, .. } => {
                self.malformed += 1;
                self.count_discard(side, discards::MALFORMED);
                let dir = side.other().outgoing();
                if let Some((at, uid)) = self.last_delivery[dir.index()] {
                    if at == t {
                        if let Some(r) = self.record_mut(uid) {
                            r.malformed_at.set_once(t);
                        }
                    }
                }
                self.judge_last_delivery(t, side, Verdict::Discarded);
            }
            _ => {}
        }
    }

    fn record_mut(&mut self, uid: u64) -> Option<&mut Record> {
        if uid < self.retired.below {
            return self.retired.stragglers.get_mut(&uid);
        }
        if self.records.is_empty() {
            self.uid_base = uid;
        }
        if uid < self.uid_base {
            // An earlier id folded later (the UDP runtime's sides, or a send from before a live
            // window's first one): the table grows at the front, rarely and by little.
            let grow = self.uid_base - uid;
            if grow > MAX_UID_JUMP {
                return None;
            }
            for _ in 0..grow {
                self.records.push_front(Record::default());
            }
            self.uid_base = uid;
        }
        let (i, len) = (uid - self.uid_base, self.records.len() as u64);
        if i >= len {
            if i - len > MAX_UID_JUMP {
                return None;
            }
            self.retire_settled();
            let i = uid - self.uid_base;
            self.records.resize(i as usize + 1, Record::default());
        }
        self.records.get_mut((uid - self.uid_base) as usize)
    }

    /// The record of `uid`, when the ledger holds it.
    fn record(&self, uid: u64) -> Option<&Record> {
        if uid < self.retired.below {
            return self.retired.stragglers.get(&uid);
        }
        self.records.get(usize::try_from(uid.checked_sub(self.uid_base)?).ok()?)
    }

    fn latest_mut(&mut self, sender: Side, seq: u32) -> Option<&mut Record> {
        match self.latest(sender, seq)? {
            Latest::Record(r) => Some(r),
            Latest::Settled(_) => None,
        }
    }

    /// The latest send of `seq` by `sender`: its record, or what a counting ledger keeps of it
    /// once it left the table settled (see [`retire`]).
    fn latest(&mut self, sender: Side, seq: u32) -> Option<Latest<'_>> {
        let uid = self.uid_of(sender, seq as u16)?;
        if uid < self.retired.below {
            if self.retired.stragglers.contains_key(&uid) {
                return self.retired.stragglers.get_mut(&uid).map(Latest::Record);
            }
            return self.settled_mut(sender.outgoing(), seq as u16).map(Latest::Settled);
        }
        let i = usize::try_from(uid.checked_sub(self.uid_base)?).ok()?;
        self.records.get_mut(i).map(Latest::Record)
    }

    fn on_delivered(&mut self, t: SimTime, dir: Dir, uid: u64, delay_us: u32) {
        let d = dir.index();
        self.link_delivered[d] += 1;
        self.delay_sum_us[d] += delay_us as f64;
        self.last_delivery[d] = Some((t, uid));
        let Some(r) = self.record_mut(uid) else { return };
        r.dir = Some(dir);
        r.copies += 1;
        if r.delivered_at != At::NEVER {
            return;
        }
        r.delivered_at = At(t.0);
        r.delay_us = delay_us;
        // Acks and naks folded before this first delivery are settled now.
        let (acked_at, nakked_at, unsettled, naks) = (r.acked_at, r.nakked_at, r.unsettled_acks, r.naks);
        r.unsettled_acks = 0;
        if unsettled > 0 && t.0 < acked_at.0 {
            self.false_acks -= unsettled as u64;
        }
        if naks > 0 && t.0 < nakked_at.0 {
            self.false_naks += naks as u64;
        }
    }

    fn on_acked(&mut self, t: SimTime, side: Side, seq: u32) {
        let (first, repeated, false_ack) = match self.latest(side, seq) {
            None => {
                // A sequence this side never sent: an ack of nothing is false.
                self.unnamed_acks += 1;
                self.acked[side.index()] += 1;
                self.false_acks += 1;
                return;
            }
            Some(Latest::Record(r)) => {
                r.acks += 1;
                let (first, repeated) = (r.acks == 1, r.acks + r.naks > 1);
                r.acked_at.set_once(t);
                // A false ack is a send reported acked before the link delivered it: judged on
                // the send's first ack (a repeat is counted as a duplicate ack, not as a second
                // false one).
                let false_ack = first && r.delivered_at == At::NEVER;
                if false_ack {
                    r.unsettled_acks = 1;
                }
                (first, repeated, false_ack)
            }
            Some(Latest::Settled(s)) => {
                let (first, repeated) = (!s.acked(), s.has_outcome());
                s.add_outcome(true);
                // Settled: no delivery can come to settle a false ack.
                (first, repeated, first && !s.delivered())
            }
        };
        self.ack_events += 1;
        if first {
            self.acked[side.index()] += 1;
        } else {
            self.duplicate_acks += 1;
        }
        self.repeated_outcomes += repeated as u64;
        self.false_acks += false_ack as u64;
    }

    fn on_nakked(&mut self, t: SimTime, side: Side, seq: u32) {
        let (repeated, false_nak) = match self.latest(side, seq) {
            None => {
                self.unnamed_naks += 1;
                return;
            }
            Some(Latest::Record(r)) => {
                r.naks += 1;
                r.nakked_at.set_once(t);
                (r.acks + r.naks > 1, r.delivered_at != At::NEVER)
            }
            Some(Latest::Settled(s)) => {
                let repeated = s.has_outcome();
                s.add_outcome(false);
                (repeated, s.delivered())
            }
        };
        self.nak_events += 1;
        self.repeated_outcomes += repeated as u64;
        self.false_naks += false_nak as u64;
    }

    /// Totals over both directions.
    pub fn totals(&self) -> PacketTotals {
        PacketTotals {
            sent: self.sent.iter().sum(),
            link_dropped: self.link_dropped.iter().sum(),
            delivered: self.link_delivered.iter().sum(),
            duplicated: self.duplicated.iter().sum(),
            acked: self.acked.iter().sum(),
            false_acks: self.false_acks,
            duplicate_acks: self.duplicate_acks,
            malformed: self.malformed,
        }
    }
}

#[cfg(test)]
mod tests;
