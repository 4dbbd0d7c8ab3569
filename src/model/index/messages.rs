//! The per-message index behind the message timeline.
//!
//! Messages are identified by (sending side, workload id) and kept in the order they were queued,
//! so the rows for a time range are found by binary search on `queued_at` plus a coarse per-block
//! "latest event" bound (messages can stay open for a long time, e.g. behind a missing one).
//!
//! Each send of a message (`MessageSent`) is tied to the link send that carried it: the sending
//! endpoint reports `MessageSent { seq }` first and the driver then reports `PacketSent { seq, uid }`
//! for that packet in the same instant (UE4 may build a packet in `receive` and hand it out at the
//! next tick, so a send waits for the next `PacketSent` of its sequence, never an earlier one).
//! That link send id is all the index keeps of the packet: what the link did with it and whether
//! the sender reported it acked or lost are the recording's [`PacketLedger`](ackscope_protocol::PacketLedger)'s
//! (`ledger.packet(uid)`, `ledger.fate_at(uid, cursor)`), kept once for every view.
//!
//! A send is *spurious* when the peer's application had already received the message when it was
//! sent (ground truth from `MessageDelivered`): `measure::send_is_spurious`, the rule
//! `reliable_metrics` counts by.

use std::collections::HashMap;

use ackscope_protocol::measure::send_is_spurious;
use ackscope_protocol::{Event, EventKind, RefuseReason, SendKind, Side, SimTime};

/// A message: the side that sent it and its workload id on that side.
pub type MsgKey = (Side, u64);

/// Messages per block of the coarse time bound.
const BLOCK: usize = 64;
/// A send not on the wire after this long is never tied to a packet.
const STALE_SEND: SimTime = SimTime(10_000_000);

/// One time a message was put in a packet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SendRecord {
    pub time: SimTime,
    /// The packet sequence the sender reported.
    pub seq: u32,
    pub kind: SendKind,
    /// The link send that carried the packet (None until the driver reported it); its fate is
    /// the ledger's.
    pub uid: Option<u64>,
    /// The receiving application already had the message when this send happened.
    pub spurious: bool,
}

/// Everything known about one message.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRecord {
    pub side: Side,
    pub id: u64,
    pub bytes: u32,
    pub reliable: bool,
    pub queued_at: SimTime,
    pub sends: Vec<SendRecord>,
    /// When the sender learned it arrived, and through which packet sequence.
    pub acked_at: Option<SimTime>,
    pub acked_seq: Option<u32>,
    /// First delivery to the receiving application.
    pub delivered_at: Option<SimTime>,
    /// Deliveries in total (more than one is a duplicate).
    pub deliveries: u32,
    pub refused: Option<(SimTime, RefuseReason)>,
    /// Latest event about this message.
    pub last_at: SimTime,
}

impl MessageRecord {
    pub fn key(&self) -> MsgKey {
        (self.side, self.id)
    }

    /// True while more may still happen to it by the sender's own rules: a reliable message not
    /// yet acked (or acked but not yet delivered), an unreliable one not yet sent.
    pub fn is_open(&self) -> bool {
        if matches!(self.refused, Some((_, RefuseReason::TooLarge | RefuseReason::Closed))) {
            return false;
        }
        if self.reliable {
            self.acked_at.is_none() || self.delivered_at.is_none()
        } else {
            self.sends.is_empty() && self.refused.is_none()
        }
    }

    /// Where its row ends as seen at `cursor`: its latest event up to the cursor once it was
    /// settled by then (reliable: acked and delivered; unreliable: sent; or refused for good),
    /// else the cursor itself.
    pub fn end_at(&self, cursor: SimTime) -> SimTime {
        let by = |t: Option<SimTime>| t.filter(|t| *t <= cursor);
        let mut t = self.queued_at;
        for s in self.sends_by(cursor) {
            t = t.max(s.time);
        }
        for x in [by(self.acked_at), by(self.delivered_at), by(self.refused.map(|r| r.0))].into_iter().flatten() {
            t = t.max(x);
        }
        let refused_for_good = self
            .refused
            .is_some_and(|(at, r)| at <= cursor && matches!(r, RefuseReason::TooLarge | RefuseReason::Closed));
        let settled = refused_for_good
            || if self.reliable {
                by(self.acked_at).is_some() && by(self.delivered_at).is_some()
            } else {
                self.sends.first().is_some_and(|s| s.time <= cursor) || self.refused.is_some_and(|r| r.0 <= cursor)
            };
        if settled {
            t
        } else {
            cursor.max(self.queued_at)
        }
    }

