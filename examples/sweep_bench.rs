//! How fast sweeps run: 300 runs (100 points x 3 seeds) of 120 simulated seconds with the default
//! workload on all cores and on one, and one run without events in simulated seconds per wall
//! second. Prints the figures README quotes.
//!
//! Wall time is what a user waits, but on a machine busy with other work it says little: so each
//! figure comes with the CPU time it took (this process's, from `/proc/self/stat`) and the load
//! average before and after. On an idle machine the sweep's CPU time on all threads is close to
//! its CPU time on one (the runs share nothing but the result table), and its wall time is that
//! divided by the threads.
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

/// CPU seconds this process used so far (user + system, all threads), from `/proc/self/stat`;
/// None where it cannot be read.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at state, field 3.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// CPU seconds the calling thread used so far, to the nanosecond (`/proc/thread-self/schedstat`):
/// one run takes well under a second, too short for the process's 10 ms ticks.
fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(text.split_whitespace().next()?.parse::<f64>().ok()? / 1e9)
}

/// The 1, 5 and 15 minute load averages.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// (wall, CPU) seconds of `f`, CPU time read by `cpu`.
fn timed(cpu: fn() -> Option<f64>, f: impl FnOnce()) -> (f64, f64) {
    let (start, cpu_start) = (Instant::now(), cpu());
    f();
    let wall = start.elapsed().as_secs_f64();
    (wall, cpu_start.zip(cpu()).map_or(f64::NAN, |(a, b)| b - a))
}

/// Wall and CPU seconds for the whole sweep on `threads` threads (0 = all cores).
fn sweep_seconds(threads: usize) -> (f64, f64) {
    let spec = spec();
    timed(cpu_seconds, || {
        let rows =
            sweep::run(&spec, threads, &AtomicBool::new(false), &|_, _| {}).expect("runs").expect("not cancelled");
        assert_eq!(rows.len() * 3, 300);
    })
}

fn main() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("load average before: {}", load());
    // One run without events as a sweep makes it: the default scenario, best of five (a busy
    // machine only slows it).
    let run_secs = 600.0;
    let (wall, cpu) = (0..5)
        .map(|_| {
            timed(thread_cpu_seconds, || {
                let m = sweep::run_one(&Scenario::default(), run_secs, &[], &AtomicBool::new(false)).unwrap().unwrap();
                assert_eq!(m.lost, 0);
            })
        })
        .fold((f64::INFINITY, f64::INFINITY), |(w, c), (w1, c1)| (w.min(w1), c.min(c1)));
    println!(
        "one run, no events kept: {:.0} simulated s per wall s, {:.0} per CPU s (default scenario, {run_secs} s + drain, figures folded)",
        run_secs / wall,
        run_secs / cpu
    );
    let (all, all_cpu) = sweep_seconds(0);
    let (one, one_cpu) = sweep_seconds(1);
    println!("sweep of 300 runs x 120 s (100 points x 3 seeds), default workload:");
    println!(
        "  {cores} threads: {all:.2} s wall, {all_cpu:.2} s CPU ({:.0} simulated s per wall s)",
        300.0 * 120.0 / all
    );
    println!("  1 thread:  {one:.2} s wall, {one_cpu:.2} s CPU");
    println!("  speedup:   {:.2}x wall", one / all);
    // Running in parallel costs no extra CPU when the runs share nothing: the ratio stays near 1.
    // Then an idle machine's wall time is the CPU time spread over the threads.
    println!(
        "  CPU time on {cores} threads / on 1: {:.2}; so on an idle machine about {:.1} s wall on {cores} threads, {:.1} s on 1",
        all_cpu / one_cpu,
        all_cpu / cores as f64,
        one_cpu
    );
    println!("load average after: {}", load());
}
