//! Messages over delivery notification, and newest-state replication of snapshots (MGP 7.6).
//!
//! The delivery-notification strategies (`dnm`, `rellikt`) tell the layer above, for every packet,
//! "delivered" or "failed"; they never resend anything themselves (MGP 7.5: the notification
//! module "does not implement resending; modules above decide"). This file is that layer above,
//! shared by both strategies:
//!
//! - [`Outbox`] remembers which workload messages rode in which packet. On delivery it reports
//!   `MessageAcked`; on failure it decides what to send again. Reliable workload messages are
//!   resent, whole, until a packet carrying them is delivered (reliable but *unordered*: the
//!   receiver hands each to the application when it first arrives). Snapshots follow
//!   [`SnapshotMode`]: `unreliable` never resends, `reliable` resends every lost snapshot like a
//!   reliable message, and `newest` resends only the newest state: the workload's snapshots are
//!   successive full states of one object, so when the packet with snapshot `k` is lost and a
//!   newer snapshot has since been sent or queued, that newer one already carries the state and
//!   nothing is resent; only when `k` is still the newest state is it sent again.
//! - [`Inbox`] delivers each message id once (resends and link duplicates arrive more than once).
//! - The message block codec: `count`, then per message its length and the aligned bytes. Payloads
//!   self-identify (`workload::check_payload`), so a corrupt one makes the packet malformed.
//!
//! Staleness ([`snapshot_summary`]) is measured from events only, so it works on recorded
//! sessions: the age of the newest snapshot a receiver holds is `t - (time that snapshot was
//! queued by the sender)`, sampled on a fixed grid of [`STALENESS_SAMPLE_MS`] from the moment the
//! receiver first holds one to the last event. A clock grid rather than sampling at deliveries
//! gives the long gaps after losses their true weight (sampling at deliveries only ever looks
//! right after something arrived), and a fine grid rather than the 100 ms stats interval avoids
//! aliasing with the snapshot period. Both sides share the simulation's virtual clock, which is
//! what makes `t - queued` meaningful across endpoints.
//! Snapshots are the messages whose `MessageQueued` has `reliable: false` in every mode, also
//! `reliable` mode where they are in fact resent: `reliable` in that event is the workload's
//! class of the message, so generic reliable-message metrics compare like with like.

use std::collections::{HashMap, HashSet, VecDeque};

use serde::{Deserialize, Serialize};

use crate::bits::{BitError, Stream};
use crate::event::{Event, EventKind, RefuseReason, SendKind, Side, SimTime};
use crate::workload::{check_payload, MessageRequest, MIN_MESSAGE_BYTES};

/// Largest message the block codec carries.
pub const MAX_MESSAGE_BYTES: u32 = 1024;
/// Most messages in one packet.
pub const MAX_MESSAGES_PER_PACKET: u32 = 64;
/// Bytes a message costs in a packet beyond its payload, at most (length field + alignment).
pub const MESSAGE_OVERHEAD_BYTES: usize = 3;

/// How unreliable state snapshots are treated when their packet is reported lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotMode {
    /// Sent once; losses are simply lost.
    #[default]
    Unreliable,
    /// On loss, resend only the newest version of the state (nothing when a newer one is out).
    Newest,
    /// On loss, resend that snapshot, like any reliable message.
    Reliable,
}

/// Outbox settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutboxConfig {
    pub snapshot_mode: SnapshotMode,
    /// Most messages waiting for delivery (reliable ones until acked); beyond it new messages are
    /// refused with `SendQueueFull`.
    pub send_queue_messages: usize,
    /// Largest message accepted.
    pub max_message_bytes: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Queued {
    id: u64,
    kind: SendKind,
}

#[derive(Debug, Clone)]
struct Stored {
    payload: Vec<u8>,
    snapshot: bool,
    /// Kept until acked (reliable messages; snapshots in `reliable` mode).
    reliable: bool,
}

/// The sending half of the message layer.
#[derive(Debug, Clone)]
pub struct Outbox {
    side: Side,
    config: OutboxConfig,
    queue: VecDeque<Queued>,
    store: HashMap<u64, Stored>,
    /// Messages each in-flight packet carried, by packet sequence (no iteration over it).
    in_packets: HashMap<u16, Vec<u64>>,
    /// Newest snapshot id queued so far.
    newest_snapshot: Option<u64>,
    /// Newest snapshot id put in a packet so far.
    newest_snapshot_sent: Option<u64>,
    /// Entries of `store` that are kept until acked.
    reliable_waiting: usize,
}

