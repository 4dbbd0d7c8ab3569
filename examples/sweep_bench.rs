//! How fast sweeps run: 300 runs (100 points x 3 seeds) of 120 simulated seconds with the default
//! workload on all cores and on one, and one run without events in simulated seconds per wall
//! second. Prints the figures README quotes.
//!
//! Run: `cargo run --release --example sweep_bench`

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use ackscope::report::sweep::{self, SweepSpec};
use ackscope_protocol::{Scenario, Strategy};

fn spec() -> SweepSpec {
    SweepSpec {
        base: Scenario::default(),
        changes: Vec::new(),
        seconds: 120.0,
        vary: vec![sweep::parse_vary("glenn.resend_delay_ms=0:990:10").expect("a valid spec")],
        strategies: vec![Strategy::Glenn],
        seeds: 3,
    }
}

/// Wall seconds for the whole sweep on `threads` threads (0 = all cores).
fn sweep_seconds(threads: usize) -> f64 {
    let spec = spec();
    let start = Instant::now();
    let rows = sweep::run(&spec, threads, &AtomicBool::new(false), &|_, _| {}).expect("runs").expect("not cancelled");
    assert_eq!(rows.len() * 3, 300);
    start.elapsed().as_secs_f64()
}

fn main() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // One run without events: the default scenario, best of five (a busy machine only slows it).
    let run_secs = 600.0;
    let best = (0..5)
        .map(|_| {
            let start = Instant::now();
            let m = sweep::run_one(&Scenario::default(), run_secs, &[], &AtomicBool::new(false)).unwrap().unwrap();
            assert_eq!(m.lost, 0);
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    println!(
        "one run, no events kept: {:.0} simulated s per wall s (default scenario, {run_secs} s + drain, figures folded)",
        run_secs / best
    );
    let all = sweep_seconds(0);
    let one = sweep_seconds(1);
    println!("sweep of 300 runs x 120 s (100 points x 3 seeds), default workload:");
    println!("  {cores} threads: {all:.2} s wall ({:.0} simulated s per wall s)", 300.0 * 120.0 / all);
    println!("  1 thread:  {one:.2} s wall");
    println!("  speedup:   {:.2}x", one / all);
}
