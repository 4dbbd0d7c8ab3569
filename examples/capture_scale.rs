//! Import and export figures at 10 M packets: how fast a capture is read through the decoders
//! and what memory that takes per packet, and how fast a session is exported as pcapng.
//!
//! The capture: a 10-minute Glenn run at 250 packets/s each way (5 % loss, 10 ms jitter each way)
//! exported as pcapng and repeated end to end up to the packet count
//! (`support/repeated_capture.rs`), in the temporary directory, deleted after. Each step runs in
//! a child process of its own, so each peak RSS (`VmHWM`, which only grows) is that step's:
//! - **generate**: the run's own export (`write_capture`, to memory: the export speed) and the
//!   whole file written through the pcapng writer to disk;
//! - **summary**: the capture read as `ackscope summary` reads it (`import::summarize`: every
//!   event made and dropped as it comes, memory bounded by the matching window);
//! - **import**: the whole-file import that keeps every event (`import::import`, what a test or
//!   a caller wanting the events gets), the memory per packet of holding them.
//!
//! Run: `cargo run --release --example capture_scale [-- PACKETS]` (default 10,000,000).

#[path = "support/memory.rs"]
mod memory;
#[path = "support/repeated_capture.rs"]
#[allow(dead_code)] // capture_open writes by size
mod repeated_capture;

use std::path::{Path, PathBuf};
use std::time::Instant;

use ackscope::capture::import::{import, summarize, ImportOptions};

/// Runs this example again as a child doing `args`, and waits for it.
fn child(args: &[&str]) {
    let status = std::process::Command::new(std::env::current_exe().unwrap()).args(args).status().unwrap();
    assert!(status.success(), "{args:?} failed");
}

fn generate(path: &Path, packets: u64) {
    let g = repeated_capture::generate(path, repeated_capture::Target::Packets(packets));
    println!(
        "export of the run (write_capture, to memory): {} packets in {:.2} s = {:.0} packets/s",
        g.export_packets,
        g.export_s,
        g.export_packets as f64 / g.export_s
    );
    println!(
        "pcapng writer, whole file to disk: {} packets, {:.0} MB in {:.1} s = {:.0} packets/s, {:.1} MB/s",
        g.packets,
        g.bytes as f64 / 1e6,
        g.write_s,
        g.packets as f64 / g.write_s,
        g.bytes as f64 / 1e6 / g.write_s
    );
}

/// Reads the capture one way and prints the speed and memory.
fn read(path: &Path, keep_events: bool) {
    let before_mib = memory::status_mib("VmRSS");
    let t = Instant::now();
    let opts = ImportOptions::default();
    let (events, summary) = if keep_events {
        let (events, summary) = import(path, &opts).expect("import");
        (events.len(), summary)
    } else {
        (0, summarize(path, &opts).expect("summary"))
    };
    let secs = t.elapsed().as_secs_f64();
    let packets = summary.skipped.packets;
    let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    let peak_mib = memory::status_mib("VmHWM");
    let grown = (peak_mib - before_mib).max(0.0) * 1024.0 * 1024.0;
    let what = if keep_events { "import, every event kept" } else { "summary, events dropped as read" };
    println!(
        "{what}: {packets} packets ({:.0} MB, {} flows, decoder {}) in {secs:.1} s = {:.0} packets/s, {:.1} MB/s",
        bytes as f64 / 1e6,
        summary.clients.len(),
        summary.decoder,
        packets as f64 / secs,
        bytes as f64 / 1e6 / secs
    );
    let held = if keep_events { format!("; {events} events held") } else { String::new() };
    println!(
        "  peak RSS {peak_mib:.0} MiB ({before_mib:.0} MiB before): {:.1} bytes per packet{held}",
        grown / packets.max(1) as f64
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--generate") => return generate(Path::new(&args[1]), args[2].parse().expect("PACKETS")),
        Some("--summary") => return read(Path::new(&args[1]), false),
        Some("--import") => return read(Path::new(&args[1]), true),
        _ => {}
    }
    let packets: u64 = args.first().map_or(10_000_000, |a| a.parse().expect("PACKETS"));
    let dir: PathBuf = std::env::temp_dir().join(format!("ackscope-capture-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(format!("{packets}.pcapng"));
    let p = path.display().to_string();
    child(&["--generate", &p, &packets.to_string()]);
    child(&["--summary", &p]);
    child(&["--import", &p]);
    std::fs::remove_dir_all(&dir).ok();
}
