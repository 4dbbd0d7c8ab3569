//! The bandwidth throttle: unreliable traffic waits or is dropped while `QueuedBits` is in debt,
//! reliable traffic is never held back, and `CurrentNetSpeed` can change live.

use std::sync::{Arc, Mutex};

use crate::support::*;
use ackscope_protocol::strategies::ue4::Ue4Peer;
use ackscope_protocol::workload::Senders;
use ackscope_protocol::*;

/// A UE4 peer whose net speed a test can turn while it runs.
struct Knob {
    peer: Ue4Peer,
    speed: Arc<Mutex<f64>>,
}

impl Peer for Knob {
    fn on_tick(&mut self, now: SimTime, events: &mut Vec<Event>) {
        let speed = *self.speed.lock().unwrap();
        if speed != self.peer_speed() {
            self.peer.set_net_speed(speed);
        }
        self.peer.on_tick(now, events)
    }
    fn poll_send(&mut self, now: SimTime, out: &mut Vec<u8>, events: &mut Vec<Event>) -> Option<u32> {
        self.peer.poll_send(now, out, events)
    }
    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        self.peer.receive(now, packet, events)
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

impl Knob {
    fn peer_speed(&self) -> f64 {
        self.peer.net_speed_bytes_per_sec()
    }
}

/// A's bytes per second (with IP+UDP overhead) between `from` and `to`, from `Budget` events.
fn spent_rate(events: &[Event], from: f64, to: f64) -> f64 {
    let (a, b) = (SimTime::from_secs_f64(from), SimTime::from_secs_f64(to));
    let bytes: f64 = events
        .iter()
        .filter(|e| e.time > a && e.time <= b)
        .filter_map(|e| match e.kind {
            EventKind::Budget { side: Side::A, spent_bytes, .. } => Some(spent_bytes as f64),
            _ => None,
        })
        .sum();
    bytes / (to - from)
}

fn saturated_scenario(seed: u64) -> Scenario {
    let mut s = ue4_scenario(seed);
    s.workload.senders = Senders::AOnly;
    // 60 x 200 B/s of snapshots wants about 14 kB/s with headers; the budget is 3 kB/s.
    s.workload.snapshot_rate_hz = 60.0;
    s.workload.snapshot_bytes = 200;
    s.workload.reliable_rate_hz = 10.0;
    s.ue4.net_speed_bytes_per_sec = 3000.0;
    s.link.a_to_b = LinkConfig { loss_percent: 2.0, ..Default::default() };
    s.link.b_to_a = LinkConfig { loss_percent: 2.0, ..Default::default() };
    s
}

#[test]
fn saturated_connection_drops_unreliable_but_keeps_reliable() {
    let seed = 61;
    let s = saturated_scenario(seed);
    let mut sim = Simulation::new(s);
    sim.run_for_secs(30.0);
    let events: Vec<Event> = sim.drain_events().collect();
    let rate = spent_rate(&events, 5.0, 30.0);
    assert!((2500.0..=3600.0).contains(&rate), "seed {seed}: A sent {rate:.0} B/s against a 3000 B/s budget");
    let mut ledger = Ledger::default();
    ledger.observe(&events);
    ledger.check_reliable_exactly_once_in_order(Side::A, SimTime::from_secs_f64(28.0), seed);
    let dropped = ledger.refused[0].iter().filter(|(_, r)| *r == RefuseReason::SendQueueFull).count();
    let snaps = ledger.queued[0].values().filter(|r| !**r).count();
    assert!(dropped * 2 > snaps, "seed {seed}: only {dropped} of {snaps} snapshots held back");
    // Credit never exceeds AllowedLag = 2 x DeltaBits = 2 x 3000 / 60 bytes.
    let avail: Vec<f32> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Budget { side: Side::A, available_bytes, .. } => Some(available_bytes),
            _ => None,
        })
        .collect();
    assert!(avail.iter().all(|a| *a <= 100.0), "seed {seed}: credit above AllowedLag");
    assert!(avail.iter().any(|a| *a <= 0.0), "seed {seed}: never in debt");
}

#[test]
fn raising_net_speed_live_lets_more_through() {
    let seed = 62;
    let s = saturated_scenario(seed);
    let speed = Arc::new(Mutex::new(3000.0));
    let a = Knob { peer: ue4_peer(&s, Side::A), speed: speed.clone() };
    let b = ue4_peer(&s, Side::B);
    let mut sim = Simulation::with_peers(s, [Box::new(a), Box::new(b)]);
    sim.run_for_secs(10.0);
    *speed.lock().unwrap() = 9000.0;
    sim.run_for_secs(10.0);
    let events: Vec<Event> = sim.drain_events().collect();
    let (slow, fast) = (spent_rate(&events, 2.0, 10.0), spent_rate(&events, 12.0, 20.0));
    assert!(fast > slow * 2.5, "seed {seed}: {slow:.0} B/s then {fast:.0} B/s");
    assert!(fast < 9000.0 * 1.2, "seed {seed}: {fast:.0} B/s over a 9000 B/s budget");
}
