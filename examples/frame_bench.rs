//! Frame CPU time of the window with a ~1-million-event session loaded, per tab, measured headless
//! (egui pass + layout + tessellation input, no GPU) with egui_kittest; and the frames the window
//! keeps drawing while that session is opened from disk on the file thread; then an A/B session
//! of ~1M events (Glenn vs UE4 at 15 % loss) on the Compare and Anomalies tabs, with the anomaly
//! strip under the scrubber (drawn on every tab) and a change of the anomaly filter.
//!
//! With a display filter typed into the Packets, Messages and Anomalies tabs and the Overview's IO
//! graph: the frames while each filter's cache is first built, then scrubbing those tabs.
//!
//! Each figure is the frame's wall time and, beside it, the UI thread's CPU time in that frame:
//! on a machine shared with other builds the first includes the time the scheduler ran them.
//!
//! Run: `cargo run --release --example frame_bench` (`-- --ab-only` for the A/B part alone,
//! `-- --filter-only` for the display filter part alone; `--frames` lists each frame of a
//! filter's build and every frame over 4 ms with its CPU time, how often the scheduler preempted
//! it and its start on the monotonic clock, to match against `perf record -k mono`)

#[path = "support/frames.rs"]
mod frames;

use std::time::Instant;

use ackscope::app::AppState;
use ackscope::app::Tab;
use ackscope::model::anomaly::AnomalyClass;
use ackscope::report;
use ackscope::ui::WindowView;
use ackscope::window::frame_ui;
use ackscope_protocol::{Scenario, SimTime, Strategy};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use frames::{step_ms, FrameStats};

/// The window's state and its views' state (the bench reaches into both).
type Window = (AppState, WindowView);

/// The whole window around `state`, headless at 1280x800.
fn window(state: AppState) -> Harness<'static, Window> {
    Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_ui_state(|ui, s: &mut Window| frame_ui(&mut s.0, &mut s.1, ui), (state, WindowView::default()))
}

/// This thread's CPU time in ms (0 where it cannot be read): a frame's own cost, without the
/// time the scheduler gave other processes meanwhile, which on a loaded machine is most of a slow
/// frame's wall time.
fn thread_cpu_ms() -> f64 {
    #[cfg(unix)]
    {
        use nix::time::{clock_gettime, ClockId};
        clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
            .map_or(0.0, |t| t.tv_sec() as f64 * 1000.0 + t.tv_nsec() as f64 / 1e6)
    }
    #[cfg(not(unix))]
    {
        0.0
    }
}

/// One frame's wall and CPU time, in ms.
#[derive(Debug, Clone, Copy, Default)]
struct FrameMs {
    wall: f64,
    cpu: f64,
}

/// This thread's (voluntary, involuntary) context switches so far (zeros where unknown): an
/// involuntary one is the scheduler running another process, a voluntary one a wait.
fn context_switches() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/thread-self/status").unwrap_or_default();
    let field =
        |name: &str| status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    (field("voluntary_ctxt_switches:"), field("nonvoluntary_ctxt_switches:"))
}

/// Steps one frame; its wall and CPU time.
fn timed_step(h: &mut Harness<'static, Window>) -> FrameMs {
    let switches = if frames_listed() { context_switches() } else { (0, 0) };
    let (f, c) = (Instant::now(), thread_cpu_ms());
    h.step();
    let ms = FrameMs { wall: f.elapsed().as_secs_f64() * 1000.0, cpu: thread_cpu_ms() - c };
    if ms.wall > SLOW_FRAME_MS && frames_listed() {
        let after = context_switches();
        let (waits, preempted) = (after.0 - switches.0, after.1 - switches.1);
        // The frame's start on the monotonic clock (`perf record -k mono` stamps samples on it),
        // to find what a slow frame spent its time on; and the passes egui ran (a second one
        // when a widget asked to discard the first).
        let out = &h.output().platform_output;
        let why: Vec<String> = out.request_discard_reasons.iter().map(|r| r.to_string()).collect();
        println!(
            "  slow frame: {:.2} ms (CPU {:.2} ms; preempted {preempted}, waited {waits} times) from {f:?}, {} passes {why:?}",
            ms.wall, ms.cpu, out.num_completed_passes
        );
    }
    ms
}