    /// Sends that happened by `cursor`.
    pub fn sends_by(&self, cursor: SimTime) -> impl Iterator<Item = &SendRecord> {
        self.sends.iter().filter(move |s| s.time <= cursor)
    }
}

/// Which messages a view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageFilter {
    pub side_a: bool,
    pub side_b: bool,
    pub reliable: bool,
    pub unreliable: bool,
}

impl Default for MessageFilter {
    /// Both sides, reliable messages only.
    fn default() -> Self {
        Self { side_a: true, side_b: true, reliable: true, unreliable: false }
    }
}

impl MessageFilter {
    pub fn accepts(&self, m: &MessageRecord) -> bool {
        let side = match m.side {
            Side::A => self.side_a,
            Side::B => self.side_b,
        };
        side && if m.reliable { self.reliable } else { self.unreliable }
    }
}

/// Messages in queue order, their sends and the link sends that carried them.
#[derive(Debug, Default, Clone)]
pub struct MessageIndex {
    messages: Vec<MessageRecord>,
    by_key: HashMap<MsgKey, usize>,
    /// Per block of [`BLOCK`] messages: the latest `last_at`, or `u64::MAX` while any is open.
    block_end: Vec<u64>,
    /// Sends waiting for the `PacketSent` of their sequence: (message index, send index).
    pending: HashMap<(Side, u32), Vec<(usize, usize)>>,
    /// Refusals of messages never queued, per side.
    refused_unknown: [u64; 2],
    end: SimTime,
    /// Bytes of the messages' `sends` buffers ([`Self::heap_bytes`]).
    sends_bytes: usize,
}

