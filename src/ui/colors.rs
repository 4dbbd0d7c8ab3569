//! The one palette of strategy colours: every view that tells strategies apart (Compare plots,
//! lane headings, Summary columns) asks here, so a strategy reads the same everywhere.
//!
//! The hues stay clear of the side colours (blue = side A, orange = side B) that the per-lane
//! plots and the timeline use, so a strategy is never mistaken for a side; each colour has a
//! darker variant for the light theme, where the bright ones wash out on white.

use ackscope_protocol::Strategy;
use egui::Color32;

/// The strategy's colour on a dark background.
const fn dark(s: Strategy) -> Color32 {
    match s {
        Strategy::Glenn => Color32::from_rgb(60, 205, 160),
        Strategy::Ue4 => Color32::from_rgb(235, 100, 200),
        Strategy::Dnm => Color32::from_rgb(235, 205, 70),
        Strategy::Rellikt => Color32::from_rgb(160, 140, 255),
        Strategy::Acks => Color32::from_rgb(175, 175, 175),
        Strategy::Chunks => Color32::from_rgb(120, 215, 255),
        Strategy::Fragments => Color32::from_rgb(255, 120, 90),
        Strategy::Hybrid => Color32::from_rgb(170, 230, 60),
    }
}

/// The colour of `s` for the theme of `ui`.
pub fn strategy_color(ui: &egui::Ui, s: Strategy) -> Color32 {
    strategy_color_for(s, ui.visuals().dark_mode)
}

/// The colour of `s` on a dark (`true`) or light background.
pub fn strategy_color_for(s: Strategy, dark_mode: bool) -> Color32 {
    let c = dark(s);
    if dark_mode {
        c
    } else {
        let k = |v: u8| (v as f32 * 0.62) as u8;
        Color32::from_rgb(k(c.r()), k(c.g()), k(c.b()))
    }
}

/// The strategy's name in its colour, strong: how a lane is headed.
pub fn strategy_heading(ui: &egui::Ui, s: Strategy) -> egui::RichText {
    egui::RichText::new(s.name()).strong().color(strategy_color(ui, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_strategy_has_its_own_colour_in_both_themes() {
        for dark_mode in [true, false] {
            let colors: Vec<Color32> = Strategy::all().map(|s| strategy_color_for(s, dark_mode)).collect();
            for (i, c) in colors.iter().enumerate() {
                assert!(!colors[..i].contains(c), "{c:?} used twice (dark {dark_mode})");
            }
        }
        // Light-theme colours are darker, so they stay legible on white.
        let y = strategy_color_for(Strategy::Dnm, false);
        assert!(y.r() < 160 && y.g() < 160, "{y:?}");
    }
}