/// Frames' average and worst, wall and CPU.
#[derive(Debug, Clone, Copy, Default)]
struct Frames {
    wall: FrameStats,
    cpu: FrameStats,
}

impl Frames {
    fn add(&mut self, f: FrameMs) {
        self.wall.add(f.wall);
        self.cpu.add(f.cpu);
    }

    fn merge(&mut self, o: Frames) {
        self.wall.merge(o.wall);
        self.cpu.merge(o.cpu);
    }

    /// Frames counted.
    fn n(&self) -> usize {
        self.wall.n
    }
}

impl std::fmt::Display for Frames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:6.2} ms per frame (worst {:5.2} ms); CPU {:5.2} ms (worst {:5.2} ms)",
            self.wall.mean_ms(),
            self.wall.worst_ms,
            self.cpu.mean_ms(),
            self.cpu.worst_ms
        )
    }
}

/// With `--frames`, frames slower than this are listed.
const SLOW_FRAME_MS: f64 = 4.0;

/// `--frames`: list each frame of a filter's build, and the slow frames with their start and
/// their context switches.
fn frames_listed() -> bool {
    std::env::args().any(|a| a == "--frames")
}

/// Each of `tabs` scrubbed back and played forward from the middle, 50 ms a frame: the average
/// and worst frame of each; returns them all.
fn scrub_tabs(h: &mut Harness<'static, Window>, tabs: impl IntoIterator<Item = Tab>, prefix: &str) -> Frames {
    let end = h.state().0.end_time();
    let mut all = Frames::default();
    for tab in tabs {
        let name = format!("{prefix}{}", tab.name().to_lowercase());
        h.state_mut().0.settings.tab = tab;
        let mid = SimTime(end.0 / 2);
        for (label, forward) in [("scrubbing back", false), ("playing forward", true)] {
            h.state_mut().0.playback.seek(mid);
            // Warm caches (first frame after a tab or cursor change builds them), then measure.
            for _ in 0..3 {
                h.step();
            }
            let mut frames = Frames::default();
            for i in 0..60 {
                // Move the cursor 50 ms a frame, as a user dragging it or a 3x replay would.
                let c = if forward { mid.plus_micros(i * 50_000) } else { SimTime(mid.0.saturating_sub(i * 50_000)) };
                h.state_mut().0.playback.seek(c);
                frames.add(timed_step(h));
            }
            all.merge(frames);
            println!("{name:12} {label:16} {frames}");
        }
    }
    all
}

/// Opens `path` in a fresh window and steps frames until it is shown: how long that took, how many
/// frames were drawn meanwhile, and the slowest of them.
fn open_while_drawing(path: &std::path::Path) {
    let mut state = AppState::new(Scenario::default(), || {});
    state.settings.intro_dismissed = true;
    let mut h = window(state);
    let t = Instant::now();
    h.state_mut().0.open_path(path);
    let mut frames = FrameStats::default();
    while !h.state().0.file_jobs().is_empty() {
        frames.add(step_ms(&mut h));
        std::thread::sleep(std::time::Duration::from_millis(16));
    }
    println!(
        "opening it from disk on the file thread: shown after {:.2} s; {} frames drawn meanwhile (slowest {:.2} ms)",
        t.elapsed().as_secs_f64(),
        frames.n,
        frames.worst_ms
    );
    assert!(h.state().0.error.is_none(), "{:?}", h.state().0.error);
}

