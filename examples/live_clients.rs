//! The window during a live run of many clients, against the wall clock (issue 23's figure: 64
//! clients at 60 packets/s each way for 10 minutes, every frame under 16 ms, memory held under
//! the live cap).
//!
//! It drives the real window headless the way `frame_bench` does (egui_kittest, 1280x800, egui
//! pass and layout, no GPU): `AppState::start` spawns the live run thread, and each frame takes
//! the run's events in within the frame's budget and draws the views, paced like the app's
//! animation frames (33 ms; back to back while the window catches up, as the app asks then). The tab shown changes every 30 s (Overview, Clients, Messages,
//! Packets, Anomalies, Summary, ...), so every view meets the growing recording. It prints the
//! frame time per tab (average, p99, worst), the window thread's time on a core per frame (its
//! work, without the waits for a core a loaded machine adds), the slowest frames with what they
//! did (the timing spans of `app::live_log_spans`: intake of the run's events, the Clients and
//! Slices views), and memory: the lanes' events in memory and their estimate against the live
//! cap, and peak RSS.
//!
//! The live run is paced by the wall clock, so 600 s of run take 600 s.
//!
//! Run: `cargo run --release --example live_clients [-- --seconds 600 --set clients=64
//! --set send_rate_pps=60 --max-mib 2048 --tab-seconds 30]` (the defaults shown; more `--set NAME=VALUE` as the CLI
//! takes them)

#[path = "support/memory.rs"]
mod memory;

use std::time::{Duration, Instant};

use ackscope::app::live_log::LiveLog;
use ackscope::app::{AppState, Tab};
use ackscope::model::limits::LiveLimits;
use ackscope::ui::WindowView;
use ackscope::window::frame_ui;
use ackscope_protocol::Scenario;
use egui_kittest::Harness;

/// The window's state and its views' state.
type Window = (AppState, WindowView);

/// The app's frame interval while a live run animates (`window::ANIMATION_FRAME`).
const FRAME: Duration = Duration::from_millis(33);
/// How long each tab is shown before the next, unless `--tab-seconds` says.
const TAB_SECONDS: f64 = 30.0;
/// The frame target the figure is judged by.
const TARGET_MS: f64 = 16.0;

struct Args {
    seconds: f64,
    set: Vec<String>,
    max_mib: u64,
    tab_seconds: f64,
}

fn args() -> Args {
    let mut a = Args { seconds: 600.0, set: Vec::new(), max_mib: 2048, tab_seconds: TAB_SECONDS };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().unwrap_or_else(|| panic!("{name} needs a value"));
        match arg.as_str() {
            "--seconds" => a.seconds = value("--seconds").parse().expect("--seconds: a number"),
            "--set" => a.set.push(value("--set")),
            "--max-mib" => a.max_mib = value("--max-mib").parse().expect("--max-mib: whole MiB"),
            "--tab-seconds" => a.tab_seconds = value("--tab-seconds").parse().expect("--tab-seconds: a number"),
            other => panic!("unknown argument {other} (--seconds S, --set NAME=VALUE, --max-mib N, --tab-seconds S)"),
        }
    }
    // Issue 23's run unless told otherwise: 64 clients at 60 packets/s each way.
    for (name, default) in [("clients", "clients=64"), ("send_rate_pps", "send_rate_pps=60")] {
        if !a.set.iter().any(|s| s.split('=').next() == Some(name)) {
            a.set.insert(0, default.to_string());
        }
    }
    a
}

/// Frame times of one tab, in ms.
#[derive(Default)]
struct Frames {
    ms: Vec<f64>,
}

impl Frames {
    fn line(&self, name: &str) -> String {
        let mut v = self.ms.clone();
        v.sort_by(f64::total_cmp);
        let n = v.len().max(1);
        let avg = v.iter().sum::<f64>() / n as f64;
        let p99 = v.get((n * 99 / 100).min(n - 1)).copied().unwrap_or(0.0);
        let worst = v.last().copied().unwrap_or(0.0);
        let over = v.iter().filter(|m| **m > TARGET_MS).count();
        format!(
            "{name:10} {:6} frames  avg {avg:5.2} ms  p99 {p99:6.2} ms  worst {worst:7.2} ms  over {TARGET_MS} ms: {over}",
            v.len()
        )
    }
}

/// This thread's time on a core and its time waiting for one, in ns (`None` where Linux's
/// schedstat is missing).
///
/// The time on a core is `CLOCK_THREAD_CPUTIME_ID`, which brings the running slice up to date.
/// Schedstat's own first field does not: read by the thread itself mid-slice it lags by the time
/// since the last scheduler tick (4 ms at this kernel's 250 Hz), which made about 1.7 ms of every
/// frame look blocked (neither on a core nor waiting for one) in the figures before 2026-11-28.
/// The wait (schedstat's second field) is complete: it is added when the thread gets a core.
fn schedstat() -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let waited = s.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    Some((thread_cpu_ns()?, waited))
}

