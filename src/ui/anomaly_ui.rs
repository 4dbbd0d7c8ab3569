//! The anomaly list (its own tab), the previous / next anomaly buttons beside the scrubber, and
//! the density strip of anomalies under it (as rerun's time panel marks its events).
//!
//! A tab rather than a side panel: at 1280x800 the left controls take 300 px, and a side panel
//! wide enough for a readable row (time, kind, description) would leave the Messages timeline
//! and the packet log about 600 px; the strip and the prev / next buttons sit in the top bar, so
//! the anomalies stay reachable from every tab, and the list gets the whole width (one column
//! per lane in A/B, as the other tabs show lanes).
//!
//! One filter drives the list, the strip and prev / next, so what the strip marks is what the
//! buttons visit. A click anywhere moves the cursor to the anomaly's instant (where its cause
//! and result are both visible: a nak is shown at the nak, not at its packet's send) and selects
//! its packet or message in the Packets and Messages tabs.

use ackscope_protocol::{Side, SimTime};
use egui::{Color32, RichText};

use super::filter_bar::FilterBar;
use super::lanes::PerLane;
use super::packets_ui::with_delta;
use crate::app::{AppCommand, AppState, MarkCommand, Tab};
use crate::filter::Matches;
use crate::model::anomaly::{Anomaly, AnomalyClass, Target, CLASSES, STALL_FLOOR_US};
use crate::model::anomaly_filter::{AnomalyFilter, FilteredAnomalies, StripCounts};
use crate::model::marks::{column_for, delta_header, Mark};
use crate::model::Shown;

/// Height of one lane's band of the strip.
const STRIP_LANE_H: f32 = 11.0;
/// Width of one column of the strip, in points.
const STRIP_COLUMN_W: f32 = 2.0;

/// One lane's filtered anomalies and its strip counts.
#[derive(Debug, Default)]
pub struct LaneAnomalies {
    pub filtered: FilteredAnomalies,
    /// The display filter's matches in this lane.
    pub expr: Matches<Anomaly>,
    pub strip: StripCounts,
    /// Scroll the list to the cursor's row (set when the cursor moved by other means).
    scroll_to_cursor: bool,
}

/// The anomaly views' state: the filter, each lane's cache, and what a click asked to select.
#[derive(Debug)]
pub struct AnomalyView {
    pub filter: AnomalyFilter,
    /// The display filter, ANDed with [`Self::filter`] (the list, the strip and prev / next).
    pub expr: FilterBar<Anomaly>,
    /// Per lane (A/B): shown or hidden.
    pub lanes_shown: [bool; 2],
    pub per_lane: PerLane<LaneAnomalies>,
    /// (lane, what) a click asked to select in the other tabs; the window hands it on.
    pub pending: Option<(usize, Target)>,
    /// The row last clicked: (lane, position in the lane's index).
    pub selected: Option<(usize, u32)>,
    /// Where the last frame drew the strip: its rectangle and the x range of times 0..end
    /// (tests and tools aim the pointer with it).
    pub last_strip: Option<(egui::Rect, egui::Rangef)>,
    last_cursor: Option<SimTime>,
}

impl Default for AnomalyView {
    fn default() -> Self {
        Self {
            filter: AnomalyFilter::default(),
            expr: FilterBar::default(),
            lanes_shown: [true; 2],
            per_lane: PerLane::default(),
            pending: None,
            selected: None,
            last_strip: None,
            last_cursor: None,
        }
    }
}

/// The colour of a class on a dark (`true`) or light background.
pub fn class_color(class: AnomalyClass, dark_mode: bool) -> Color32 {
    let (d, l) = match class {
        AnomalyClass::DropLoss => ((235, 95, 85), (190, 40, 30)),
        AnomalyClass::DropBurst => ((255, 150, 60), (190, 90, 0)),
        AnomalyClass::DropQueue => ((230, 200, 60), (140, 115, 0)),
        AnomalyClass::DropMtu => ((200, 120, 90), (140, 70, 40)),
        AnomalyClass::Nak => ((225, 110, 225), (150, 40, 150)),
        AnomalyClass::Spurious => ((120, 180, 255), (30, 90, 200)),
        AnomalyClass::Stall => ((90, 220, 220), (0, 130, 130)),
        AnomalyClass::FlowMode => ((150, 230, 100), (60, 140, 20)),
        AnomalyClass::Closed => ((255, 255, 255), (0, 0, 0)),
        AnomalyClass::Malformed => ((190, 160, 255), (100, 60, 200)),
    };
    let (r, g, b) = if dark_mode { d } else { l };
    Color32::from_rgb(r, g, b)
}

