//! Message-level run metrics computed from events alone, so every message strategy (Glenn, UE4,
//! ...) is measured by the same code: the CLI's `"reliable"` JSON section, the app's summary and
//! the tests' ground-truth assertions.
//!
//! Inputs are the message events (`MessageQueued`, `MessageSent`, `MessageAcked`,
//! `MessageDelivered`, `MessageRefused`, `MessageCorrupted`) and `PacketSent` for wire bytes. Ground
//! truth comes from pairing the sender's events with the receiver's (`MessageDelivered` names the
//! sender's workload id), so a resend is known to be spurious when the peer had already delivered a
//! copy — something the sender itself cannot know.
//!
//! Use [`reliable_metrics`] on a slice, or [`MetricsAccumulator`] to feed events as they are drained
//! (long runs that must not keep every event).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::clients::{ClientFold, PerClient};
use super::percentile::{LatencyMs, Percentiles};
use crate::event::{ClientId, Event, EventKind, RefuseReason, Side, SimTime};

/// Per-run reliable-message figures; field names are the CLI JSON's `"reliable"` section.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ReliableMetrics {
    /// Reliable messages the application queued (both sides).
    pub sent: u64,
    /// Distinct reliable messages the receiving application got.
    pub delivered: u64,
    /// `sent - delivered`: never delivered by the end of the run (including refused as too large).
    /// Always `lost_dropped + still_queued_at_end`.
    pub lost: u64,
    /// Of `lost`, messages the sender no longer held at the end: refused as too large, given up
    /// when the connection closed (UE4), acked without arriving (a false ack), or left behind by
    /// a restart of the endpoints. These are gone.
    #[serde(default)]
    pub lost_dropped: u64,
    /// Of `lost`, reliable messages the sender still held unacked at the end (in its send window
    /// or its application backlog): not lost by the protocol, only not delivered before the run
    /// and its drain ended, as when a strategy runs above its capacity (dnm's book rule).
    #[serde(default)]
    pub still_queued_at_end: u64,
    /// Extra deliveries of a reliable message already delivered.
    pub duplicated: u64,
    /// Reliable messages delivered after a later one from the same sender.
    pub out_of_order: u64,
    /// Deliveries whose content failed `workload::check_payload` (any message kind).
    pub corrupted: u64,
    pub latency_ms: LatencyMs,
    /// Packet bytes sent by both endpoints / messages delivered (reliable and unreliable).
    pub wire_bytes_per_delivered: f64,
    /// Mean packet inclusions per reliable message that was sent at least once (redundancy).
    pub sends_per_message: f64,
    /// Inclusions of a message in a packet after the peer had already delivered it.
    pub spurious_resends: u64,
    /// Most inclusions of any one reliable message.
    pub max_sends_per_message: u32,
    /// Most reliable messages one side had queued and not yet acked (including any waiting for
    /// send-queue space).
    pub max_send_queue_depth: u64,
    /// Most reliable messages one side held in its application backlog at once: refused for a
    /// full send window (`MessageRefused { SendQueueFull }`, which keeps a reliable message) and
    /// not yet put in a packet. A message leaves it at its first `MessageSent`, so this includes
    /// the moment between entering the window and its first send (at most a packet's worth).
    pub backlog_peak: u64,
    /// Largest packet either endpoint sent (header + payload): the spike under burst loss.
    pub max_packet_bytes: u32,
    /// Packet bytes sent by both endpoints.
    pub wire_bytes: u64,
    /// Refusals because a send queue was full: a reliable message is kept and retried (the
    /// application backlog of glenn, dnm and rellikt), an unreliable one is dropped.
    pub refused_queue_full: u64,
    /// Messages refused as larger than the packet budget (dropped).
    pub refused_too_large: u64,
    /// Unreliable messages queued and delivered (first copies).
    pub unreliable_sent: u64,
    pub unreliable_delivered: u64,
    /// Extra deliveries of an unreliable message.
    pub unreliable_duplicated: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct MsgState {
    known: bool,
    reliable: bool,
    acked: bool,
    too_large: bool,
    /// In the application backlog (refused for a full window, not yet sent).
    backlogged: bool,
    queued_at: SimTime,
    sends: u32,
    deliveries: u32,
}

/// Ids further than this beyond the highest queued are ignored (a corrupted id must not make the
/// accumulator allocate gigabytes).
const MAX_ID_JUMP: u64 = 1 << 24;

