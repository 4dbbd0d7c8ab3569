//! Opening a 10-million-event session: file size per event, time per phase of a load, peak
//! memory, and the window's frames while it opens and while scrubbing it.
//!
//! The session (a long run at 1000 packets/s each way with 5 % loss) is generated once by a
//! child process and kept in the temporary directory, so the figures of this process are the
//! load's alone (peak RSS is the kernel's `VmHWM`, which only grows).
//!
//! Run: `cargo run --release --example open_bench` (`-- EVENTS` for another size;
//! `OPEN_BENCH_NO_WINDOW=1` for the headless phases only). The window part opens the file as
//! the app does (streaming: the part parsed so far is drawn while the rest loads), paced like a
//! 60 Hz display, and prints the machine's load average beside its figures.

#[path = "support/frames.rs"]
mod frames;
#[path = "support/memory.rs"]
mod memory;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ackscope::app::AppState;
use ackscope::app::Tab;
use ackscope::model::Recording;
use ackscope::session::{self, Phase, Progress};
use ackscope::ui::WindowView;
use ackscope::window::frame_ui;
use ackscope::{report, session::Session};
use ackscope_protocol::{Scenario, SimTime};
use egui_kittest::Harness;
use frames::{step_ms, FrameStats};

/// The scenario recorded: 1000 packets/s each way, default workload, 5 % loss each way.
fn scenario() -> Scenario {
    Scenario { send_rate_pps: 1000.0, ..Scenario::default() }
}

/// Runs the scenario long enough for `events` events and saves it to `path` (in the child).
fn generate(path: &Path, events: usize) {
    let s = scenario();
    let probe = report::run(&s, 10.0).session.events.len() as f64 / 10.0;
    let secs = (events as f64 / probe).ceil();
    let t = Instant::now();
    let run = report::run(&s, secs);
    println!(
        "generated {} events ({secs} s simulated) in {:.1} s",
        run.session.events.len(),
        t.elapsed().as_secs_f64()
    );
    session::save(&run.session, path).expect("save");
}

/// Loads `path` headless: time per phase, then indexing, and memory.
fn load_headless(path: &Path) {
    let progress = Arc::new(Progress::new());
    let watch = Arc::clone(&progress);
    let t0 = Instant::now();
    let watcher = std::thread::spawn(move || {
        let mut seen: Vec<(Phase, f64)> = Vec::new();
        while seen.last().map(|s| s.0) != Some(Phase::Indexing) || watch.phase_fraction() < 1.0 {
            let p = watch.phase();
            if seen.last().map(|s| s.0) != Some(p) {
                seen.push((p, t0.elapsed().as_secs_f64()));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        seen
    });
    let s: Session = session::load_with_progress(path, &progress).expect("load");
    let loaded = t0.elapsed().as_secs_f64();
    let n = s.events.len();
    let after_parse = memory::status_mib("VmHWM");
    let rec = Recording::from_session(s, &progress).expect("index");
    let indexed = t0.elapsed().as_secs_f64();
    let phases = watcher.join().unwrap();
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    println!("{n} events, file {:.0} MB = {:.1} bytes/event", bytes as f64 / 1e6, bytes as f64 / n as f64);
    for w in phases.windows(2) {
        println!("  {:15} {:6.2} s", w[0].0.label(), w[1].1 - w[0].1);
    }
    println!(
        "  loaded (read, check, parse) in {loaded:.2} s = {:.0} ns/event; indexed, ready to draw, at {indexed:.2} s",
        loaded * 1e9 / n as f64
    );
    println!(
        "  peak RSS (of the process so far) {after_parse:.0} MiB after parsing, {:.0} MiB after indexing ({:.0} bytes/event); now {:.0} MiB",
        memory::status_mib("VmHWM"),
        memory::status_mib("VmHWM") * 1024.0 * 1024.0 / n as f64,
        memory::status_mib("VmRSS")
    );
    drop(rec);
}

/// The whole window around `state`, headless at 1280x800.
fn window(state: AppState) -> Harness<'static, AppState> {
    let mut view = WindowView::default();
    Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_ui_state(move |ui, s: &mut AppState| frame_ui(s, &mut view, ui), state)
}

/// The machine's load averages (1, 5, 15 minutes), as `uptime` prints them.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map_or_else(|_| "?".into(), |l| l.split(' ').take(3).collect::<Vec<_>>().join(" "))
}

/// CPU seconds this process has used (user + system, every thread): on a machine shared with
/// other work, what a load costs regardless of how much of the cores it got.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (in parentheses), from the state: utime is the 12th, stime
    // the 13th (fields 14 and 15 of proc(5)), in clock ticks of 1/100 s.
    let rest = stat.rsplit_once(')').map_or("", |r| r.1);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

/// Steps one frame and paces the loop like a 60 Hz display would; the frame's own time in ms.
fn paced_step(h: &mut Harness<'static, AppState>) -> f64 {
    let ms = step_ms(h);
    std::thread::sleep(Duration::from_micros(16_667).saturating_sub(Duration::from_secs_f64(ms / 1000.0)));
    ms
}

