//! Peak memory of a headless `ackscope run --json` without `--out`: the same call the command
//! makes (`report::run_session` on a scenario-only session, which folds the report as the events
//! come and keeps none), at 1000 packets/s each way for an hour of virtual time by default.
//!
//! A sampler thread reads the process's resident set every wall second, so the output shows
//! whether memory grows with the run's length or stays flat; the last line is the kernel's peak
//! (`VmHWM`) against the 200 MiB target of issue 27.
//!
//! Run: `cargo run --release --example run_memory` (or `-- SECONDS PPS` for other lengths/rates).

#[path = "support/memory.rs"]
mod memory;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ackscope::report;
use ackscope::session::Session;
use ackscope_protocol::Scenario;

/// The figure issue 27 asks `run --json` to stay under for 1000 pps x 3600 s.
const TARGET_MIB: f64 = 200.0;

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().map_or(3600.0, |a| a.parse().expect("SECONDS"));
    let pps: f64 = args.next().map_or(1000.0, |a| a.parse().expect("PPS"));
    let scenario = Scenario { send_rate_pps: pps, ..Scenario::default() };
    let file = Session::scenario_only(scenario);
    let before = memory::status_mib("VmRSS");
    println!(
        "run --json (no --out): strategy {}, {pps} pps each way, {seconds} s virtual",
        file.scenario.strategy.name()
    );

    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let t = Instant::now();
            let mut next = Duration::from_secs(1);
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                if t.elapsed() >= next {
                    next += Duration::from_secs(1);
                    println!(
                        "  {:5.0} s wall: RSS {:6.1} MiB (peak {:6.1} MiB)",
                        t.elapsed().as_secs_f64(),
                        memory::status_mib("VmRSS"),
                        memory::status_mib("VmHWM")
                    );
                }
            }
        })
    };
    let t = Instant::now();
    let rep = report::run_session(&file, Some(seconds), None).expect("run");
    let wall = t.elapsed().as_secs_f64();
    done.store(true, Ordering::Relaxed);
    sampler.join().expect("sampler");

    let peak = memory::status_mib("VmHWM");
    println!(
        "{} events in {wall:.0} s wall ({:.1} M events/s); {} packets sent, drain {:.1} s",
        rep.events,
        rep.events as f64 / wall.max(1e-9) / 1e6,
        rep.packets.sent,
        rep.drain_seconds
    );
    if let Some(r) = &rep.sections.reliable {
        println!("reliable: {} sent, {} delivered, p99 {:.1} ms", r.sent, r.delivered, r.latency_ms.p99);
    }
    println!(
        "peak RSS {peak:.1} MiB ({before:.1} MiB before the run), target {TARGET_MIB:.0} MiB: {}",
        if peak < TARGET_MIB { "under" } else { "OVER" }
    );
}
