//! Flow control reads a fast RTT whatever the strategy: an RTT step from 100 to 400 ms switches to
//! bad within 1 s, and the step back returns to good within the penalty plus 1 s.

use ackscope_protocol::*;

const STEP_UP_S: f64 = 10.0;
const STEP_DOWN_S: f64 = 20.0;

fn scenario(strategy: Strategy, seed: u64) -> Scenario {
    let mut s = Scenario { seed, strategy, ..Scenario::default() };
    s.flow.enabled = true;
    // One-way transfers: a chunk large enough that its slices are sent once per RTT (Karn's rule
    // keeps the RTT of resent slices out), fragmented blocks small enough to be acked every RTT.
    s.workload.chunk_kib = if strategy == Strategy::Chunks { 256 } else { 4 };
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.latency_ms = 50.0;
        l.loss_percent = 0.0;
    }
    let latency = |at_s, ms| LinkStep {
        at_s,
        dir: StepDirection::Both,
        set: LinkPatch { latency_ms: Some(ms), ..LinkPatch::default() },
    };
    s.script = vec![latency(STEP_UP_S, 200.0).into(), latency(STEP_DOWN_S, 50.0).into()];
    s
}

/// Each side's mode switches: (time s, good, penalty s).
fn switches(sim: &Simulation, side: Side) -> Vec<(f64, bool, f64)> {
    sim.events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::FlowMode { side: s, good, penalty_ms } if s == side => {
                Some((e.time.as_secs_f64(), good, penalty_ms as f64 / 1000.0))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn an_rtt_step_switches_flow_control_promptly_for_every_strategy() {
    let mut failures = Vec::new();
    for strategy in Strategy::all() {
        let seed = 5;
        let mut sim = Simulation::new(scenario(strategy, seed));
        sim.run_for_secs(30.0);
        // The receiving end of a one-way transfer measures no RTT: its flow control stays good.
        let sides: &[Side] = if registry::info(strategy).has_chunks { &[Side::A] } else { &Side::BOTH };
        for &side in sides {
            let sw = switches(&sim, side);
            let ctx = format!("{strategy:?} side {side:?} (seed {seed}): {sw:?}");
            let Some(&(bad_at, _, penalty_s)) = sw.iter().find(|s| !s.1) else {
                failures.push(format!("{ctx}: never switched to bad"));
                continue;
            };
            if !(STEP_UP_S..=STEP_UP_S + 1.0).contains(&bad_at) {
                failures.push(format!("{ctx}: bad at {bad_at:.2} s, step at {STEP_UP_S} s"));
            }
            match sw.iter().find(|s| s.1 && s.0 > bad_at) {
                Some(&(good_at, _, _)) if (STEP_DOWN_S..=STEP_DOWN_S + penalty_s + 1.0).contains(&good_at) => {}
                other => failures.push(format!("{ctx}: good again at {other:?}, step back at {STEP_DOWN_S} s")),
            }
        }
        if registry::info(strategy).has_chunks {
            assert!(switches(&sim, Side::B).is_empty(), "{strategy:?}: the receiver has no RTT to react to");
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn flow_control_keeps_its_filter_warm_while_off() {
    // 200 ms each way from the start, flow control off: turned on later, it reads the RTT at once.
    let mut s = scenario(Strategy::Glenn, 2);
    s.flow.enabled = false;
    s.script.clear();
    for d in Dir::BOTH {
        s.link.get_mut(d).latency_ms = 200.0;
    }
    let mut sim = Simulation::new(s);
    sim.run_for_secs(5.0);
    assert!((sim.flow(Side::A).rtt_ms() - 400.0).abs() < 30.0, "{}", sim.flow(Side::A).rtt_ms());
    sim.reconfigure(|s| s.flow.enabled = true);
    sim.run_for_secs(0.2);
    assert!(!sim.flow(Side::A).is_good(), "bad within one stats interval of being turned on");
}
