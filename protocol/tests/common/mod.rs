//! Helpers shared by the ue4_* tests: a message ledger checked against events, and a scripted
//! receive filter that drops chosen packets.
#![allow(dead_code)]

use std::collections::BTreeMap;

use ackscope_protocol::strategies::ue4::Ue4Peer;
use ackscope_protocol::*;

/// What each side queued and what the other side delivered, built from events.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Per sender: message id -> reliable.
    pub queued: [BTreeMap<u64, bool>; 2],
    /// Per sender: message id -> when it was queued.
    pub queued_at: [BTreeMap<u64, SimTime>; 2],
    /// Per receiver: delivered ids in delivery order.
    pub delivered: [Vec<u64>; 2],
    pub refused: [Vec<(u64, RefuseReason)>; 2],
    pub malformed: u64,
    pub closed: Vec<(Side, String)>,
    pub nak_resends: u64,
    pub max_inrec_depth: u32,
}

impl Ledger {
    pub fn observe(&mut self, events: &[Event]) {
        for e in events {
            match &e.kind {
                EventKind::MessageQueued { side, msg, reliable, .. } => {
                    self.queued[side.index()].insert(*msg, *reliable);
                    self.queued_at[side.index()].insert(*msg, e.time);
                }
                EventKind::MessageDelivered { side, msg } => self.delivered[side.index()].push(*msg),
                EventKind::MessageRefused { side, msg, reason } => self.refused[side.index()].push((*msg, *reason)),
                EventKind::Malformed { .. } => self.malformed += 1,
                EventKind::ConnectionClosed { side, reason } => self.closed.push((*side, reason.clone())),
                EventKind::MessageSent { kind: SendKind::NakResend, .. } => self.nak_resends += 1,
                EventKind::Ue4InRec { depth, .. } => self.max_inrec_depth = self.max_inrec_depth.max(*depth),
                _ => {}
            }
        }
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

    pub fn reliable_queued(&self, sender: Side) -> usize {
        self.queued[sender.index()].values().filter(|r| **r).count()
    }
}

/// Runs `secs` in steps, feeding the ledger and discarding events to keep memory flat.
pub fn run(sim: &mut Simulation, secs: f64, ledger: &mut Ledger) {
    let steps = (secs / 5.0).ceil() as usize;
    for _ in 0..steps {
        sim.run_for_secs(secs / steps as f64);
        let ev: Vec<Event> = sim.drain_events().collect();
        ledger.observe(&ev);
    }
}

/// The 14-bit sequence of a UE4 packet, read from its packed header.
pub fn ue4_seq(packet: &[u8]) -> Option<u16> {
    let w = u32::from_le_bytes(packet.get(..4)?.try_into().ok()?);
    Some((w >> 18) as u16)
}

/// A peer that ignores incoming packets the script says were lost.
pub struct Filtered {
    pub inner: Box<dyn Peer>,
    /// Decides from (now, 14-bit sequence) whether the packet is dropped.
    pub drop: Box<dyn FnMut(SimTime, u16) -> bool + Send>,
    pub dropped: Vec<(SimTime, u16)>,
}

impl Filtered {
    pub fn new(inner: Box<dyn Peer>, drop: impl FnMut(SimTime, u16) -> bool + Send + 'static) -> Self {
        Self { inner, drop: Box::new(drop), dropped: Vec::new() }
    }
}

impl Peer for Filtered {
    fn on_tick(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.inner.on_tick(now, events)
    }
    fn poll_send(&mut self, now: SimTime, out: &mut Vec<u8>, events: &mut Vec<Event>) -> Option<u32> {
        self.inner.poll_send(now, out, events)
    }
    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        if let Some(seq) = ue4_seq(packet) {
            if (self.drop)(now, seq) {
                self.dropped.push((now, seq));
                return;
            }
        }
        self.inner.receive(now, packet, events)
    }
    fn update(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.inner.update(now, events)
    }
    fn stats(&self) -> StatsSample {
        self.inner.stats()
    }
    fn command(&mut self, now: SimTime, command: PeerCommand) {
        self.inner.command(now, command)
    }
    fn unacked_reliable(&self) -> usize {
        self.inner.unacked_reliable()
    }
}

pub fn ue4_scenario(seed: u64) -> Scenario {
    Scenario { seed, strategy: Strategy::Ue4, ..Default::default() }
}

pub fn ue4_peer(s: &Scenario, side: Side) -> Ue4Peer {
    Ue4Peer::new(side, s.ue4, s.workload, s.seed)
}

/// A link with every impairment the soak exercises.
pub fn rough_link(loss_percent: f64) -> LinkConfig {
    LinkConfig {
        latency_ms: 40.0,
        jitter_ms: 15.0,
        loss_percent,
        burst: BurstLoss { p_percent: 2.0, r_percent: 30.0, loss_in_bad_percent: 80.0 },
        duplicate_percent: 3.0,
        reorder_percent: 5.0,
        reorder_delay_ms: 25.0,
        ..Default::default()
    }
}
