//! The central area's tabs: the one list of their names ([`TABS`]), which the tab bar, the
//! `--tab` option ([`Tab::parse`]) and the persisted settings all read, and the registry of the
//! panels that draw them ([`Panels`]), each keeping its own view state.

use ackscope_protocol::SimTime;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::packets_ui::PacketsView;
use super::plots_ui::OverviewView;
use super::slices_ui::SlicesView;
use super::timeline_ui::TimelineState;
use crate::app::AppCommand;
use crate::model::index::SummaryFold;
use crate::model::Recording;

/// A tab of the central area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tab {
    #[default]
    Overview,
    Messages,
    Slices,
    Packets,
    Summary,
}

/// Every tab with its name, in tab-bar order: the only place a tab is named.
pub const TABS: [(Tab, &str); 5] = [
    (Tab::Overview, "Overview"),
    (Tab::Messages, "Messages"),
    (Tab::Slices, "Slices"),
    (Tab::Packets, "Packets"),
    (Tab::Summary, "Summary"),
];

impl Tab {
    /// The tab's name as the tab bar shows it.
    pub fn name(self) -> &'static str {
        TABS.iter().find(|(t, _)| *t == self).map_or("", |(_, n)| n)
    }

    /// A tab by its name, in any case (`--tab messages`).
    pub fn parse(name: &str) -> Option<Tab> {
        TABS.iter().find(|(_, n)| n.eq_ignore_ascii_case(name.trim())).map(|(t, _)| *t)
    }

    /// Every tab, in tab-bar order.
    pub fn all() -> impl Iterator<Item = Tab> {
        TABS.iter().map(|(t, _)| *t)
    }
}

/// The tab names in order, as serde wants them.
const TAB_NAMES: [&str; TABS.len()] = {
    let mut names = [""; TABS.len()];
    let mut i = 0;
    while i < TABS.len() {
        names[i] = TABS[i].1;
        i += 1;
    }
    names
};

/// Settings store a tab by its name, as a unit variant (the form earlier versions' derive wrote).
impl Serialize for Tab {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let i = TABS.iter().position(|(t, _)| t == self).unwrap_or(0);
        s.serialize_unit_variant("Tab", i as u32, TAB_NAMES[i])
    }
}

impl<'de> Deserialize<'de> for Tab {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Named;
        impl<'de> serde::de::Visitor<'de> for Named {
            type Value = Tab;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "a tab: {}", TAB_NAMES.join(", "))
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Tab, E> {
                Tab::parse(name).ok_or_else(|| E::unknown_variant(name, &TAB_NAMES))
            }
            fn visit_enum<A: serde::de::EnumAccess<'de>>(self, data: A) -> Result<Tab, A::Error> {
                use serde::de::VariantAccess;
                let (tab, variant) = data.variant_seed(NamedSeed)?;
                variant.unit_variant()?;
                Ok(tab)
            }
        }
        /// Reads a variant's name as an identifier (what formats such as RON write for it).
        struct NamedSeed;
        impl<'de> serde::de::DeserializeSeed<'de> for NamedSeed {
            type Value = Tab;
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Tab, D::Error> {
                d.deserialize_identifier(Named)
            }
        }
        d.deserialize_enum("Tab", &TAB_NAMES, Named)
    }
}

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

/// A panel: draws its tab from the recordings at the cursor, keeping its own view state.
pub trait Panel {
    fn ui(&mut self, lanes: &[Recording], cursor: SimTime, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>);
}

/// View state per lane, started afresh whenever a lane holds a different recording (a restart or
/// an opened file), so no panel shows a filter, selection or fold of a recording that is gone.
#[derive(Debug, Default)]
pub struct PerLane<T> {
    items: Vec<(u64, T)>,
}

impl<T: Default> PerLane<T> {
    /// Each lane with its state.
    pub fn zip<'a>(&'a mut self, lanes: &'a [Recording]) -> impl Iterator<Item = (&'a Recording, &'a mut T)> {
        self.items.truncate(lanes.len());
        for (i, lane) in lanes.iter().enumerate() {
            match self.items.get_mut(i) {
                Some(item) if item.0 == lane.id() => {}
                Some(item) => *item = (lane.id(), T::default()),
                None => self.items.push((lane.id(), T::default())),
            }
        }
        lanes.iter().zip(self.items.iter_mut().map(|(_, t)| t))
    }
}

/// Draws each lane in its own column, named by its strategy.
fn lane_columns_ui<T: Default>(
    lanes: &[Recording],
    states: &mut PerLane<T>,
    ui: &mut egui::Ui,
    mut lane_ui: impl FnMut(&Recording, &mut T, &mut egui::Ui),
) {
    ui.columns(lanes.len(), |cols| {
        for ((lane, state), col) in states.zip(lanes).zip(cols.iter_mut()) {
            let name = lane.scenario.strategy.name();
            col.push_id(name, |ui| {
                ui.strong(name);
                lane_ui(lane, state, ui);
            });
        }
    });
}

#[derive(Default)]
pub struct MessagesPanel(PerLane<TimelineState>);

impl Panel for MessagesPanel {
    fn ui(&mut self, lanes: &[Recording], cursor: SimTime, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
        ui.columns(lanes.len(), |cols| {
            for ((lane, state), col) in self.0.zip(lanes).zip(cols.iter_mut()) {
                let name = lane.scenario.strategy.name();
                let (index, ledger) = (&lane.messages, &lane.ledger);
                super::timeline_ui::timeline_ui(col, ("timeline", name), name, index, ledger, state, cursor, cmds);
            }
        });
    }
}

#[derive(Default)]
pub struct SlicesPanel(PerLane<SlicesView>);

impl Panel for SlicesPanel {
    fn ui(&mut self, lanes: &[Recording], cursor: SimTime, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
        lane_columns_ui(lanes, &mut self.0, ui, |lane, view, ui| {
            super::slices_ui::slices_ui(&lane.chunks, view, cursor, ui, cmds)
        });
    }
}

#[derive(Default)]
pub struct PacketsPanel(PerLane<PacketsView>);

impl Panel for PacketsPanel {
    fn ui(&mut self, lanes: &[Recording], cursor: SimTime, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
        lane_columns_ui(lanes, &mut self.0, ui, |lane, view, ui| {
            super::packets_ui::packets_ui(&lane.packets, &lane.ledger, view, cursor, ui, cmds)
        });
    }
}

#[derive(Default)]
pub struct SummaryPanel(PerLane<SummaryFold>);

impl Panel for SummaryPanel {
    fn ui(&mut self, lanes: &[Recording], cursor: SimTime, ui: &mut egui::Ui, _cmds: &mut Vec<AppCommand>) {
        super::summary_ui::summary_ui(lanes, &mut self.0, cursor, ui);
    }
}

impl Panel for OverviewView {
    fn ui(&mut self, lanes: &[Recording], cursor: SimTime, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
        super::plots_ui::overview_ui(lanes, self, cursor, ui, cmds);
    }
}

/// Every panel with its view state: the registry the central area draws from.
#[derive(Default)]
pub struct Panels {
    pub overview: OverviewView,
    pub messages: MessagesPanel,
    pub slices: SlicesPanel,
    pub packets: PacketsPanel,
    pub summary: SummaryPanel,
}

impl Panels {
    /// The panel that draws `tab`.
    pub fn get_mut(&mut self, tab: Tab) -> &mut dyn Panel {
        match tab {
            Tab::Overview => &mut self.overview,
            Tab::Messages => &mut self.messages,
            Tab::Slices => &mut self.slices,
            Tab::Packets => &mut self.packets,
            Tab::Summary => &mut self.summary,
        }
    }
}
