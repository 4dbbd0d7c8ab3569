//! Panels that show each lane (A and B) side by side: view state kept per lane, and the
//! columns that draw them.

use crate::model::shown::Shown;

/// View state per lane, started afresh whenever a lane holds a different recording (a restart or
/// an opened file), so no panel shows a filter, selection or fold of a recording that is gone.
#[derive(Debug, Default)]
pub struct PerLane<T> {
    items: Vec<(u64, T)>,
}

impl<T> PerLane<T> {
    /// Lane `k`'s state, once the lane was drawn.
    pub fn get(&self, k: usize) -> Option<&T> {
        self.items.get(k).map(|(_, t)| t)
    }
}

impl<T: Default> PerLane<T> {
    /// Each lane with its state.
    pub fn zip<'a, 'r>(&'a mut self, lanes: &'a [Shown<'r>]) -> impl Iterator<Item = (&'a Shown<'r>, &'a mut T)> {
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

/// A lane's name, and its focused client's when the lane has several (here, below every panel
/// that heads a lane with it, rather than in the tab registry above them).
pub(super) fn focused_label(lane: &Shown<'_>) -> String {
    if lane.rec.clients().len() > 1 {
        format!("{} - {}", lane.label(), lane.info().client(lane.conn.client).label())
    } else {
        lane.label()
    }
}

/// Draws each lane in its own column, headed by its name in its colour at `cursor`.
pub(super) fn lane_columns_ui<T: Default>(
    lanes: &[Shown<'_>],
    states: &mut PerLane<T>,
    cursor: ackscope_protocol::SimTime,
    ui: &mut egui::Ui,
    mut lane_ui: impl FnMut(&Shown<'_>, &mut T, &mut egui::Ui),
) {
    ui.columns(lanes.len(), |cols| {
        for (k, ((lane, state), col)) in states.zip(lanes).zip(cols.iter_mut()).enumerate() {
            col.push_id(("lane", k), |ui| {
                ui.label(super::lane_colors::lane_heading(ui, lane.info(), cursor));
                lane_ui(lane, state, ui);
            });
        }
    });
}
