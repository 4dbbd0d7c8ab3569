//! rellikt's flow control on scripted RTT traces, and wired into the simulation driver.

use ackscope_protocol::{EventKind, FlowConfig, FlowControl, LinkConfig, Scenario, Side, SimTime, Simulation};

/// Feeds `rtt_ms` every 100 ms from `from_s` for `seconds`; returns the rate after the last step
/// and the times (s) at which the mode changed.
fn feed(f: &mut FlowControl, from_s: f64, seconds: f64, rtt_ms: f64) -> (f64, Vec<(f64, bool, f64)>) {
    let mut changes = Vec::new();
    let mut rate = f.rate_pps();
    let steps = (seconds * 10.0).round() as u64;
    for k in 0..steps {
        let t = from_s + k as f64 * 0.1;
        rate = f.update(SimTime::from_secs_f64(t), rtt_ms);
        if f.changed() {
            changes.push(((t * 10.0).round() / 10.0, f.is_good(), f.penalty_ms()));
        }
    }
    (rate, changes)
}

fn flow() -> FlowControl {
    FlowControl::new(FlowConfig { enabled: true, ..FlowConfig::default() })
}

#[test]
fn bad_rtt_drops_to_10_pps_at_once_and_good_rtt_returns_to_30_after_the_penalty() {
    let mut f = flow();
    assert_eq!(feed(&mut f, 0.0, 1.0, 100.0), (30.0, vec![]));
    // RTT over 250 ms: bad mode on the very first sample.
    let (rate, changes) = feed(&mut f, 1.0, 0.5, 300.0);
    assert_eq!(rate, 10.0);
    assert_eq!(changes, vec![(1.0, false, 1000.0)], "the first drop is not a relapse");
    // Good again: 1 s of good conditions (the initial penalty) before returning to 30 pps.
    let (rate, changes) = feed(&mut f, 1.5, 0.9, 100.0);
    assert_eq!((rate, changes), (10.0, vec![]));
    let (rate, changes) = feed(&mut f, 2.4, 0.5, 100.0);
    assert_eq!(rate, 30.0);
    assert_eq!(changes, vec![(2.5, true, 1000.0)]);
}

#[test]
fn exactly_the_threshold_counts_as_good() {
    let mut f = flow();
    assert_eq!(feed(&mut f, 0.0, 2.0, 250.0).0, 30.0);
    assert_eq!(feed(&mut f, 2.0, 0.1, 250.1).0, 10.0);
}

#[test]
fn a_bad_sample_restarts_the_good_run_in_bad_mode() {
    let mut f = flow();
    feed(&mut f, 0.0, 0.1, 400.0);
    feed(&mut f, 0.1, 0.8, 100.0);
    // One bad sample 0.9 s into the good run: the 1 s must start over.
    feed(&mut f, 0.9, 0.1, 400.0);
    let (rate, changes) = feed(&mut f, 1.0, 0.9, 100.0);
    assert_eq!((rate, changes), (10.0, vec![]));
    let (rate, _) = feed(&mut f, 1.9, 0.2, 100.0);
    assert_eq!(rate, 30.0);
}

#[test]
fn quick_relapses_double_the_penalty_up_to_60_s() {
    let mut f = flow();
    let mut t = 0.0;
    feed(&mut f, t, 0.1, 400.0);
    t += 0.1;
    let mut penalties = vec![f.penalty_ms()];
    for _ in 0..8 {
        // Good until back in good mode, then bad again 2 s later (within the 10 s window).
        let need = f.penalty_ms() / 1000.0;
        let (_, changes) = feed(&mut f, t, need + 0.2, 100.0);
        assert!(changes.iter().any(|c| c.1), "back to good after {need} s: {changes:?}");
        t += need + 0.2;
        feed(&mut f, t, 1.8, 100.0);
        t += 1.8;
        let (rate, changes) = feed(&mut f, t, 0.1, 400.0);
        t += 0.1;
        assert_eq!(rate, 10.0);
        assert_eq!(changes.len(), 1);
        penalties.push(f.penalty_ms());
    }
    assert_eq!(penalties, vec![1000.0, 2000.0, 4000.0, 8000.0, 16000.0, 32000.0, 60000.0, 60000.0, 60000.0]);
}

#[test]
fn ten_seconds_of_good_mode_resets_the_penalty_to_1_s() {
    let mut f = flow();
    feed(&mut f, 0.0, 0.1, 400.0);
    feed(&mut f, 0.1, 1.1, 100.0); // good again at 1.1 s
    feed(&mut f, 1.2, 0.1, 400.0); // quick relapse: 2 s
    feed(&mut f, 1.3, 2.1, 100.0); // good again at 3.3 s
    assert!(f.is_good());
    assert_eq!(f.penalty_ms(), 2000.0);
    feed(&mut f, 3.4, 9.8, 100.0); // 9.9 s in good mode: not yet
    assert_eq!(f.penalty_ms(), 2000.0);
    feed(&mut f, 13.2, 0.2, 100.0); // 10 s
    assert_eq!(f.penalty_ms(), 1000.0);
    // A drop now is not quick (more than 10 s in good mode): the penalty stays 1 s.
    let (_, changes) = feed(&mut f, 13.4, 0.1, 400.0);
    assert_eq!(changes, vec![(13.4, false, 1000.0)]);
}