/// Feeds events one at a time; [`MetricsAccumulator::finish`] computes the figures so far.
///
/// Keyed by client (message ids count per connection): [`Self::client`] gives one client's
/// figures, [`Self::finish`] the figures over every client (counts summed, maxima the largest,
/// latency percentiles and ratios over every client's messages together; with one client,
/// exactly its figures).
#[derive(Debug, Clone, Default)]
pub struct MetricsAccumulator {
    clients: PerClient<ClientMetrics>,
}

impl MetricsAccumulator {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one event into account (events must come in emission order).
    #[inline]
    pub fn observe(&mut self, e: &Event) {
        self.clients.observe(e, ClientMetrics::observe);
    }

    /// Takes a slice of events into account.
    pub fn observe_all(&mut self, events: &[Event]) {
        for e in events {
            self.observe(e);
        }
    }

    /// Client `k`'s figures so far (None before any event of it).
    pub fn client(&self, k: ClientId) -> Option<ReliableMetrics> {
        self.clients.get(k).map(ClientMetrics::finish)
    }

    /// The figures over every client for everything observed so far.
    pub fn finish(&self) -> ReliableMetrics {
        if self.clients.count() == 1 {
            return self.clients.iter().next().map(ClientMetrics::finish).unwrap_or_default();
        }
        let mut m = ReliableMetrics::default();
        let mut latencies = Vec::new();
        let (mut sends, mut n, mut max) = (0u64, 0u64, 0u32);
        for c in self.clients.iter() {
            let r = &c.m;
            m.sent += r.sent;
            m.delivered += r.delivered;
            m.still_queued_at_end += c.still_queued();
            m.duplicated += r.duplicated;
            m.out_of_order += r.out_of_order;
            m.corrupted += r.corrupted;
            m.spurious_resends += r.spurious_resends;
            m.max_send_queue_depth = m.max_send_queue_depth.max(r.max_send_queue_depth);
            m.backlog_peak = m.backlog_peak.max(r.backlog_peak);
            m.max_packet_bytes = m.max_packet_bytes.max(r.max_packet_bytes);
            m.wire_bytes += r.wire_bytes;
            m.refused_queue_full += r.refused_queue_full;
            m.refused_too_large += r.refused_too_large;
            m.unreliable_sent += r.unreliable_sent;
            m.unreliable_delivered += r.unreliable_delivered;
            m.unreliable_duplicated += r.unreliable_duplicated;
            latencies.extend_from_slice(&c.latencies_ms);
            let (s, k, x) = c.sends_all();
            (sends, n, max) = (sends + s, n + k, max.max(x));
        }
        m.lost = m.sent.saturating_sub(m.delivered);
        m.still_queued_at_end = m.still_queued_at_end.min(m.lost);
        m.lost_dropped = m.lost - m.still_queued_at_end;
        m.latency_ms = LatencyMs::of(latencies);
        let delivered_all = m.delivered + m.unreliable_delivered;
        m.wire_bytes_per_delivered = if delivered_all == 0 { 0.0 } else { m.wire_bytes as f64 / delivered_all as f64 };
        m.sends_per_message = if n == 0 { 0.0 } else { sends as f64 / n as f64 };
        m.max_sends_per_message = max;
        m
    }
}

/// One client's part of a [`MetricsAccumulator`].
#[derive(Debug, Clone, Default)]
struct ClientMetrics {
    msgs: [Vec<MsgState>; 2],
    depth: [u64; 2],
    backlog: [u64; 2],
    highest_delivered: [Option<u64>; 2],
    latencies_ms: Vec<f64>,
    m: ReliableMetrics,
    /// Sends, messages sent at least once and most sends of one, from before the last restart.
    carried: (u64, u64, u32),
}

impl ClientFold for ClientMetrics {
    fn for_client(_: ClientId) -> Self {
        Self::default()
    }
}

impl ClientMetrics {
    fn slot(&mut self, side: Side, msg: u64, create: bool) -> Option<&mut MsgState> {
        let v = &mut self.msgs[side.index()];
        if msg >= v.len() as u64 {
            if !create || msg - v.len() as u64 > MAX_ID_JUMP {
                return None;
            }
            v.resize(msg as usize + 1, MsgState::default());
        }
        let s = &mut v[msg as usize];
        (create || s.known).then_some(s)
    }

