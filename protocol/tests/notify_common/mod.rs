//! Ground-truth bookkeeping shared by the `dnm_*`, `rellikt_*` and `snapshots_*` tests.

#![allow(dead_code)]

use std::collections::{HashMap, HashSet};

use ackscope_protocol::*;

/// What a run's events say, checked against the link's record as they stream by.
#[derive(Debug, Default)]
pub struct Audit {
    /// Per side, the link send id currently carrying each 16-bit sequence.
    current: [HashMap<u32, (u64, SimTime)>; 2],
    delivered_uids: HashSet<u64>,
    /// uid -> outcome already reported.
    outcome: HashMap<u64, bool>,
    pub sent: u64,
    pub acked: u64,
    pub nakked: u64,
    /// Naks for packets the link did deliver (the scheme's acks can be lost too).
    pub false_naks: u64,
    pub false_acks: u64,
    pub double_outcomes: u64,
    /// Outcomes reported later than `send + limit`.
    pub late_outcomes: u64,
    pub max_outcome_delay_ms: f64,
    /// Per receiving side: messages delivered (id -> count).
    pub delivered_msgs: [HashMap<u64, u32>; 2],
    /// Per sending side: reliable message ids queued (workload class), with when, and acked.
    pub queued_reliable: [HashMap<u64, SimTime>; 2],
    pub acked_msgs: [HashSet<u64>; 2],
    /// MessageAcked for a message the receiver had not been handed.
    pub false_msg_acks: u64,
    pub malformed: u64,
}

impl Audit {
    /// Feeds events; `limit_ms` bounds how long after sending an outcome may come.
    pub fn observe(&mut self, events: &[Event], limit_ms: f64) {
        for e in events {
            match e.kind {
                EventKind::PacketSent { side, seq, uid, .. } => {
                    self.current[side.index()].insert(seq, (uid, e.time));
                    self.sent += 1;
                }
                EventKind::LinkDelivered { uid, .. } => {
                    self.delivered_uids.insert(uid);
                }
                EventKind::PacketAcked { side, seq } | EventKind::PacketNakked { side, seq } => {
                    let acked = matches!(e.kind, EventKind::PacketAcked { .. });
                    let Some(&(uid, t)) = self.current[side.index()].get(&seq) else {
                        self.double_outcomes += 1;
                        continue;
                    };
                    if self.outcome.insert(uid, acked).is_some() {
                        self.double_outcomes += 1;
                    }
                    let delay = e.time.saturating_since(t).as_millis_f64();
                    self.max_outcome_delay_ms = self.max_outcome_delay_ms.max(delay);
                    if delay > limit_ms {
                        self.late_outcomes += 1;
                    }
                    let was_delivered = self.delivered_uids.contains(&uid);
                    if acked {
                        self.acked += 1;
                        self.false_acks += !was_delivered as u64;
                    } else {
                        self.nakked += 1;
                        self.false_naks += was_delivered as u64;
                    }
                }
                EventKind::MessageQueued { side, msg, reliable: true, .. } => {
                    self.queued_reliable[side.index()].insert(msg, e.time);
                }
                EventKind::MessageDelivered { side, msg } => {
                    *self.delivered_msgs[side.index()].entry(msg).or_default() += 1;
                }
                EventKind::MessageAcked { side, msg, .. } => {
                    if !self.delivered_msgs[side.other().index()].contains_key(&msg) {
                        self.false_msg_acks += 1;
                    }
                    self.acked_msgs[side.index()].insert(msg);
                }
                EventKind::Malformed { .. } => self.malformed += 1,
                _ => {}
            }
        }
    }

    /// The counters, for failure messages.
    pub fn brief(&self) -> String {
        format!(
            "sent {} acked {} nakked {} (false acks {}, false naks {}, double {}, late {}, max delay {:.1} ms, malformed {})",
            self.sent,
            self.acked,
            self.nakked,
            self.false_acks,
            self.false_naks,
            self.double_outcomes,
            self.late_outcomes,
            self.max_outcome_delay_ms,
            self.malformed
        )
    }

    /// Reliable messages of `sender` queued before `before` but never delivered to the other side.
    pub fn undelivered_reliable(&self, sender: Side, before: SimTime) -> usize {
        let got = &self.delivered_msgs[sender.other().index()];
        self.queued_reliable[sender.index()].iter().filter(|(id, t)| **t < before && !got.contains_key(id)).count()
    }

    /// Messages delivered more than once, both sides.
    pub fn double_deliveries(&self) -> usize {
        self.delivered_msgs.iter().flat_map(|m| m.values()).filter(|&&n| n > 1).count()
    }

    /// Sends older than the run's last `window_ms` that never got an outcome.
    pub fn unresolved(&self, now: SimTime, window_ms: f64) -> usize {
        self.current
            .iter()
            .flat_map(|m| m.values())
            .filter(|(uid, t)| now.saturating_since(*t).as_millis_f64() > window_ms && !self.outcome.contains_key(uid))
            .count()
    }
}

/// A scenario for a delivery-notification strategy over a lossy, jittery link.
pub fn scenario(strategy: Strategy, seed: u64, loss: f64) -> Scenario {
    let mut s = Scenario { seed, strategy, send_rate_pps: 60.0, ..Scenario::default() };
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.loss_percent = loss;
        l.latency_ms = 50.0;
        l.jitter_ms = 20.0;
    }
    s
}

/// Runs `secs` in steps, auditing and discarding events as it goes.
pub fn run_audited(s: Scenario, secs: f64, limit_ms: f64) -> (Audit, Simulation) {
    let mut sim = Simulation::new(s);
    let mut audit = Audit::default();
    let steps = (secs * 10.0).ceil() as u64;
    for _ in 0..steps {
        sim.run_for_secs(0.1);
        let ev: Vec<Event> = sim.drain_events().collect();
        audit.observe(&ev, limit_ms);
    }
    (audit, sim)
}

/// Ground-truth checks every delivery-notification run must pass.
pub fn assert_truthful(what: &str, seed: u64, a: &Audit, sim: &Simulation, limit_ms: f64) {
    let t = sim.totals();
    let ctx = format!("{what} (seed {seed}): {t:?}");
    assert_eq!(t.false_acks, 0, "{ctx}: acks for packets the link never delivered");
    assert_eq!(t.duplicate_acks, 0, "{ctx}: a send acked twice");
    assert_eq!(a.false_acks, 0, "{ctx}: audit found false acks");
    assert_eq!(a.double_outcomes, 0, "{ctx}: a send got two outcomes (ack and nak, or twice)");
    assert_eq!(a.late_outcomes, 0, "{ctx}: outcomes later than {limit_ms} ms (max {})", a.max_outcome_delay_ms);
    assert_eq!(a.unresolved(sim.now(), limit_ms), 0, "{ctx}: sends never resolved");
    assert_eq!(a.double_deliveries(), 0, "{ctx}: a message delivered twice");
    assert_eq!(a.false_msg_acks, 0, "{ctx}: a message acked before the peer had it");
    assert_eq!(a.malformed, 0, "{ctx}: our own packets were malformed");
    assert_eq!(a.acked + a.nakked, t.acked + a.nakked, "{ctx}");
}
