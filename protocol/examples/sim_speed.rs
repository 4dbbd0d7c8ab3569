//! How fast the default scenario simulates when no event is kept: the events of each simulated
//! second are folded into the message metrics, then dropped, as `ackscope sweep` does (which also
//! turns the simulation's own summary off, records only the events the metrics read,
//! `EventFilter::MESSAGE_METRICS`, and declares flow control fixed off, `fix_flow_off`). The
//! figure of a `run` (summary folded, every event built) is printed beside. Prints simulated
//! seconds per second of wall time and of this thread's CPU time (the CPU figure holds on a
//! machine busy with other work, the wall figure does not), packets, events and µs per packet; a
//! steady loop to run under `perf record` or `valgrind --tool=callgrind` as well.
//!
//! Run: `cargo run --release -p ackscope-protocol --example sim_speed [-- SECONDS [ROUNDS [0|1]]]`

use std::time::Instant;

use ackscope_protocol::{EventFilter, EventKind, MetricsAccumulator, Scenario, SimTime, Simulation};

/// This thread's CPU time in seconds (Linux: `/proc/thread-self/schedstat`), if readable.
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(text.split_whitespace().next()?.parse::<f64>().ok()? / 1e9)
}

/// One run of `seconds` in one-second batches; returns (wall seconds, CPU seconds, packets
/// sent, events).
fn run(seconds: u64, summary: bool) -> (f64, f64, u64, u64) {
    let (start, cpu_start) = (Instant::now(), cpu_seconds());
    let mut sim = Simulation::new(Scenario::default());
    sim.set_summary(summary);
    if !summary {
        // What a sweep records: only the events the message metrics read.
        sim.set_event_filter(EventFilter::MESSAGE_METRICS);
        // A sweep's runs keep flow control off when their changes do not touch it.
        sim.fix_flow_off();
    }
    let mut sent = 0u64;
    let mut acc = MetricsAccumulator::new();
    let mut events = 0u64;
    for s in 1..=seconds {
        sim.run_until(SimTime(s * 1_000_000));
        for e in sim.drain_events() {
            events += 1;
            if matches!(e.kind, EventKind::PacketSent { .. }) {
                sent += 1;
            }
            acc.observe(&e);
        }
    }
    let m = acc.finish();
    assert!(m.delivered > 0);
    let wall = start.elapsed().as_secs_f64();
    let cpu = cpu_start.zip(cpu_seconds()).map_or(wall, |(a, b)| b - a);
    (wall, cpu, sent, events)
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u64>().expect("a whole number"));
    let seconds = args.next().unwrap_or(600);
    let rounds = args.next().unwrap_or(5);
    // A third argument 0 or 1 runs only the summary off (0) or on (1), for a profiler.
    let only = args.next();
    for (summary, what) in [(false, "summary off (sweep)"), (true, "summary folded (run)")] {
        if only.is_some_and(|o| (o == 1) != summary) {
            continue;
        }
        let (mut wall, mut cpu) = (f64::INFINITY, f64::INFINITY);
        let (mut packets, mut events) = (0, 0);
        for _ in 0..rounds {
            let (w, c, p, e) = run(seconds, summary);
            (wall, cpu, packets, events) = (wall.min(w), cpu.min(c), p, e);
        }
        println!(
            "default scenario, {seconds} s, no events kept, {what}, best of {rounds}: \
             {:.0} simulated s per wall s, {:.0} per CPU s; {packets} packets, {events} events: \
             {:.3} µs CPU per packet, {:.0} ns per event",
            seconds as f64 / wall,
            seconds as f64 / cpu,
            cpu * 1e6 / packets as f64,
            cpu * 1e9 / events as f64
        );
    }
}