impl Outbox {
    pub fn new(side: Side, config: OutboxConfig) -> Self {
        Self {
            side,
            config,
            queue: VecDeque::new(),
            store: HashMap::new(),
            in_packets: HashMap::new(),
            newest_snapshot: None,
            newest_snapshot_sent: None,
            reliable_waiting: 0,
        }
    }

    pub fn config(&self) -> &OutboxConfig {
        &self.config
    }

    /// Messages waiting to be sent (first sends and resends).
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Messages held until acked.
    pub fn unacked_reliable(&self) -> usize {
        self.reliable_waiting
    }

    /// Accepts a workload message (or refuses it, with an event).
    pub fn push(&mut self, now: SimTime, m: MessageRequest, events: &mut Vec<Event>) {
        let side = self.side;
        let bytes = m.payload.len() as u32;
        events
            .push(Event { time: now, kind: EventKind::MessageQueued { side, msg: m.id, bytes, reliable: m.reliable } });
        let snapshot = !m.reliable;
        let keep = m.reliable || self.config.snapshot_mode == SnapshotMode::Reliable;
        let refuse = if bytes > self.config.max_message_bytes.min(MAX_MESSAGE_BYTES) {
            Some(RefuseReason::TooLarge)
        } else if self.store.len() >= self.config.send_queue_messages {
            Some(RefuseReason::SendQueueFull)
        } else {
            None
        };
        if let Some(reason) = refuse {
            events.push(Event { time: now, kind: EventKind::MessageRefused { side, msg: m.id, reason } });
            return;
        }
        if snapshot {
            self.newest_snapshot = Some(m.id);
        }
        self.reliable_waiting += keep as usize;
        self.store.insert(m.id, Stored { payload: m.payload, snapshot, reliable: keep });
        self.queue.push_back(Queued { id: m.id, kind: SendKind::First });
    }

    /// Moves queued messages into packet `seq` while they fit in `budget_bytes`, in queue order
    /// (resends were put first). Returns the payloads to write.
    pub fn fill(&mut self, now: SimTime, seq: u16, budget_bytes: usize, events: &mut Vec<Event>) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut ids = Vec::new();
        let mut left = budget_bytes;
        while let Some(q) = self.queue.front().copied() {
            let Some(stored) = self.store.get(&q.id) else {
                self.queue.pop_front();
                continue;
            };
            let superseded = self.config.snapshot_mode == SnapshotMode::Newest
                && stored.snapshot
                && q.kind != SendKind::First
                && Some(q.id) != self.newest_snapshot;
            if superseded {
                // A newer state was queued after this resend was decided: it carries everything.
                self.queue.pop_front();
                continue;
            }
            let cost = stored.payload.len() + MESSAGE_OVERHEAD_BYTES;
            if cost > left || out.len() >= MAX_MESSAGES_PER_PACKET as usize {
                break;
            }
            left -= cost;
            self.queue.pop_front();
            out.push(stored.payload.clone());
            ids.push(q.id);
            if stored.snapshot {
                self.newest_snapshot_sent = self.newest_snapshot_sent.max(Some(q.id));
            }
            let keep = stored.reliable
                || (self.config.snapshot_mode == SnapshotMode::Newest && Some(q.id) == self.newest_snapshot);
            if !keep {
                self.store.remove(&q.id);
            }
            let kind = EventKind::MessageSent { side: self.side, msg: q.id, seq: seq as u32, kind: q.kind };
            events.push(Event { time: now, kind });
        }
        // In newest mode only the newest snapshot's state is worth keeping for a resend.
        if self.config.snapshot_mode == SnapshotMode::Newest {
            let newest = self.newest_snapshot;
            self.store.retain(|id, s| !s.snapshot || Some(*id) == newest || s.reliable);
        }
        if ids.is_empty() {
            self.in_packets.remove(&seq);
        } else {
            // A previous packet with this sequence that was never reported is 65536 sends old:
            // its messages are abandoned as if the packet failed silently.
            self.in_packets.insert(seq, ids);
        }
        out
    }

    /// Packet `seq` was delivered: its messages are acked.
    pub fn on_delivered(&mut self, now: SimTime, seq: u16, events: &mut Vec<Event>) {
        let Some(ids) = self.in_packets.remove(&seq) else { return };
        for id in ids {
            if let Some(s) = self.store.get(&id) {
                if s.reliable {
                    self.store.remove(&id);
                    self.reliable_waiting -= 1;
                }
            }
            events
                .push(Event { time: now, kind: EventKind::MessageAcked { side: self.side, msg: id, seq: seq as u32 } });
        }
    }

    /// Packet `seq` failed (`why` is the send kind its resends get): resend what must be.
    pub fn on_failed(&mut self, seq: u16, why: SendKind) {
        let Some(ids) = self.in_packets.remove(&seq) else { return };
        // Resends go first, keeping their original order among themselves.
        for id in ids.into_iter().rev() {
            let Some(s) = self.store.get(&id) else { continue };
            let resend = if s.reliable {
                true
            } else if s.snapshot && self.config.snapshot_mode == SnapshotMode::Newest {
                // Newer state already out (or queued) carries everything this one did.
                Some(id) == self.newest_snapshot && self.newest_snapshot_sent <= Some(id)
            } else {
                false
            };
            if resend && !self.queue.iter().any(|q| q.id == id) {
                self.queue.push_front(Queued { id, kind: why });
            }
        }
    }
}

