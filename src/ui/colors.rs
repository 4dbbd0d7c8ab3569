//! Strategy colours for the theme: every view that tells strategies apart (Compare plots, lane
//! headings, Summary columns, the Tune tab, the left panel's strategy groups) asks here, so a
//! strategy reads the same everywhere.
//!
//! The palette itself is the registry's: each row carries its colour (`StrategyInfo::colour`,
//! chosen clear of the side colours, blue = side A and orange = side B, that the per-lane plots
//! and the timeline use). Here it only gets a darker variant for the light theme, where the
//! bright ones wash out on white.

use ackscope_protocol::{registry, Strategy, StrategyInfo};
use egui::Color32;

/// The colour of `rgb` (a registry row's) on a dark (`true`) or light background.
pub fn rgb_for_theme(rgb: [u8; 3], dark_mode: bool) -> Color32 {
    let [r, g, b] = rgb;
    if dark_mode {
        Color32::from_rgb(r, g, b)
    } else {
        // 62 % of a channel: at most 158, which fits a byte.
        let k = |v: u8| u8::try_from(u16::from(v) * 62 / 100).unwrap_or(u8::MAX);
        Color32::from_rgb(k(r), k(g), k(b))
    }
}

/// The colour of `rgb` for the theme of `ui`.
pub fn rgb_for(ui: &egui::Ui, rgb: [u8; 3]) -> Color32 {
    rgb_for_theme(rgb, ui.visuals().dark_mode)
}

/// The colour of a registry row for the theme of `ui`.
pub fn row_color(ui: &egui::Ui, row: &StrategyInfo) -> Color32 {
    rgb_for(ui, row.colour)
}

/// The colour of `s` for the theme of `ui`.
pub fn strategy_color(ui: &egui::Ui, s: Strategy) -> Color32 {
    row_color(ui, registry::info(s))
}

/// The colour of `s` on a dark (`true`) or light background.
pub fn strategy_color_for(s: Strategy, dark_mode: bool) -> Color32 {
    rgb_for_theme(registry::info(s).colour, dark_mode)
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
        // The registry's palette is the one shown.
        assert_eq!(strategy_color_for(Strategy::Glenn, true), Color32::from_rgb(60, 205, 160));
    }
}
