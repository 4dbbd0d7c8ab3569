//! UE4's part of the issue-15 soak, on virtual time (exact for a seed):
//! `cargo run -p ackscope-protocol --release --example ue4_soak [-- SECONDS]`.
//!
//! 1. About 1,000,000 reliable messages (500 per second each way for 1000 s, plus snapshots) at
//!    20 % loss, 50 ms jitter, 5 % duplicates and 5 % reordering, with 1 and with 16 actors,
//!    `ue4.net_speed_bytes_per_sec` = 1,000,000 (UE4's demo-driver speed, far above what the
//!    traffic needs), then a clean link until everything is acked. Prints lost, duplicated,
//!    corrupted and out-of-order-within-an-actor counts (all must be 0) and the figures.
//! 2. A 700 s one-way outage (A to B dead) after 10 s: UE4 closes the connection; prints who
//!    closed, why, when, and the messages abandoned.

use std::collections::BTreeMap;

use ackscope_protocol::*;

fn soak_scenario(seed: u64, actors: u32) -> Scenario {
    let mut s = Scenario { seed, strategy: Strategy::Ue4, ..Default::default() };
    s.workload.reliable_rate_hz = 500.0;
    s.workload.actors = actors;
    s.ue4.net_speed_bytes_per_sec = 1_000_000.0;
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.loss_percent = 20.0;
        l.jitter_ms = 50.0;
        l.duplicate_percent = 5.0;
        l.reorder_percent = 5.0;
    }
    s
}

/// Folds drained events: the shared message metrics, UE4's summary, and per-actor ordering.
struct Check {
    metrics: MetricsAccumulator,
    ue4: Ue4SummaryAccumulator,
    workloads: [Workload; 2],
    last_per_actor: BTreeMap<(Side, u32), u64>,
    reliable: [std::collections::HashSet<u64>; 2],
    out_of_order_within_actor: u64,
    events: u64,
}

impl Check {
    fn new(s: &Scenario) -> Self {
        Self {
            metrics: MetricsAccumulator::default(),
            ue4: Ue4SummaryAccumulator::default(),
            workloads: [Workload::new(Side::A, s.workload, s.seed), Workload::new(Side::B, s.workload, s.seed)],
            last_per_actor: BTreeMap::new(),
            reliable: Default::default(),
            out_of_order_within_actor: 0,
            events: 0,
        }
    }

    fn take(&mut self, sim: &mut Simulation) {
        for e in sim.drain_events() {
            self.events += 1;
            self.metrics.observe(&e);
            self.ue4.observe(&e);
            match e.kind {
                EventKind::MessageQueued { side, msg, reliable: true, .. } => {
                    self.reliable[side.index()].insert(msg);
                }
                EventKind::MessageDelivered { side, msg } => {
                    let sender = side.other();
                    if self.reliable[sender.index()].contains(&msg) {
                        let actor = self.workloads[sender.index()].actor_of(msg);
                        if let Some(prev) = self.last_per_actor.insert((sender, actor), msg) {
                            if msg <= prev {
                                self.out_of_order_within_actor += 1;
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

fn run_slices(sim: &mut Simulation, check: &mut Check, secs: f64) {
    let end = sim.now().plus_micros((secs * 1e6) as u64);
    while sim.now() < end {
        let next = SimTime((sim.now().0 + 5_000_000).min(end.0));
        sim.run_until(next);
        check.take(sim);
    }
}

fn soak(seed: u64, actors: u32, secs: f64) -> bool {
    let s = soak_scenario(seed, actors);
    let mut check = Check::new(&s);
    let mut sim = Simulation::new(s);
    let wall = std::time::Instant::now();
    run_slices(&mut sim, &mut check, secs);
    let clean = LinkConfig { latency_ms: 50.0, loss_percent: 0.0, ..Default::default() };
    sim.set_link(Dir::AtoB, clean);
    sim.set_link(Dir::BtoA, clean);
    let d = drain(&mut sim, 60.0);
    check.take(&mut sim);
    let m = check.metrics.finish();
    let u = check.ue4.finish();
    let t = sim.totals();
    println!("== soak: seed {seed}, {actors} actor(s), {secs} s, 20% loss, 50 ms jitter, 5% dup, 5% reorder");
    println!(
        "  reliable sent {} delivered {} lost {} duplicated {} corrupted {} out of order within an actor {} (across actors {})",
        m.sent, m.delivered, m.lost, m.duplicated, m.corrupted, check.out_of_order_within_actor, m.out_of_order
    );
    println!(
        "  latency ms p50 {:.1} p95 {:.1} p99 {:.1} max {:.1}; sends/message {:.3}; wire bytes/delivered {:.1}",
        m.latency_ms.p50,
        m.latency_ms.p95,
        m.latency_ms.p99,
        m.latency_ms.max,
        m.sends_per_message,
        m.wire_bytes_per_delivered
    );
    println!(
        "  ue4: naks {} resent {} skip_acks {} channels opened {} closed {} InRec depth actor {} (blocked up to {:.0} ms)",
        u.naks_received,
        u.bunches_resent,
        u.skip_acks,
        u.channels_opened,
        u.channels_closed,
        u.max_inrec_depth_by_kind.actor,
        u.max_inrec_blocked_ms
    );
    println!(
        "  packets sent {} link-dropped {} duplicated {} false acks {}; drained {} in {:.1} s; {} events, {:.1?} wall",
        t.sent,
        t.link_dropped,
        t.duplicated,
        t.false_acks,
        d.drained,
        d.elapsed_secs,
        check.events,
        wall.elapsed()
    );
    let ok = m.lost == 0
        && m.duplicated == 0
        && m.corrupted == 0
        && check.out_of_order_within_actor == 0
        && t.false_acks == 0
        && !u.connection_closed
        && d.drained;
    println!("  {}", if ok { "OK" } else { "FAILED" });
    ok
}

fn outage(seed: u64, actors: u32) {
    let mut s = Scenario { seed, strategy: Strategy::Ue4, ..Default::default() };
    s.workload.actors = actors;
    s.script = vec![LinkStep {
        at_s: 10.0,
        dir: StepDirection::AToB,
        set: LinkPatch { loss_percent: Some(100.0), ..Default::default() },
    }
    .into()];
    let mut check = Check::new(&s);
    let mut sim = Simulation::new(s);
    run_slices(&mut sim, &mut check, 710.0);
    let u = check.ue4.finish();
    let m = check.metrics.finish();
    println!("== 700 s one-way outage (A to B) from 10 s: seed {seed}, {actors} actor(s)");
    println!(
        "  connection closed {} at {:?} s: {:?}; abandoned {} messages, {} refused after close; reliable sent {} delivered {}",
        u.connection_closed,
        u.closed_at_s,
        u.close_reason,
        u.abandoned_messages,
        u.refused_after_close,
        m.sent,
        m.delivered
    );
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1000.0);
    let mut ok = true;
    for actors in [1, 16] {
        ok &= soak(1, actors, secs);
    }
    for actors in [1, 16] {
        outage(1, actors);
    }
    if !ok {
        std::process::exit(1);
    }
}