/// The receiving half: hands each message id to the application once.
#[derive(Debug, Clone)]
pub struct Inbox {
    side: Side,
    seen: HashSet<u64>,
    newest: u64,
}

/// Ids this far behind the newest one received are forgotten by the duplicate filter.
const DEDUP_WINDOW: u64 = 1 << 16;

impl Inbox {
    pub fn new(side: Side) -> Self {
        Self { side, seen: HashSet::new(), newest: 0 }
    }

    /// Checks every payload of a packet from the peer; `None` when one is not an intact workload
    /// message (the whole packet is then malformed and must not be acked).
    pub fn check(&self, payloads: &[Vec<u8>]) -> Option<Vec<u64>> {
        payloads.iter().map(|p| check_payload(self.side.other(), p)).collect()
    }

    /// Delivers the checked ids not delivered before.
    pub fn deliver(&mut self, now: SimTime, ids: &[u64], events: &mut Vec<Event>) {
        for &id in ids {
            if id + DEDUP_WINDOW < self.newest || !self.seen.insert(id) {
                continue;
            }
            self.newest = self.newest.max(id);
            events.push(Event { time: now, kind: EventKind::MessageDelivered { side: self.side, msg: id } });
        }
        if self.seen.len() > 2 * DEDUP_WINDOW as usize {
            let floor = self.newest.saturating_sub(DEDUP_WINDOW);
            self.seen.retain(|&id| id >= floor);
        }
    }
}

/// Serializes a message block: count, then per message its length and aligned bytes.
pub fn serialize_messages<S: Stream>(s: &mut S, msgs: &mut Vec<Vec<u8>>) -> Result<(), BitError> {
    let mut n = msgs.len() as u32;
    s.serialize_u32(&mut n, 0, MAX_MESSAGES_PER_PACKET)?;
    if S::IS_READING {
        msgs.clear();
    }
    for i in 0..n as usize {
        let mut len = if S::IS_READING { 0 } else { msgs[i].len() as u32 };
        s.serialize_u32(&mut len, MIN_MESSAGE_BYTES, MAX_MESSAGE_BYTES)?;
        s.align()?;
        if S::IS_READING {
            let mut buf = vec![0u8; len as usize];
            s.serialize_bytes(&mut buf)?;
            msgs.push(buf);
        } else {
            s.serialize_bytes(&mut msgs[i])?;
        }
    }
    Ok(())
}

/// Spacing of the staleness samples.
pub const STALENESS_SAMPLE_MS: u64 = 5;

/// Nearest-rank percentiles of a set of samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub samples: u64,
}