impl AnomalyView {
    /// Brings every lane's cache up to date; each lane with its cache, in lane order.
    pub fn update<'a, 'r>(&'a mut self, lanes: &'a [Shown<'r>]) -> Vec<(&'a Shown<'r>, &'a mut LaneAnomalies)> {
        let filter = self.filter;
        let expr = self.expr.filter.clone();
        let mut out: Vec<_> = self.per_lane.zip(lanes).collect();
        for (rec, cache) in &mut out {
            match &expr {
                Some(f) => {
                    cache.expr.update(**rec, f, None, crate::filter::Budget::frame());
                    cache.filtered.update_with(&rec.anomalies, &filter, Some((f.id(), cache.expr.set())));
                }
                None => cache.filtered.update(&rec.anomalies, &filter),
            }
        }
        out
    }

    /// Whether lane `i` is shown (a single lane always is).
    pub fn lane_shown(&self, i: usize, lanes: usize) -> bool {
        lanes < 2 || self.lanes_shown.get(i).copied().unwrap_or(true)
    }

    /// The anomaly a jump lands on: `pick` chooses a match of one lane (as its time), the
    /// closest to `t` among shown lanes wins.
    fn jump(
        &mut self,
        lanes: &[Shown<'_>],
        t: SimTime,
        pick: impl Fn(&FilteredAnomalies) -> Option<usize>,
    ) -> Option<(usize, SimTime, u32)> {
        let n = lanes.len();
        let shown: Vec<bool> = (0..n).map(|i| self.lane_shown(i, n)).collect();
        let mut best: Option<(usize, SimTime, u32)> = None;
        for (lane, (_, cache)) in self.update(lanes).into_iter().enumerate() {
            if !shown[lane] {
                continue;
            }
            let f = &cache.filtered;
            let Some(k) = pick(f) else { continue };
            let (at, row) = (f.time(k).unwrap_or_default(), f.get(k).unwrap_or_default());
            let dist = |x: SimTime| x.0.abs_diff(t.0);
            if best.is_none_or(|(_, b, _)| dist(at) < dist(b)) {
                best = Some((lane, at, row));
            }
        }
        best
    }

    /// Moves the cursor to the anomaly `pick` finds (see [`Self::jump`]) and selects its target;
    /// says so when there is none.
    fn jump_to(
        &mut self,
        lanes: &[Shown<'_>],
        t: SimTime,
        what: &str,
        cmds: &mut Vec<AppCommand>,
        pick: impl Fn(&FilteredAnomalies) -> Option<usize>,
    ) {
        match self.jump(lanes, t, pick) {
            Some((lane, at, row)) => self.select(lanes, lane, row, at, cmds),
            None => cmds.push(AppCommand::ShowError(format!(
                "no {what} anomaly (as filtered in the Anomalies tab) from {:.2} s",
                t.as_secs_f64()
            ))),
        }
    }

    /// Selects anomaly `row` of `lane` at `at`: the cursor moves there, its target is selected.
    fn select(&mut self, lanes: &[Shown<'_>], lane: usize, row: u32, at: SimTime, cmds: &mut Vec<AppCommand>) {
        cmds.push(AppCommand::SeekTo(at));
        self.selected = Some((lane, row));
        self.last_cursor = Some(at);
        if let Some(a) = lanes.get(lane).and_then(|r| r.anomalies.get(row as usize)) {
            self.pending = Some((lane, a.target));
        }
    }
}

/// The previous / next anomaly buttons (beside the scrubber).
pub fn prev_next_ui(state: &AppState, view: &mut AnomalyView, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    let c = state.cursor();
    let tip = "the filter of the Anomalies tab applies; the strip below marks them";
    if ui.button("< Prev").on_hover_text(format!("Move the cursor to the previous anomaly ({tip})")).clicked() {
        view.jump_to(&state.focused_lanes(), c, "earlier", cmds, |f| f.prev_before(c));
    }
    if ui.button("Next >").on_hover_text(format!("Move the cursor to the next anomaly ({tip})")).clicked() {
        view.jump_to(&state.focused_lanes(), c, "later", cmds, |f| f.next_after(c));
    }
}

/// Each strip column's height over a band `full` high, and the run's typical column count.
///
/// Heights grow with how far a column is above the typical (median) busy column: at 1000
/// packets/s a lossy link drops packets in every column, and heights by count alone drew a solid
/// red band (issue 25, defect 10). A column at or below the typical level is a low band (a third),
/// so a lone anomaly in a quiet run still shows, and bursts stand out at full height.
pub fn column_heights(totals: &[u32], full: f32) -> (Vec<f32>, u32) {
    let mut busy: Vec<u32> = totals.iter().copied().filter(|&t| t > 0).collect();
    busy.sort_unstable();
    let typical = busy.get(busy.len() / 2).copied().unwrap_or(0);
    let max = busy.last().copied().unwrap_or(0);
    let heights = totals
        .iter()
        .map(|&t| match t {
            0 => 0.0,
            t if t <= typical || max <= typical => full * 0.33,
            t => full * (0.33 + 0.67 * ((t - typical) as f32 / (max - typical) as f32).sqrt()),
        })
        .collect();
    (heights, typical)
}
/// The density strip under the scrubber: per column of `rail` (the slider's handle travel, so a
/// mark sits under the cursor position of its time), counts of each class, one band per lane.
pub fn strip_ui(
    state: &AppState,
    view: &mut AnomalyView,
    rail: egui::Rangef,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) {
    let n = state.lanes.len();
    let shown: Vec<usize> = (0..n).filter(|&i| view.lane_shown(i, n)).collect();
    let h = STRIP_LANE_H * shown.len().max(1) as f32;
    let (rect, resp) = ui.allocate_exact_size(egui::vec2(ui.available_width(), h), egui::Sense::click());
    let rail = egui::Rangef::new(rail.min.max(rect.left()), rail.max.min(rect.right()).max(rail.min + 1.0));
    view.last_strip = Some((rect, rail));
    let end = state.end_time().max(SimTime(1));
    let columns = (rail.span() / STRIP_COLUMN_W).max(1.0) as usize;
    let dark = ui.visuals().dark_mode;
    let painter = ui.painter_at(rect);
    let weak = ui.visuals().weak_text_color();
    // Each band named at its left: by its strategy in A/B, else "anomalies".
    for (band, &lane) in shown.iter().enumerate() {
        let (name, color) = match state.lanes.get(lane) {
            Some(l) if n > 1 => (l.info.label(), super::lane_colors::lane_color(ui, l.info.color_at(state.cursor()))),
            _ => ("anomalies".to_string(), weak),
        };
        let y = rect.top() + (band as f32 + 0.5) * STRIP_LANE_H;
        painter.text(
            egui::pos2(rail.min - 8.0, y),
            egui::Align2::RIGHT_CENTER,
            name,
            egui::FontId::proportional(10.0),
            color,
        );
    }
    let to_x = |t: SimTime| rail.min + rail.span() * (t.0 as f64 / end.0 as f64) as f32;
    let mut mesh = egui::Mesh::default();
    let band_bg = ui.visuals().extreme_bg_color;
    let mut hover_counts = [0u32; CLASSES];
    let hover_col =
        resp.hover_pos().map(|p| (((p.x - rail.min) / STRIP_COLUMN_W).floor() as isize).clamp(0, columns as isize - 1));
    for band in 0..shown.len() {
        let y0 = rect.top() + band as f32 * STRIP_LANE_H;
        let band_rect = egui::Rect::from_x_y_ranges(rail, egui::Rangef::new(y0 + 1.0, y0 + STRIP_LANE_H - 1.0));
        mesh.add_colored_rect(band_rect, band_bg);
    }
    let focused = state.focused_lanes();
    let mut per_lane = view.update(&focused);
    for (band, &lane) in shown.iter().enumerate() {
        let Some((_, cache)) = per_lane.get_mut(lane) else { continue };
        let counts = cache.strip.update(&cache.filtered, SimTime::ZERO, end.plus_micros(1), columns);
        let totals: Vec<u32> = counts.iter().map(|c| c.iter().sum()).collect();
        let y1 = rect.top() + (band + 1) as f32 * STRIP_LANE_H - 1.0;
        let full = STRIP_LANE_H - 2.0;
        let (heights, typical) = column_heights(&totals, full);
        for (col, c) in counts.iter().enumerate() {
            if hover_col == Some(col as isize) {
                for (k, v) in c.iter().enumerate() {
                    hover_counts[k] += v;
                }
            }
            let total: u32 = c.iter().sum();
            if total == 0 {
                continue;
            }
            let height = heights[col];
            // Columns at the run's usual level are muted: what stands out is what is unusual.
            let alpha = if total <= typical { 0.45 } else { 1.0 };
            let x0 = rail.min + col as f32 * STRIP_COLUMN_W;
            let mut y = y1;
            for class in AnomalyClass::ALL {
                let v = c[class.index()];
                if v == 0 {
                    continue;
                }
                let seg = height * v as f32 / total as f32;
                let r = egui::Rect::from_min_max(egui::pos2(x0, y - seg), egui::pos2(x0 + STRIP_COLUMN_W, y));
                mesh.add_colored_rect(r, class_color(class, dark).gamma_multiply(alpha));
                y -= seg;
            }
        }
    }
    painter.add(egui::Shape::mesh(mesh));
    let cx = to_x(state.cursor());
    painter.line_segment(
        [egui::pos2(cx, rect.top()), egui::pos2(cx, rect.bottom())],
        egui::Stroke::new(1.5, ui.visuals().strong_text_color()),
    );
    let t_at = |x: f32| SimTime((((x - rail.min) / rail.span()).clamp(0.0, 1.0) as f64 * end.0 as f64) as u64);
    if let Some(p) = resp.hover_pos() {
        let t = t_at(p.x);
        let mut text = format!("{:.2} s", t.as_secs_f64());
        for class in AnomalyClass::ALL {
            let v = hover_counts[class.index()];
            if v > 0 {
                text.push_str(&format!("\n{v} {}", class.name()));
            }
        }
        text.push_str("\nclick: jump to the nearest anomaly (Anomalies tab filters apply)");
        resp.clone().on_hover_text(text);
    }
    if resp.clicked() {
        if let Some(p) = resp.interact_pointer_pos() {
            let t = t_at(p.x);
            view.jump_to(&state.focused_lanes(), t, "shown", cmds, |f| f.nearest(t));
        }
    }
}

/// The filters rows: a toggle per class (with its colour, and its count whether shown or not), sides, lanes, the stall
/// threshold, and a button opening the selected anomaly's packet or message in its tab.
fn filters_ui(
    state: &AppState,
    view: &mut AnomalyView,
    counts: &[usize; CLASSES],
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) {
    let dark = ui.visuals().dark_mode;
    ui.horizontal_wrapped(|ui| {
        for class in AnomalyClass::ALL {
            let mut on = view.filter.shows(class);
            let text =
                RichText::new(format!("{} {}", class.name(), counts[class.index()])).color(class_color(class, dark));
            let r = ui
                .checkbox(&mut on, text)
                .on_hover_text(format!("{}\nclick: show or hide; right-click: show only this", class.tip()));
            view.filter.classes[class.index()] = on;
            if r.secondary_clicked() {
                view.filter.solo(class);
            }
        }
    });
    ui.horizontal_wrapped(|ui| {
        if ui.button("All kinds").clicked() {
            view.filter.classes = [true; CLASSES];
        }
        ui.separator();
        for side in Side::BOTH {
            let name = if side == Side::A { "side A" } else { "side B" };
            ui.checkbox(&mut view.filter.sides[side.index()], name)
                .on_hover_text("Anomalies on this side (a drop is its sender's, a stall its receiver's)");
        }
        if state.lanes.len() > 1 {
            ui.separator();
            for (i, lane) in state.lanes.iter().enumerate().take(2) {
                let text = super::lane_colors::lane_heading(ui, &lane.info, state.cursor());
                ui.checkbox(&mut view.lanes_shown[i], text).on_hover_text("Show this lane's anomalies");
            }
        }
        ui.separator();
        ui.label("stall at least");
        ui.add(
            egui::DragValue::new(&mut view.filter.stall_min_ms)
                .range(STALL_FLOOR_US as f64 / 1000.0..=10_000.0)
                .speed(5.0)
                .suffix(" ms"),
        )
        .on_hover_text("Head-of-line stalls shorter than this are not listed");
        let focused = state.focused_lanes();
        let target = view.selected.and_then(|(lane, row)| focused.get(lane)?.anomalies.get(row as usize).copied());
        let open = match target.map(|a| a.target) {
            Some(Target::Packet(_)) => Some(("Show its packet", Tab::Packets)),
            Some(Target::Message(_)) => Some(("Show its message", Tab::Messages)),
            _ => None,
        };
        if let Some((text, tab)) = open {
            ui.separator();
            if ui
                .button(text)
                .on_hover_text(format!(
                    "Open the {} tab on the selected anomaly's {}",
                    tab.name(),
                    text.trim_start_matches("Show its ")
                ))
                .clicked()
            {
                cmds.push(AppCommand::SetTab(tab));
            }
        }
    });
}

/// The Anomalies tab: filters, then each shown lane's list (virtualised).
pub fn anomalies_ui(state: &AppState, view: &mut AnomalyView, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    let cursor = state.cursor();
    let moved = view.last_cursor != Some(cursor);
    view.last_cursor = Some(cursor);
    let n = state.lanes.len();
    let shown: Vec<usize> = (0..n).filter(|&i| view.lane_shown(i, n)).collect();
    let mut counts = [0usize; CLASSES];
    let focused = state.focused_lanes();
    for (lane, (_, cache)) in view.update(&focused).into_iter().enumerate() {
        if shown.contains(&lane) {
            for class in AnomalyClass::ALL {
                counts[class.index()] += cache.filtered.class_total(class);
            }
            cache.scroll_to_cursor |= moved;
        }
    }
    view.expr.ui(ui, "kind == nak && side == a || kind == stall && wait_ms > 200");
    filters_ui(state, view, &counts, ui, cmds);
    ui.separator();
    let mut clicked = None;
    let selected = view.selected;
    let mark = state.current_mark();
    let focused = state.focused_lanes();
    let lanes = &focused[..];
    let filtering = view.expr.filter.is_some();
    let mut per_lane = view.update(lanes);
    ui.columns(shown.len().max(1), |cols| {
        for (col, &lane) in cols.iter_mut().zip(&shown) {
            let Some((rec, cache)) = per_lane.get_mut(lane) else { continue };
            col.push_id(lane, |ui| {
                if n > 1 || rec.rec.clients().len() > 1 {
                    let label = super::lanes::focused_label(rec);
                    let color = super::lane_colors::lane_color(ui, rec.color_at(cursor));
                    ui.label(RichText::new(label).strong().color(color));
                }
                let (checked, all) = (cache.expr.rows_checked(), rec.anomalies.len());
                if filtering && checked < all {
                    ui.weak(super::filter_bar::progress_text(checked, all));
                }
                let sel = selected.filter(|(l, _)| *l == lane).map(|(_, r)| r);
                if let Some(hit) = lane_list_ui(rec, lane, cache, sel, (cursor, mark), ui, cmds) {
                    clicked = Some((lane, hit));
                }
            });
        }
    });
    drop(per_lane);
    if let Some((lane, row)) = clicked {
        if let Some((rec, a)) = lanes.get(lane).and_then(|r| Some((r, r.anomalies.get(row as usize)?))) {
            let at = a.time;
            cmds.push(AppCommand::Marks(MarkCommand::Select(anomaly_point(rec, lane, a))));
            view.select(lanes, lane, row, at, cmds);
        }
    }
}

/// The point an anomaly stands for (what a click selects and Ctrl+M marks): its instant, on its
/// packet or message.
pub fn anomaly_point(rec: &Shown<'_>, lane: usize, a: &Anomaly) -> Mark {
    match a.target {
        Target::Packet(uid) => rec.packets.row_by_uid(uid, &rec.ledger).map_or(Mark::instant(a.time), |r| {
            Mark::packet(lane, uid, r.dir, r.seq, a.time).of_client(rec.conn.client)
        }),
        Target::Message((side, id)) => Mark::message(lane, side, id, a.time),
        Target::Nothing => Mark::instant(a.time),
    }
}

/// The anomaly list's heading (after the delta column's when there is a mark).
pub const ANOMALY_HEADER: &str = "   time s  side  kind         description";

/// One lane's list, each row after its distance from `mark`; returns the row (position in the
/// lane's index) clicked.
fn lane_list_ui(
    rec: &Shown<'_>,
    lane: usize,
    cache: &mut LaneAnomalies,
    selected: Option<u32>,
    (cursor, mark): (SimTime, Option<Mark>),
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) -> Option<u32> {
    let f = &cache.filtered;
    let by_cursor = f.count_by(cursor);
    ui.label(format!("{} anomalies, {by_cursor} by the cursor (later ones greyed)", f.len()));
    let header = ui.add(
        egui::Button::new(
            RichText::new(with_delta(mark.as_ref().map(delta_header), ANOMALY_HEADER.into())).monospace().weak(),
        )
        .frame(false)
        .sense(egui::Sense::hover()),
    );
    let row_h = header.rect.height();
    let mut area = egui::ScrollArea::both().id_salt("anomaly_list").auto_shrink([false, false]);
    if std::mem::take(&mut cache.scroll_to_cursor) {
        // The cursor's row in the middle, or the last rows at the bottom when it is near the end
        // (a live run's cursor always is), never past the content.
        let (pitch, view_h) = (row_h + ui.spacing().item_spacing.y, ui.available_height());
        let centred = by_cursor.saturating_sub(1) as f32 * pitch - view_h / 2.0;
        let last = f.len() as f32 * pitch - view_h;
        area = area.vertical_scroll_offset(centred.min(last).max(0.0));
    }
    let dark = ui.visuals().dark_mode;
    let mut clicked = None;
    area.show_rows(ui, row_h, f.len(), |ui, range| {
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
        let mono = egui::TextStyle::Monospace.resolve(ui.style());
        let (text_c, weak_c) = (ui.visuals().text_color(), ui.visuals().weak_text_color());
        for k in range {
            let Some(i) = f.get(k) else { break };
            let Some(a) = rec.anomalies.get(i as usize) else { continue };
            let later = a.time > cursor;
            let class = a.kind.class();
            let fmt = |color: Color32| egui::TextFormat::simple(mono.clone(), if later { weak_c } else { color });
            let mut job = egui::text::LayoutJob::default();
            let point = anomaly_point(rec, lane, a);
            if let Some(d) = column_for(mark.as_ref(), &point) {
                job.append(&format!("{d}  "), 0.0, fmt(text_c));
            }
            let side = if a.side == Side::A { "A" } else { "B" };
            job.append(&format!("{:>9.3}  {side:<4}  ", a.time.as_secs_f64()), 0.0, fmt(text_c));
            job.append(&format!("{:<11}  ", class.name()), 0.0, fmt(class_color(class, dark)));
            job.append(&a.describe(&rec.anomalies), 0.0, fmt(text_c));
            let resp = ui.add(egui::Button::selectable(selected == Some(i), job)).on_hover_text(format!(
                "{}\nclick: move the cursor here{}",
                class.tip(),
                match a.target {
                    Target::Packet(_) => " and select the packet in the Packets tab",
                    Target::Message(_) => " and select the message in the Messages tab",
                    Target::Nothing => "",
                }
            ));
            if resp.clicked() {
                clicked = Some(i);
            }
            super::marks_ui::row_menu(&resp, point, mark == Some(point), cmds);
        }
    });
    clicked
}

#[cfg(test)]
mod tests {
    use super::column_heights;

    #[test]
    fn a_steady_drop_rate_is_a_low_band_and_a_burst_stands_out() {
        // 1000 packets/s at 5 % loss: about 40 drops in every column, one burst of 120.
        let mut totals: Vec<u32> = (0..200).map(|i| 36 + (i % 9) as u32).collect();
        totals[50] = 120;
        totals[10] = 0;
        let (h, typical) = column_heights(&totals, 12.0);
        assert!((36..=44).contains(&typical), "{typical}");
        assert_eq!(h[10], 0.0);
        assert!((h[50] - 12.0).abs() < 1e-4, "the burst is full height: {}", h[50]);
        // The band is mostly empty: under half of its area painted.
        let area: f32 = h.iter().sum::<f32>() / (12.0 * h.len() as f32);
        assert!(area < 0.5, "{area}");
        // A lone anomaly in a quiet run still shows.
        let (h, _) = column_heights(&[0, 0, 1, 0], 12.0);
        assert!(h[2] >= 3.0);
    }
}
