//! Parameter changes as labelled markers on the time axis: a strip above a lane's plots with a
//! tick and a short label at each change (hover for every name and value changed at that
//! instant), and a dotted line through each plot.
//!
//! They used to be legend entries: a preset added about ten and pushed the legend off the plot.
//! The strip sits outside the plot area, so its labels never cover data, and a label that would
//! overlap its left neighbour's takes a row below it (the strip grows a row).

use egui::{Color32, FontId, Rect, Sense, Stroke};

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

/// Height of one row of labels, and most rows a strip stacks.
const ROW_HEIGHT: f32 = 13.0;
const MAX_ROWS: usize = 6;

/// Where each marker in `lo..hi` goes: its x, the row its label takes (the first whose labels
/// end left of it) and the label's rectangle relative to the strip's top; a marker finding no
/// row among [`MAX_ROWS`] keeps its tick and hover only.
fn layout(
    groups: &[(f64, Vec<&str>)],
    frame: Rect,
    right: f32,
    (lo, hi): (f64, f64),
    size_of: &mut dyn FnMut(&str) -> egui::Vec2,
) -> Vec<(f32, Option<(usize, Rect)>)> {
    let mut free_from = [f32::MIN; MAX_ROWS];
    let mut out = Vec::new();
    for (t, labels) in groups {
        if *t < lo || *t > hi {
            continue;
        }
        let x = frame.left() + ((t - lo) / (hi - lo)) as f32 * frame.width();
        let size = size_of(&short_label(labels));
        let mut placed = None;
        for (row, free) in free_from.iter_mut().enumerate() {
            let top = row as f32 * ROW_HEIGHT;
            // Right of the tick, or left of it where it would run off the strip's end.
            let rect = if x + 3.0 + size.x <= right {
                Rect::from_min_size(egui::pos2(x + 3.0, top), size)
            } else {
                Rect::from_min_size(egui::pos2(x - 5.0 - size.x, top), size)
            };
            if rect.left() > *free {
                *free = rect.right() + 6.0;
                placed = Some((row, rect));
                break;
            }
        }
        out.push((x, placed));
    }
    out
}

/// Draws the strip for `changes` over the plot area `frame` (screen x of the plot's time range
/// `lo..hi`, from the last frame); hovering a marker lists everything changed then.
///
/// Every marker is labelled: a label that would overlap its left neighbour's takes the next row
/// down (the strip grows), where it used to be left out (issue 25, defect 10: of two changes a
/// second apart only the first was named).
pub fn marker_strip_ui(
    ui: &mut egui::Ui,
    changes: &[(f64, String)],
    frame: Option<Rect>,
    lo: f64,
    hi: f64,
    cursor: f64,
) {
    let groups = group_changes(changes);
    let font = FontId::proportional(11.0);
    let right = ui.available_rect_before_wrap().right();
    let placed = match frame {
        Some(frame) if !changes.is_empty() && hi > lo => {
            let painter = ui.painter();
            let mut size_of = |t: &str| painter.layout_no_wrap(t.to_string(), font.clone(), MARKER).size();
            layout(&groups, frame, right, (lo, hi), &mut size_of)
        }
        _ => Vec::new(),
    };
    let rows = placed.iter().filter_map(|(_, p)| p.map(|(r, _)| r + 1)).max().unwrap_or(1);
    let height = STRIP_HEIGHT + (rows - 1) as f32 * ROW_HEIGHT;
    let (rect, resp) = ui.allocate_exact_size(egui::vec2(ui.available_width(), height), Sense::hover());
    if placed.is_empty() {
        return;
    }
    let painter = ui.painter_at(rect.expand2(egui::vec2(0.0, 1.0)));
    let color = marker_color(ui);
    let pointer = resp.hover_pos();
    let mut hovered: Option<&Vec<&str>> = None;
    let in_window = groups.iter().filter(|(t, _)| *t >= lo && *t <= hi);
    for ((t, labels), (x, label)) in in_window.zip(&placed) {
        let (t, x) = (*t, *x);
        let c = if t <= cursor { color } else { color.gamma_multiply(0.4) };
        let tip = egui::pos2(x, rect.bottom());
        let tri = vec![tip, egui::pos2(x - 4.0, rect.bottom() - 6.0), egui::pos2(x + 4.0, rect.bottom() - 6.0)];
        painter.add(egui::Shape::convex_polygon(tri, c, Stroke::NONE));
        let mut hit = Rect::from_x_y_ranges(x - 5.0..=x + 5.0, rect.y_range());
        if let Some((row, r)) = label {
            let r = r.translate(egui::vec2(0.0, rect.top()));
            let galley = painter.layout_no_wrap(short_label(labels), font.clone(), c);
            painter.galley(r.min, galley, c);
            if *row > 0 {
                // A lower row's label hangs on a thin line from its tick.
                let stem = [egui::pos2(x, r.top()), egui::pos2(x, rect.bottom() - 6.0)];
                painter.line_segment(stem, Stroke::new(1.0, c.gamma_multiply(0.5)));
            }
            hit = hit.union(r);
        }
        if pointer.is_some_and(|p| hit.contains(p)) {
            hovered = Some(labels);
        }
    }
    if let Some(labels) = hovered {
        resp.on_hover_ui_at_pointer(|ui| {
            for l in labels {
                ui.label(*l);
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

    #[test]
    fn close_markers_each_get_a_label_on_rows_of_their_own() {
        let changes: Vec<(f64, String)> =
            (0..4).map(|i| (1.0 + 0.1 * i as f64, format!("link.loss_percent={i}"))).collect();
        let groups = group_changes(&changes);
        let frame = Rect::from_min_size(egui::pos2(0.0, 0.0), egui::vec2(400.0, 100.0));
        let placed = layout(&groups, frame, 400.0, (0.0, 10.0), &mut |t| egui::vec2(7.0 * t.len() as f32, 11.0));
        assert_eq!(placed.len(), 4);
        let rows: Vec<usize> = placed.iter().map(|(_, p)| p.expect("every marker labelled").0).collect();
        assert_eq!(rows, [0, 1, 2, 3]);
        // Far apart, they share the first row.
        let placed = layout(&groups, frame, 400.0, (1.0, 1.3), &mut |t| egui::vec2(7.0 * t.len() as f32, 11.0));
        assert!(placed.iter().all(|(_, p)| p.is_some()));
    }
}
