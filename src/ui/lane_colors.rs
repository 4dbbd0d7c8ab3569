//! Colours of lanes and clients: a lane takes its protocol's colour from the one strategy palette
//! ([`super::colors::strategy_color_for`], the only call into it, so moving the palette is one
//! line here), a protocol ackscope does not know a slot of its own, and the all-clients plot a
//! colour per client that stays clear of the side colours.

use egui::Color32;

use crate::model::{LaneColor, LaneInfo};
use ackscope_protocol::SimTime;

/// Colours for protocols that are not ackscope strategies, by slot (dark theme).
const SLOTS: [Color32; 6] = [
    Color32::from_rgb(255, 170, 60),
    Color32::from_rgb(90, 160, 255),
    Color32::from_rgb(240, 90, 120),
    Color32::from_rgb(120, 230, 200),
    Color32::from_rgb(210, 160, 255),
    Color32::from_rgb(200, 200, 110),
];

/// 16 colours for client lines, far apart in hue and brightness, so a line per client up to 16
/// tells them apart (dark theme; darkened for the light one).
const CLIENTS: [Color32; 16] = [
    Color32::from_rgb(102, 194, 165),
    Color32::from_rgb(252, 141, 98),
    Color32::from_rgb(141, 160, 203),
    Color32::from_rgb(231, 138, 195),
    Color32::from_rgb(166, 216, 84),
    Color32::from_rgb(255, 217, 47),
    Color32::from_rgb(229, 196, 148),
    Color32::from_rgb(179, 179, 179),
    Color32::from_rgb(31, 158, 137),
    Color32::from_rgb(217, 95, 2),
    Color32::from_rgb(117, 112, 179),
    Color32::from_rgb(231, 41, 138),
    Color32::from_rgb(102, 166, 30),
    Color32::from_rgb(230, 171, 2),
    Color32::from_rgb(166, 118, 29),
    Color32::from_rgb(0, 190, 255),
];

/// `c` darkened for a light background, as the strategy palette does.
fn for_theme(c: Color32, dark_mode: bool) -> Color32 {
    if dark_mode {
        c
    } else {
        let k = |v: u8| (v as f32 * 0.62) as u8;
        Color32::from_rgb(k(c.r()), k(c.g()), k(c.b()))
    }
}

/// The colour of `c` on a dark (`true`) or light background.
pub fn lane_color_for(c: LaneColor, dark_mode: bool) -> Color32 {
    match c {
        LaneColor::Strategy(s) => super::colors::strategy_color_for(s, dark_mode),
        LaneColor::Slot(i) => for_theme(SLOTS[i as usize % SLOTS.len()], dark_mode),
    }
}

/// The colour of `c` for the theme of `ui`.
pub fn lane_color(ui: &egui::Ui, c: LaneColor) -> Color32 {
    lane_color_for(c, ui.visuals().dark_mode)
}

/// How a lane is headed at `t`: its name (every protocol it ran) in the colour of what ran then.
pub fn lane_heading(ui: &egui::Ui, info: &LaneInfo, t: SimTime) -> egui::RichText {
    egui::RichText::new(info.label()).strong().color(lane_color(ui, info.color_at(t)))
}

/// The colour of the `k`-th client line (by position, not id: the table's order).
pub fn client_color(k: usize, dark_mode: bool) -> Color32 {
    for_theme(CLIENTS[k % CLIENTS.len()], dark_mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_client_colours_differ_in_both_themes() {
        for dark in [true, false] {
            let c: Vec<Color32> = (0..16).map(|k| client_color(k, dark)).collect();
            for (i, x) in c.iter().enumerate() {
                assert!(!c[..i].contains(x), "{x:?} twice");
            }
        }
    }
}
