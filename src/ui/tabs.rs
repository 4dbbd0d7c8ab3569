//! The central area's tabs: the tab bar, and the registry of the panels that draw them
//! ([`Panels`]), each keeping its own view state. Which tabs exist and their names live in
//! [`crate::app::tab`].

use super::anomaly_ui::AnomalyView;
use super::clients_ui::ClientsView;
use super::compare_ui::CompareView;
use super::lanes::{focused_label, lane_columns_ui, PerLane};
use super::packets_ui::PacketsView;
use super::plots_ui::OverviewView;
use super::slices_ui::SlicesView;
use super::timeline_ui::TimelineState;
use super::tune_ui::TuneView;
use crate::app::{AppCommand, AppState, Tab, TABS};
use crate::model::anomaly::Target;
use crate::model::index::SummaryFold;
use crate::model::Shown;

/// Draws the tab bar; returns the tab to show this frame (and asks to keep it when it changed).
pub fn tab_bar_ui(current: Tab, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) -> Tab {
    let mut tab = current;
    ui.horizontal(|ui| {
        for (t, name) in TABS {
            ui.selectable_value(&mut tab, t, name);
        }
    });
    if tab != current {
        cmds.push(AppCommand::SetTab(tab));
    }
    tab
}

/// A panel: draws its tab from the app state (the recordings at the cursor, or the Tune
/// sweep), keeping its own view state.
pub trait Panel {
    fn ui(&mut self, state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>);
}

/// The message timelines, one per lane, sharing one time window.
#[derive(Default)]
pub struct MessagesPanel(pub PerLane<TimelineState>, super::timeline_view::LinkedWindow);

impl Panel for MessagesPanel {
    fn ui(&mut self, state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
        let (lanes, cursor) = (state.shown(), state.cursor());
        let reveal = state.reveal.as_ref();
        let mark = state.current_mark();
        let states: Vec<_> = self.0.zip(&lanes).collect();
        let fit = || {
            let fits = states.iter().map(|(l, s)| {
                super::timeline_view::fit_span_s(&l.messages, cursor, super::timeline_view::rows_capacity(s))
            });
            fits.fold(f64::INFINITY, f64::min)
        };
        let fit_s = fit();
        self.1.before(states.into_iter().map(|(_, s)| s).collect(), || fit_s);
        ui.columns(lanes.len(), |cols| {
            for (k, ((lane, state), col)) in self.0.zip(&lanes).zip(cols.iter_mut()).enumerate() {
                state.lane = k;
                state.mark = mark;
                super::timeline_ui::take_reveal(&lane.messages, state, reveal);
                // The display filter's matches (the canvas keeps the rows they hold).
                state.expr.update(*lane, None);
                let name = focused_label(lane);
                let (index, ledger) = (&lane.messages, &lane.ledger);
                let before = state.selected;
                super::timeline_ui::timeline_ui(col, ("timeline", k), &name, index, ledger, state, cursor, cmds);
                // A message clicked is the selection Ctrl+M marks.
                if let Some(m) = state.selected.filter(|s| before != Some(*s)).and_then(|key| index.get(key)) {
                    let point = crate::model::marks::Mark::message(k, m.side, m.id, m.queued_at);
                    cmds.push(AppCommand::Marks(crate::app::MarkCommand::Select(point)));
                }
            }
        });
        if self.1.changed(&self.0.zip(&lanes).map(|(_, s)| &*s).collect::<Vec<_>>()) {
            ui.ctx().request_repaint();
        }
    }
}

#[derive(Default)]
pub struct SlicesPanel(pub PerLane<SlicesView>);

impl Panel for SlicesPanel {
    fn ui(&mut self, state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
        let (lanes, cursor) = (state.shown(), state.cursor());
        let reveal = state.reveal.as_ref();
        let mut k = 0;
        lane_columns_ui(&lanes, &mut self.0, cursor, ui, |lane, view, ui| {
            view.take_reveal(&lane.chunks, k, reveal);
            k += 1;
            super::slices_ui::slices_ui(&lane.chunks, view, cursor, ui, cmds)
        });
    }
}

#[derive(Default)]
pub struct PacketsPanel(pub PerLane<PacketsView>);

impl Panel for PacketsPanel {
    fn ui(&mut self, state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
        let (lanes, cursor) = (state.shown(), state.cursor());
        let reveal = state.reveal.as_ref();
        let mut k = 0;
        let mark = state.current_mark();
        lane_columns_ui(&lanes, &mut self.0, cursor, ui, |lane, view, ui| {
            view.lane = k;
            view.client = lane.conn.client;
            view.mark = mark;
            k += 1;
            super::packets_ui::packets_panel_ui(lane, view, cursor, reveal, ui, cmds)
        });
    }
}

