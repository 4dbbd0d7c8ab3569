//! Live memory over an hour at 1000 packets/s each way, through the window's ingest path
//! (`LiveLog::ingest`, what `AppState` does with each batch from the run thread): peak RSS, the
//! events held in memory, and the stream file on disk. Virtual time runs as fast as it can.
//!
//! First it measures what one event costs in a recording (the figure behind
//! `live_log::BYTES_PER_EVENT`), then it runs the hour with the default limits (30 minutes or
//! 2 GiB), or with `-- MINUTES MAX_MIB` for others.
//!
//! Run: `cargo run --release --example live_memory`

#[path = "support/memory.rs"]
mod memory;

use std::time::Instant;

use ackscope::app::live_log::{LiveLimits, LiveLog, BYTES_PER_EVENT};
use ackscope::model::Recording;
use ackscope_protocol::{Event, Scenario, SimTime, Simulation};

fn scenario() -> Scenario {
    Scenario { send_rate_pps: 1000.0, ..Scenario::default() }
}

/// Memory per event of a recording fed 3 simulated minutes.
fn bytes_per_event() -> f64 {
    let s = scenario();
    let mut sim = Simulation::new(s.clone());
    let mut rec = Recording::new(s);
    let before = memory::status_mib("VmRSS");
    for second in 1..=180u64 {
        sim.run_until(SimTime(second * 1_000_000));
        rec.ingest(sim.drain_events().collect());
    }
    let after = memory::status_mib("VmRSS");
    let per = (after - before) * 1024.0 * 1024.0 / rec.store.len() as f64;
    println!(
        "a recording at 1000 pps each way: {} events in 180 s, {per:.0} bytes/event in memory (estimate used: {BYTES_PER_EVENT})",
        rec.store.len()
    );
    per
}

fn main() {
    let mut args = std::env::args().skip(1);
    let minutes: f64 = args.next().map_or(30.0, |a| a.parse().expect("MINUTES"));
    let max_mib: u64 = args.next().map_or(2048, |a| a.parse().expect("MAX_MIB"));
    bytes_per_event();
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
