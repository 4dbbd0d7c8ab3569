//! Shows two message timelines (glenn beside ue4, 15% loss) in a window, for screenshots:
//! `cargo run --example timeline_shot` (env TL_SPAN = window seconds, TL_CURSOR = cursor seconds) (under Xvfb: `xvfb-run -s "-screen 0 1400x850x24"`).

use ackscope::app::AppCommand;
use ackscope::model::index::MessageIndex;
use ackscope::ui::timeline_ui::{timeline_ui, TimelineState};
use ackscope_protocol::{Dir, PacketLedger, Scenario, SimTime, Simulation, Strategy};

struct Shot {
    runs: Vec<(String, (MessageIndex, PacketLedger), TimelineState)>,
    cursor: SimTime,
    commands: Vec<AppCommand>,
}

/// The message index of a run and the ledger with its packets' fates.
fn index(strategy: Strategy) -> (MessageIndex, PacketLedger) {
    let mut s = Scenario { strategy, ..Default::default() };
    for dir in Dir::BOTH {
        s.link.get_mut(dir).loss_percent = 15.0;
    }
    let mut sim = Simulation::new(s);
    sim.run_for_secs(12.0);
    let events: Vec<_> = sim.drain_events().collect();
    let mut ledger = PacketLedger::new();
    ledger.observe(&events);
    (MessageIndex::from_events(&events), ledger)
}

impl eframe::App for Shot {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        egui::CentralPanel::default_margins().show(ui, |ui| {
            let cursor = self.cursor;
            let commands = &mut self.commands;
            ui.columns(self.runs.len(), |cols| {
                for (col, (name, (ix, ledger), tl)) in cols.iter_mut().zip(&mut self.runs) {
                    timeline_ui(col, name.as_str(), name, ix, ledger, tl, cursor, commands);
                }
            });
            for c in self.commands.drain(..) {
                if let AppCommand::SeekTo(t) = c {
                    self.cursor = t;
                }
            }
        });
    }
}

fn main() -> eframe::Result {
    let mut runs = Vec::new();
    for strategy in [Strategy::Glenn, Strategy::Ue4] {
        let ix = index(strategy);
        let mut tl = TimelineState::default();
        tl.span_s = std::env::var("TL_SPAN").ok().and_then(|v| v.parse().ok()).unwrap_or(3.0);
        // Select the latest message that was resent, to show the side list.
        tl.selected = ix.0.messages().iter().rev().find(|m| m.reliable && m.sends.len() > 1).map(|m| m.key());
        runs.push((strategy.name().to_string(), ix, tl));
    }
    let cursor = std::env::var("TL_CURSOR")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(runs[0].1 .0.end_time(), SimTime::from_secs_f64);
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default().with_inner_size([1400.0, 850.0]).with_title("timeline"),
        ..Default::default()
    };
    eframe::run_native(
        "timeline",
        options,
        Box::new(move |_| Ok(Box::new(Shot { runs, cursor, commands: Vec::new() }))),
    )
}