    /// Starts a new run of the endpoints (a restart marker): message ids count from zero again,
    /// so the per-message state of the previous run is folded into totals and dropped; what it
    /// never delivered stays lost.
    fn restart(&mut self) {
        let (sends, n, max) = Self::sends(&self.msgs);
        self.carried = (self.carried.0 + sends, self.carried.1 + n, self.carried.2.max(max));
        self.msgs = Default::default();
        self.depth = [0; 2];
        self.backlog = [0; 2];
        self.highest_delivered = [None; 2];
    }

    /// Sends, messages sent at least once and most sends of one, over reliable messages in `msgs`.
    fn sends(msgs: &[Vec<MsgState>; 2]) -> (u64, u64, u32) {
        let (mut sends, mut n, mut max) = (0u64, 0u64, 0u32);
        for s in msgs.iter().flatten().filter(|s| s.known && s.reliable && s.sends > 0) {
            sends += s.sends as u64;
            n += 1;
            max = max.max(s.sends);
        }
        (sends, n, max)
    }

    /// Takes one of its client's events into account (in emission order).
    ///
    /// Inlined into [`MetricsAccumulator::observe`]: a call per event here (which fat LTO made
    /// once clients came, the fold being one per client) was 1.3 % of a sweep run.
    #[inline(always)]
    fn observe(&mut self, e: &Event) {
        match e.kind {
            EventKind::ParamChanged { .. } if e.kind.is_restart() => self.restart(),
            EventKind::PacketSent { bytes, .. } => {
                self.m.wire_bytes += bytes as u64;
                self.m.max_packet_bytes = self.m.max_packet_bytes.max(bytes);
            }
            EventKind::MessageQueued { side, msg, reliable, .. } => {
                let state = MsgState { known: true, reliable, queued_at: e.time, ..MsgState::default() };
                let v = &mut self.msgs[side.index()];
                if msg == v.len() as u64 {
                    // Ids come in order: almost always the next one, pushed as it is (not a
                    // default pushed then overwritten).
                    v.push(state);
                } else {
                    let Some(s) = self.slot(side, msg, true) else { return };
                    *s = state;
                }
                if reliable {
                    self.m.sent += 1;
                    let d = &mut self.depth[side.index()];
                    *d += 1;
                    self.m.max_send_queue_depth = self.m.max_send_queue_depth.max(*d);
                } else {
                    self.m.unreliable_sent += 1;
                }
            }
            EventKind::MessageRefused { side, msg, reason } => match reason {
                RefuseReason::SendQueueFull => {
                    self.m.refused_queue_full += 1;
                    let Some(s) = self.slot(side, msg, false) else { return };
                    if s.reliable && s.sends == 0 && !s.backlogged && !s.too_large {
                        s.backlogged = true;
                        let b = &mut self.backlog[side.index()];
                        *b += 1;
                        self.m.backlog_peak = self.m.backlog_peak.max(*b);
                    }
                }
                RefuseReason::TooLarge | RefuseReason::Closed => {
                    if reason == RefuseReason::TooLarge {
                        self.m.refused_too_large += 1;
                    }
                    let Some(s) = self.slot(side, msg, false) else { return };
                    let pending = s.reliable && !s.acked && !s.too_large;
                    s.too_large = true;
                    let left_backlog = std::mem::take(&mut s.backlogged);
                    if pending {
                        self.depth[side.index()] = self.depth[side.index()].saturating_sub(1);
                    }
                    if left_backlog {
                        self.backlog[side.index()] = self.backlog[side.index()].saturating_sub(1);
                    }
                }
            },
            EventKind::MessageSent { side, msg, .. } => {
                let Some(s) = self.slot(side, msg, false) else { return };
                s.sends = s.sends.saturating_add(1);
                let (left_backlog, spurious) = (std::mem::take(&mut s.backlogged), send_is_spurious(s.deliveries));
                if left_backlog {
                    self.backlog[side.index()] = self.backlog[side.index()].saturating_sub(1);
                }
                if spurious {
                    self.m.spurious_resends += 1;
                }
            }
            EventKind::MessageAcked { side, msg, .. } => {
                let Some(s) = self.slot(side, msg, false) else { return };
                if !s.acked {
                    s.acked = true;
                    if s.reliable && !s.too_large {
                        self.depth[side.index()] = self.depth[side.index()].saturating_sub(1);
                    }
                }
            }
            EventKind::MessageDelivered { side, msg } => {
                let sender = side.other();
                let Some(s) = self.slot(sender, msg, false) else { return };
                s.deliveries = s.deliveries.saturating_add(1);
                let (first, reliable, queued_at) = (s.deliveries == 1, s.reliable, s.queued_at);
                match (reliable, first) {
                    (true, true) => {
                        self.m.delivered += 1;
                        self.latencies_ms.push(e.time.saturating_since(queued_at).as_millis_f64());
                        let h = &mut self.highest_delivered[sender.index()];
                        if h.is_some_and(|h| msg < h) {
                            self.m.out_of_order += 1;
                        }
                        *h = Some(h.map_or(msg, |h| h.max(msg)));
                    }
                    (true, false) => self.m.duplicated += 1,
                    (false, true) => self.m.unreliable_delivered += 1,
                    (false, false) => self.m.unreliable_duplicated += 1,
                }
            }
            EventKind::MessageCorrupted { .. } => self.m.corrupted += 1,
            _ => {}
        }
    }