/// A live run at 1,000 packets/s each way: frame cost while events stream in.
fn live_1000_pps() {
    let s = Scenario { send_rate_pps: 1000.0, ..Scenario::default() };
    let mut state = AppState::new(s, || {});
    state.settings.intro_dismissed = true;
    let mut h = window(state);
    h.state_mut().0.start();
    for tab in [Tab::Overview, Tab::Messages, Tab::Packets, Tab::Anomalies] {
        let name = tab.name().to_lowercase();
        h.state_mut().0.settings.tab = tab;
        let mut frames = FrameStats::default();
        let t = Instant::now();
        while t.elapsed().as_secs_f64() < 4.0 {
            frames.add(step_ms(&mut h));
            // A 60 Hz display.
            std::thread::sleep(std::time::Duration::from_millis(16));
        }
        println!(
            "live 1000 pps, {name:9}: {:.2} ms per frame (worst {:.2} ms), {:.0} events/s ingested",
            frames.mean_ms(),
            frames.worst_ms,
            h.state().0.events_per_second()
        );
    }
    h.state_mut().0.stop();
}

/// Glenn vs UE4 at 15 % loss, about a million events in all: the Compare and Anomalies tabs
/// scrubbed, and the frame after a change of the anomaly filter (the list's cache and the
/// strip's counts are rebuilt then).
fn ab_compare_and_anomalies() {
    let mut s = Scenario { strategy: Strategy::Glenn, ..Scenario::default() };
    s.workload.reliable_rate_hz = 100.0;
    s.link.a_to_b.loss_percent = 15.0;
    s.link.b_to_a.loss_percent = 15.0;
    let t = Instant::now();
    let mut session = report::run(&s, 300.0).session;
    let b = report::run(&Scenario { strategy: Strategy::Ue4, ..s.clone() }, 300.0).session;
    session.ab = Some(Strategy::Ue4);
    (session.ab_actions, session.ab_events) = (b.actions, b.events);
    session.duration_us = session.duration_us.max(b.duration_us);
    let n = session.events.len() + session.ab_events.len();
    println!("A/B session: {n} events (glenn vs ue4, 15 % loss, 300 s each) in {:.2} s", t.elapsed().as_secs_f64());
    let mut state = AppState::new(Scenario::default(), || {});
    state.settings.intro_dismissed = true;
    state.show_session(session, None);
    let mut h = window(state);
    let anomalies: usize = h.state().0.lanes.iter().map(|l| l.anomalies.len()).sum();
    println!("anomalies indexed: {anomalies}");
    let mut all = scrub_tabs(&mut h, [Tab::Compare, Tab::Anomalies, Tab::Overview], "A/B ");
    h.state_mut().0.settings.tab = Tab::Anomalies;
    let mut changes = Frames::default();
    for class in AnomalyClass::ALL {
        h.state_mut().1.panels.anomalies.filter.solo(class);
        changes.add(timed_step(&mut h));
    }
    println!("A/B anomalies, the frame after a filter change: {changes}");
    all.merge(changes);
    println!(
        "A/B worst frame of all: {:.2} ms, CPU {:.2} ms (target: under 8 ms)",
        all.wall.worst_ms, all.cpu.worst_ms
    );
}

/// Types `text` into the filter box of `tab` (its IO graph's on the Overview) and steps frames
/// until the filter's cache has checked every row: the frames that took.
fn type_filter(h: &mut Harness<'static, Window>, tab: Tab, text: &str) -> Frames {
    h.state_mut().0.settings.tab = tab;
    if tab == Tab::Overview {
        h.state_mut().1.panels.overview.io.open = true;
    }
    for _ in 0..3 {
        h.step();
    }
    let label = egui::accesskit::Role::TextInput;
    h.get_by_role_and_label(label, "filter").focus();
    h.step();
    h.get_by_role_and_label(label, "filter").type_text(text);
    let mut frames = Frames::default();
    let mut listed = Vec::new();
    loop {
        let ms = timed_step(h);
        frames.add(ms);
        listed.push(format!("{:.2}/{:.2}", ms.wall, ms.cpu));
        let v = &h.state().1.panels;
        let building = match tab {
            Tab::Packets => v.packets.0.get(0).is_some_and(|p| p.expr.progress.is_some_and(|u| !u.complete)),
            Tab::Messages => v.messages.0.get(0).is_some_and(|p| p.expr.progress.is_some_and(|u| !u.complete)),
            Tab::Anomalies => {
                let lane = &h.state().0.lanes[0];
                v.anomalies.per_lane.get(0).is_some_and(|l| l.expr.rows_checked() < lane.anomalies.len())
            }
            _ => {
                let (checked, rows) = v.overview.io.progress;
                checked < rows
            }
        };
        // Two more frames than the build needs: the frame that typed it and the first after.
        if !building && frames.n() > 2 || frames.n() > 1000 {
            break;
        }
    }
    println!("filter `{text}` on {}: built in {} frames, {frames}", tab.name(), frames.n());
    if frames_listed() {
        println!("  each frame, wall/CPU ms: {}", listed.join(" "));
    }
    frames
}

