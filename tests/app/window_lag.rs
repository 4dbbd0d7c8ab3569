//! A window that fell behind its live run (issue 25, defect 2): it says how far and why,
//! catches up by not drawing the views, and drops no event, driven headless with egui_kittest.

use crate::common::window_harness;
use std::time::{Duration, Instant};

use ackscope::app::live_log::LiveLog;
use ackscope::app::{AppState, Tab};
use ackscope::ui::WindowView;
use ackscope_protocol::{Scenario, Simulation};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

type Window = Harness<'static, (AppState, WindowView)>;

#[test]
fn a_window_behind_its_run_says_so_catches_up_without_drawing_and_drops_no_event() {
    let dir = std::env::temp_dir().join(format!("ackscope-window-lag-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // 1000 packets/s each way, as in the defect: thousands of events per second of run.
    let scenario = Scenario { seed: 25, send_rate_pps: 1000.0, ..Scenario::default() };
    let mut state = AppState::new(scenario.clone(), || {});
    state.settings.tab = Tab::Overview;
    state.live_log = LiveLog::new(dir.clone());
    // A short catch-up budget and at most 2,000 events a frame (about a tenth of a second of
    // this run), so catching up 1 s takes several frames to watch however fast the machine is
    // and however the run thread cut its batches (starved, it delivers seconds in one).
    state.lag.catch_up_budget = Duration::from_millis(2);
    state.lag.catch_up_events = 2_000;
    let mut h: Window = window_harness(state);
    h.state_mut().0.start();
    // No frames for a while (a window busy drawing): the run goes on and the window trails it.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        h.state_mut().0.update_lag();
        if h.state().0.lag.window_behind >= Duration::from_millis(1000) {
            break;
        }
        assert!(Instant::now() < deadline, "the run never got 1 s ahead: {:?}", h.state().0.lag);
        std::thread::sleep(Duration::from_millis(20));
    }
    h.step();
    let lag = h.state().0.lag.clone();
    assert!(lag.catching_up, "{lag:?}");
    assert!(h.query_by_label_contains("window behind by").is_some(), "the status bar says how far behind");
    assert!(h.query_by_label_contains("no event dropped").is_some());
    assert!(h.query_by_label("Catching up with the run").is_some(), "the tab's views give way to the notice");
    // Frames come and take the backlog in until the window is level with the run.
    let deadline = Instant::now() + Duration::from_secs(60);
    while h.state().0.lag.catching_up {
        assert!(Instant::now() < deadline, "never caught up: {:?}", h.state().0.lag);
        h.step();
    }
    let skipped = h.state().0.lag.skipped_frames;
    assert!(skipped >= 2, "views skipped in {skipped} frames");
    // Level again: the views are drawn and the status bar says the window caught up, or, on a
    // machine so loaded that the run itself trails the wall clock, says that instead. Waited
    // for, not taken from the next frame: a starved run thread may run ahead again for a moment.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        h.step();
        let drawn = h.query_by_label("Catching up with the run").is_none();
        let said = h.query_by_label_contains("caught up").is_some()
            || h.query_by_label_contains("run behind the wall clock").is_some();
        if drawn && said && h.query_by_label_contains("window behind").is_none() {
            break;
        }
        assert!(Instant::now() < deadline, "views drawn {drawn}, never said caught up: {:?}", h.state().0.lag);
    }
    // Stopped: every event the run made is in the recording, exactly a headless run's.
    h.state_mut().0.stop();
    let rec = &h.state().0.lanes[0];
    let end = rec.end_time();
    let mut sim = Simulation::new(scenario);
    sim.run_until(end);
    let want: Vec<_> = sim.drain_events().filter(|e| e.time <= end).collect();
    assert!(want.len() > 10_000, "{} events", want.len());
    assert_eq!(rec.store.len(), want.len(), "events recorded vs made, up to {end:?}");
    assert!(rec.store.events() == &want[..], "the recording is the run's events, in order");
    let _ = std::fs::remove_dir_all(&dir);
}
