//! The delivery notification manager against link ground truth: no false acks, one outcome per
//! send, outcomes within the timeout, reliable messages delivered once.

use crate::support::*;
use ackscope_protocol::*;

/// Timeouts are checked at every send tick (60 pps) and stats instant: at most one tick late.
const LIMIT_MS: f64 = 1000.0 + 17.0;

fn hostile(s: &mut Scenario) {
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.burst = BurstLoss { p_percent: 2.0, r_percent: 20.0, loss_in_bad_percent: 100.0 };
        l.duplicate_percent = 5.0;
        l.reorder_percent = 5.0;
    }
}

#[test]
fn no_false_acks_and_one_outcome_per_send_under_loss_duplicates_and_reordering() {
    for (i, repeat) in [1u32, 3].into_iter().enumerate() {
        for (j, loss) in [0.0, 10.0, 40.0].into_iter().enumerate() {
            let seed = 100 + (i * 10 + j) as u64;
            let mut s = scenario(Strategy::Dnm, seed, loss);
            s.dnm.ack_repeat = repeat;
            hostile(&mut s);
            let (a, sim) = run_audited(s, 120.0);
            let what = format!("ack_repeat {repeat}, loss {loss}%");
            assert_truthful(&what, seed, &a, &sim, LIMIT_MS);
            assert!(a.acked() > a.sent() / 8, "{what} (seed {seed}): too few acks {}", a.brief());
            assert!(sim.totals().duplicated > 0 && sim.totals().link_dropped > 0);
            for side in Side::BOTH {
                let n = a.undelivered_reliable(side, SimTime::from_secs_f64(100.0));
                assert_eq!(n, 0, "{what} (seed {seed}): {side:?} reliable messages never delivered");
            }
        }
    }
}

#[test]
fn every_packet_times_out_exactly_once_when_the_ack_path_is_dead() {
    let seed = 7;
    let mut s = scenario(Strategy::Dnm, seed, 0.0);
    s.link.b_to_a.loss_percent = 100.0;
    let mut sim = Simulation::new(s);
    sim.run_for_secs(20.0);
    let mut sent = std::collections::HashMap::new();
    let mut naks = 0;
    for e in sim.events() {
        match e.kind {
            EventKind::PacketSent { side: Side::A, seq, .. } => {
                sent.insert(seq, e.time);
            }
            EventKind::PacketAcked { side: Side::A, .. } => panic!("seed {seed}: ack over a dead path"),
            EventKind::PacketNakked { side: Side::A, seq } => {
                let t = sent.remove(&seq).unwrap_or_else(|| panic!("seed {seed}: nak for {seq} twice"));
                let delay = e.time.saturating_since(t).as_millis_f64();
                assert!((1000.0..=LIMIT_MS).contains(&delay), "seed {seed}: nak after {delay} ms");
                naks += 1;
            }
            _ => {}
        }
    }
    // Everything older than the timeout was nakked; the last second is still in flight.
    assert!(sent.len() <= 61, "seed {seed}: {} sends without an outcome", sent.len());
    assert!(naks >= 19 * 60 - 2, "seed {seed}: {naks} naks");
    assert_eq!(sim.peer(Side::A).stats().loss_percent, 100.0);
}

#[test]
fn loss_estimate_matches_true_loss_on_a_fifo_link_with_repeated_acks() {
    let seed = 31;
    let mut s = scenario(Strategy::Dnm, seed, 10.0);
    s.dnm.ack_repeat = 3;
    for d in Dir::BOTH {
        s.link.get_mut(d).jitter_reorders = false;
    }
    let (a, sim) = run_audited(s, 120.0);
    assert_truthful("fifo", seed, &a, &sim, LIMIT_MS);
    let e = sim.estimates();
    assert!((e.loss_percent.unwrap() - e.true_loss_percent).abs() < 2.5, "seed {seed}: {e:?}");
    // The estimate includes the ack's wait for the peer's next packet: up to one 60 pps tick.
    assert!((e.rtt_ms.unwrap() - e.true_rtt_ms.unwrap()).abs() < 1000.0 / 60.0, "seed {seed}: {e:?}");
}

#[test]
fn acks_resume_after_a_one_way_outage_past_half_the_sequence_space() {
    let seed = 5;
    let mut s = scenario(Strategy::Dnm, seed, 1.0);
    s.send_rate_pps = 4000.0;
    s.workload.snapshot_rate_hz = 0.0;
    s.workload.reliable_rate_hz = 0.0;
    for d in Dir::BOTH {
        // At 4000 pps any jitter reorders nearly everything, and the seed refuses older packets.
        s.link.get_mut(d).jitter_reorders = false;
    }
    let mut sim = Simulation::new(s.clone());
    let mut a = Ledger::default();
    let step = |sim: &mut Simulation, secs: f64, a: &mut Ledger| {
        sim.run_for_secs(secs);
        let ev: Vec<Event> = sim.drain_events().collect();
        a.observe(&ev);
    };
    step(&mut sim, 2.0, &mut a);
    let mut dead = s.link.a_to_b;
    dead.loss_percent = 100.0;
    sim.set_link(Dir::AtoB, dead);
    // 48,000 packets from A: its sequence is then more than half the space (32768) past what B
    // expects, so without `receive_reset_ms` B would take every new packet for an old one.
    step(&mut sim, 12.0, &mut a);
    sim.set_link(Dir::AtoB, s.link.a_to_b);
    let acked_before = a.acked();
    step(&mut sim, 3.0, &mut a);
    assert_truthful("outage", seed, &a, &sim, LIMIT_MS);
    assert!(
        a.acked() > acked_before + 2 * 4000,
        "seed {seed}: acks did not resume {} (before {acked_before})",
        a.brief()
    );
}

/// Prints outcome figures for the report: `cargo test -p ackscope-protocol --release --test
/// dnm_soak figures -- --nocapture`.
#[test]
fn figures_outcomes_and_loss_estimates_against_truth() {
    for strategy in [Strategy::Dnm, Strategy::Rellikt] {
        for (repeat, reorders) in [(1, true), (3, true), (1, false), (3, false)] {
            if strategy == Strategy::Rellikt && repeat == 3 {
                continue;
            }
            let seed = 61;
            let mut s = scenario(strategy, seed, 10.0);
            s.dnm.ack_repeat = repeat;
            for d in Dir::BOTH {
                s.link.get_mut(d).jitter_reorders = reorders;
            }
            let (a, sim) = run_audited(s, 120.0);
            assert_truthful("figures", seed, &a, &sim, LIMIT_MS);
            let e = sim.estimates();
            println!(
                "{} ack_repeat {repeat} jitter_reorders {reorders}: {} | loss estimate {:.1?}% vs true {:.1}%, rtt {:.1?} vs {:.1?} ms",
                strategy.name(),
                a.brief(),
                e.loss_percent,
                e.true_loss_percent,
                e.rtt_ms,
                e.true_rtt_ms
            );
        }
    }
}