#[derive(Default)]
pub struct SummaryPanel(PerLane<SummaryFold>);

impl Panel for SummaryPanel {
    fn ui(&mut self, state: &AppState, ui: &mut egui::Ui, _cmds: &mut Vec<AppCommand>) {
        // With a second recording beside (Compare with...), its lanes too, named by side.
        let (a, named) = state.compare_lanes();
        let (names, lanes): (Vec<String>, Vec<Shown<'_>>) = named.into_iter().unzip();
        let compared = state.compare_with.shown().is_some();
        let labels: Vec<String> = lanes.iter().map(|l| l.label()).collect();
        let diffs = super::summary_ui::diff_pairs(&labels, a, compared);
        let names = compared.then_some(names.as_slice());
        super::summary_ui::summary_ui(&lanes, names, &diffs, &mut self.0, state.cursor(), ui);
    }
}

impl Panel for TuneView {
    fn ui(&mut self, state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
        super::tune_ui::tune_ui(state, self, ui, cmds);
    }
}

impl Panel for CompareView {
    fn ui(&mut self, state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
        let (a_lanes, lanes) = state.compare_lanes();
        let beside = state.compare_with.shown().map(|c| c.path.as_path());
        let reading = state.compare_with.reading();
        let a_file = state.file.as_deref();
        let sides = super::compare_ui::Sides { lanes: &lanes, a_lanes, beside, a_file, reading };
        super::compare_ui::compare_sides_ui(&sides, self, state.cursor(), ui, cmds);
    }
}

impl Panel for AnomalyView {
    fn ui(&mut self, state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
        super::anomaly_ui::anomalies_ui(state, self, ui, cmds);
    }
}

impl Panel for ClientsView {
    fn ui(&mut self, state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
        super::clients_ui::clients_ui(state.shown_lanes(), state.focus, self, state.cursor(), ui, cmds);
    }
}

impl Panel for OverviewView {
    fn ui(&mut self, state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
        let (lanes, cursor) = (state.shown(), state.cursor());
        super::plots_ui::overview_ui(&lanes, self, cursor, ui, cmds);
    }
}

/// Every panel with its view state: the registry the central area draws from.
#[derive(Default)]
pub struct Panels {
    pub overview: OverviewView,
    pub messages: MessagesPanel,
    pub slices: SlicesPanel,
    pub packets: PacketsPanel,
    pub anomalies: AnomalyView,
    pub summary: SummaryPanel,
    pub compare: CompareView,
    pub tune: TuneView,
    pub clients: ClientsView,
}

impl Panels {
    /// The panel that draws `tab`.
    pub fn get_mut(&mut self, tab: Tab) -> &mut dyn Panel {
        match tab {
            Tab::Overview => &mut self.overview,
            Tab::Messages => &mut self.messages,
            Tab::Slices => &mut self.slices,
            Tab::Packets => &mut self.packets,
            Tab::Anomalies => &mut self.anomalies,
            Tab::Summary => &mut self.summary,
            Tab::Compare => &mut self.compare,
            Tab::Tune => &mut self.tune,
            Tab::Clients => &mut self.clients,
        }
    }
}

impl Panels {
    /// The packet log's selected row in lane `lane` (position in the lane's packet index).
    pub fn selected_packet(&self, lane: usize) -> Option<u32> {
        self.packets.0.get(lane)?.selected
    }

    /// The message timeline's selected message in lane `lane`.
    pub fn selected_message(&self, lane: usize) -> Option<crate::model::index::MsgKey> {
        self.messages.0.get(lane)?.selected
    }

    /// Hands what the anomaly list or strip clicked on to the tabs that show it: the packet
    /// log's row of a link send, the timeline's message.
    pub fn take_anomaly_selection(&mut self, lanes: &[Shown<'_>]) {
        let Some((lane, target)) = self.anomalies.pending.take() else { return };
        match target {
            Target::Packet(uid) => {
                if let Some((rec, view)) = self.packets.0.zip(lanes).nth(lane) {
                    view.selected = packet_row_of(rec, uid).or(view.selected);
                }
            }
            Target::Message(key) => {
                if let Some((_, view)) = self.messages.0.zip(lanes).nth(lane) {
                    view.selected = Some(key);
                }
            }
            Target::Nothing => {}
        }
    }
}

/// The packet log's row of link send `uid` (rows are in send order: a binary search on its send time).
fn packet_row_of(rec: &Shown<'_>, uid: u64) -> Option<u32> {
    let sent = rec.ledger.packet(uid)?.sent_at?;
    let rows = rec.packets.rows();
    let from = rows.partition_point(|r| r.time < sent);
    rows[from..].iter().take_while(|r| r.time == sent).position(|r| r.uid == uid).map(|k| (from + k) as u32)
}
