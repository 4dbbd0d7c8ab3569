//! Scenarios and run helpers: each runs on virtual time in slices, feeding a [`Ledger`] and
//! discarding events as it goes so long soaks keep memory flat.

use ackscope_protocol::*;

use super::Ledger;

/// Runs `secs` in steps of at most 5 s, feeding the ledger.
pub fn run(sim: &mut Simulation, secs: f64, ledger: &mut Ledger) {
    let steps = (secs / 5.0).ceil() as usize;
    for _ in 0..steps {
        sim.run_for_secs(secs / steps as f64);
        let ev: Vec<Event> = sim.drain_events().collect();
        ledger.observe(&ev);
    }
}

/// Runs `secs` in 0.1 s steps from a new simulation, feeding a new ledger.
pub fn run_audited(s: Scenario, secs: f64) -> (Ledger, Simulation) {
    let mut sim = Simulation::new(s);
    let mut ledger = Ledger::default();
    let steps = (secs * 10.0).ceil() as u64;
    for _ in 0..steps {
        sim.run_for_secs(0.1);
        let ev: Vec<Event> = sim.drain_events().collect();
        ledger.observe(&ev);
    }
    (ledger, sim)
}

// ----- UE4 -----

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

// ----- delivery notification (dnm, rellikt) -----

/// A scenario for a delivery-notification strategy over a lossy, jittery link. Ticks are exact
/// (no timer lateness): the tests bound every outcome to its timeout plus one tick interval.
pub fn scenario(strategy: Strategy, seed: u64, loss: f64) -> Scenario {
    let mut s = Scenario { seed, strategy, send_rate_pps: 60.0, tick_jitter_ms: 0.0, ..Scenario::default() };
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.loss_percent = loss;
        l.latency_ms = 50.0;
        l.jitter_ms = 20.0;
    }
    s
}

/// Ground-truth checks every delivery-notification run must pass; `limit_ms` bounds how long
/// after sending an outcome may come.
pub fn assert_truthful(what: &str, seed: u64, a: &Ledger, sim: &Simulation, limit_ms: f64) {
    let t = sim.totals();
    let ctx = format!("{what} (seed {seed}): {t:?}");
    assert_eq!(t.false_acks, 0, "{ctx}: acks for packets the link never delivered");
    assert_eq!(t.duplicate_acks, 0, "{ctx}: a send acked twice");
    assert_eq!(a.false_acks(), 0, "{ctx}: audit found false acks");
    assert_eq!(a.double_outcomes(), 0, "{ctx}: a send got two outcomes (ack and nak, or twice)");
    let late = a.late_outcomes(limit_ms);
    assert_eq!(late, 0, "{ctx}: outcomes later than {limit_ms} ms (max {})", a.max_outcome_delay_ms());
    assert_eq!(a.unresolved(sim.now(), limit_ms), 0, "{ctx}: sends never resolved");
    assert_eq!(a.double_deliveries(), 0, "{ctx}: a message delivered twice");
    assert_eq!(a.false_msg_acks, 0, "{ctx}: a message acked before the peer had it");
    assert_eq!(a.malformed(), 0, "{ctx}: our own packets were malformed");
    assert_eq!(a.acked() + a.nakked(), t.acked + a.nakked(), "{ctx}");
}

// ----- Glenn -----

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

/// What a run and its drain produced, from ground truth.
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

/// Runs `secs`, then drains for at most `drain_secs`; `check` sees every event in order.
pub fn run_drained(scenario: Scenario, secs: f64, drain_secs: f64, mut check: impl FnMut(&Event)) -> RunResult {
    let seed = scenario.seed;
    let mut sim = Simulation::new(scenario);
    run_sim_drained(&mut sim, seed, secs, drain_secs, &mut check)
}

/// Like [`run_drained`] on an existing simulation (after bursts or reconfiguration).
pub fn run_sim_drained(
    sim: &mut Simulation,
    seed: u64,
    secs: f64,
    drain_secs: f64,
    check: &mut dyn FnMut(&Event),
) -> RunResult {
    let mut ledger = Ledger::default();
    let mut consume = |sim: &mut Simulation| {
        for e in sim.drain_events() {
            ledger.observe_event(&e);
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
    let per_side = |f: &dyn Fn(Side) -> Vec<u64>| [f(Side::A), f(Side::B)];
    RunResult {
        seed,
        metrics: ledger.metrics.finish(),
        queued: per_side(&|s| ledger.reliable_queue_order(s)),
        delivered: per_side(&|s| ledger.reliable_delivery_order(s)),
        totals: sim.totals(),
        drain,
        desyncs: ledger.desyncs,
    }
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

/// A rough link both ways: 37 ms (off the 60 pps tick grid), 6 ms of jitter, 5 % loss and 2 %
/// duplicates.
pub fn jittery_off_grid_link(s: &mut Scenario) {
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.latency_ms = 37.0;
        l.jitter_ms = 6.0;
        l.loss_percent = 5.0;
        l.duplicate_percent = 2.0;
    }
}
