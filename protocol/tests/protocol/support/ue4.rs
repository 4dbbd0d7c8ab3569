//! UE4 helpers: a peer whose counters a test can read while the simulation owns it, a receive
//! hook that rewrites chosen packets, and the per-actor ordering check channels per actor need.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use ackscope_protocol::strategies::ue4::Ue4Counters;
use ackscope_protocol::*;

use super::Ledger;

/// Rewrites an incoming packet before the peer sees it (None: leave it as it is; an empty
/// packet: drop it).
pub type Rewrite = Box<dyn FnMut(SimTime, &[u8]) -> Option<Vec<u8>> + Send>;

/// A UE4 peer that publishes its counters after every call and may rewrite incoming packets.
pub struct Observed {
    pub peer: Ue4Peer,
    pub counters: Arc<Mutex<Ue4Counters>>,
    pub rewrite: Option<Rewrite>,
}

impl Observed {
    pub fn new(peer: Ue4Peer) -> (Self, Arc<Mutex<Ue4Counters>>) {
        let counters = Arc::new(Mutex::new(peer.counters()));
        (Self { peer, counters: counters.clone(), rewrite: None }, counters)
    }

    fn publish(&self) {
        *self.counters.lock().unwrap() = self.peer.counters();
    }
}

impl Peer for Observed {
    fn on_tick(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.peer.on_tick(now, events);
        self.publish();
    }
    fn poll_send(&mut self, now: SimTime, out: &mut Vec<u8>, events: &mut Vec<Event>) -> Option<u32> {
        self.peer.poll_send(now, out, events)
    }
    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        match self.rewrite.as_mut().and_then(|r| r(now, packet)) {
            Some(p) if p.is_empty() => {}
            Some(p) => self.peer.receive(now, &p, events),
            None => self.peer.receive(now, packet, events),
        }
        self.publish();
    }
    fn update(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.peer.update(now, events)
    }
    fn stats(&self) -> StatsSample {
        self.peer.stats()
    }
    fn command(&mut self, now: SimTime, command: PeerCommand) {
        self.peer.command(now, command)
    }
    fn unacked_reliable(&self) -> usize {
        self.peer.unacked_reliable()
    }
}

/// Every reliable message `sender` queued before `cutoff` was delivered exactly once, and within
/// each actor (UE4's unit of ordering) in the order it was queued. Returns the number of
/// reliable deliveries that came before a lower id of another actor (allowed: actors are not
/// ordered among themselves).
pub fn check_reliable_exactly_once_per_actor(
    ledger: &Ledger,
    sender: Side,
    cutoff: SimTime,
    workload: &Workload,
    seed: u64,
) -> usize {
    let delivered = ledger.reliable_delivery_order(sender);
    let mut last: BTreeMap<u32, u64> = BTreeMap::new();
    let mut across_actors = 0;
    let mut highest = None;
    for &id in &delivered {
        let actor = workload.actor_of(id);
        if let Some(prev) = last.insert(actor, id) {
            assert!(prev < id, "seed {seed}: {sender:?} actor {actor}: {id} delivered after {prev}");
        }
        if highest.is_some_and(|h| id < h) {
            across_actors += 1;
        }
        highest = highest.max(Some(id));
    }
    let mut seen = std::collections::BTreeSet::new();
    for id in &delivered {
        assert!(seen.insert(*id), "seed {seed}: {sender:?}'s {id} delivered twice");
    }
    let missing: Vec<u64> =
        ledger.queued_reliable(sender).filter(|(id, t)| *t <= cutoff && !seen.contains(id)).map(|(id, _)| id).collect();
    assert!(
        missing.is_empty(),
        "seed {seed}: {} of {sender:?}'s reliable messages lost, first {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    across_actors
}
