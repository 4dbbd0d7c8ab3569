//! How much virtual time a live in-process run sustains per wall second: the run thread's
//! work (`runtime::threaded_peer`, client 1's endpoints each on a thread of its own) run flat
//! out in the live thread's 8 ms slices, its events drained each slice as the live thread hands
//! them to the window. A live run keeps up with the wall clock while this is above 1 (with the
//! window's own work on top). Three ways: the endpoints answering a tick's and a stats instant's
//! calls on one request (what live runs do), every call a round trip of its own (as before),
//! and every endpoint on the run's thread (no round trips: the ceiling).
//!
//! Two runs, as issue 23 asks: one client at 1000 packets/s each way, and 64 clients at their
//! default 60 packets/s. Run it on a busy machine to see the figure the user meets there (two
//! `yes >/dev/null &` loops on this 2-core machine).
//!
//! Run: `cargo run --release --example live_pace [-- SECONDS]` (simulated seconds, default 20)

use std::time::Instant;

use ackscope::runtime::threaded_peer::{threaded_simulation_serving, Calls};
use ackscope_protocol::{Clients, Scenario, SimTime, Simulation};

/// The live thread's step ([`ackscope::runtime`]'s `TICK`).
const SLICE_US: u64 = 8_000;

/// Runs `sim` for `seconds` in slices: (simulated s per wall s, events).
fn pace(mut sim: Simulation, seconds: u64) -> (f64, usize) {
    let started = Instant::now();
    let mut events = 0;
    let mut t = 0;
    while t < seconds * 1_000_000 {
        t += SLICE_US;
        sim.run_until(SimTime(t));
        events += sim.drain_events().count();
    }
    (seconds as f64 / started.elapsed().as_secs_f64(), events)
}

fn main() {
    let seconds: u64 = std::env::args().nth(1).map_or(20, |a| a.parse().expect("SECONDS: a whole number"));
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average before: {}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    let runs = [
        ("1 client, 1000 pps each way", Scenario { send_rate_pps: 1000.0, ..Scenario::default() }),
        ("64 clients, 60 pps each way", Scenario { clients: Clients::Count(64), ..Scenario::default() }),
    ];
    for (name, scenario) in runs {
        let (one_by_one, _) = pace(threaded_simulation_serving(scenario.clone(), Calls::OneByOne), seconds);
        let (ahead, events) = pace(threaded_simulation_serving(scenario.clone(), Calls::AnsweredAhead), seconds);
        let (in_thread, _) = pace(Simulation::new(scenario), seconds);
        println!(
            "{name}, {seconds} simulated s, {events} events; simulated s per wall s: calls answered ahead (live) \
             {ahead:.2}, calls one by one (before) {one_by_one:.2}, every endpoint on the run's thread {in_thread:.1}"
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average after: {}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
}
