//! The Overview plots, driven headless with egui_kittest: legend toggles, the rolling time
//! window (following a live run, zoom keeps following, pan stops it, resume), Y ranges linked
//! across A/B lanes with the budget on its own plot, parameter changes as markers rather than
//! legend entries, and the hover readout.

use crate::common::window_harness;
use ackscope::app::{AppState, ManualClock};
use ackscope::model::{Recording, Shown};
use ackscope::session::Change;
use ackscope::ui::plots_ui::{overview_ui, OverviewView};
use ackscope_protocol::{Dir, Scenario, SimTime, Simulation, Strategy};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

const SEED: u64 = 21;

/// The Overview tab alone over simulations of some strategies at 15 % loss and their
/// recordings so far, with the cursor at the end (as in a live run).
struct Panel {
    sims: Vec<Simulation>,
    lanes: Vec<Recording>,
    view: OverviewView,
}

impl Panel {
    /// Runs every lane `secs` more and records them, as a live run's ingest does.
    fn advance(&mut self, secs: f64) {
        for (sim, rec) in self.sims.iter_mut().zip(&mut self.lanes) {
            sim.run_for_secs(secs);
            rec.ingest(sim.drain_events().collect());
        }
    }
}

fn panel(strategies: &[Strategy], secs: f64) -> Harness<'static, Panel> {
    let scenarios: Vec<Scenario> = strategies
        .iter()
        .map(|&strategy| {
            let mut s = Scenario { seed: SEED, strategy, ..Scenario::default() };
            for d in Dir::BOTH {
                s.link.get_mut(d).loss_percent = 15.0;
            }
            s
        })
        .collect();
    let mut p = Panel {
        sims: scenarios.iter().cloned().map(Simulation::new).collect(),
        lanes: scenarios.into_iter().map(Recording::new).collect(),
        view: OverviewView::default(),
    };
    p.advance(secs);
    Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, p: &mut Panel| {
            let cursor = p.lanes[0].store.end_time();
            let mut cmds = Vec::new();
            overview_ui(&Shown::all(&p.lanes, 1), &mut p.view, cursor, ui, &mut cmds);
        },
        p,
    )
}

fn x_range(h: &Harness<'static, Panel>, id: &str) -> (f64, f64) {
    let b = h.state().view.bounds(id).unwrap_or_else(|| panic!("{id} was not drawn"));
    (b.min()[0], b.max()[0])
}

fn end_s(h: &Harness<'static, Panel>) -> f64 {
    h.state().lanes[0].store.end_time().as_secs_f64()
}

fn close(a: (f64, f64), b: (f64, f64)) -> bool {
    (a.0 - b.0).abs() < 1e-6 && (a.1 - b.1).abs() < 1e-6
}

#[test]
fn hiding_a_series_in_the_legend_stops_drawing_it() {
    let mut h = panel(&[Strategy::Glenn], 10.0);
    h.run();
    assert!(h.state().view.drawn("bw_glenn").contains(&"A acked"), "seed {SEED}");
    h.get_by_label("A acked").click();
    h.run();
    let v = &h.state().view;
    assert!(!v.drawn("bw_glenn").contains(&"A acked"), "a hidden series was drawn: {:?}", v.drawn("bw_glenn"));
    assert!(v.drawn("bw_glenn").contains(&"A sent"), "the others stay");
    assert!(v.legend("bw_glenn").contains(&"A acked"), "a hidden series keeps its legend entry to show it again");
    h.get_by_label("A acked").click();
    h.run();
    assert!(h.state().view.drawn("bw_glenn").contains(&"A acked"), "clicking again shows it");
}

