//! How fast a run of many clients simulates, and the memory it takes: one server and N clients
//! (default 1000) with the default scenario for each (Glenn, 60 packets/s each way, 50 ms, 5 %
//! loss), every event built and the run's own summary folded, as `ackscope run --set
//! clients=N` does; each simulated second's events are counted and dropped (the CLI folds them
//! and keeps none either). Prints wall time, simulated seconds per wall second, events per wall
//! second, and the process's peak resident memory (`VmHWM` from `/proc/self/status`), then the
//! same for one client, the figure to compare with the runs before clients existed.
//!
//! Run: `cargo run --release -p ackscope-protocol --example clients_speed [-- CLIENTS [SECONDS]]`

use std::time::Instant;

use ackscope_protocol::{Clients, Scenario, SimTime, Simulation};

/// Peak resident set of this process so far, in MiB (Linux), if readable.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// This process's CPU seconds (user + system), if readable.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some((fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?) / 100.0)
}

/// One run of `clients` clients for `seconds`: (wall s, CPU s, events, packets sent).
fn run(clients: u32, seconds: u64) -> (f64, f64, u64, u64) {
    let scenario = Scenario { clients: Clients::Count(clients), ..Scenario::default() };
    let (start, cpu0) = (Instant::now(), cpu_seconds());
    let mut sim = Simulation::new(scenario);
    let (mut events, mut sent) = (0u64, 0u64);
    for s in 1..=seconds {
        sim.run_until(SimTime(s * 1_000_000));
        for e in sim.drain_events() {
            events += 1;
            sent += u64::from(matches!(e.kind, ackscope_protocol::EventKind::LinkSent { .. }));
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let cpu = cpu0.zip(cpu_seconds()).map_or(wall, |(a, b)| b - a);
    (wall, cpu, events, sent)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let clients: u32 = args.next().map_or(1000, |a| a.parse().expect("CLIENTS: a whole number"));
    let seconds: u64 = args.next().map_or(10, |a| a.parse().expect("SECONDS: a whole number"));
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average before: {}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    let (wall, cpu, events, sent) = run(clients, seconds);
    println!(
        "{clients} clients, {seconds} simulated s: {wall:.2} s wall ({cpu:.2} s CPU), {:.1} simulated s per wall s, \
         {events} events ({:.0} per wall s, {:.0} ns CPU each), {sent} link sends; peak RSS {:.0} MiB",
        seconds as f64 / wall,
        events as f64 / wall,
        cpu * 1e9 / events.max(1) as f64,
        peak_rss_mib().unwrap_or(f64::NAN),
    );
    // One client for long enough to time it: the same scenario's two-endpoint run.
    let one_s = 600;
    let (wall, cpu, events, _) = run(1, one_s);
    println!(
        "1 client, {one_s} simulated s: {wall:.2} s wall ({cpu:.2} s CPU), {:.0} simulated s per wall s, \
         {:.0} events per wall s",
        one_s as f64 / wall,
        events as f64 / wall,
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average after: {}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
}
