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
//! - The application backlog: a message kept until acked (reliable, or a snapshot in `reliable`
//!   mode) that finds the send window full (`send_queue_messages` such messages held) is reported
//!   once (`MessageRefused { SendQueueFull }`) and **kept**, as Glenn's backlog does: it waits, in
//!   order, and enters the window on a later tick as acks free room ([`Outbox::flush_backlog`]).
//!   Nothing reliable is ever dropped for lack of room; the backlog is bounded by memory only, and
//!   its depth is measured from events (`measure::messages`, `backlog_peak`). Snapshots sent once
//!   have their own bound of the same size on those not yet sent: one finding it full is reported
//!   and dropped (a newer state follows), and a reliable backlog never starves them.
//! - [`Inbox`] delivers each message id once (resends and link duplicates arrive more than once).
//! - The message block codec: `count`, then per message its length and the aligned bytes. Payloads
//!   self-identify (`workload::check_payload`), so a corrupt one makes the packet malformed.
//!
//! Staleness and other snapshot figures are measured from events in [`crate::measure::snapshots`].
//! Snapshots are the messages whose `MessageQueued` has `reliable: false` in every mode, also
//! `reliable` mode where they are in fact resent: `reliable` in that event is the workload's
//! class of the message, so generic reliable-message metrics compare like with like.

use std::collections::{HashMap, VecDeque};

use crate::event::{Event, EventKind, RefuseReason, SendKind, Side, SimTime};
use crate::wire::bits::{BitError, Stream};
use crate::workload::{check_payload, MessageRequest, SnapshotMode, MIN_MESSAGE_BYTES};

/// Largest message the block codec carries.
pub const MAX_MESSAGE_BYTES: u32 = 1024;
/// Most messages in one packet.
pub const MAX_MESSAGES_PER_PACKET: u32 = 64;
/// Bytes a message costs in a packet beyond its payload, at most (length field + alignment).
pub const MESSAGE_OVERHEAD_BYTES: usize = 3;

/// Outbox settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutboxConfig {
    pub snapshot_mode: SnapshotMode,
    /// The send window: most messages held until acked (reliable ones, and snapshots in
    /// `reliable` mode); beyond it new ones wait in the backlog (reported as `SendQueueFull`,
    /// kept). Also the most other snapshots held unsent; beyond it a new one is refused (dropped).
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
    /// Messages to keep until acked that found the window full, oldest first: not yet in `store`.
    backlog: VecDeque<(u64, Stored)>,
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
            backlog: VecDeque::new(),
        }
    }

    pub fn config(&self) -> &OutboxConfig {
        &self.config
    }

    /// Messages waiting to be sent (first sends and resends).
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Messages held until acked, including those waiting in the backlog.
    pub fn unacked_reliable(&self) -> usize {
        self.reliable_waiting + self.backlog.len()
    }

    /// Messages waiting in the backlog for room in the send window.
    pub fn backlog_len(&self) -> usize {
        self.backlog.len()
    }

    fn window_full(&self) -> bool {
        self.reliable_waiting >= self.config.send_queue_messages
    }

    /// Accepts a workload message: into the send window, into the backlog when the window is full
    /// (reported once, kept), or refused with an event (too large; a snapshot finding no room).
    pub fn push(&mut self, now: SimTime, m: MessageRequest, events: &mut Vec<Event>) {
        let side = self.side;
        let bytes = m.payload.len() as u32;
        events.push(Event::new(now, EventKind::MessageQueued { side, msg: m.id, bytes, reliable: m.reliable }));
        let snapshot = !m.reliable;
        let keep = m.reliable || self.config.snapshot_mode == SnapshotMode::Reliable;
        let refuse = |reason, events: &mut Vec<Event>| {
            events.push(Event::new(now, EventKind::MessageRefused { side, msg: m.id, reason }));
        };
        if bytes > self.config.max_message_bytes.min(MAX_MESSAGE_BYTES) {
            return refuse(RefuseReason::TooLarge, events);
        }
        let stored = Stored { payload: m.payload, snapshot, reliable: keep };
        if keep {
            if !self.backlog.is_empty() || self.window_full() {
                refuse(RefuseReason::SendQueueFull, events);
                self.backlog.push_back((m.id, stored));
                return;
            }
            self.reliable_waiting += 1;
        } else {
            if self.store.len() - self.reliable_waiting >= self.config.send_queue_messages {
                return refuse(RefuseReason::SendQueueFull, events);
            }
        }
        if snapshot {
            self.newest_snapshot = Some(m.id);
        }
        self.store.insert(m.id, stored);
        self.queue.push_back(Queued { id: m.id, kind: SendKind::First });
    }

    /// Moves backlogged messages into the send window while it has room, oldest first (called
    /// once per send tick, before the tick's new messages, as Glenn's backlog is).
    pub fn flush_backlog(&mut self) {
        while !self.window_full() {
            let Some((id, stored)) = self.backlog.pop_front() else { break };
            self.reliable_waiting += 1;
            self.store.insert(id, stored);
            self.queue.push_back(Queued { id, kind: SendKind::First });
        }
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
            events.push(Event::new(now, kind));
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
            events.push(Event::new(now, EventKind::MessageAcked { side: self.side, msg: id, seq: seq as u32 }));
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
    delivered: DeliveredIds,
}

impl Inbox {
    pub fn new(side: Side) -> Self {
        Self { side, delivered: DeliveredIds::default() }
    }

