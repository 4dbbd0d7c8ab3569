//! The Overview plots in A/B, driven headless with egui_kittest: legends drawn outside the plots,
//! Y axes shared across lanes, and the budget on its own plot.

use ackscope::model::Recording;
use ackscope::ui::plots_ui::{overview_ui, OverviewView};
use ackscope_protocol::{Dir, Scenario, Simulation, Strategy};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

const SEED: u64 = 21;

fn recording(strategy: Strategy, secs: f64) -> Recording {
    let mut s = Scenario { seed: SEED, strategy, ..Scenario::default() };
    for d in Dir::BOTH {
        s.link.get_mut(d).loss_percent = 15.0;
    }
    let mut sim = Simulation::new(s.clone());
    sim.run_for_secs(secs);
    let mut rec = Recording::new(s);
    rec.ingest(sim.drain_events().collect());
    rec
}

struct Panel {
    lanes: Vec<Recording>,
    view: OverviewView,
}

#[test]
fn ab_lanes_share_y_axes_and_the_budget_gets_its_own_plot() {
    let lanes = vec![recording(Strategy::Glenn, 10.0), recording(Strategy::Ue4, 10.0)];
    let mut h = Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, p: &mut Panel| {
            let cursor = p.lanes[0].store.end_time();
            let mut cmds = Vec::new();
            overview_ui(&p.lanes, &mut p.view, cursor, ui, &mut cmds);
        },
        Panel { lanes, view: OverviewView::default() },
    );
    h.run();
    let v = &h.state().view;
    for kind in ["rtt", "loss", "bw"] {
        let (g, u) = (v.bounds(&format!("{kind}_glenn")).unwrap(), v.bounds(&format!("{kind}_ue4")).unwrap());
        assert!((g.max()[1] - u.max()[1]).abs() < 1e-6, "{kind}: glenn top {} vs ue4 top {}", g.max()[1], u.max()[1]);
    }
    // UE4 has a send budget (QueuedBits): its own plot, not drawn over the bandwidth lines.
    assert!(v.bounds("budget_ue4").is_some(), "no budget plot for ue4 (seed {SEED})");
    assert!(v.bounds("budget_glenn").is_none(), "glenn has no budget");
    // Legends are rows of labels above the plots (one per lane).
    assert_eq!(h.query_all_by_label("B smoothed").count(), 2);
}
