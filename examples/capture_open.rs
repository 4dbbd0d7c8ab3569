//! Opening a 1 GB packet capture in the window: the first frame, the first frame drawing the
//! capture's events, the whole file read, and peak memory.
//!
//! The capture: a 10-minute Glenn run at 250 packets/s each way (5 % loss, 10 ms jitter each way)
//! exported as pcapng and repeated end to end until the file reaches the size
//! (`support/repeated_capture.rs`). A child process
//! writes it in the temporary directory, so the peak RSS printed is the open's alone (`VmHWM`
//! only grows); it is deleted after, with the window's live-log directory.
//!
//! The window opens it as the app does (`AppState::open_path`: a capture source read on its own
//! thread, `source::capture`), stepped like a 60 Hz display, with the live limits the settings
//! give (default 30 minutes of capture time or 2 GiB in memory; `MAX_MIB` sets the second).
//!
//! `--flows [FLOWS [SECS]]` opens a capture of many flows instead (`support/flows_capture.rs`,
//! default 1,000 flows, one datagram a second each way for 120 s, both sides): the peak RSS of a
//! window showing 1,000 clients.
//!
//! Run: `cargo run --release --example capture_open [-- SIZE_MB [MAX_MIB]]` (default 1024 MB),
//! or `cargo run --release --example capture_open -- --flows [FLOWS [SECS]]`.

#[path = "support/flows_capture.rs"]
mod flows_capture;
#[path = "support/memory.rs"]
mod memory;
#[path = "support/repeated_capture.rs"]
#[allow(dead_code)] // the figures of its generation are capture_scale's
mod repeated_capture;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ackscope::app::AppState;
use ackscope::capture::CaptureReader;
use ackscope::ui::WindowView;
use ackscope::window::frame_ui;
use ackscope_protocol::Scenario;
use egui_kittest::Harness;

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
    let (mut frames, mut worst_ms, mut most_events, mut slow) = (0u64, 0.0f64, 0usize, 0u64);
    let mut next_report = 10.0;
    while h.state().is_running() {
        let ms = paced_step(&mut h);
        frames += 1;
        slow += u64::from(ms > 50.0);
        worst_ms = worst_ms.max(ms);
        let held = h.state().lanes.first().map_or(0, |l| l.len());
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
        "  whole file read                    {read:6.1} s = {:.0} packets/s, {:.1} MB/s; {frames} frames meanwhile, slowest {worst_ms:.1} ms, {slow} over 50 ms",
        packets as f64 / read,
        bytes as f64 / 1e6 / read
    );
    println!(
        "  memory: peak RSS {:.0} MiB ({:.0} MiB before opening); at most {most_events} events held ({} at the end); {} clients",
        memory::status_mib("VmHWM"),
        rss_before,
        s.lanes[0].store.len(),
        s.lanes[0].clients().len(),
    );
}

/// Packets in the capture (read again after the figures, outside the timed part).
fn count_packets(path: &Path) -> u64 {
    let file = std::io::BufReader::new(std::fs::File::open(path).expect("open"));
    CaptureReader::new(file, "capture").expect("capture").filter(|p| p.is_ok()).count() as u64
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    match arg(0) {
        Some("--generate") => {
            let mb = args[2].parse().expect("SIZE_MB");
            repeated_capture::generate(Path::new(&args[1]), repeated_capture::Target::Megabytes(mb));
            return;
        }
        Some("--generate-flows") => {
            let (clients, secs) = (args[2].parse().expect("FLOWS"), args[3].parse().expect("SECS"));
            let packets = flows_capture::generate(Path::new(&args[1]), clients, secs);
            println!("generated {clients} flows for {secs} s: {packets} packets");
            return;
        }
        Some("--source-only") => return source_only(PathBuf::from(arg(1).expect("CAPTURE"))),
        _ => {}
    }
    let dir = std::env::temp_dir().join(format!("ackscope-capture-open-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (path, generate, max_mib) = if arg(0) == Some("--flows") {
        let clients: u32 = arg(1).map_or(1000, |a| a.parse().expect("FLOWS"));
        let secs: u64 = arg(2).map_or(120, |a| a.parse().expect("SECS"));
        let path = dir.join(format!("{clients}-flows.pcapng"));
        let p = path.display().to_string();
        (path, vec!["--generate-flows".to_string(), p, clients.to_string(), secs.to_string()], None)
    } else {
        let size_mb: u64 = arg(0).map_or(1024, |a| a.parse().expect("SIZE_MB"));
        let max_mib: Option<u64> = arg(1).map(|a| a.parse().expect("MAX_MIB"));
        let path = dir.join(format!("{size_mb}mb.pcapng"));
        let p = path.display().to_string();
        (path, vec!["--generate".to_string(), p, size_mb.to_string()], max_mib)
    };
    let status = std::process::Command::new(std::env::current_exe().unwrap()).args(&generate).status().unwrap();
    assert!(status.success());
    // The window's live log streams the events to disk: here, deleted with the capture.
    std::env::set_var("ACKSCOPE_LIVE_DIR", dir.join("live"));
    open(&path, max_mib);
    std::fs::remove_dir_all(&dir).ok();
}

/// The capture source alone, its events dropped: what the reading holds, without a window.
fn source_only(path: PathBuf) {
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
}
