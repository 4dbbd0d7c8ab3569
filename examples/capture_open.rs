//! Opening a 1 GB packet capture in the window: the first frame, the first frame drawing the
//! capture's events, the whole file read, and peak memory.
//!
//! The capture: a 10-minute Glenn run at 250 packets/s each way (5 % loss, 10 ms jitter each way)
//! exported as pcapng (`sent` and `delivered` interfaces, packet comments), then repeated end to
//! end with its times shifted until the file reaches the size (each repeat 10 minutes and 5 s after
//! the one before, so no delivered copy can match a send of another repeat). A child process
//! writes it in the temporary directory, so the peak RSS printed is the open's alone (`VmHWM`
//! only grows); it is deleted after, with the window's live-log directory.
//!
//! The window opens it as the app does (`AppState::open_path`: a capture source read on its own
//! thread, `source::capture`), stepped like a 60 Hz display, with the live limits the settings
//! give (default 30 minutes of capture time or 2 GiB in memory; `MAX_MIB` sets the second).
//!
//! Run: `cargo run --release --example capture_open [-- SIZE_MB [MAX_MIB]]` (default 1024 MB).

#[path = "support/memory.rs"]
mod memory;

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ackscope::app::AppState;
use ackscope::capture::{write_capture, CaptureReader, CaptureWriter, Udp};
use ackscope::ui::WindowView;
use ackscope::window::frame_ui;
use ackscope_protocol::{Dir, Scenario, Strategy};
use egui_kittest::Harness;

/// The run repeated: Glenn at 250 packets/s each way, 5 % loss and 10 ms jitter each way.
fn scenario() -> Scenario {
    let mut s = Scenario { strategy: Strategy::Glenn, send_rate_pps: 250.0, seed: 1, ..Scenario::default() };
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.loss_percent = 5.0;
        l.jitter_ms = 10.0;
    }
    s
}

/// Writes a capture of at least `size_mb` MB at `path` (in the child process).
fn generate(path: &Path, size_mb: u64) {
    let t = Instant::now();
    let secs = 600.0;
    let run = ackscope::report::run(&scenario(), secs);
    let mut one = Vec::new();
    write_capture(&run.session, &mut one).expect("export");
    let mut reader = CaptureReader::new(&one[..], "generated").expect("read back");
    let mut packets = Vec::new();
    while let Some(p) = reader.next_packet() {
        let p = p.expect("a packet");
        let link = reader.interfaces()[p.interface as usize].linktype;
        let udp: Udp = p.udp(link).expect("IPv4/UDP");
        packets.push((p.interface, p.time_ns / 1000, udp, p.comment));
    }
    let interfaces = reader.interfaces().to_vec();
    let out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).expect("create"));
    let mut w = CaptureWriter::new(out, "capture_open: a Glenn run repeated").expect("writer");
    for i in &interfaces {
        w.add_interface(&i.name, &i.description).expect("interface");
    }
    let period_us = (secs * 1e6) as u64 + 5_000_000;
    let (mut repeats, mut written) = (0u64, 0u64);
    while written < size_mb * 1_000_000 {
        for (iface, time_us, udp, comment) in &packets {
            w.write_udp(*iface, time_us + repeats * period_us, udp, comment).expect("write");
        }
        repeats += 1;
        written = repeats * one.len() as u64;
    }
    w.into_inner().flush().expect("flush");
    println!(
        "generated {:.0} MB: {repeats} repeats of a {secs} s run ({} packets, {:.1} MB each) in {:.1} s",
        std::fs::metadata(path).map_or(0, |m| m.len()) as f64 / 1e6,
        packets.len(),
        one.len() as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
}

/// Steps one frame and paces the loop like a 60 Hz display would; the frame's own time in ms.
fn paced_step(h: &mut Harness<'static, AppState>) -> f64 {
    let f = Instant::now();
    h.step();
    let took = f.elapsed();
    std::thread::sleep(Duration::from_micros(16_667).saturating_sub(took));
    took.as_secs_f64() * 1000.0
}