/// The Packets, Messages and Anomalies tabs and the IO graph, each with a display filter.
fn filtered_tabs(h: &mut Harness<'static, Window>) {
    let mut all = Frames::default();
    for (tab, text) in [
        (Tab::Packets, "fate == dropped || (dir == b_to_a && delay_ms > 60)"),
        (Tab::Messages, "resend.cause in {nak, timeout} || latency_ms > 150"),
        (Tab::Anomalies, "kind == drop && side == a"),
        (Tab::Overview, "dropped && dir == a_to_b"),
    ] {
        all.merge(type_filter(h, tab, text));
    }
    all.merge(scrub_tabs(h, [Tab::Packets, Tab::Messages, Tab::Anomalies, Tab::Overview], "filtered "));
    println!(
        "display filters: worst frame of all {:.2} ms, CPU {:.2} ms (target: under 8 ms)",
        all.wall.worst_ms, all.cpu.worst_ms
    );
}

/// The single-lane session of about a million events the bench scrubs.
fn million_event_session() -> ackscope::session::Session {
    let mut s = Scenario::default();
    s.workload.reliable_rate_hz = 100.0;
    s.link.a_to_b.loss_percent = 10.0;
    s.link.b_to_a.loss_percent = 10.0;
    let t = Instant::now();
    let run = report::run(&s, 600.0);
    let n = run.session.events.len();
    println!("session: {n} events, 600 s simulated in {:.2} s", t.elapsed().as_secs_f64());
    run.session
}

fn main() {
    if std::env::args().any(|a| a == "--ab-only") {
        ab_compare_and_anomalies();
        return;
    }
    if std::env::args().any(|a| a == "--filter-only") {
        let mut state = AppState::new(Scenario::default(), || {});
        state.settings.intro_dismissed = true;
        state.show_session(million_event_session(), None);
        filtered_tabs(&mut window(state));
        return;
    }
    live_1000_pps();
    let session = million_event_session();
    let path = std::env::temp_dir().join(format!("ackscope-frame-bench-{}.ron", std::process::id()));
    ackscope::session::save(&session, &path).expect("save the session");
    open_while_drawing(&path);
    let _ = std::fs::remove_file(&path);

    let mut state = AppState::new(Scenario::default(), || {});
    state.settings.intro_dismissed = true;
    let t = Instant::now();
    state.show_session(session, None);
    println!("loading into the window's store and indexes: {:.2} s", t.elapsed().as_secs_f64());

    let mut h = window(state);
    let end = h.state().0.end_time();
    scrub_tabs(&mut h, Tab::all(), "");
    // Moving the cursor backwards makes the Summary tab fold every event up to it again (at most
    // every 500 ms while dragging): the cost of that one frame.
    h.state_mut().0.settings.tab = Tab::Summary;
    h.state_mut().0.playback.seek(end);
    h.step();
    std::thread::sleep(std::time::Duration::from_millis(600));
    // From the end back to 90 %: a refold over 90 % of the events.
    h.state_mut().0.playback.seek(SimTime(end.0 / 10 * 9));
    let t = Instant::now();
    h.step();
    println!(
        "summary refold after a backward jump to 90 % (at most every 500 ms while dragging): {:.1} ms",
        t.elapsed().as_secs_f64() * 1000.0
    );
    filtered_tabs(&mut h);
    ab_compare_and_anomalies();
}
