//! Replay speed in the window's real frame loop: how far the cursor moves in 30 s of wall time at
//! 1x, 4x and 16x with a ~1-million-event session loaded, headless (egui pass, no GPU) with
//! egui_kittest, frames paced like the app's `request_repaint_after(33 ms)`, on the system clock.
//!
//! Run: `cargo run --release --example replay_speed [-- --secs 30 --tabs overview,messages,packets]`

use std::time::{Duration, Instant};

use ackscope::app::Tab;
use ackscope::app::{AppCommand, AppState};
use ackscope::ui::WindowView;
use ackscope::window::frame_ui;
use ackscope_protocol::{Scenario, SimTime};
use egui_kittest::Harness;

/// The app's frame interval while something moves (`ANIMATION_FRAME` in the frame loop).
const FRAME: Duration = Duration::from_millis(33);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let secs: f64 = arg("--secs").map_or(30.0, |s| s.parse().expect("--secs SECONDS"));
    let tabs: Vec<Tab> = arg("--tabs").map_or(vec![Tab::Overview], |t| {
        t.split(',').map(|n| Tab::parse(n).unwrap_or_else(|| panic!("unknown tab {n}"))).collect()
    });

    let mut s = Scenario::default();
    s.workload.reliable_rate_hz = 100.0;
    s.link.a_to_b.loss_percent = 10.0;
    s.link.b_to_a.loss_percent = 10.0;
    let run = ackscope::report::run(&s, 600.0);
    println!("session: {} events, 600 s simulated", run.session.events.len());

    let mut state = AppState::new(Scenario::default(), || {});
    state.settings.intro_dismissed = true;
    state.show_session(run.session, None);
    let mut view = WindowView::default();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_ui_state(move |ui, s: &mut AppState| frame_ui(s, &mut view, ui), state);
    let end = h.state().end_time();

    for tab in tabs {
        h.state_mut().settings.tab = tab;
        for speed in [1.0, 4.0, 16.0] {
            assert!(secs * speed < end.as_secs_f64(), "the session is too short for {secs} s at {speed}x");
            h.state_mut().apply(AppCommand::SeekTo(SimTime::ZERO));
            h.state_mut().apply(AppCommand::SetSpeed(speed));
            for _ in 0..3 {
                h.step();
            }
            h.state_mut().apply(AppCommand::TogglePlay);
            let started = Instant::now();
            let (mut frames, mut slowest, mut last_frame_start) = (0, 0.0f64, started);
            let mut next = started + FRAME;
            while started.elapsed().as_secs_f64() < secs {
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
                next += FRAME;
                last_frame_start = Instant::now();
                h.step();
                slowest = slowest.max(last_frame_start.elapsed().as_secs_f64() * 1000.0);
                frames += 1;
            }
            // The cursor moved at the start of the last frame: wall time up to there.
            let wall = last_frame_start.duration_since(started).as_secs_f64();
            let moved = h.state().cursor().as_secs_f64();
            h.state_mut().apply(AppCommand::TogglePlay);
            println!(
                "{:9} {speed:>4}x: cursor moved {moved:7.2} s in {wall:.2} s of wall time = {:.3}x ({:+.2} %); {frames} frames, slowest {slowest:.1} ms",
                tab.name(),
                moved / wall,
                (moved / (wall * speed) - 1.0) * 100.0,
            );
        }
    }
}