#[cfg(unix)]
fn thread_cpu_ns() -> Option<u64> {
    use nix::time::{clock_gettime, ClockId};
    let t = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
    Some(t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
}

#[cfg(not(unix))]
fn thread_cpu_ns() -> Option<u64> {
    None
}

/// This thread's minor and major page faults so far (Linux's `/proc/thread-self/stat`, fields 10
/// and 12; `None` elsewhere).
fn faults() -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let f: Vec<&str> = s[s.rfind(')')? + 2..].split_whitespace().collect();
    Some((f.get(7)?.parse().ok()?, f.get(9)?.parse().ok()?))
}

fn load() -> String {
    let l = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

fn main() {
    let a = args();
    // `Recording::len` counts every client's events; a lane's `store` is its focused client's.
    let mut scenario = Scenario::default();
    ackscope::params::overrides::apply_all(&mut scenario, &a.set).expect("--set");
    let dir = std::env::temp_dir().join(format!("ackscope-live-clients-{}", std::process::id()));
    let mut state = AppState::new(scenario, || {});
    state.settings.intro_dismissed = true;
    state.settings.live_window_min = 30.0;
    state.settings.live_max_mib = a.max_mib;
    state.live_log = LiveLog::new(dir.clone());
    let limits: LiveLimits = state.settings.live_limits();
    println!(
        "{} for {} s; live cap {:.0} min / {} MiB (as `Recording::heap_bytes` counts); load average before: {}",
        a.set.join(" "),
        a.seconds,
        limits.window_s / 60.0,
        limits.max_bytes >> 20,
        load()
    );
    let mut h: Harness<'static, Window> = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_ui_state(|ui, s: &mut Window| frame_ui(&mut s.0, &mut s.1, ui), (state, WindowView::default()));
    h.state_mut().0.start();
    let tabs: Vec<Tab> = Tab::all().filter(|t| !matches!(t, Tab::Tune | Tab::Compare)).collect();
    let mut per_tab: Vec<Frames> = tabs.iter().map(|_| Frames::default()).collect();
    let mut all = Frames::default();
    // The window thread's own time on a core per frame (its work, without the waits for a core
    // that a loaded machine adds to the wall time).
    let mut per_tab_cpu: Vec<Frames> = tabs.iter().map(|_| Frames::default()).collect();
    let mut all_cpu = Frames::default();
    // Time per frame neither on a core nor waiting for one: blocked (a lock, a page fault's I/O,
    // a system call), and the window thread's page faults per frame.
    let mut all_blocked = Frames::default();
    let mut all_faults = Frames::default();
    // The slowest frames: (ms, wall s, tab, events taken in that frame, where its time went).
    let mut slowest: Vec<(f64, f64, Tab, u64, String)> = Vec::new();
    // Every span's frames: (name, ms per frame it ran in).
    let mut spans: Vec<(&'static str, Vec<f64>)> = Vec::new();
    ackscope::app::live_log_spans::enable(true);
    let (mut most_events, mut most_estimate) = (0usize, 0u64);
    let started = Instant::now();
    let mut next_report = 60.0;
    loop {
        let t = started.elapsed().as_secs_f64();
        if t >= a.seconds {
            break;
        }
        let i = (t / a.tab_seconds) as usize % tabs.len();
        h.state_mut().0.settings.tab = tabs[i];
        let before: u64 = h.state().0.lanes.iter().map(|l| l.len() as u64).sum();
        let (f, sched, faulted) = (Instant::now(), schedstat(), faults());
        h.step();
        let ms = f.elapsed().as_secs_f64() * 1000.0;
        let (cpu_ms, waited_ms) = schedstat().map_or((0.0, 0.0), |(c, w)| {
            let (c0, w0) = sched.unwrap_or((c, w));
            ((c - c0) as f64 / 1e6, (w - w0) as f64 / 1e6)
        });
        let blocked_ms = (ms - cpu_ms - waited_ms).max(0.0);
        all_blocked.ms.push(blocked_ms);
        let (minor, major) = faults().map_or((0, 0), |(m, j)| {
            let (m0, j0) = faulted.unwrap_or((m, j));
            (m - m0, j - j0)
        });
        all_faults.ms.push((minor + major) as f64);
        per_tab_cpu[i].ms.push(cpu_ms);
        all_cpu.ms.push(cpu_ms);
        let held: usize = h.state().0.lanes.iter().map(|l| l.len()).sum();
        let held_bytes: u64 = h.state().0.lanes.iter().map(|l| l.heap_bytes() as u64).sum();
        per_tab[i].ms.push(ms);
        all.ms.push(ms);
        let took = ackscope::app::live_log_spans::take();
        for (name, d) in &took {
            match spans.iter_mut().find(|(n, _)| n == name) {
                Some((_, v)) => v.push(d.as_secs_f64() * 1000.0),
                None => spans.push((name, vec![d.as_secs_f64() * 1000.0])),
            }
        }
        let split = || took.iter().map(|(n, d)| format!("{n} {:.1}", d.as_secs_f64() * 1000.0)).collect::<Vec<_>>();
        let split = format!(
            "on a core {cpu_ms:.1}, waiting for one {waited_ms:.1}, blocked {blocked_ms:.1}, {minor} minor and {major} major page faults: {}",
            split().join(", ")
        );
        slowest.push((ms, t, tabs[i], (held as u64).saturating_sub(before), split));
        slowest.sort_by(|x, y| y.0.total_cmp(&x.0));
        slowest.truncate(12);
        most_events = most_events.max(held);
        most_estimate = most_estimate.max(held_bytes);
        if t >= next_report {
            next_report += 60.0;
            let s = &h.state().0;
            println!(
                "  {:4.0} s: run at {:.1} s, {held} events in memory ({} MiB counted), RSS {:.0} MiB (peak {:.0}), {:.0} events/s, {}; load {}",
                t,
                s.end_time().as_secs_f64(),
                held_bytes >> 20,
                memory::status_mib("VmRSS"),
                memory::status_mib("VmHWM"),
                s.events_per_second(),
                s.lag.describe().unwrap_or_else(|| "not behind".into()),
                load()
            );
        }
        // A window catching up asks for its next frame at once (`window::frame_ui`), as eframe
        // then draws it: no pause.
        if !h.state().0.lag.catching_up {
            std::thread::sleep(FRAME.saturating_sub(f.elapsed()));
        }
    }
    let s = &h.state().0;
    let shown = s.end_time().as_secs_f64();
    let lag = s.lag.describe();
    let events_now: usize = s.lanes.iter().map(|l| l.len()).sum();
    let clients = s.lanes[0].clients().len();
    h.state_mut().0.stop();
    println!("frame time per tab (wall time of the whole frame: intake of the run's events, views, commands):");
    for (tab, frames) in tabs.iter().zip(&per_tab) {
        println!("  {}", frames.line(tab.name()));
    }
    println!("  {}", all.line("all"));
    println!("time on a core per frame (the window thread's, CLOCK_THREAD_CPUTIME_ID: its work alone):");
    for (tab, frames) in tabs.iter().zip(&per_tab_cpu) {
        println!("  {}", frames.line(tab.name()));
    }
    println!("  {}", all_cpu.line("all"));
    println!(
        "blocked per frame (wall time neither on a core nor waiting for one: a lock, I/O): {:.1} s in all",
        all_blocked.ms.iter().sum::<f64>() / 1000.0
    );
    println!("  {}", all_blocked.line("all"));
    let n = all_faults.ms.len().max(1) as f64;
    let mut by_faults = all_faults.ms.clone();
    by_faults.sort_by(f64::total_cmp);
    println!(
        "page faults of the window thread per frame: avg {:.0}, p99 {:.0}, most {:.0}",
        all_faults.ms.iter().sum::<f64>() / n,
        by_faults.get(by_faults.len() * 99 / 100).copied().unwrap_or(0.0),
        by_faults.last().copied().unwrap_or(0.0)
    );
    println!("slowest frames (ms, at wall s, tab, events taken in):");
    for (ms, t, tab, n, split) in &slowest {
        println!("  {ms:7.2} ms at {t:5.1} s on {:9} ({n} events): {split}", tab.name());
    }
    println!("spans (ms in the frames each ran in: intake.* is the fold of the run's events, the rest views):");
    for (name, ms) in &spans {
        println!("  {}", Frames { ms: ms.clone() }.line(name));
    }
    println!(
        "run shown to {shown:.1} s of {:.1} s wall, {clients} clients; status: {}",
        a.seconds,
        lag.unwrap_or_else(|| "not behind".into())
    );
    println!(
        "memory: {events_now} events held at the end, at most {most_events} (at most {} MiB counted, of the {} MiB cap); peak RSS {:.0} MiB",
        most_estimate >> 20,
        limits.max_bytes >> 20,
        memory::status_mib("VmHWM")
    );
    println!("load average after: {}", load());
    let _ = std::fs::remove_dir_all(&dir);
}
