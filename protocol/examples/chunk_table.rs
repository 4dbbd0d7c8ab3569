//! Completion time of one 256 KiB chunk at 256 / 512 / 1000 kbps with 0 / 1 / 10 % loss (both
//! directions) and 100 ms RTT, beside the ideal (bytes on the wire / bandwidth + RTT), and the
//! fragmentation baseline on the same links.
//!
//! Run: `cargo run -p ackscope-protocol --release --example chunk_table`. README quotes
//! [`report`]; a test checks the quote against it.

use std::fmt::Write;

use ackscope_protocol::measure::ChunkSummary;
use ackscope_protocol::{LinkConfig, Scenario, Simulation, Strategy};

const SEEDS: u64 = 5;

fn scenario(strategy: Strategy, kbps: f64, loss: f64, seed: u64) -> Scenario {
    let mut s = Scenario { seed, strategy, ..Scenario::default() };
    s.workload.chunk_kib = 256;
    s.chunk.bandwidth_kbps = kbps;
    let link = LinkConfig { latency_ms: 50.0, loss_percent: loss, ..LinkConfig::default() };
    s.link.a_to_b = link;
    s.link.b_to_a = link;
    s
}

/// First chunk's (completion, ideal, slices sent, resent), or None if it did not finish in time.
fn first_chunk(s: Scenario, max_seconds: f64) -> Option<(f64, f64, u64, u64)> {
    let chunk = s.chunk;
    let mut sim = Simulation::new(s);
    let mut t = 0.0;
    while t < max_seconds {
        sim.run_for_secs(0.5);
        t += 0.5;
        let sum = ChunkSummary::from_events(sim.events(), chunk.cost(), 0.0, 100.0);
        if let Some(c) = sum.chunks.first() {
            return Some((c.completion_seconds, c.ideal_seconds, c.slices_sent, c.slices_resent));
        }
    }
    None
}

fn main() {
    print!("{}", report());
}

/// The whole table.
pub fn report() -> String {
    let mut out = String::new();
    let _ = writeln!(out, "256 KiB chunk, 100 ms RTT, {SEEDS} seeds each (mean; fragments: mean over completed runs)");
    let _ = writeln!(
        out,
        "{:>6} {:>6} | {:>8} {:>8} {:>7} {:>7} {:>7} | {:>10} {:>6}",
        "kbps", "loss%", "ideal s", "chunks s", "x ideal", "sent", "resent", "fragments s", "done"
    );
    for kbps in [256.0, 512.0, 1000.0] {
        for loss in [0.0, 1.0, 10.0] {
            let mut acc = (0.0, 0.0, 0.0, 0.0);
            for seed in 1..=SEEDS {
                let (c, i, n, r) =
                    first_chunk(scenario(Strategy::Chunks, kbps, loss, seed), 120.0).expect("chunk done");
                acc = (acc.0 + c, acc.1 + i, acc.2 + n as f64, acc.3 + r as f64);
            }
            let k = SEEDS as f64;
            let (mut fsum, mut fdone) = (0.0, 0);
            for seed in 1..=SEEDS {
                if let Some((c, ..)) = first_chunk(scenario(Strategy::Fragments, kbps, loss, seed), 120.0) {
                    fsum += c;
                    fdone += 1;
                }
            }
            let frag = if fdone > 0 { format!("{:.2}", fsum / fdone as f64) } else { "-".into() };
            let _ = writeln!(
                out,
                "{:>6} {:>6} | {:>8.2} {:>8.2} {:>7.3} {:>7.0} {:>7.1} | {:>10} {:>3}/{}",
                kbps,
                loss,
                acc.1 / k,
                acc.0 / k,
                acc.0 / acc.1,
                acc.2 / k,
                acc.3 / k,
                frag,
                fdone,
                SEEDS
            );
        }
    }
    out
}