    /// Sends, messages sent at least once and most sends of one, over the whole run.
    fn sends_all(&self) -> (u64, u64, u32) {
        let (sends, n, max) = Self::sends(&self.msgs);
        (sends + self.carried.0, n + self.carried.1, max.max(self.carried.2))
    }

    /// Reliable messages never delivered that the sender still holds unacked (since the last
    /// restart: what a restart left behind is dropped).
    fn still_queued(&self) -> u64 {
        let held = |s: &&MsgState| s.known && s.reliable && s.deliveries == 0 && !s.acked && !s.too_large;
        self.msgs.iter().flatten().filter(held).count() as u64
    }

    /// The figures for everything observed so far.
    fn finish(&self) -> ReliableMetrics {
        let mut m = self.m;
        m.lost = m.sent.saturating_sub(m.delivered);
        m.still_queued_at_end = self.still_queued().min(m.lost);
        m.lost_dropped = m.lost - m.still_queued_at_end;
        m.latency_ms = LatencyMs::of(self.latencies_ms.clone());
        let delivered_all = m.delivered + m.unreliable_delivered;
        m.wire_bytes_per_delivered = if delivered_all == 0 { 0.0 } else { m.wire_bytes as f64 / delivered_all as f64 };
        let (sends, n, max) = self.sends_all();
        m.sends_per_message = if n == 0 { 0.0 } else { sends as f64 / n as f64 };
        m.max_sends_per_message = max;
        m
    }
}

/// Whether a send of a message is spurious: the peer's application had already received the
/// message (`peer_deliveries` copies so far, from `MessageDelivered`) when this copy went out,
/// something its sender cannot know. The one rule for the `spurious_resends` figure here and
/// the message views' red boxes (the app's message index calls it).
pub const fn send_is_spurious(peer_deliveries: u32) -> bool {
    peer_deliveries > 0
}

/// The reliable-message figures of a run's events (in emission order).
pub fn reliable_metrics(events: &[Event]) -> ReliableMetrics {
    let mut acc = MetricsAccumulator::new();
    acc.observe_all(events);
    acc.finish()
}

/// Latency of reliable messages as an application that needs them in order would see them:
/// each message counts from its `MessageQueued` until it *and every reliable message its sender
/// queued before it* have been delivered (head-of-line waiting included).
///
/// For a strategy that delivers in order this equals [`ReliableMetrics::latency_ms`]; for one that
/// hands each message over on arrival (`dnm`, `rellikt`) it is the figure comparable with an
/// ordered strategy's. Messages behind one never delivered are left out (they never became
/// usable). Feed events in emission order; [`in_order_latency`] does it for a slice.
///
/// Keyed by client: [`Self::finish`] gives the percentiles over every client's messages.
#[derive(Debug, Clone, Default)]
pub struct InOrderLatency {
    clients: PerClient<ClientInOrder>,
}

impl InOrderLatency {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn observe(&mut self, e: &Event) {
        self.clients.observe(e, ClientInOrder::observe);
    }

    /// The percentiles over every message usable in order so far, every client's.
    pub fn finish(&self) -> LatencyMs {
        let mut samples = Vec::new();
        for c in self.clients.iter() {
            samples.extend(c.all_samples());
        }
        LatencyMs::from(&Percentiles::of(samples))
    }

    /// Client `k`'s percentiles (None before any event of it).
    pub fn client(&self, k: ClientId) -> Option<LatencyMs> {
        self.clients.get(k).map(|c| LatencyMs::from(&Percentiles::of(c.all_samples())))
    }
}

