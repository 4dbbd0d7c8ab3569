//! Live memory over an hour at 1000 packets/s each way, through the window's ingest path
//! (`LiveLog::ingest`, what `AppState` does with each batch from the run thread): peak RSS, the
//! events held in memory, and the stream file on disk. Virtual time runs as fast as it can.
//!
//! First it measures what a recording holds per event with 1, 16 and 64 clients at 60 packets/s
//! each way, and at 1000 packets/s with one client: the bytes a counting allocator saw freed when
//! the recording was dropped (the truth) beside what `Recording::heap_bytes` counts (what the
//! live cap is held to). Then it runs the hour with the default limits (30 minutes or 2 GiB), or
//! with `-- MINUTES MAX_MIB` for others; `-- per-event` stops after the first part.
//!
//! Run: `cargo run --release --example live_memory`

#[path = "support/memory.rs"]
mod memory;

use std::alloc::System;
use std::time::Instant;

use ackscope::app::live_log::LiveLog;
use ackscope::model::limits::LiveLimits;
use ackscope::model::Recording;
use ackscope_protocol::{Event, Scenario, SimTime, Simulation};
use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};

/// The system allocator, counting the bytes asked for and given back (the truth
/// `Recording::heap_bytes` is checked against).
#[global_allocator]
static ALLOCATOR: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Bytes the process holds, as the allocator was asked for them.
fn held() -> isize {
    let s = ALLOCATOR.stats();
    s.bytes_allocated as isize - s.bytes_deallocated as isize + s.bytes_reallocated
}

fn scenario() -> Scenario {
    Scenario { send_rate_pps: 1000.0, ..Scenario::default() }
}

/// What a recording of `clients` clients at `pps` each way holds after `secs` simulated
/// seconds fed in one-second batches: per event, as the allocator saw it and as counted.
fn bytes_per_event(clients: usize, pps: f64, secs: u64) {
    let mut s = Scenario { send_rate_pps: pps, ..Scenario::default() };
    ackscope::params::overrides::apply_all(&mut s, &[format!("clients={clients}")]).expect("clients");
    let mut sim = Simulation::new(s.clone());
    let mut rec = Recording::new(s);
    for second in 1..=secs {
        sim.run_until(SimTime(second * 1_000_000));
        rec.ingest(sim.drain_events().collect());
    }
    let (events, counted) = (rec.len(), rec.heap_bytes());
    let before = held();
    drop(rec);
    let truth = (before - held()) as f64;
    println!(
        "  {clients:3} clients at {pps:4} pps, {secs:3} s: {events:9} events, held {:7.1} MiB = {:4.0} bytes/event, counted {:7.1} MiB = {:4.0} bytes/event ({:+.1} %)",
        truth / 1048576.0,
        truth / events as f64,
        counted as f64 / 1048576.0,
        counted as f64 / events as f64,
        (counted as f64 / truth - 1.0) * 100.0
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let first = args.next();
    println!("what a recording holds (allocator's truth beside Recording::heap_bytes):");
    for (clients, pps, secs) in [(1, 60.0, 180), (16, 60.0, 60), (64, 60.0, 60), (1, 1000.0, 180)] {
        bytes_per_event(clients, pps, secs);
    }
    if first.as_deref() == Some("per-event") {
        return;
    }
    let minutes: f64 = first.map_or(30.0, |a| a.parse().expect("MINUTES"));
    let max_mib: u64 = args.next().map_or(2048, |a| a.parse().expect("MAX_MIB"));
    let dir = std::env::temp_dir().join(format!("ackscope-live-memory-{}", std::process::id()));
    let mut log = LiveLog::new(dir.clone());
    log.limits = LiveLimits { window_s: minutes * 60.0, max_bytes: max_mib << 20 };
    let s = scenario();
    let mut lanes = vec![Recording::new(s.clone())];
    log.start(&lanes).expect("stream file");
    let base = memory::status_mib("VmRSS");
    let mut sim = Simulation::new(s);
    let (mut events, mut most) = (0usize, 0usize);
    let t = Instant::now();
    // The run thread hands the window a batch every 8 ms of virtual time.
    let tick_us = 8_000u64;
    let hour_us = 3_600_000_000u64;
    let mut now = 0;
    while now < hour_us {
        now += tick_us;
        sim.run_until(SimTime(now));
        let batch: Vec<Event> = sim.drain_events().collect();
        events += batch.len();
        log.ingest(0, &mut lanes[0], batch, Vec::new()).expect("ingest");
        most = most.max(lanes[0].store.len());
        if now % 300_000_000 == 0 {
            let lane = &lanes[0];
            println!(
                "  {:2} min: {events} events, {} in memory ({} messages, {} packet rows, ledger table {}), RSS {:.0} MiB (peak {:.0} MiB), {:.0} s wall",
                now / 60_000_000,
                lane.store.len(),
                lane.messages.len(),
                lane.packets.len(),
                lane.ledger.table_len(),
                memory::status_mib("VmRSS"),
                memory::status_mib("VmHWM"),
                t.elapsed().as_secs_f64()
            );
        }
    }
    let starts = log.window_starts(&lanes);
    let files = log.files();
    log.finish_at(now);
    let bytes = std::fs::metadata(&files[0]).map(|m| m.len()).unwrap_or(0);
    println!(
        "60 simulated minutes at 1000 pps each way, limits {minutes} min / {max_mib} MiB: {events} events in {:.0} s",
        t.elapsed().as_secs_f64()
    );
    println!(
        "  in memory at the end: {} events from {:.0} s (at most {most}); peak RSS {:.0} MiB ({:.0} MiB before the run)",
        lanes[0].store.len(),
        starts[0].as_secs_f64(),
        memory::status_mib("VmHWM"),
        base
    );
    println!(
        "  stream file {:.0} MB = {:.1} bytes/event: {}",
        bytes as f64 / 1e6,
        bytes as f64 / events as f64,
        files[0].display()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