impl MessageIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds an index from a whole log.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> Self {
        let mut ix = Self::new();
        for e in events {
            ix.ingest(e);
        }
        ix
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Heap bytes the index holds (see [`crate::model::heap`]).
    pub fn heap_bytes(&self) -> usize {
        use crate::model::heap;
        let pending: usize = self.pending.values().map(heap::vec).sum();
        heap::vec(&self.messages)
            + self.sends_bytes
            + heap::map(&self.by_key)
            + heap::vec(&self.block_end)
            + heap::map(&self.pending)
            + pending
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// Every message, in the order they were queued.
    pub fn messages(&self) -> &[MessageRecord] {
        &self.messages
    }

    pub fn index_of(&self, key: MsgKey) -> Option<usize> {
        self.by_key.get(&key).copied()
    }

    pub fn get(&self, key: MsgKey) -> Option<&MessageRecord> {
        self.index_of(key).map(|i| &self.messages[i])
    }

    /// Time of the latest event seen.
    pub fn end_time(&self) -> SimTime {
        self.end
    }

    /// Refusals of messages that were never queued (e.g. the send queue was full), per side.
    pub fn refused_unqueued(&self, side: Side) -> u64 {
        self.refused_unknown[side.index()]
    }

    /// Updates message `i` after an event at `t` and its block's time bound.
    fn touch(&mut self, i: usize, t: SimTime) {
        let m = &mut self.messages[i];
        m.last_at = m.last_at.max(t);
        let b = i / BLOCK;
        if m.is_open() {
            self.block_end[b] = u64::MAX;
        } else if self.block_end[b] == u64::MAX {
            let lo = b * BLOCK;
            let hi = (lo + BLOCK).min(self.messages.len());
            self.block_end[b] = self.messages[lo..hi]
                .iter()
                .map(|m| if m.is_open() { u64::MAX } else { m.last_at.0 })
                .max()
                .unwrap_or(0);
        } else {
            self.block_end[b] = self.block_end[b].max(m.last_at.0);
        }
    }

    /// Takes one event into account (events must come in emission order).
    pub fn ingest(&mut self, e: &Event) {
        let t = e.time;
        self.end = self.end.max(t);
        match e.kind {
            EventKind::MessageQueued { side, msg, bytes, reliable } => {
                let rec = MessageRecord {
                    side,
                    id: msg,
                    bytes,
                    reliable,
                    queued_at: t,
                    sends: Vec::new(),
                    acked_at: None,
                    acked_seq: None,
                    delivered_at: None,
                    deliveries: 0,
                    refused: None,
                    last_at: t,
                };
                let i = match self.by_key.get(&(side, msg)) {
                    // Re-queued id (should not happen): start it over in place.
                    Some(&i) => {
                        let old = std::mem::replace(&mut self.messages[i], rec);
                        self.sends_bytes -= crate::model::heap::vec(&old.sends);
                        i
                    }
                    None => {
                        let i = self.messages.len();
                        self.messages.push(rec);
                        self.by_key.insert((side, msg), i);
                        if i.is_multiple_of(BLOCK) {
                            self.block_end.push(0);
                        }
                        i
                    }
                };
                self.touch(i, t);
            }
            EventKind::MessageSent { side, msg, seq, kind } => {
                let Some(&i) = self.by_key.get(&(side, msg)) else { return };
                let m = &mut self.messages[i];
                let spurious = send_is_spurious(m.deliveries);
                let send = SendRecord { time: t, seq, kind, uid: None, spurious };
                crate::model::heap::push_counted(&mut m.sends, send, &mut self.sends_bytes);
                let s = m.sends.len() - 1;
                self.pending.entry((side, seq)).or_default().push((i, s));
                self.touch(i, t);
            }
            EventKind::MessageAcked { side, msg, seq } => {
                let Some(&i) = self.by_key.get(&(side, msg)) else { return };
                let m = &mut self.messages[i];
                if m.acked_at.is_none() {
                    m.acked_at = Some(t);
                    m.acked_seq = Some(seq);
                }
                self.touch(i, t);
            }
            EventKind::MessageDelivered { side, msg } => {
                let Some(&i) = self.by_key.get(&(side.other(), msg)) else { return };
                let m = &mut self.messages[i];
                m.deliveries = m.deliveries.saturating_add(1);
                if m.delivered_at.is_none() {
                    m.delivered_at = Some(t);
                }
                self.touch(i, t);
            }
            EventKind::MessageRefused { side, msg, reason } => {
                let Some(&i) = self.by_key.get(&(side, msg)) else {
                    self.refused_unknown[side.index()] += 1;
                    return;
                };
                self.messages[i].refused = Some((t, reason));
                self.touch(i, t);
            }
            EventKind::PacketSent { side, seq, uid, .. } => {
                if let Some(list) = self.pending.get_mut(&(side, seq)) {
                    let messages = &mut self.messages;
                    list.retain(|&(i, s)| {
                        let send = &mut messages[i].sends[s];
                        if send.time <= t {
                            // A send whose packet never went out long ago (e.g. the connection
                            // closed) must not be tied to a later packet of a wrapped sequence.
                            if t.saturating_since(send.time) <= STALE_SEND {
                                send.uid = Some(uid);
                            }
                            false
                        } else {
                            true
                        }
                    });
                    if list.is_empty() {
                        self.pending.remove(&(side, seq));
                    }
                }
            }
            _ => {}
        }
    }

    /// Takes a slice of events into account.
    pub fn ingest_all(&mut self, events: &[Event]) {
        for e in events {
            self.ingest(e);
        }
    }

    /// Indices (queue order) of the messages `filter` accepts whose row, as seen at `cursor`,
    /// intersects `[t0, t1]`. Only messages queued by `min(t1, cursor)` and blocks whose latest
    /// event reaches `t0` are looked at.
    pub fn visible(&self, t0: SimTime, t1: SimTime, cursor: SimTime, filter: &MessageFilter, out: &mut Vec<usize>) {
        out.clear();
        let upto = t1.min(cursor);
        if t0 > upto {
            return;
        }
        let hi = self.messages.partition_point(|m| m.queued_at <= upto);
        for (b, &end) in self.block_end.iter().enumerate() {
            let lo = b * BLOCK;
            if lo >= hi {
                break;
            }
            if end < t0.0 {
                continue;
            }
            for (i, m) in self.messages[lo..hi.min(lo + BLOCK)].iter().enumerate() {
                // A row never ends before it starts: only rows begun before t0 need their end.
                if filter.accepts(m) && (m.queued_at >= t0 || m.end_at(cursor) >= t0) {
                    out.push(lo + i);
                }
            }
        }
    }
}