/// One client's part of an [`InOrderLatency`].
#[derive(Debug, Clone, Default)]
struct ClientInOrder {
    /// Per sender: reliable ids in queue order, with when they were queued.
    queued: [Vec<(u64, SimTime)>; 2],
    /// Per sender: when the peer first delivered each id.
    delivered: [HashMap<u64, SimTime>; 2],
    /// Samples of the runs before the last restart (ids count from zero after one).
    carried: Vec<f64>,
}

impl ClientFold for ClientInOrder {
    fn for_client(_: ClientId) -> Self {
        Self::default()
    }
}

impl ClientInOrder {
    fn observe(&mut self, e: &Event) {
        if e.kind.is_restart() {
            let samples = self.samples();
            self.carried.extend(samples);
            self.queued = Default::default();
            self.delivered = Default::default();
        }
        match e.kind {
            EventKind::MessageQueued { side, msg, reliable: true, .. } => self.queued[side.index()].push((msg, e.time)),
            EventKind::MessageDelivered { side, msg } => {
                self.delivered[side.other().index()].entry(msg).or_insert(e.time);
            }
            _ => {}
        }
    }

    /// Every in-order latency so far, the runs before the last restart's included.
    fn all_samples(&self) -> Vec<f64> {
        let mut samples = self.carried.clone();
        samples.extend(self.samples());
        samples
    }

    /// The in-order latencies since the last restart.
    fn samples(&self) -> Vec<f64> {
        let mut samples = Vec::new();
        for (q, d) in self.queued.iter().zip(&self.delivered) {
            let mut ready = SimTime::ZERO;
            for (id, at) in q {
                let Some(&t) = d.get(id) else { break };
                ready = ready.max(t);
                samples.push(ready.saturating_since(*at).as_millis_f64());
            }
        }
        samples
    }
}

