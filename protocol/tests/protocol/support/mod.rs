//! The one harness every protocol test shares: a [`Ledger`] of what each side queued, what the
//! other delivered and what the packets really did (measure's `PacketLedger`), run helpers, and a
//! scripted receive filter.
//!
//! Packet ground truth (which send a sequence names, whether the link delivered it, false acks and
//! naks) comes from `ackscope_protocol::PacketLedger` only, the same code the app and the CLI
//! count with; this module adds the message-level bookkeeping the assertions need.
#![allow(dead_code)]

mod filtered;
mod runs;
pub mod truths;
mod ue4;

use std::collections::{BTreeMap, HashMap, HashSet};

use ackscope_protocol::*;

#[allow(unused_imports)]
pub use filtered::{filtered, ue4_seq};
#[allow(unused_imports)]
pub use runs::*;
#[allow(unused_imports)]
pub use ue4::*;

/// What a run's events say: messages per side, packets from the ledger, metrics from `measure`.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Ground truth per packet send.
    pub packets: PacketLedger,
    /// The reliable-message figures (`measure::messages`), fed the same events.
    pub metrics: MetricsAccumulator,
    /// Per sender: message id -> reliable (the workload's class).
    pub queued: [BTreeMap<u64, bool>; 2],
    /// Per sender: message id -> when it was queued.
    pub queued_at: [BTreeMap<u64, SimTime>; 2],
    /// Per sender: ids in the order they were queued.
    pub queue_order: [Vec<u64>; 2],
    /// Per receiver: delivered ids in delivery order (repeats included).
    pub delivered: [Vec<u64>; 2],
    /// Per receiver: deliveries of each id.
    pub deliveries: [HashMap<u64, u32>; 2],
    pub refused: [Vec<(u64, RefuseReason)>; 2],
    /// Per sender: messages it learned were delivered (`MessageAcked`).
    pub acked_msgs: [HashSet<u64>; 2],
    /// `MessageAcked` for a message the receiver had not been handed.
    pub false_msg_acks: u64,
    pub closed: Vec<(Side, String)>,
    pub nak_resends: u64,
    pub max_inrec_depth: u32,
    pub desyncs: u64,
}

impl Ledger {
    pub fn observe(&mut self, events: &[Event]) {
        for e in events {
            self.observe_event(e);
        }
    }

    pub fn observe_event(&mut self, e: &Event) {
        self.packets.observe_event(e);
        self.metrics.observe(e);
        match &e.kind {
            EventKind::MessageQueued { side, msg, reliable, .. } => {
                let s = side.index();
                self.queued[s].insert(*msg, *reliable);
                self.queued_at[s].insert(*msg, e.time);
                self.queue_order[s].push(*msg);
            }
            EventKind::MessageDelivered { side, msg } => {
                self.delivered[side.index()].push(*msg);
                *self.deliveries[side.index()].entry(*msg).or_default() += 1;
            }
            EventKind::MessageAcked { side, msg, .. } => {
                if !self.deliveries[side.other().index()].contains_key(msg) {
                    self.false_msg_acks += 1;
                }
                self.acked_msgs[side.index()].insert(*msg);
            }
            EventKind::MessageRefused { side, msg, reason } => self.refused[side.index()].push((*msg, *reason)),
            EventKind::ConnectionClosed { side, reason } => self.closed.push((*side, reason.clone())),
            EventKind::MessageSent { kind: SendKind::NakResend, .. } => self.nak_resends += 1,
            EventKind::Ue4InRec { depth, .. } => self.max_inrec_depth = self.max_inrec_depth.max(*depth),
            EventKind::MessageDesync { .. } => self.desyncs += 1,
            _ => {}
        }
    }

    /// Packets the endpoints rejected as malformed.
    pub fn malformed(&self) -> u64 {
        self.packets.malformed()
    }

    fn is_reliable(&self, sender: Side, id: u64) -> bool {
        self.queued[sender.index()].get(&id).copied().unwrap_or(false)
    }

    pub fn reliable_queued(&self, sender: Side) -> usize {
        self.queued[sender.index()].values().filter(|r| **r).count()
    }

    /// Reliable ids `sender` queued, in queue order.
    pub fn reliable_queue_order(&self, sender: Side) -> Vec<u64> {
        self.queue_order[sender.index()].iter().copied().filter(|id| self.is_reliable(sender, *id)).collect()
    }

    /// Reliable ids of `sender` the other side delivered, in delivery order (repeats included).
    pub fn reliable_delivery_order(&self, sender: Side) -> Vec<u64> {
        let got = &self.delivered[sender.other().index()];
        got.iter().copied().filter(|id| self.is_reliable(sender, *id)).collect()
    }

