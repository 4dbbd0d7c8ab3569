//! Frame CPU time of the window with a ~1-million-event session loaded, per tab, measured headless
//! (egui pass + layout + tessellation input, no GPU) with egui_kittest; and the frames the window
//! keeps drawing while that session is opened from disk on the file thread.
//!
//! Run: `cargo run --release --example frame_bench`

use std::time::Instant;

use ackscope::app::AppState;
use ackscope::report;
use ackscope::ui::{Tab, WindowView};
use ackscope::window::frame_ui;
use ackscope_protocol::{Scenario, SimTime};
use egui_kittest::Harness;

/// The whole window around `state`, headless at 1280x800.
fn window(state: AppState) -> Harness<'static, AppState> {
    let mut view = WindowView::default();
    Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_ui_state(move |ui, s: &mut AppState| frame_ui(s, &mut view, ui), state)
}

/// Opens `path` in a fresh window and steps frames until it is shown: how long that took, how many
/// frames were drawn meanwhile, and the slowest of them.
fn open_while_drawing(path: &std::path::Path) {
    let mut state = AppState::new(Scenario::default(), || {});
    state.settings.intro_dismissed = true;
    let mut h = window(state);
    let t = Instant::now();
    h.state_mut().open_path(path);
    let (mut frames, mut worst) = (0, 0.0f64);
    while !h.state().file_jobs().is_empty() {
        let f = Instant::now();
        h.step();
        worst = worst.max(f.elapsed().as_secs_f64() * 1000.0);
        frames += 1;
        std::thread::sleep(std::time::Duration::from_millis(16));
    }
    println!(
        "opening it from disk on the file thread: shown after {:.2} s; {frames} frames drawn meanwhile (slowest {worst:.2} ms)",
        t.elapsed().as_secs_f64()
    );
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
}

/// A live run at 1,000 packets/s each way: frame cost while events stream in.
fn live_1000_pps() {
    let s = Scenario { send_rate_pps: 1000.0, ..Scenario::default() };
    let mut state = AppState::new(s, || {});
    state.settings.intro_dismissed = true;
    let mut h = window(state);
    h.state_mut().start();
    for tab in [Tab::Overview, Tab::Messages, Tab::Packets] {
        let name = tab.name().to_lowercase();
        h.state_mut().settings.tab = tab;
        let (mut frames, mut total, mut worst) = (0, 0.0f64, 0.0f64);
        let t = Instant::now();
        while t.elapsed().as_secs_f64() < 4.0 {
            let f = Instant::now();
            h.step();
            let ms = f.elapsed().as_secs_f64() * 1000.0;
            total += ms;
            worst = worst.max(ms);
            frames += 1;
            // A 60 Hz display.
            std::thread::sleep(std::time::Duration::from_millis(16));
        }
        println!(
            "live 1000 pps, {name:9}: {:.2} ms per frame (worst {worst:.2} ms), {:.0} events/s ingested",
            total / frames as f64,
            h.state().events_per_second()
        );
    }
    h.state_mut().stop();
}

fn main() {
    live_1000_pps();
    let mut s = Scenario::default();
    s.workload.reliable_rate_hz = 100.0;
    s.link.a_to_b.loss_percent = 10.0;
    s.link.b_to_a.loss_percent = 10.0;
    let t = Instant::now();
    let run = report::run(&s, 600.0);
    let n = run.session.events.len();
    println!("session: {n} events, 600 s simulated in {:.2} s", t.elapsed().as_secs_f64());

    let path = std::env::temp_dir().join(format!("ackscope-frame-bench-{}.ron", std::process::id()));
    ackscope::session::save(&run.session, &path).expect("save the session");
    open_while_drawing(&path);
    let _ = std::fs::remove_file(&path);

    let mut state = AppState::new(Scenario::default(), || {});
    state.settings.intro_dismissed = true;
    let t = Instant::now();
    state.show_session(run.session, None);
    println!("loading into the window's store and indexes: {:.2} s", t.elapsed().as_secs_f64());

    let mut h = window(state);
    let end = h.state().end_time();
    for tab in Tab::all() {
        let name = tab.name().to_lowercase();
        h.state_mut().settings.tab = tab;
        let mid = SimTime(end.0 / 2);
        for (label, forward) in [("scrubbing back", false), ("playing forward", true)] {
            h.state_mut().playback.seek(mid);
            // Warm caches (first frame after a tab or cursor change builds them), then measure.
            for _ in 0..3 {
                h.step();
            }
            let frames = 60;
            let t = Instant::now();
            let mut worst = 0.0f64;
            for i in 0..frames {
                // Move the cursor 50 ms a frame, as a user dragging it or a 3x replay would.
                let c = if forward { mid.plus_micros(i * 50_000) } else { SimTime(mid.0.saturating_sub(i * 50_000)) };
                h.state_mut().playback.seek(c);
                let f = Instant::now();
                h.step();
                worst = worst.max(f.elapsed().as_secs_f64() * 1000.0);
            }
            let ms = t.elapsed().as_secs_f64() * 1000.0 / frames as f64;
            println!("{name:9} {label:16} {ms:6.2} ms per frame (worst {worst:5.2} ms)");
        }
    }
    // Moving the cursor backwards makes the Summary tab fold every event up to it again (at most
    // every 500 ms while dragging): the cost of that one frame.
    h.state_mut().settings.tab = Tab::Summary;
    h.state_mut().playback.seek(end);
    h.step();
    std::thread::sleep(std::time::Duration::from_millis(600));
    // From the end back to 90 %: a refold over 90 % of the events.
    h.state_mut().playback.seek(SimTime(end.0 / 10 * 9));
    let t = Instant::now();
    h.step();
    println!(
        "summary refold after a backward jump to 90 % (at most every 500 ms while dragging): {:.1} ms",
        t.elapsed().as_secs_f64() * 1000.0
    );
}