#[test]
fn the_driver_follows_each_sides_flow_control_when_enabled() {
    // 150 ms each way: RTT 300 ms > 250 ms, so both sides drop to 10 pps and stay there.
    let mut s = Scenario { seed: 3, ..Scenario::default() };
    s.flow.enabled = true;
    s.link.a_to_b = LinkConfig { latency_ms: 150.0, loss_percent: 0.0, ..LinkConfig::default() };
    s.link.b_to_a = s.link.a_to_b;
    let mut sim = Simulation::new(s.clone());
    sim.run_for_secs(20.0);
    let sent_late = |sim: &Simulation, side: Side| {
        sim.events()
            .iter()
            .filter(|e| e.time >= SimTime::from_secs_f64(10.0))
            .filter(|e| matches!(e.kind, EventKind::PacketSent { side: s, .. } if s == side))
            .count()
    };
    for side in Side::BOTH {
        let n = sent_late(&sim, side);
        assert!((95..=105).contains(&n), "{side:?}: {n} packets in 10 s at 10 pps");
        assert!(!sim.flow(side).is_good());
    }
    let modes: Vec<_> = sim.events().iter().filter(|e| matches!(e.kind, EventKind::FlowMode { .. })).collect();
    assert_eq!(modes.len(), 2, "one switch to bad per side: {modes:?}");

    // 20 ms each way: good all along, 30 pps.
    s.link.a_to_b.latency_ms = 20.0;
    s.link.b_to_a.latency_ms = 20.0;
    let mut sim = Simulation::new(s.clone());
    sim.run_for_secs(20.0);
    for side in Side::BOTH {
        let n = sent_late(&sim, side);
        assert!((295..=305).contains(&n), "{side:?}: {n} packets in 10 s at 30 pps");
    }

    // Disabled: the scenario's 60 pps, whatever the RTT.
    s.flow.enabled = false;
    s.link.a_to_b.latency_ms = 150.0;
    s.link.b_to_a.latency_ms = 150.0;
    let mut sim = Simulation::new(s);
    sim.run_for_secs(20.0);
    assert!((595..=605).contains(&sent_late(&sim, Side::A)));
}

#[test]
fn latency_spikes_in_the_driver_produce_mode_switches_and_recovery() {
    let mut s = Scenario { seed: 4, ..Scenario::default() };
    s.flow.enabled = true;
    s.ack.stats.rtt_smoothing = 0.2;
    let quiet = LinkConfig { latency_ms: 20.0, loss_percent: 0.0, ..LinkConfig::default() };
    s.link.a_to_b = quiet;
    s.link.b_to_a = quiet;
    let mut sim = Simulation::new(s);
    sim.run_for_secs(5.0);
    let spike = LinkConfig { latency_ms: 300.0, ..quiet };
    sim.set_link(ackscope_protocol::Dir::AtoB, spike);
    sim.run_for_secs(5.0);
    assert!(!sim.flow(Side::A).is_good(), "A sees an RTT of about 320 ms, over 250");
    sim.set_link(ackscope_protocol::Dir::AtoB, quiet);
    sim.run_for_secs(10.0);
    assert!(sim.flow(Side::A).is_good(), "A recovers after the penalty");
    let a_modes: Vec<bool> = sim
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::FlowMode { side: Side::A, good, .. } => Some(good),
            _ => None,
        })
        .collect();
    assert!(a_modes.len() >= 2 && !a_modes[0] && *a_modes.last().unwrap(), "{a_modes:?}");
}

#[test]
fn flow_control_can_be_turned_on_and_off_while_running() {
    let mut s = Scenario { send_rate_pps: 60.0, ..Scenario::default() };
    for l in [&mut s.link.a_to_b, &mut s.link.b_to_a] {
        l.latency_ms = 200.0; // RTT 400 ms: "bad" for a 250 ms threshold.
        l.loss_percent = 0.0;
    }
    let mut sim = Simulation::new(s);
    let sent_in = |sim: &mut Simulation, secs: f64| {
        sim.drain_events().for_each(drop);
        sim.run_for_secs(secs);
        sim.events().iter().filter(|e| matches!(e.kind, EventKind::PacketSent { side: Side::A, .. })).count()
    };
    assert!((590..=610).contains(&sent_in(&mut sim, 10.0)), "60 pps without flow control");
    sim.reconfigure(|s| s.flow.enabled = true);
    sent_in(&mut sim, 2.0);
    let bad = sent_in(&mut sim, 10.0);
    assert!((95..=105).contains(&bad), "bad mode sends 10 pps, got {bad} in 10 s");
    sim.reconfigure(|s| s.flow.enabled = false);
    assert!((590..=610).contains(&sent_in(&mut sim, 10.0)), "back to 60 pps");
}