    /// Reliable ids `sender` queued, with when.
    pub fn queued_reliable(&self, sender: Side) -> impl Iterator<Item = (u64, SimTime)> + '_ {
        let at = &self.queued_at[sender.index()];
        self.queued[sender.index()].iter().filter(|(_, r)| **r).map(move |(id, _)| (*id, at[id]))
    }

    /// Whether `receiver` was handed message `id` of the other side.
    pub fn was_delivered(&self, receiver: Side, id: u64) -> bool {
        self.deliveries[receiver.index()].contains_key(&id)
    }

    /// Every reliable message `sender` queued was delivered exactly once and in order; no
    /// unreliable one twice; nothing delivered that was never queued. Messages queued after
    /// `cutoff` may still be in flight.
    pub fn check_reliable_exactly_once_in_order(&self, sender: Side, cutoff: SimTime, seed: u64) {
        let receiver = sender.other();
        let q = &self.queued[sender.index()];
        let mut last_reliable = None;
        let mut seen = std::collections::BTreeSet::new();
        for &id in &self.delivered[receiver.index()] {
            let reliable = *q.get(&id).unwrap_or_else(|| panic!("seed {seed}: {id} delivered but never queued"));
            assert!(seen.insert(id), "seed {seed}: message {id} from {sender:?} delivered twice");
            if reliable {
                assert!(last_reliable < Some(id), "seed {seed}: reliable {id} after {last_reliable:?}");
                last_reliable = Some(id);
            }
        }
        let at = &self.queued_at[sender.index()];
        let missing: Vec<u64> =
            q.iter().filter(|(id, r)| **r && !seen.contains(id) && at[id] <= cutoff).map(|(id, _)| *id).collect();
        assert!(
            missing.is_empty(),
            "seed {seed}: {} reliable messages from {sender:?} never delivered, first {:?}",
            missing.len(),
            &missing[..missing.len().min(5)]
        );
    }

    /// Reliable messages of `sender` queued before `before` but never delivered to the other side.
    pub fn undelivered_reliable(&self, sender: Side, before: SimTime) -> usize {
        self.queued_reliable(sender).filter(|(id, t)| *t < before && !self.was_delivered(sender.other(), *id)).count()
    }

    /// Messages delivered more than once, both sides.
    pub fn double_deliveries(&self) -> usize {
        self.deliveries.iter().flat_map(|m| m.values()).filter(|&&n| n > 1).count()
    }
}

/// Delivery outcomes (acks and naks) checked against the packet ledger.
impl Ledger {
    /// Acks reported for sends the sender had made (repeats included).
    pub fn acked(&self) -> u64 {
        self.packets.acks_reported()
    }

    pub fn nakked(&self) -> u64 {
        self.packets.naks_reported()
    }

    /// Packets the endpoints sent.
    pub fn sent(&self) -> u64 {
        self.packets.totals().sent
    }

    /// Acks of sends the sender had made that the link had not delivered.
    pub fn false_acks(&self) -> u64 {
        self.packets.false_acks() - self.packets.unnamed_acks()
    }

    /// Outcomes beyond one per send, and outcomes naming a sequence never sent.
    pub fn double_outcomes(&self) -> u64 {
        self.packets.repeated_outcomes() + self.packets.unnamed_acks() + self.packets.unnamed_naks()
    }

    /// Time from each send to its first outcome (ms), for sends that got one.
    fn outcome_delays_ms(&self) -> impl Iterator<Item = f64> + '_ {
        self.packets.packets().filter_map(|p| {
            let outcome = match (p.acked_at, p.nakked_at) {
                (Some(a), Some(n)) => a.min(n),
                (a, n) => a.or(n)?,
            };
            Some(outcome.saturating_since(p.sent_at?).as_millis_f64())
        })
    }

    pub fn max_outcome_delay_ms(&self) -> f64 {
        self.outcome_delays_ms().fold(0.0, f64::max)
    }

    /// Outcomes reported later than `limit_ms` after their send.
    pub fn late_outcomes(&self, limit_ms: f64) -> usize {
        self.outcome_delays_ms().filter(|d| *d > limit_ms).count()
    }

    /// Sends older than `window_ms` at `now` that never got an outcome, among the latest send of
    /// each sequence (an older send of a wrapped sequence can no longer be named by an outcome).
    pub fn unresolved(&self, now: SimTime, window_ms: f64) -> usize {
        self.packets
            .packets()
            .filter(|p| {
                let (Some(dir), Some(seq), Some(t)) = (p.dir, p.seq, p.sent_at) else { return false };
                self.packets.uid_of(dir.sender(), seq) == Some(p.uid)
                    && now.saturating_since(t).as_millis_f64() > window_ms
                    && p.acks + p.naks == 0
            })
            .count()
    }

    /// The outcome counters, for failure messages.
    pub fn brief(&self) -> String {
        format!(
            "sent {} acked {} nakked {} (false acks {}, false naks {}, double {}, max delay {:.1} ms, malformed {})",
            self.sent(),
            self.acked(),
            self.nakked(),
            self.false_acks(),
            self.packets.false_naks(),
            self.double_outcomes(),
            self.max_outcome_delay_ms(),
            self.malformed()
        )
    }
}
