//! A tapped run is the same run, and the tap sees every datagram the link carries.

use super::*;
use crate::action::{Action, Step};
use crate::driver::{EventFilter, PeerFactory, Simulation};
use crate::event::{Dir, EventKind};
use crate::registry::make_peer;
use crate::scenario::Scenario;
use crate::strategy::Strategy;

const SEED: u64 = 23;

/// Loss, duplicates, reordering and jitter both ways, and a restart mid-run, so the taps see
/// every link fate and the peers a restart builds.
fn scenario(strategy: Strategy) -> Scenario {
    let mut s = Scenario { strategy, seed: SEED, ..Scenario::default() };
    s.workload.chunk_kib = 16;
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.loss_percent = 10.0;
        l.duplicate_percent = 5.0;
        l.jitter_ms = 15.0;
    }
    s.script.push(Step::new(SimTime(2_500_000), Action::Restart));
    s
}

fn tapped(s: &Scenario, log: &TapLog) -> Simulation {
    let peers: [Box<dyn Peer>; 2] = Side::BOTH.map(|side| Box::new(log.tap(side, make_peer(s, side))) as Box<dyn Peer>);
    let mut sim = Simulation::with_peers(s.clone(), peers);
    sim.set_peer_factory(|| -> PeerFactory {
        let log = log.clone();
        Box::new(move |s: &Scenario, side: Side| Box::new(log.tap(side, make_peer(s, side))) as Box<dyn Peer>)
    });
    sim
}

const SECS: f64 = 5.0;

#[test]
fn a_tapped_run_has_the_same_events_for_every_strategy() {
    for strategy in Strategy::all() {
        let s = scenario(strategy);
        let mut plain = Simulation::new(s.clone());
        plain.run_for_secs(SECS);
        let log = TapLog::new();
        let mut tap = tapped(&s, &log);
        tap.run_for_secs(SECS);
        assert!(plain.events().len() > 500, "seed {SEED} {strategy:?}: only {} events", plain.events().len());
        assert!(plain.events() == tap.events(), "seed {SEED} {strategy:?}: the tapped run differs");
        assert_eq!(plain.estimates(), tap.estimates(), "seed {SEED} {strategy:?}");
    }
}

#[test]
fn a_tapped_run_leaves_out_the_same_events_under_a_filter() {
    for strategy in Strategy::all() {
        let s = scenario(strategy);
        let mut plain = Simulation::new(s.clone());
        let log = TapLog::new();
        let mut tap = tapped(&s, &log);
        for sim in [&mut plain, &mut tap] {
            sim.set_summary(false);
            sim.set_event_filter(EventFilter::MESSAGE_METRICS);
            sim.fix_flow_off();
            sim.run_for_secs(SECS);
        }
        assert!(plain.events() == tap.events(), "seed {SEED} {strategy:?}: the tapped run differs");
    }
}

#[test]
fn defaulted_methods_are_forwarded() {
    for strategy in Strategy::all() {
        let s = scenario(strategy);
        for side in Side::BOTH {
            let mut plain = make_peer(&s, side);
            let mut tap = Tap::new(make_peer(&s, side), ());
            assert_eq!(plain.max_packets_per_tick(), tap.max_packets_per_tick(), "{strategy:?}");
            for reports in [false, true] {
                assert_eq!(
                    plain.set_reports_packet_beliefs(reports),
                    tap.set_reports_packet_beliefs(reports),
                    "{strategy:?}"
                );
                assert_eq!(
                    plain.set_reports_rtt_samples(reports),
                    tap.set_reports_rtt_samples(reports),
                    "{strategy:?}"
                );
            }
        }
    }
}

#[test]
fn the_log_holds_every_send_and_every_delivery_in_order() {
    for strategy in Strategy::all() {
        let s = scenario(strategy);
        let log = TapLog::new();
        let mut sim = tapped(&s, &log);
        sim.run_for_secs(SECS);
        let tapped = log.take();
        for side in Side::BOTH {
            let sends: Vec<(SimTime, u32, u32)> = sim
                .events()
                .iter()
                .filter_map(|e| match e.kind {
                    EventKind::PacketSent { side: s, seq, bytes, .. } if s == side => Some((e.time, seq, bytes)),
                    _ => None,
                })
                .collect();
            let seen: Vec<(SimTime, u32, u32)> = tapped
                .iter()
                .filter_map(|t| match t.dir {
                    TapDir::Sent { seq } if t.side == side => Some((t.time, seq, t.bytes.len() as u32)),
                    _ => None,
                })
                .collect();
            assert_eq!(sends, seen, "seed {SEED} {strategy:?} {side:?}: sends");
            let delivered: Vec<SimTime> = sim
                .events()
                .iter()
                .filter(|e| matches!(e.kind, EventKind::LinkDelivered { dir, .. } if dir.receiver() == side))
                .map(|e| e.time)
                .collect();
            let received: Vec<SimTime> =
                tapped.iter().filter(|t| t.side == side && t.dir == TapDir::Received).map(|t| t.time).collect();
            assert_eq!(delivered, received, "seed {SEED} {strategy:?} {side:?}: deliveries");
            assert!(!received.is_empty(), "seed {SEED} {strategy:?} {side:?}: nothing arrived");
        }
    }
}

/// Drops everything: the endpoint hears nothing.
struct Deaf;

impl TapHook for Deaf {
    fn received(&mut self, _now: SimTime, _bytes: &[u8]) -> Inject {
        Inject::Drop
    }
}

#[test]
fn a_hook_that_drops_keeps_packets_from_the_endpoint() {
    let s = Scenario { strategy: Strategy::Glenn, seed: SEED, ..Scenario::default() };
    let peers: [Box<dyn Peer>; 2] =
        [Box::new(Tap::new(make_peer(&s, Side::A), Deaf)), Box::new(Tap::new(make_peer(&s, Side::B), ()))];
    let mut sim = Simulation::with_peers(s, peers);
    sim.run_for_secs(2.0);
    let received = |side| {
        sim.events().iter().filter(|e| matches!(e.kind, EventKind::PacketReceived { side: s, .. } if s == side)).count()
    };
    assert_eq!(received(Side::A), 0, "A's tap drops everything");
    assert!(received(Side::B) > 50, "B hears A");
}