/// How the frames went while the file was still opening.
fn load_line(frames: &FrameStats) -> String {
    format!("{} frames, {:.1} ms avg, slowest {:.1} ms", frames.n, frames.mean_ms(), frames.worst_ms)
}

/// Opens `path` in the window and steps frames until it is fully loaded, the user scrubbing the
/// part shown all along when `scrub` (the pointer moving over the scrubber, the cursor dragged
/// back and forth): first frame, first frame drawing the run, fully loaded, frames meanwhile.
fn open_and_load(path: &Path, scrub: bool) -> (Harness<'static, AppState>, FrameStats) {
    let mut state = AppState::new(Scenario::default(), || {});
    state.settings.intro_dismissed = true;
    let mut h = window(state);
    let t = Instant::now();
    let cpu0 = cpu_seconds();
    h.state_mut().open_path(path);
    h.step();
    let first = t.elapsed().as_secs_f64();
    let mut frames = FrameStats::default();
    let mut first_data = None;
    let mut i = 0u64;
    while !h.state().file_jobs().is_empty() {
        if scrub && first_data.is_some() {
            i += 1;
            let x = 400.0 + (i % 40) as f32 * 10.0;
            h.event(egui::Event::PointerMoved(egui::pos2(x, 35.0)));
            let frac = (i % 40) as f64 / 40.0;
            let end = h.state().end_time();
            h.state_mut().playback.seek(SimTime((end.0 as f64 * frac) as u64));
        }
        frames.add(paced_step(&mut h));
        let shown = h.state().file.is_some() && h.state().lanes.first().is_some_and(|l| !l.store.is_empty());
        if shown && first_data.is_none() {
            first_data = Some((t.elapsed().as_secs_f64(), h.state().lanes[0].store.len(), cpu_seconds() - cpu0));
        }
    }
    h.step();
    let loaded = t.elapsed().as_secs_f64();
    let loaded_cpu = cpu_seconds() - cpu0;
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
    let (data_at, data_events, data_cpu) = first_data.unwrap_or((loaded, 0, loaded_cpu));
    let how = if scrub { "while the user scrubs it" } else { "untouched" };
    println!("window, opening {how} (load average {}):", load_average());
    println!("  first frame (progress bar)        {first:6.3} s");
    println!(
        "  first frame drawing the run       {data_at:6.3} s ({data_events} events shown; {data_cpu:.2} CPU s used)"
    );
    println!(
        "  fully loaded (all {} events)  {loaded:6.2} s; frames meanwhile: {}",
        h.state().lanes[0].store.len(),
        load_line(&frames)
    );
    println!("  CPU time of the whole open: {loaded_cpu:.2} s (all threads)");
    (h, frames)
}

/// Opens `path` in the window as a user would (see [`open_and_load`]), once untouched and once
/// scrubbing while it loads, then scrubs each tab of the loaded file.
fn open_in_window(path: &Path) {
    drop(open_and_load(path, true));
    let (mut h, _) = open_and_load(path, false);
    println!("  peak RSS {:.0} MiB after opening in the window", memory::status_mib("VmHWM"));
    let end = h.state().end_time();
    for tab in Tab::all() {
        h.state_mut().settings.tab = tab;
        let mut frames = FrameStats::default();
        // Warm the tab's caches, then drag the cursor back and forth across the run.
        h.step();
        let steps = 40;
        for i in 0..steps {
            let frac = if i % 2 == 0 { i as f64 / steps as f64 } else { 1.0 - i as f64 / steps as f64 };
            h.state_mut().playback.seek(SimTime((end.0 as f64 * frac) as u64));
            let ms = step_ms(&mut h);
            frames.add(ms);
            if std::env::var_os("OPEN_BENCH_FRAMES").is_some() && ms > 8.0 {
                println!("    frame {i} ({frac:.3} of the run): {ms:.2} ms");
            }
        }
        println!(
            "  scrubbing {:9} {:6.2} ms per frame (worst {:6.2} ms)",
            tab.name().to_lowercase(),
            frames.mean_ms(),
            frames.worst_ms
        );
        if tab == Tab::Summary {
            // The cursor rests: the fold catches up a budget per frame, then finishes once.
            let mut worst = 0.0f64;
            for _ in 0..120 {
                worst = worst.max(paced_step(&mut h));
            }
            println!(
                "  summary, cursor resting after the scrub: worst frame {worst:6.2} ms (catching up, then finishing)"
            );
        }
    }
    println!("  load average now {}", load_average());
}

fn main() {
    let mut args = std::env::args().skip(1);
    if let Some("--generate") = args.next().as_deref() {
        let path = PathBuf::from(args.next().unwrap());
        generate(&path, args.next().unwrap().parse().unwrap());
        return;
    }
    let events: usize = std::env::args().nth(1).map_or(10_000_000, |a| a.parse().expect("EVENTS"));
    let path = std::env::temp_dir().join(format!("ackscope-open-bench-{events}.ron"));
    if !path.exists() {
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--generate", &path.display().to_string(), &events.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }
    // The window first, so its peak RSS is its own (VmHWM only grows); then the phases of a
    // whole load without the window, for comparison.
    if std::env::var_os("OPEN_BENCH_NO_WINDOW").is_none() {
        open_in_window(&path);
    }
    load_headless(&path);
}
