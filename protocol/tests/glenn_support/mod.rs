//! Shared driver for the glenn_* tests: runs a scenario on virtual time in slices, feeds every
//! event to the metrics accumulator and to the test's own checks, then drains.
#![allow(dead_code)]

use ackscope_protocol::*;

/// What a run produced, from ground truth.
pub struct RunResult {
    pub seed: u64,
    pub metrics: ReliableMetrics,
    /// Reliable workload ids in queue order, per sending side.
    pub queued: [Vec<u64>; 2],
    /// Reliable workload ids in delivery order, per sending side.
    pub delivered: [Vec<u64>; 2],
    pub totals: PacketTotals,
    pub drain: DrainOutcome,
    pub desyncs: u64,
}

/// A Glenn scenario with a reliable-only workload on a clean link.
pub fn glenn_scenario(seed: u64) -> Scenario {
    let mut s = Scenario { seed, strategy: Strategy::Glenn, send_rate_pps: 60.0, ..Scenario::default() };
    s.stats_interval_ms = 1000.0;
    s.workload.snapshot_rate_hz = 0.0;
    s.workload.reliable_rate_hz = 0.0;
    for d in Dir::BOTH {
        s.link.get_mut(d).loss_percent = 0.0;
    }
    s
}

/// Runs `secs`, then drains for at most `drain_secs`; `check` sees every event in order.
pub fn run(scenario: Scenario, secs: f64, drain_secs: f64, mut check: impl FnMut(&Event)) -> RunResult {
    let seed = scenario.seed;
    let mut sim = Simulation::new(scenario);
    run_sim(&mut sim, seed, secs, drain_secs, &mut check)
}

/// Like [`run`] on an existing simulation (after bursts or reconfiguration).
pub fn run_sim(
    sim: &mut Simulation,
    seed: u64,
    secs: f64,
    drain_secs: f64,
    check: &mut dyn FnMut(&Event),
) -> RunResult {
    let mut acc = MetricsAccumulator::new();
    let mut queued: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    let mut delivered: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    let mut desyncs = 0;
    let mut reliable: [Vec<bool>; 2] = [Vec::new(), Vec::new()];
    let mut consume = |sim: &mut Simulation| {
        for e in sim.drain_events() {
            acc.observe(&e);
            match e.kind {
                EventKind::MessageQueued { side, msg, reliable: r, .. } => {
                    let v = &mut reliable[side.index()];
                    if v.len() <= msg as usize {
                        v.resize(msg as usize + 1, false);
                    }
                    v[msg as usize] = r;
                    if r {
                        queued[side.index()].push(msg);
                    }
                }
                EventKind::MessageDelivered { side, msg } => {
                    let sender = side.other();
                    if reliable[sender.index()].get(msg as usize).copied().unwrap_or(false) {
                        delivered[sender.index()].push(msg);
                    }
                }
                EventKind::MessageDesync { .. } => desyncs += 1,
                _ => {}
            }
            check(&e);
        }
    };
    let end = sim.now().plus_micros((secs * 1e6) as u64);
    while sim.now() < end {
        let next = SimTime((sim.now().0 + 250_000).min(end.0));
        sim.run_until(next);
        consume(sim);
    }
    let drain = drain(sim, drain_secs);
    consume(sim);
    RunResult { seed, metrics: acc.finish(), queued, delivered, totals: sim.totals(), drain, desyncs }
}

impl RunResult {
    /// Every reliable message delivered exactly once, in order, intact; no false acks.
    pub fn assert_exactly_once_in_order(&self, what: &str) {
        let (seed, m) = (self.seed, &self.metrics);
        assert!(self.drain.drained, "{what} (seed {seed}): did not drain: {:?} {m:?}", self.drain);
        for side in Side::BOTH {
            let (q, d) = (&self.queued[side.index()], &self.delivered[side.index()]);
            if q != d {
                let first = q.iter().zip(d).position(|(a, b)| a != b).unwrap_or(q.len().min(d.len()));
                panic!(
                    "{what} (seed {seed}): {side:?}'s reliable messages: {} queued, {} delivered, first difference at {first}",
                    q.len(),
                    d.len()
                );
            }
        }
        assert_eq!((m.lost, m.duplicated, m.out_of_order, m.corrupted), (0, 0, 0, 0), "{what} (seed {seed}): {m:?}");
        assert_eq!(m.delivered, m.sent, "{what} (seed {seed}): {m:?}");
        assert_eq!(self.totals.false_acks, 0, "{what} (seed {seed}): {:?}", self.totals);
        assert_eq!(self.desyncs, 0, "{what} (seed {seed}): desync");
    }
}