    /// Checks every payload of a packet from the peer; `None` when one is not an intact workload
    /// message (the whole packet is then malformed and must not be acked).
    pub fn check(&self, payloads: &[Vec<u8>]) -> Option<Vec<u64>> {
        payloads.iter().map(|p| check_payload(self.side.other(), p)).collect()
    }

    /// Delivers the checked ids not delivered before.
    pub fn deliver(&mut self, now: SimTime, ids: &[u64], events: &mut Vec<Event>) {
        for &id in ids {
            if self.delivered.insert(id) {
                events.push(Event::new(now, EventKind::MessageDelivered { side: self.side, msg: id }));
            }
        }
    }
}

/// Most ids [`DeliveredIds`] tracks one by one (a bit each: 8 MiB at most).
const MAX_TRACKED_IDS: u64 = 1 << 26;

/// Which message ids were delivered, exactly: every id below `floor`, plus one bit per id from
/// `floor` on (`floor` is a multiple of 64 and moves past every fully delivered word).
///
/// Exact because ids do not arrive near the newest one: a reliable message can wait in the
/// sender's backlog while newer snapshots go out, so a filter that forgets ids some distance
/// below the newest (as this one did, 65,536) dropped first deliveries of backlogged messages
/// that the sender then saw acked. A snapshot that never arrives keeps `floor` where it is, so
/// memory is one bit per id since then, up to [`MAX_TRACKED_IDS`]; only beyond that are the oldest
/// forgotten (a message undelivered while 67 million newer ones were sent would be taken for a
/// duplicate).
#[derive(Debug, Clone, Default)]
struct DeliveredIds {
    floor: u64,
    words: VecDeque<u64>,
}

impl DeliveredIds {
    /// Records `id`; false when it was delivered before.
    fn insert(&mut self, id: u64) -> bool {
        if id < self.floor {
            return false;
        }
        if id - self.floor >= MAX_TRACKED_IDS {
            let new_floor = (id - MAX_TRACKED_IDS + 1).div_ceil(64) * 64;
            let shift = ((new_floor - self.floor) / 64).min(self.words.len() as u64) as usize;
            self.words.drain(..shift);
            self.floor = new_floor;
        }
        let offset = id - self.floor;
        let (word, bit) = ((offset / 64) as usize, 1u64 << (offset % 64));
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        if self.words[word] & bit != 0 {
            return false;
        }
        self.words[word] |= bit;
        while self.words.front() == Some(&u64::MAX) {
            self.words.pop_front();
            self.floor += 64;
        }
        true
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::bits::{BitReader, BitWriter};
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
    fn a_full_window_keeps_reliable_messages_in_order_and_still_takes_snapshots() {
        let mut o = Outbox::new(
            Side::A,
            OutboxConfig {
                snapshot_mode: SnapshotMode::Unreliable,
                send_queue_messages: 2,
                max_message_bytes: MAX_MESSAGE_BYTES,
            },
        );
        let mut ev = Vec::new();
        let t = SimTime::ZERO;
        let reliable = |id| MessageRequest { id, reliable: true, payload: make_payload(Side::A, id, 16) };
        for id in 0..4 {
            o.push(t, reliable(id), &mut ev);
        }
        o.push(t, snap(4), &mut ev);
        let refused: Vec<u64> = ev
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::MessageRefused { msg, reason: RefuseReason::SendQueueFull, .. } => Some(msg),
                _ => None,
            })
            .collect();
        assert_eq!(refused, vec![2, 3], "reported once each, the snapshot taken");
        assert_eq!((o.unacked_reliable(), o.backlog_len()), (4, 2));
        o.fill(t, 0, 1000, &mut ev);
        o.flush_backlog();
        assert_eq!(o.backlog_len(), 2, "no room until an ack");
        o.on_delivered(t, 0, &mut ev);
        o.push(t, reliable(5), &mut ev);
        o.flush_backlog();
        o.fill(t, 1, 1000, &mut ev);
        o.on_delivered(t, 1, &mut ev);
        o.flush_backlog();
        o.fill(t, 2, 1000, &mut ev);
        let order: Vec<u64> = sent_ids(&ev).into_iter().map(|(id, _)| id).collect();
        assert_eq!(order, vec![0, 1, 4, 2, 3, 5]);
        assert_eq!((o.unacked_reliable(), o.backlog_len()), (1, 0));
    }

    #[test]
    fn the_inbox_delivers_an_id_once_however_far_behind_the_newest_it_arrives() {
        let mut inbox = Inbox::new(Side::B);
        let mut ev = Vec::new();
        let t = SimTime::ZERO;
        // Snapshots run far ahead while reliable messages 0..3 wait in the sender's backlog.
        inbox.deliver(t, &[1_000_000, 1_000_001, 0, 1, 1_000_000], &mut ev);
        inbox.deliver(t, &[2, 1, 0, 3, 500_000, MAX_TRACKED_IDS * 3], &mut ev);
        inbox.deliver(t, &[2, MAX_TRACKED_IDS * 3, 5], &mut ev);
        let got: Vec<u64> = ev
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::MessageDelivered { msg, .. } => Some(msg),
                _ => None,
            })
            .collect();
        // Past MAX_TRACKED_IDS ahead the oldest are forgotten: 5 is then too old to tell.
        assert_eq!(got, vec![1_000_000, 1_000_001, 0, 1, 2, 3, 500_000, MAX_TRACKED_IDS * 3]);
        let mut ids = DeliveredIds::default();
        assert!((0..200).all(|id| ids.insert(id)) && !ids.insert(199));
        assert_eq!((ids.floor, ids.words.len()), (192, 1), "full words are folded into the floor");
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
}