impl Percentiles {
    pub fn of(mut v: Vec<f64>) -> Self {
        if v.is_empty() {
            return Self::default();
        }
        v.sort_by(f64::total_cmp);
        let rank = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Self { p50: rank(0.5), p99: rank(0.99), max: v[v.len() - 1], samples: v.len() as u64 }
    }
}

/// Snapshot traffic and receiver staleness over a run, both directions together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SnapshotSummary {
    /// Snapshots the workload queued.
    pub queued: u64,
    /// Snapshot sends, resends included (`MessageSent`).
    pub sent: u64,
    /// Of those, resends.
    pub resent: u64,
    /// Distinct snapshots delivered to the receiving application.
    pub received: u64,
    /// Age of the newest snapshot the receiver holds, sampled every [`STALENESS_SAMPLE_MS`]
    /// (from when it first holds one), both receivers together.
    pub staleness_ms: Percentiles,
}

/// Computes [`SnapshotSummary`] from an event log (live or recorded), in time order.
pub fn snapshot_summary(events: &[Event]) -> SnapshotSummary {
    let mut a = SnapshotAccumulator::default();
    for e in events {
        a.observe(e);
    }
    a.finish()
}

const STEP_US: u64 = STALENESS_SAMPLE_MS * 1000;

/// Feeds events one at a time (a view can extend it as time moves forward); `finish` gives the
/// summary so far, with staleness sampled up to the last event observed.
#[derive(Debug, Clone, Default)]
pub struct SnapshotAccumulator {
    /// Per sending side: queue time of each snapshot id.
    queued_at: [HashMap<u64, SimTime>; 2],
    /// Per receiving side: ids delivered; newest held (id, queued at) and the next sample time.
    delivered: [HashSet<u64>; 2],
    held: [Option<(u64, SimTime)>; 2],
    next_sample: [u64; 2],
    out: SnapshotSummary,
    ages: Vec<f64>,
    last_us: Option<u64>,
}

/// Staleness samples for each receiver holding a snapshot, from `next` up to (not including) `t`.
fn sample_until(t: u64, held: &[Option<(u64, SimTime)>; 2], next: &mut [u64; 2], ages: &mut Vec<f64>) {
    for r in 0..2 {
        if let Some((_, q)) = held[r] {
            while next[r] < t {
                ages.push(next[r].saturating_sub(q.0) as f64 / 1000.0);
                next[r] += STEP_US;
            }
        }
    }
}

impl SnapshotAccumulator {
    pub fn observe(&mut self, e: &Event) {
        sample_until(e.time.0, &self.held, &mut self.next_sample, &mut self.ages);
        self.last_us = Some(e.time.0);
        match e.kind {
            EventKind::MessageQueued { side, msg, reliable: false, .. } => {
                self.queued_at[side.index()].insert(msg, e.time);
                self.out.queued += 1;
            }
            EventKind::MessageSent { side, msg, kind, .. } if self.queued_at[side.index()].contains_key(&msg) => {
                self.out.sent += 1;
                self.out.resent += (kind != SendKind::First) as u64;
            }
            EventKind::MessageDelivered { side, msg } => {
                let r = side.index();
                let Some(&q) = self.queued_at[side.other().index()].get(&msg) else { return };
                if self.delivered[r].insert(msg) {
                    self.out.received += 1;
                    match self.held[r] {
                        Some((id, _)) if id >= msg => {}
                        None => {
                            self.held[r] = Some((msg, q));
                            self.next_sample[r] = e.time.0.div_ceil(STEP_US) * STEP_US;
                        }
                        Some(_) => self.held[r] = Some((msg, q)),
                    }
                }
            }
            _ => {}
        }
    }

