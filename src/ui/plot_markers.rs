//! Parameter changes as labelled markers on the time axis: a strip above a lane's plots with a
//! tick and a short label at each change (hover for every name and value changed at that
//! instant), and a dotted line through each plot.
//!
//! They used to be legend entries: a preset added about ten and pushed the legend off the plot.
//! The strip sits outside the plot area, so its labels never cover data, and labels that would
//! overlap their left neighbour are left out (the tick and the hover stay).

use egui::{Align2, Color32, FontId, Rect, Sense, Stroke};

/// Colour of the markers.
pub const MARKER: Color32 = Color32::from_rgb(230, 200, 60);
/// A darker marker for the light theme, where yellow vanishes on white.
const MARKER_LIGHT: Color32 = Color32::from_rgb(170, 120, 0);
const STRIP_HEIGHT: f32 = 16.0;

/// The marker colour for the current theme.
pub fn marker_color(ui: &egui::Ui) -> Color32 {
    if ui.visuals().dark_mode {
        MARKER
    } else {
        MARKER_LIGHT
    }
}

/// Changes grouped by instant, in time order: each time with every `name=value` set then.
pub fn group_changes(changes: &[(f64, String)]) -> Vec<(f64, Vec<&str>)> {
    let mut out: Vec<(f64, Vec<&str>)> = Vec::new();
    for (t, label) in changes {
        match out.last_mut() {
            Some((last, labels)) if *last == *t => labels.push(label),
            _ => out.push((*t, vec![label])),
        }
    }
    out
}

/// A marker's label: the first change without its section (`latency_ms=150`), and how many
/// more changed at the same instant.
pub fn short_label(labels: &[&str]) -> String {
    let Some(first) = labels.first() else { return String::new() };
    let (name, value) = first.split_once('=').unwrap_or((first, ""));
    let short = name.rsplit('.').next().unwrap_or(name);
    let mut text = if value.is_empty() { short.to_string() } else { format!("{short}={value}") };
    if labels.len() > 1 {
        text.push_str(&format!(" +{}", labels.len() - 1));
    }
    text
}

/// Draws the strip for `changes` over the plot area `frame` (screen x of the plot's time range
/// `lo..hi`, from the last frame); hovering a marker lists everything changed then.
pub fn marker_strip_ui(
    ui: &mut egui::Ui,
    changes: &[(f64, String)],
    frame: Option<Rect>,
    lo: f64,
    hi: f64,
    cursor: f64,
) {
    let (rect, resp) = ui.allocate_exact_size(egui::vec2(ui.available_width(), STRIP_HEIGHT), Sense::hover());
    let Some(frame) = frame else { return };
    if changes.is_empty() || hi <= lo {
        return;
    }
    let painter = ui.painter_at(rect.expand2(egui::vec2(0.0, 1.0)));
    let color = marker_color(ui);
    let font = FontId::proportional(11.0);
    let pointer = resp.hover_pos();
    let mut free_from = f32::MIN;
    let mut hovered: Option<Vec<&str>> = None;
    for (t, labels) in group_changes(changes) {
        if t < lo || t > hi {
            continue;
        }
        let x = frame.left() + ((t - lo) / (hi - lo)) as f32 * frame.width();
        let c = if t <= cursor { color } else { color.gamma_multiply(0.4) };
        let tip = egui::pos2(x, rect.bottom());
        let tri = vec![tip, egui::pos2(x - 4.0, rect.bottom() - 6.0), egui::pos2(x + 4.0, rect.bottom() - 6.0)];
        painter.add(egui::Shape::convex_polygon(tri, c, Stroke::NONE));
        let mut hit = Rect::from_x_y_ranges(x - 5.0..=x + 5.0, rect.y_range());
        let galley = painter.layout_no_wrap(short_label(&labels), font.clone(), c);
        // Right of the tick, or left of it where it would run off the strip's end.
        let (at, align) = if x + 3.0 + galley.size().x <= rect.right() {
            (egui::pos2(x + 3.0, rect.top()), Align2::LEFT_TOP)
        } else {
            (egui::pos2(x - 5.0, rect.top()), Align2::RIGHT_TOP)
        };
        let text_rect = align.anchor_size(at, galley.size());
        if text_rect.left() > free_from {
            painter.galley(text_rect.min, galley, c);
            free_from = text_rect.right() + 6.0;
            hit = hit.union(text_rect);
        }
        if pointer.is_some_and(|p| hit.contains(p)) {
            hovered = Some(labels);
        }
    }
    if let Some(labels) = hovered {
        resp.on_hover_ui_at_pointer(|ui| {
            for l in labels {
                ui.label(l);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_at_one_instant_make_one_marker_named_by_the_first() {
        let changes = vec![
            (1.0, "link.latency_ms=150".to_string()),
            (1.0, "link.loss_percent=5".to_string()),
            (2.0, "send_rate_pps=30".to_string()),
        ];
        let groups = group_changes(&changes);
        assert_eq!(groups.len(), 2);
        assert_eq!(short_label(&groups[0].1), "latency_ms=150 +1");
        assert_eq!(short_label(&groups[1].1), "send_rate_pps=30");
    }
}
