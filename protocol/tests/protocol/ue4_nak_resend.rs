//! Resends are driven by Naks only: the reliable bunches of a lost packet go out again in the
//! first flush after its Nak arrives, never before, and nothing is resent on a timer.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::*;
use ackscope_protocol::*;

fn clean(latency_ms: f64) -> LinkConfig {
    LinkConfig { latency_ms, loss_percent: 0.0, ..Default::default() }
}

fn scenario(seed: u64, latency_ms: f64, reliable_hz: f64) -> Scenario {
    let mut s = ue4_scenario(seed);
    s.link.a_to_b = clean(latency_ms);
    s.link.b_to_a = clean(latency_ms);
    s.workload.reliable_rate_hz = reliable_hz;
    s
}

/// A's view of a run, from its events.
#[derive(Default)]
struct SenderLog {
    /// (time, seq) of every packet A put on the wire, in order.
    packets: Vec<(SimTime, u32)>,
    /// seq -> (msg, kind) bunches in it. Sequences do not wrap in these short runs.
    contents: BTreeMap<u32, Vec<(u64, SendKind)>>,
    /// (time, msg, seq) of every NakResend.
    resends: Vec<(SimTime, u64, u32)>,
    /// seq -> time its Nak arrived.
    naks: BTreeMap<u32, SimTime>,
    reliable: BTreeSet<u64>,
}

impl SenderLog {
    fn new(events: &[Event]) -> Self {
        let mut l = SenderLog::default();
        for e in events {
            match e.kind {
                EventKind::PacketSent { side: Side::A, seq, .. } => l.packets.push((e.time, seq)),
                EventKind::MessageSent { side: Side::A, msg, seq, kind } => {
                    l.contents.entry(seq).or_default().push((msg, kind));
                    if kind == SendKind::NakResend {
                        l.resends.push((e.time, msg, seq));
                    }
                }
                EventKind::PacketNakked { side: Side::A, seq } => {
                    assert!(l.naks.insert(seq, e.time).is_none(), "packet {seq} nakked twice");
                }
                EventKind::MessageQueued { side: Side::A, msg, reliable: true, .. } => {
                    l.reliable.insert(msg);
                }
                _ => {}
            }
        }
        l
    }

    /// The first packet A sent at or after `t`.
    fn first_packet_at_or_after(&self, t: SimTime) -> (SimTime, u32) {
        *self.packets.iter().find(|(pt, _)| *pt >= t).expect("a packet after the nak")
    }

    /// Reliable messages whose bunches packet `seq` carried.
    fn reliable_in(&self, seq: u32) -> Vec<u64> {
        self.contents
            .get(&seq)
            .map_or(Vec::new(), |v| v.iter().filter(|(m, _)| self.reliable.contains(m)).map(|(m, _)| *m).collect())
    }
}

#[test]
fn nak_resends_the_lost_packets_reliable_bunches_in_the_next_flush_and_nothing_else() {
    let seed = 21;
    let s = scenario(seed, 50.0, 60.0);
    let dropped: BTreeSet<u16> = [30, 31, 55, 90, 200, 201, 202, 350].into_iter().collect();
    let d2 = dropped.clone();
    let b = filtered(Box::new(ue4_peer(&s, Side::B)), move |_, seq| d2.contains(&seq));
    let a = ue4_peer(&s, Side::A);
    let mut sim = Simulation::with_peers(s, [Box::new(a), Box::new(b)]);
    sim.run_for_secs(10.0);
    let events: Vec<Event> = sim.drain_events().collect();
    let log = SenderLog::new(&events);
    let mut ledger = Ledger::default();
    ledger.observe(&events);
    ledger.check_reliable_exactly_once_in_order(Side::A, SimTime::from_secs_f64(9.0), seed);

    assert_eq!(
        log.naks.keys().copied().collect::<BTreeSet<u32>>(),
        dropped.iter().map(|s| *s as u32).collect(),
        "seed {seed}: exactly the dropped packets are nakked"
    );
    let mut expected = 0;
    for (&p, &nak_at) in &log.naks {
        let lost = log.reliable_in(p);
        expected += lost.len();
        let (flush_at, next_seq) = log.first_packet_at_or_after(nak_at);
        for m in lost {
            let r: Vec<_> = log.resends.iter().filter(|(_, msg, _)| *msg == m).collect();
            assert!(!r.is_empty(), "seed {seed}: msg {m} lost in packet {p} never resent");
            let (t, _, seq) = *r[0];
            assert!(t >= nak_at, "seed {seed}: msg {m} resent at {t:?} before the nak at {nak_at:?}");
            assert_eq!((t, seq), (flush_at, next_seq), "seed {seed}: msg {m} not in the first flush after the nak");
        }
        for (m, _) in log.contents.get(&p).into_iter().flatten() {
            if !log.reliable.contains(m) {
                assert!(log.resends.iter().all(|(_, msg, _)| msg != m), "seed {seed}: unreliable {m} resent");
            }
        }
    }
    assert!(expected >= 4, "seed {seed}: the dropped packets carried only {expected} reliable bunches");
    // Resends of resends (a resend packet that was itself dropped) are the only extras.
    let resent_twice = log.resends.len() - expected;
    let dropped_resend_packets: usize = log
        .resends
        .iter()
        .map(|(_, _, s)| *s)
        .collect::<BTreeSet<_>>()
        .iter()
        .filter(|s| log.naks.contains_key(s))
        .count();
    assert!(
        resent_twice == 0 || dropped_resend_packets > 0,
        "seed {seed}: {} resends for {expected} lost",
        log.resends.len()
    );
    assert_eq!(sim.totals().false_acks, 0, "seed {seed}");
}

