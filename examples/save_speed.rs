//! Encoding speed of session files: the event-line writer (`session::to_text`) against `ron`
//! writing the same session, on one recording, in one process.
//!
//! Run: `cargo run --release --example save_speed -- [SECONDS] [fast|ron|none|both]`
//! (default 60 s of the default scenario at 1000 packets/s each way, `both`). `both` times each
//! encoder (best of 3) and prints MB/s and ns per event; `fast`, `ron` and `none` encode once (or
//! not at all) so that `perf stat -e instructions` of each gives instructions per event:
//! (fast - none) / events against (ron - none) / events.

use std::time::Instant;

use ackscope::{report, session};
use ackscope_protocol::Scenario;

/// The layout session files use (as `session::save` configures `ron`).
fn pretty() -> ron::ser::PrettyConfig {
    ron::ser::PrettyConfig::new()
        .depth_limit(2)
        .indentor(String::new())
        .separator(String::new())
        .struct_names(false)
        .compact_arrays(false)
}

fn best_of_3(mut f: impl FnMut() -> usize) -> (f64, usize) {
    let mut best = f64::INFINITY;
    let mut bytes = 0;
    for _ in 0..3 {
        let t = Instant::now();
        bytes = f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, bytes)
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let secs: f64 = args.first().map(|s| s.parse()).transpose()?.unwrap_or(60.0);
    let mode = args.get(1).map(String::as_str).unwrap_or("both");
    let scenario = Scenario { send_rate_pps: 1000.0, ..Scenario::default() };
    let run = report::run(&scenario, secs);
    let s = &run.session;
    let n = s.events.len();
    match mode {
        "none" => println!("{n} events, not encoded"),
        "fast" => println!("{n} events, {} bytes (event-line writer)", session::to_text(s)?.len()),
        "ron" => println!("{n} events, {} bytes (ron)", ron::ser::to_string_pretty(s, pretty())?.len()),
        "both" => {
            let (fast_s, bytes) = best_of_3(|| session::to_text(s).expect("encode").len());
            let (ron_s, ron_bytes) = best_of_3(|| ron::ser::to_string_pretty(s, pretty()).expect("encode").len());
            println!("{n} events ({secs} s of the default scenario at 1000 packets/s each way)");
            for (name, t, b) in [("event-line writer", fast_s, bytes), ("ron", ron_s, ron_bytes)] {
                println!(
                    "  {name:18} {b} bytes in {:.3} s: {:.0} MB/s, {:.0} ns/event",
                    t,
                    b as f64 / t / 1e6,
                    t * 1e9 / n as f64
                );
            }
            println!("  speed-up {:.1}x", ron_s / fast_s);
        }
        other => anyhow::bail!("mode {other:?}: give fast, ron, none or both"),
    }
    Ok(())
}