/// [`InOrderLatency`] of a run's events (in emission order).
pub fn in_order_latency(events: &[Event]) -> LatencyMs {
    let mut acc = InOrderLatency::new();
    for e in events {
        acc.observe(e);
    }
    acc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::SendKind;

    fn ev(ms: u64, kind: EventKind) -> Event {
        Event::new(SimTime(ms * 1000), kind)
    }

    #[test]
    fn resend_after_peer_delivery_is_spurious_and_duplicates_are_counted() {
        use EventKind::*;
        let a = Side::A;
        let events = vec![
            ev(0, MessageQueued { side: a, msg: 0, bytes: 10, reliable: true }),
            ev(0, MessageQueued { side: a, msg: 1, bytes: 10, reliable: true }),
            ev(1, PacketSent { side: a, seq: 0, bytes: 40, uid: 0 }),
            ev(1, MessageSent { side: a, msg: 0, seq: 0, kind: SendKind::First }),
            ev(1, MessageSent { side: a, msg: 1, seq: 0, kind: SendKind::First }),
            ev(50, MessageDelivered { side: Side::B, msg: 1 }),
            ev(50, MessageDelivered { side: Side::B, msg: 0 }),
            ev(101, MessageSent { side: a, msg: 0, seq: 1, kind: SendKind::DelayResend }),
            ev(101, PacketSent { side: a, seq: 1, bytes: 30, uid: 1 }),
            ev(150, MessageDelivered { side: Side::B, msg: 0 }),
            ev(160, MessageAcked { side: a, msg: 0, seq: 1 }),
        ];
        let m = reliable_metrics(&events);
        assert_eq!((m.sent, m.delivered, m.lost), (2, 2, 0));
        assert_eq!(m.spurious_resends, 1);
        assert_eq!(m.duplicated, 1);
        assert_eq!(m.out_of_order, 1);
        assert_eq!(m.max_sends_per_message, 2);
        assert!((m.sends_per_message - 1.5).abs() < 1e-9);
        assert_eq!(m.max_send_queue_depth, 2);
        assert_eq!(m.max_packet_bytes, 40);
        assert_eq!(m.latency_ms.max, 50.0);
        assert!((m.wire_bytes_per_delivered - 35.0).abs() < 1e-9);
        assert_eq!(m.backlog_peak, 0);
        // Message 0 arrived at 50 and again at 150, 1 at 50: in order, both usable at 50.
        assert_eq!(in_order_latency(&events).max, 50.0);
    }

    #[test]
    fn ids_queued_out_of_order_or_past_a_gap_are_counted_and_far_jumps_ignored() {
        use EventKind::*;
        let a = Side::A;
        let mut events: Vec<Event> =
            [0, 3, 1, 1 << 30].map(|msg| ev(0, MessageQueued { side: a, msg, bytes: 10, reliable: true })).into();
        events.extend([3, 1, 0, 1 << 30].map(|msg| ev(40, MessageDelivered { side: Side::B, msg })));
        let m = reliable_metrics(&events);
        assert_eq!((m.sent, m.delivered, m.out_of_order, m.max_send_queue_depth), (3, 3, 2, 3));
    }

    #[test]
    fn backlog_counts_refused_reliable_messages_until_their_first_send() {
        use EventKind::*;
        let a = Side::A;
        let full = RefuseReason::SendQueueFull;
        let mut events = Vec::new();
        for msg in 0..4 {
            events.push(ev(0, MessageQueued { side: a, msg, bytes: 10, reliable: msg != 3 }));
            if msg > 0 {
                events.push(ev(0, MessageRefused { side: a, msg, reason: full }));
            }
        }
        events.extend([
            // A snapshot refused for a full queue is dropped: not in the backlog.
            ev(1, MessageSent { side: a, msg: 0, seq: 0, kind: SendKind::First }),
            ev(20, MessageSent { side: a, msg: 1, seq: 1, kind: SendKind::First }),
            ev(20, MessageQueued { side: a, msg: 4, bytes: 10, reliable: true }),
            ev(20, MessageRefused { side: a, msg: 4, reason: full }),
            ev(40, MessageSent { side: a, msg: 2, seq: 2, kind: SendKind::First }),
            ev(40, MessageSent { side: a, msg: 4, seq: 2, kind: SendKind::First }),
            ev(60, MessageDelivered { side: Side::B, msg: 2 }),
            ev(70, MessageDelivered { side: Side::B, msg: 0 }),
            ev(90, MessageDelivered { side: Side::B, msg: 1 }),
        ]);
        let m = reliable_metrics(&events);
        assert_eq!(m.backlog_peak, 2);
        assert_eq!(m.refused_queue_full, 4);
        // Delivered out of order: 2 waits for 1 (queued at 0, usable at 90).
        assert_eq!((m.latency_ms.max, m.out_of_order), (90.0, 2));
        let ordered = in_order_latency(&events);
        assert_eq!((ordered.p50, ordered.max), (90.0, 90.0));
        assert_eq!(m.latency_ms.p50, 70.0);
    }

    #[test]
    fn lost_splits_into_dropped_and_still_queued_at_end() {
        use EventKind::*;
        let a = Side::A;
        let mut events: Vec<Event> =
            (0..6).map(|msg| ev(0, MessageQueued { side: a, msg, bytes: 10, reliable: msg != 5 })).collect();
        events.extend([
            ev(1, MessageSent { side: a, msg: 0, seq: 0, kind: SendKind::First }),
            ev(1, MessageSent { side: a, msg: 1, seq: 0, kind: SendKind::First }),
            ev(1, MessageSent { side: a, msg: 3, seq: 0, kind: SendKind::First }),
            ev(1, MessageRefused { side: a, msg: 2, reason: RefuseReason::TooLarge }),
            ev(1, MessageRefused { side: a, msg: 4, reason: RefuseReason::SendQueueFull }),
            ev(50, MessageDelivered { side: Side::B, msg: 0 }),
            // A false ack: the sender lets 3 go though it never arrived.
            ev(100, MessageAcked { side: a, msg: 3, seq: 0 }),
        ]);
        // 1 is in flight unacked, 4 in the backlog: both still held; 2 and 3 are gone; the
        // unreliable 5 is no reliable loss.
        let m = reliable_metrics(&events);
        assert_eq!((m.sent, m.delivered, m.lost), (5, 1, 4));
        assert_eq!((m.lost_dropped, m.still_queued_at_end), (2, 2));
        // Two clients: the totals add up.
        let mut acc = MetricsAccumulator::new();
        for k in [1, 2] {
            for e in &events {
                acc.observe(&Event::for_client(e.time, k, e.kind.clone()));
            }
        }
        let m = acc.finish();
        assert_eq!((m.lost, m.lost_dropped, m.still_queued_at_end), (8, 4, 4));
    }
}
