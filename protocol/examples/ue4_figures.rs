//! Prints figures of the UE4 strategy on a few links (virtual time, so the numbers are exact
//! for a given seed): `cargo run -p ackscope-protocol --release --example ue4_figures`.
//!
//! The last table is the actors A/B: the same messages spread over 1 or 16 actors, UE4 (one
//! channel per actor) against Glenn (one ordered stream, which ignores actors).

use std::fmt::Write;

use ackscope_protocol::*;

fn run(name: &str, mut s: Scenario, secs: f64) {
    s.strategy = Strategy::Ue4;
    let mut sim = Simulation::new(s);
    let wall = std::time::Instant::now();
    sim.run_for_secs(secs);
    let wall = wall.elapsed();
    let events: Vec<Event> = sim.drain_events().collect();
    let (mut rq, mut rd, mut uq, mut ud, mut spent, mut budgets) = (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    let mut reliable = std::collections::BTreeSet::new();
    for e in &events {
        match e.kind {
            EventKind::MessageQueued { side: Side::A, msg, reliable: r, .. } => {
                if r {
                    rq += 1;
                    reliable.insert(msg);
                } else {
                    uq += 1;
                }
            }
            EventKind::MessageDelivered { side: Side::B, msg } => {
                if reliable.contains(&msg) {
                    rd += 1
                } else {
                    ud += 1
                }
            }
            EventKind::Budget { side: Side::A, spent_bytes, .. } => {
                spent += spent_bytes as u64;
                budgets += 1;
            }
            _ => {}
        }
    }
    let t = sim.totals();
    let summary = Ue4Summary::from_events(&events);
    println!("== {name} ({secs} s virtual, {wall:?} wall)");
    println!("  packets sent {} link-dropped {} false_acks {}", t.sent, t.link_dropped, t.false_acks);
    let budget =
        if budgets == 0 { "unthrottled".to_string() } else { format!("A spent {:.0} B/s", spent as f64 / secs) };
    println!("  A->B reliable {rd}/{rq} delivered, unreliable {ud}/{uq}; {budget}");
    println!("  {summary:?}");
}

/// One row of the actors table: a 120 s run with 60 reliable messages per second each way.
fn actors_row(out: &mut String, strategy: Strategy, actors: u32, loss: f64) {
    let mut s = Scenario { seed: 1, strategy, ..Default::default() };
    s.workload.reliable_rate_hz = 60.0;
    s.workload.actors = actors;
    for d in Dir::BOTH {
        s.link.get_mut(d).loss_percent = loss;
    }
    let mut sim = Simulation::new(s);
    sim.run_for_secs(120.0);
    let _ = drain(&mut sim, 30.0);
    let events: Vec<Event> = sim.drain_events().collect();
    let m = reliable_metrics(&events);
    let hol = if strategy == Strategy::Ue4 {
        let u = Ue4Summary::from_events(&events);
        format!("{:>5} {:>8.0}", u.max_inrec_depth_by_kind.actor, u.max_inrec_blocked_ms)
    } else {
        format!("{:>5} {:>8}", "-", "-")
    };
    let _ = writeln!(
        out,
        "  {:<6} {:>6} {:>5}% {:>8.1} {:>8.1} {:>8.1} {:>7.3} {:>9.1} {hol}",
        strategy.name(),
        actors,
        loss,
        m.latency_ms.p50,
        m.latency_ms.p95,
        m.latency_ms.p99,
        m.sends_per_message,
        m.wire_bytes_per_delivered
    );
}

fn main() {
    let base = Scenario { strategy: Strategy::Ue4, ..Default::default() };
    run("default link (50 ms, 5% loss)", base.clone(), 60.0);

    let mut s = base.clone();
    for l in [&mut s.link.a_to_b, &mut s.link.b_to_a] {
        l.jitter_ms = 15.0;
        l.loss_percent = 0.0;
    }
    run("no loss, 15 ms jitter (one packet per tick)", s.clone(), 60.0);
    s.workload.snapshot_bytes = 2500;
    s.ue4.net_speed_bytes_per_sec = 0.0;
    run("no loss, 15 ms jitter, 2500 B snapshots (several packets per tick reorder across ticks)", s, 60.0);

    let mut s = base.clone();
    for l in [&mut s.link.a_to_b, &mut s.link.b_to_a] {
        l.loss_percent = 10.0;
        l.burst = BurstLoss { p_percent: 2.0, r_percent: 30.0, loss_in_bad_percent: 80.0 };
    }
    run("10% loss + bursts", s, 60.0);

    let mut s = base.clone();
    s.workload.snapshot_rate_hz = 60.0;
    s.workload.snapshot_bytes = 200;
    s.ue4.net_speed_bytes_per_sec = 3000.0;
    run("saturated: 3000 B/s budget, 60 x 200 B snapshots", s, 60.0);

    let mut s = base;
    s.send_rate_pps = 250.0;
    s.ue4.initial_packet_seq = 16_000;
    s.workload.snapshot_rate_hz = 250.0;
    s.ue4.net_speed_bytes_per_sec = 0.0;
    run("wrap: 250 pps from seq 16000", s, 140.0);

    print!("{}", actors_table());
}

/// Glenn's one ordered stream beside UE4 with 1 and 16 actor channels (README quotes it; a test
/// checks the quote).
pub fn actors_table() -> String {
    let mut out = String::new();
    let _ = writeln!(out, "== actors: 120 s, 60 reliable/s each way, 50 ms latency, seed 1");
    let _ = writeln!(
        out,
        "  {:<6} {:>6} {:>6} {:>8} {:>8} {:>8} {:>7} {:>9} {:>5} {:>8}",
        "", "actors", "loss", "p50 ms", "p95 ms", "p99 ms", "sends", "wire B", "InRec", "blocked"
    );
    for loss in [5.0, 20.0] {
        for (strategy, actors) in [(Strategy::Glenn, 1), (Strategy::Ue4, 1), (Strategy::Ue4, 16)] {
            actors_row(&mut out, strategy, actors, loss);
        }
    }
    out
}