#[test]
fn without_loss_nothing_is_resent_even_when_acks_take_a_second() {
    let seed = 22;
    let s = scenario(seed, 500.0, 30.0);
    let mut sim = Simulation::new(s);
    let mut ledger = Ledger::default();
    run(&mut sim, 30.0, &mut ledger);
    assert_eq!(ledger.nak_resends, 0, "seed {seed}: a resend without any Nak means a timer");
    ledger.check_reliable_exactly_once_in_order(Side::A, SimTime::from_secs_f64(28.0), seed);
    ledger.check_reliable_exactly_once_in_order(Side::B, SimTime::from_secs_f64(28.0), seed);
}

/// B loses one of A's packets while every packet from B to A is lost for a second: A cannot
/// learn of the loss, so it resends nothing and B's channel stays blocked until B's history
/// gets through after the outage.
#[test]
fn lost_nak_is_recovered_only_from_later_history() {
    let seed = 23;
    let s = scenario(seed, 30.0, 60.0);
    let (outage_from, outage_to) = (SimTime::from_secs_f64(1.0), SimTime::from_secs_f64(2.0));
    let mut lost_one = false;
    let b = filtered(Box::new(ue4_peer(&s, Side::B)), move |now, _| {
        let drop = !lost_one && now >= SimTime::from_secs_f64(1.2);
        lost_one |= drop;
        drop
    });
    let a = filtered(Box::new(ue4_peer(&s, Side::A)), move |now, _| now >= outage_from && now < outage_to);
    let mut sim = Simulation::with_peers(s, [Box::new(a), Box::new(b)]);
    sim.run_for_secs(5.0);
    let events: Vec<Event> = sim.drain_events().collect();
    let log = SenderLog::new(&events);
    assert_eq!(log.naks.len(), 1, "seed {seed}: {:?}", log.naks);
    let (&p, &nak_at) = log.naks.iter().next().unwrap();
    assert!(nak_at >= outage_to, "seed {seed}: the Nak for {p} cannot cross the outage ({nak_at:?})");
    assert!(log.resends.iter().all(|(t, _, _)| *t >= nak_at), "seed {seed}: resent before the Nak");
    assert!(!log.reliable_in(p).is_empty(), "seed {seed}: lost packet {p} carried no reliable bunch");
    assert_eq!(log.resends.len(), log.reliable_in(p).len(), "seed {seed}: resends beyond the lost packet's bunches");
    let summary = Ue4Summary::from_events(&events);
    assert!(summary.max_inrec_depth >= 30, "seed {seed}: {summary:?}");
    assert!(
        summary.max_inrec_blocked_ms >= 750.0,
        "seed {seed}: the gap should block for most of the outage: {summary:?}"
    );
    let mut ledger = Ledger::default();
    ledger.observe(&events);
    ledger.check_reliable_exactly_once_in_order(Side::A, SimTime::from_secs_f64(4.0), seed);
}

/// Past 256 unreported packets the history cannot say what happened, so the sender treats the
/// excess as lost: packets that did arrive are nakked and their bunches resent as duplicates,
/// which the receiver drops by `ChSequence`.
#[test]
fn outage_longer_than_the_history_naks_packets_that_arrived() {
    let seed = 24;
    let mut s = scenario(seed, 30.0, 15.0);
    // A snapshot every tick, so A sends about 360 packets during the outage.
    s.workload.snapshot_rate_hz = 60.0;
    let (from, to) = (SimTime::from_secs_f64(1.0), SimTime::from_secs_f64(7.0));
    let a = filtered(Box::new(ue4_peer(&s, Side::A)), move |now, _| now >= from && now < to);
    let b = ue4_peer(&s, Side::B);
    let mut sim = Simulation::with_peers(s, [Box::new(a), Box::new(b)]);
    sim.run_for_secs(10.0);
    let events: Vec<Event> = sim.drain_events().collect();
    let log = SenderLog::new(&events);
    // The A->B link is clean, so every Nak A receives is about a packet B did get.
    assert!(log.naks.len() > 50, "seed {seed}: {} naks", log.naks.len());
    assert!(!log.resends.is_empty(), "seed {seed}: false Naks must cause resends");
    assert_eq!(sim.totals().link_dropped, 0, "seed {seed}");
    assert_eq!(sim.totals().false_acks, 0, "seed {seed}");
    let mut ledger = Ledger::default();
    ledger.observe(&events);
    assert!(ledger.closed.is_empty(), "seed {seed}: {:?}", ledger.closed);
    ledger.check_reliable_exactly_once_in_order(Side::A, SimTime::from_secs_f64(9.0), seed);
}