#[test]
fn the_window_follows_a_live_run_zoom_keeps_following_and_a_pan_stops_it_until_resumed() {
    let mut h = panel(&[Strategy::Glenn], 20.0);
    h.run();
    h.get_by_label("30 s").click();
    h.run();
    assert!(close(x_range(&h, "rtt_glenn"), (0.0, 30.0)), "a young run fills from 0: {:?}", x_range(&h, "rtt_glenn"));
    h.state_mut().advance(30.0);
    h.run();
    let end = end_s(&h);
    assert!(close(x_range(&h, "rtt_glenn"), (end - 30.0, end)), "{:?} does not end at {end}", x_range(&h, "rtt_glenn"));
    assert!(h.state().view.window.following());

    // Ctrl+scroll zoom over a plot: still following, with the new width.
    let frame = h.state().view.frame("rtt_glenn").expect("the RTT plot's area");
    h.hover_at(frame.center());
    h.run();
    h.event(egui::Event::Zoom(2.0));
    h.run();
    h.state_mut().advance(5.0);
    h.run();
    let (lo, hi) = x_range(&h, "rtt_glenn");
    let end = end_s(&h);
    assert!(h.state().view.window.following(), "zooming stopped following");
    assert!((hi - end).abs() < 1e-6 && (hi - lo - 15.0).abs() < 1e-6, "{lo}..{hi} is not the last 15 s before {end}");

    // Dragging pans and stops following: new data does not move the axis.
    let c = frame.center();
    h.drag_at(c);
    h.run();
    h.hover_at(c + egui::vec2(150.0, 0.0));
    h.run();
    h.drop_at(c + egui::vec2(150.0, 0.0));
    h.run();
    assert!(!h.state().view.window.following(), "a pan must stop following");
    let panned = x_range(&h, "rtt_glenn");
    assert!(panned.1 < end - 1.0, "dragging right shows earlier time: {panned:?}");
    h.state_mut().advance(10.0);
    h.run();
    assert!(
        close(x_range(&h, "rtt_glenn"), panned),
        "moved while paused: {:?} vs {panned:?}",
        x_range(&h, "rtt_glenn")
    );
    assert!(close(x_range(&h, "loss_glenn"), panned), "the plots share the time range");

    h.get_by_label("Resume following").click();
    h.run();
    let end = end_s(&h);
    let (lo, hi) = x_range(&h, "rtt_glenn");
    assert!(h.state().view.window.following());
    assert!((hi - end).abs() < 1e-6 && (hi - lo - 15.0).abs() < 1e-6, "{lo}..{hi} after resuming (end {end})");
}

#[test]
fn ab_lanes_share_y_ranges_and_the_budget_has_its_own_plot() {
    let mut h = panel(&[Strategy::Glenn, Strategy::Ue4], 10.0);
    h.run();
    let v = &h.state().view;
    for kind in ["rtt", "loss", "bw"] {
        let (g, u) = (v.bounds(&format!("{kind}_glenn")).unwrap(), v.bounds(&format!("{kind}_ue4")).unwrap());
        assert_eq!(g.range_y(), u.range_y(), "{kind}: glenn and ue4 differ (seed {SEED})");
    }
    assert!(v.bounds("budget_ue4").is_some(), "no budget plot for ue4 (seed {SEED})");
    assert!(v.bounds("budget_glenn").is_none(), "glenn has no budget");
    assert!(!v.drawn("bw_ue4").iter().any(|n| n.contains("available")), "the budget is drawn over sent/received");
    // UE4's QueuedBits dwarfs its sent kbps: on one axis the sent line would be a flat band.
    let sent_top = h.state().lanes[1].store.side(ackscope_protocol::Side::A).sent_kbps.iter().map(|p| p.y);
    let sent_top = sent_top.fold(0.0, f64::max);
    let bw_top = v.bounds("bw_ue4").unwrap().max()[1];
    assert!(bw_top < sent_top * 2.0, "bandwidth axis up to {bw_top} for sent at most {sent_top}");
}

#[test]
fn hovering_a_plot_reads_out_every_series_at_the_pointer() {
    let mut h = panel(&[Strategy::Glenn], 10.0);
    h.run();
    assert!(h.query_by_label_contains(" s:").is_none(), "the readout is at the cursor before hovering");
    assert!(h.query_all_by_label("at cursor:").count() >= 3);
    let frame = h.state().view.frame("rtt_glenn").unwrap();
    h.hover_at(frame.center());
    h.run();
    let readouts = h.query_all_by_label_contains(" s:").count();
    assert!(readouts >= 3, "each plot's legend reads out the pointer's time ({readouts})");
}

#[test]
fn parameter_changes_are_markers_on_the_time_axis_not_legend_entries() {
    let changes: Vec<_> = [("link.latency_ms", "150"), ("link.loss_percent", "5"), ("send_rate_pps", "30")]
        .into_iter()
        .enumerate()
        .map(|(i, (name, value))| Change { at_us: 2_000_000 * (i as u64 + 1), name: name.into(), value: value.into() })
        .map(Into::into)
        .collect();
    let session = ackscope::report::run_with_actions(&Scenario::default(), 10.0, &changes).unwrap().session;
    let mut state = AppState::new(Scenario::default(), || {});
    state.set_clock(ManualClock::new());
    let mut h = window_harness(state);
    h.state_mut().0.show_session(session, None);
    h.state_mut().0.playback.seek(SimTime(9_000_000));
    for _ in 0..3 {
        h.step();
    }
    let (state, view) = h.state();
    assert!(state.lanes[0].store.changes.len() >= 3, "the recording holds the changes");
    let overview = &view.panels.overview;
    assert_eq!(overview.legend("rtt_glenn"), ["A raw", "A smoothed", "A display", "B smoothed", "true RTT"]);
    for id in ["rtt_glenn", "loss_glenn", "bw_glenn"] {
        assert!(overview.legend(id).iter().all(|e| !e.contains('=')), "{id}: {:?}", overview.legend(id));
    }
    assert!(h.query_by_label_contains("latency_ms=150").is_none(), "a change became a widget label");
}