fn open(path: &Path, max_mib: Option<u64>) {
    let mut state = AppState::new(Scenario::default(), || {});
    state.settings.intro_dismissed = true;
    if let Some(m) = max_mib {
        state.settings.live_max_mib = m;
    }
    let limits = state.settings.live_limits();
    let mut view = WindowView::default();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_ui_state(move |ui, s: &mut AppState| frame_ui(s, &mut view, ui), state);
    let rss_before = memory::status_mib("VmRSS");
    let t = Instant::now();
    h.state_mut().open_path(path);
    h.step();
    let first = t.elapsed().as_secs_f64();
    let mut first_data = None;
    let (mut frames, mut worst_ms, mut most_events) = (0u64, 0.0f64, 0usize);
    let mut next_report = 10.0;
    while h.state().is_running() {
        let ms = paced_step(&mut h);
        frames += 1;
        worst_ms = worst_ms.max(ms);
        let held = h.state().lanes.first().map_or(0, |l| l.store.len());
        most_events = most_events.max(held);
        if held > 0 && first_data.is_none() {
            first_data = Some((t.elapsed().as_secs_f64(), held));
        }
        if t.elapsed().as_secs_f64() >= next_report {
            next_report += 10.0;
            println!(
                "  {:5.0} s: capture time {:.0} s read, {held} events in memory, RSS {:.0} MiB (peak {:.0} MiB)",
                t.elapsed().as_secs_f64(),
                h.state().end_time().as_secs_f64(),
                memory::status_mib("VmRSS"),
                memory::status_mib("VmHWM")
            );
        }
    }
    h.state_mut().stop();
    h.step();
    let read = t.elapsed().as_secs_f64();
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
    let (data_at, data_events) = first_data.unwrap_or((read, 0));
    let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    let packets = count_packets(path);
    let s = h.state();
    println!(
        "opened {:.0} MB ({packets} packets, {:.0} s of capture time) in the window, live limits {:.0} min / {} MiB:",
        bytes as f64 / 1e6,
        s.end_time().as_secs_f64(),
        limits.window_s / 60.0,
        limits.max_bytes >> 20
    );
    println!("  first frame                        {first:6.3} s");
    println!("  first frame drawing the capture    {data_at:6.3} s ({data_events} events shown)");
    println!(
        "  whole file read                    {read:6.1} s = {:.0} packets/s, {:.1} MB/s; {frames} frames meanwhile, slowest {worst_ms:.1} ms",
        packets as f64 / read,
        bytes as f64 / 1e6 / read
    );
    println!(
        "  memory: peak RSS {:.0} MiB ({:.0} MiB before opening); at most {most_events} events held ({} at the end)",
        memory::status_mib("VmHWM"),
        rss_before,
        s.lanes[0].store.len(),
    );
}

/// Packets in the capture (read again after the figures, outside the timed part).
fn count_packets(path: &Path) -> u64 {
    let file = std::io::BufReader::new(std::fs::File::open(path).expect("open"));
    CaptureReader::new(file, "capture").expect("capture").filter(|p| p.is_ok()).count() as u64
}

fn main() {
    let mut args = std::env::args().skip(1);
    if let Some("--generate") = args.next().as_deref() {
        let path = PathBuf::from(args.next().unwrap());
        generate(&path, args.next().unwrap().parse().unwrap());
        return;
    }
    if let Some("--source-only") = std::env::args().nth(1).as_deref() {
        // The capture source alone, its events dropped: what the reading holds, without a window.
        let path = PathBuf::from(std::env::args().nth(2).expect("CAPTURE"));
        let options = ackscope::capture::import::ImportOptions::default();
        let t = Instant::now();
        let src = ackscope::source::start(ackscope::source::Spec::Capture { path, options }, || {}).expect("open");
        let mut events = 0usize;
        while src.is_running() {
            events += src.try_batches().map(|b| b.events.len()).sum::<usize>();
            std::thread::sleep(Duration::from_millis(2));
        }
        events += src.try_batches().map(|b| b.events.len()).sum::<usize>();
        println!(
            "source only: {events} events in {:.1} s, peak RSS {:.0} MiB",
            t.elapsed().as_secs_f64(),
            memory::status_mib("VmHWM")
        );
        return;
    }
    let mut args = std::env::args().skip(1);
    let size_mb: u64 = args.next().map_or(1024, |a| a.parse().expect("SIZE_MB"));
    let max_mib: Option<u64> = args.next().map(|a| a.parse().expect("MAX_MIB"));
    let dir = std::env::temp_dir().join(format!("ackscope-capture-open-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(format!("{size_mb}mb.pcapng"));
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--generate", &path.display().to_string(), &size_mb.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    // The window's live log streams the events to disk: here, deleted with the capture.
    std::env::set_var("ACKSCOPE_LIVE_DIR", dir.join("live"));
    open(&path, max_mib);
    std::fs::remove_dir_all(&dir).ok();
}