    pub fn finish(&self) -> SnapshotSummary {
        let mut ages = self.ages.clone();
        if let Some(last) = self.last_us {
            let mut next = self.next_sample;
            sample_until(last + 1, &self.held, &mut next, &mut ages);
        }
        SnapshotSummary { staleness_ms: Percentiles::of(ages), ..self.out }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bits::{BitReader, BitWriter};
    use crate::workload::make_payload;

    fn outbox(mode: SnapshotMode) -> Outbox {
        Outbox::new(
            Side::A,
            OutboxConfig { snapshot_mode: mode, send_queue_messages: 64, max_message_bytes: MAX_MESSAGE_BYTES },
        )
    }

    fn snap(id: u64) -> MessageRequest {
        MessageRequest { id, reliable: false, payload: make_payload(Side::A, id, 16) }
    }

    fn sent_ids(events: &[Event]) -> Vec<(u64, SendKind)> {
        events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::MessageSent { msg, kind, .. } => Some((msg, kind)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn newest_mode_resends_a_lost_snapshot_only_while_it_is_the_newest_state() {
        let mut o = outbox(SnapshotMode::Newest);
        let mut ev = Vec::new();
        let t = SimTime::ZERO;
        o.push(t, snap(0), &mut ev);
        o.fill(t, 0, 1000, &mut ev);
        o.on_failed(0, SendKind::TimeoutResend);
        o.fill(t, 1, 1000, &mut ev);
        o.push(t, snap(1), &mut ev);
        o.fill(t, 2, 1000, &mut ev);
        // Packet 1 (snapshot 0 again) is lost, but snapshot 1 is already out: nothing to resend.
        o.on_failed(1, SendKind::TimeoutResend);
        assert!(o.fill(t, 3, 1000, &mut ev).is_empty());
        assert_eq!(sent_ids(&ev), vec![(0, SendKind::First), (0, SendKind::TimeoutResend), (1, SendKind::First)]);
    }

    #[test]
    fn unreliable_mode_never_resends_and_reliable_mode_resends_every_snapshot() {
        for (mode, expect) in [(SnapshotMode::Unreliable, 2), (SnapshotMode::Reliable, 4)] {
            let mut o = outbox(mode);
            let mut ev = Vec::new();
            let t = SimTime::ZERO;
            o.push(t, snap(0), &mut ev);
            o.push(t, snap(1), &mut ev);
            o.fill(t, 0, 1000, &mut ev);
            o.on_failed(0, SendKind::NakResend);
            o.fill(t, 1, 1000, &mut ev);
            o.on_delivered(t, 1, &mut ev);
            o.fill(t, 2, 1000, &mut ev);
            assert_eq!(sent_ids(&ev).len(), expect, "{mode:?}");
            assert_eq!(o.unacked_reliable(), 0);
        }
    }

    #[test]
    fn message_block_round_trips_and_rejects_truncation() {
        let mut msgs = vec![make_payload(Side::B, 5, 9), make_payload(Side::B, 6, 40)];
        let mut w = BitWriter::with_capacity(200);
        serialize_messages(&mut w, &mut msgs).unwrap();
        let bytes = w.finish();
        let mut back = Vec::new();
        serialize_messages(&mut BitReader::new(&bytes), &mut back).unwrap();
        assert_eq!(back, msgs);
        assert!(serialize_messages(&mut BitReader::new(&bytes[..bytes.len() - 1]), &mut back).is_err());
    }

    #[test]
    fn staleness_is_the_age_of_the_newest_held_snapshot_on_a_time_grid() {
        let ev = |ms: u64, kind| Event { time: SimTime(ms * 1000), kind };
        let log = vec![
            ev(0, EventKind::MessageQueued { side: Side::A, msg: 0, bytes: 8, reliable: false }),
            ev(0, EventKind::MessageQueued { side: Side::A, msg: 1, bytes: 8, reliable: true }),
            ev(10, EventKind::MessageQueued { side: Side::A, msg: 2, bytes: 8, reliable: false }),
            ev(60, EventKind::MessageDelivered { side: Side::B, msg: 0 }),
            ev(60, EventKind::MessageDelivered { side: Side::B, msg: 1 }),
            // Snapshot 2 arrives at 80 ms: from then on the held state is 10 ms younger.
            ev(80, EventKind::MessageDelivered { side: Side::B, msg: 2 }),
            ev(90, EventKind::MessageDelivered { side: Side::B, msg: 0 }),
            ev(100, EventKind::Stats { side: Side::A, stats: Default::default() }),
        ];
        let s = snapshot_summary(&log);
        assert_eq!((s.queued, s.received), (2, 2));
        // Samples at 60, 65, 70, 75 (ages 60..75) then 80..100 (ages 70..90).
        assert_eq!(s.staleness_ms.samples, 9);
        assert_eq!(s.staleness_ms.max, 90.0);
        assert_eq!(s.staleness_ms.p50, 75.0);
    }
}
