//! rellikt's scheme against link ground truth: no false acks, "not acked within 1 s = lost"
//! exactly once per send, foreign packets refused, and the seed's RTT low-pass filter.

use crate::support::*;
use ackscope_protocol::*;

const LIMIT_MS: f64 = 1000.0 + 17.0;

#[test]
fn no_false_acks_and_one_outcome_per_send_under_loss_duplicates_and_reordering() {
    for (j, loss) in [0.0, 10.0, 40.0, 90.0].into_iter().enumerate() {
        let seed = 200 + j as u64;
        let mut s = scenario(Strategy::Rellikt, seed, loss);
        for d in Dir::BOTH {
            let l = s.link.get_mut(d);
            l.burst = BurstLoss { p_percent: 2.0, r_percent: 20.0, loss_in_bad_percent: 100.0 };
            l.duplicate_percent = 5.0;
            l.reorder_percent = 5.0;
        }
        let (a, sim) = run_audited(s, 120.0);
        let what = format!("loss {loss}%");
        assert_truthful(&what, seed, &a, &sim, LIMIT_MS);
        if loss < 50.0 {
            assert!(a.acked() > a.sent() / 3, "{what} (seed {seed}): {}", a.brief());
            for side in Side::BOTH {
                let n = a.undelivered_reliable(side, SimTime::from_secs_f64(100.0));
                assert_eq!(n, 0, "{what} (seed {seed}): {side:?} reliable messages never delivered");
            }
        }
    }
}

#[test]
fn a_packet_is_lost_exactly_when_unacked_for_the_loss_timeout() {
    let seed = 11;
    let mut s = scenario(Strategy::Rellikt, seed, 20.0);
    s.rellikt.loss_timeout_ms = 700.0;
    let mut sim = Simulation::new(s);
    sim.run_for_secs(30.0);
    let mut sent = std::collections::HashMap::new();
    let mut naks = 0;
    for e in sim.events() {
        match e.kind {
            EventKind::PacketSent { side, seq, .. } => {
                sent.insert((side, seq), e.time);
            }
            EventKind::PacketAcked { side, seq } => {
                let t = sent.remove(&(side, seq)).expect("ack without a pending send");
                assert!(e.time.saturating_since(t).as_millis_f64() < 700.0, "seed {seed}: ack after the timeout");
            }
            EventKind::PacketNakked { side, seq } => {
                let t = sent.remove(&(side, seq)).unwrap_or_else(|| panic!("seed {seed}: second outcome for {seq}"));
                let delay = e.time.saturating_since(t).as_millis_f64();
                assert!((700.0..=717.0).contains(&delay), "seed {seed}: nak after {delay} ms, not at the timeout");
                naks += 1;
            }
            _ => {}
        }
    }
    let e = sim.estimates();
    assert!(naks > 0 && (e.loss_percent.unwrap() - e.true_loss_percent).abs() < 3.0, "seed {seed}: {naks} naks, {e:?}");
}

#[test]
fn packets_with_another_protocol_id_are_foreign_and_never_acked() {
    let seed = 12;
    let s = scenario(Strategy::Rellikt, seed, 0.0);
    let other = RelliktConfig { protocol_id: 0x1234_5678, ..s.rellikt };
    let peers: [Box<dyn Peer>; 2] = [
        Box::new(RelliktPeer::new(Side::A, s.rellikt, s.workload, seed)),
        Box::new(RelliktPeer::new(Side::B, other, s.workload, seed)),
    ];
    let mut sim = Simulation::with_peers(s, peers);
    sim.run_for_secs(5.0);
    let t = sim.totals();
    assert_eq!(t.acked, 0, "seed {seed}: {t:?}");
    assert_eq!(t.malformed, t.delivered, "seed {seed}: every delivered packet is foreign: {t:?}");
    assert!(sim.events().iter().all(|e| match e.kind {
        EventKind::Malformed { reason, .. } => reason == MalformedReason::Foreign,
        EventKind::MessageDelivered { .. } | EventKind::PacketReceived { .. } => false,
        _ => true,
    }));
}

#[test]
fn the_seeds_low_pass_filter_follows_an_rtt_step_that_reliable_io_smoothing_lags() {
    let seed = 13;
    let mut ewma = Scenario::default().ack.stats;
    ewma.rtt_filter = RttFilter::Ewma;
    let mut result = Vec::new();
    for stats in [RelliktConfig::default().stats, ewma] {
        let mut s = scenario(Strategy::Rellikt, seed, 0.0);
        s.rellikt.stats = stats;
        for d in Dir::BOTH {
            s.link.get_mut(d).jitter_ms = 0.0;
        }
        let mut sim = Simulation::new(s.clone());
        sim.run_for_secs(5.0);
        for d in Dir::BOTH {
            let mut l = *sim.scenario().link.get(d);
            l.latency_ms = 150.0;
            sim.set_link(d, l);
        }
        sim.run_for_secs(3.0);
        result.push(sim.peer(Side::A).stats().rtt_ms as f64);
    }
    // True RTT went from 100 to 300 ms: rellikt's filter (weight 0.2 per sample) is there within
    // a few dozen samples; reliable.io's 0.0025 has barely moved.
    assert!((result[0] - 300.0).abs() < 5.0, "seed {seed}: rellikt filter at {} ms", result[0]);
    assert!(result[1] < 200.0, "seed {seed}: EWMA at {} ms", result[1]);
}

#[test]
fn with_flow_control_the_seeds_whole_scheme_drops_to_the_bad_rate_when_rtt_rises() {
    // The seed's flow control (flow.rs, applied by the simulation) reads the endpoint's RTT, which
    // for rellikt is the seed's own low-pass filtered RTT.
    let seed = 14;
    let mut s = scenario(Strategy::Rellikt, seed, 0.0);
    s.flow.enabled = true;
    let mut sim = Simulation::new(s.clone());
    sim.run_for_secs(5.0);
    assert!(sim.flow(Side::A).is_good(), "seed {seed}: bad mode at 100 ms RTT");
    for d in Dir::BOTH {
        let mut l = *sim.scenario().link.get(d);
        l.latency_ms = 200.0;
        sim.set_link(d, l);
    }
    sim.run_for_secs(5.0);
    assert!(!sim.flow(Side::A).is_good(), "seed {seed}: still good at 400 ms RTT");
    let switched =
        sim.events().iter().any(|e| matches!(e.kind, EventKind::FlowMode { side: Side::A, good: false, .. }));
    assert!(switched, "seed {seed}: no FlowMode event");
    // At the bad rate send ticks are sparse; timeouts are then caught at the 100 ms stats instants.
    let limit_ms = 1000.0 + 100.0;
    let mut a = Ledger::default();
    a.observe(sim.events());
    assert_truthful("flow", seed, &a, &sim, limit_ms);
}
