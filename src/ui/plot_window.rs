//! The Overview's time window: which stretch of time the plots show (the last 10/30/60/300 s or
//! the whole run), whether it follows the newest data, and the time axis' labels.
//!
//! The plots never choose their own X range: every frame they are given the window's range, so
//! a live run stays in view however the user zoomed, and a replay keeps the same axes while
//! scrubbing. What the user does to a plot (drag, scroll, Ctrl+scroll zoom) is read back after
//! it was drawn: zooming while following keeps following with the new width (the old silent
//! stop was the bug), panning stops following, and "Resume following" (or a double-click)
//! returns to it.

use egui::Color32;
use egui_plot::{GridInput, GridMark};

/// How much time the window spans.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Span {
    /// The last this many seconds up to the head (the end of a live run, a replay's cursor).
    Last(f64),
    /// From 0 to the end of the run.
    Whole,
}

/// The spans offered, with their button labels.
pub const SPANS: [(Span, &str); 5] = [
    (Span::Last(10.0), "10 s"),
    (Span::Last(30.0), "30 s"),
    (Span::Last(60.0), "60 s"),
    (Span::Last(300.0), "5 min"),
    (Span::Whole, "whole run"),
];

/// The shortest range a plot shows, so an empty run still has an axis.
const MIN_SPAN_S: f64 = 1.0;

/// The window's state: its span, whether it follows, and the range the user panned to.
#[derive(Clone, Debug)]
pub struct TimeWindow {
    pub span: Span,
    following: bool,
    manual: (f64, f64),
}

impl Default for TimeWindow {
    /// The whole run, following: a replay opens with the whole run in view.
    fn default() -> Self {
        Self { span: Span::Whole, following: true, manual: (0.0, MIN_SPAN_S) }
    }
}

impl TimeWindow {
    pub fn following(&self) -> bool {
        self.following
    }

    /// Follows the head again with the current span.
    pub fn resume(&mut self) {
        self.following = true;
    }

    /// Picks a span and follows.
    pub fn pick(&mut self, span: Span) {
        self.span = span;
        self.following = true;
    }

    /// The X range to show: the span ending at `head` (clamped at 0, so a young run fills from
    /// the left), the whole run up to `end`, or where the user panned.
    pub fn range(&self, head: f64, end: f64) -> (f64, f64) {
        if !self.following {
            return self.manual;
        }
        match self.span {
            Span::Whole => (0.0, end.max(MIN_SPAN_S)),
            Span::Last(s) => {
                let lo = (head - s).max(0.0);
                (lo, lo + s)
            }
        }
    }

    /// Reads back a plot that was given `set` and shows `now` after the user's input; `zoomed`
    /// says the input was a zoom (Ctrl+scroll, pinch).
    pub fn observe(&mut self, set: (f64, f64), now: (f64, f64), zoomed: bool) {
        let span = (set.1 - set.0).abs().max(f64::EPSILON);
        let tol = span * 1e-9;
        if (now.0 - set.0).abs() <= tol && (now.1 - set.1).abs() <= tol {
            return;
        }
        let new_span = now.1 - now.0;
        if self.following && zoomed && new_span > 0.0 {
            self.span = Span::Last(new_span);
        } else {
            self.following = false;
            self.manual = now;
        }
    }

    /// The span buttons, the following state and the way back to following.
    pub fn selector_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            ui.label("Window:");
            for (span, label) in SPANS {
                let on = self.following && self.span == span;
                if ui.selectable_label(on, label).clicked() {
                    self.pick(span);
                }
            }
            ui.separator();
            let head = "the cursor (the newest data while live)";
            if self.following {
                let text = match self.span {
                    Span::Last(s) if !SPANS.iter().any(|(x, _)| *x == Span::Last(s)) => {
                        format!("following (last {} s)", format_seconds(s))
                    }
                    _ => "following".to_string(),
                };
                let color = if ui.visuals().dark_mode { Color32::LIGHT_GREEN } else { Color32::DARK_GREEN };
                let (dot, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
                ui.painter().circle_filled(dot.center(), 4.0, color);
                ui.colored_label(color, text).on_hover_text(format!(
                    "The plots follow {head}. Ctrl+scroll zooms and keeps following; dragging or scrolling sideways \
                     pans and stops following."
                ));
            } else {
                let (lo, hi) = self.manual;
                ui.weak(format!("paused at {} to {} s", format_seconds(lo), format_seconds(hi)));
                if ui.button("Resume following").on_hover_text(format!("Follow {head} again")).clicked() {
                    self.resume();
                }
            }
        });
    }
}

/// Seconds with as few digits as they need.
fn format_seconds(s: f64) -> String {
    if s >= 10.0 || s.fract().abs() < 1e-9 {
        format!("{s:.0}")
    } else {
        format!("{s:.1}")
    }
}

/// Steps a time axis may use, in seconds: 1-2-5 below a second, then minutes and hours.
const STEPS_S: [f64; 22] = [
    0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0,
    900.0, 1800.0, 3600.0,
];

/// The smallest step of at least `min_s`.
fn nice_step(min_s: f64) -> f64 {
    STEPS_S.iter().copied().find(|s| *s >= min_s).unwrap_or_else(|| (min_s / 3600.0).ceil() * 3600.0)
}

/// The smallest 1, 2 or 5 times a power of ten of at least `min`.
fn nice_125(min: f64) -> f64 {
    let base = 10f64.powf(min.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * base).find(|s| *s >= min * (1.0 - 1e-9)).unwrap_or(10.0 * base)
}

/// The value of one pixel, from egui_plot's base step (the value of its minimum grid spacing,
/// 8 px), if usable.
fn per_px(input: &GridInput) -> Option<f64> {
    let per_px = input.base_step_size / 8.0;
    (per_px > 0.0 && per_px.is_finite()).then_some(per_px)
}

/// Marks at every multiple of a minor step in the bounds, those on a multiple of `major` marked
/// so; the minor step divides `major` (so every major mark is on a minor one) and is at least
/// `min_minor`.
fn marks(bounds: (f64, f64), major: f64, min_minor: f64) -> Vec<GridMark> {
    let minor = [10.0, 5.0, 4.0, 2.0, 1.0].into_iter().map(|d| major / d).find(|m| *m >= min_minor).unwrap_or(major);
    let (first, last) = ((bounds.0 / minor).ceil() as i64, (bounds.1 / minor).floor() as i64);
    if last < first || last - first > 2000 {
        return Vec::new();
    }
    (first..=last)
        .map(|i| {
            let value = i as f64 * minor;
            let on_major = ((value / major).round() * major - value).abs() < minor * 1e-6;
            GridMark { value, step_size: if on_major { major } else { minor } }
        })
        .collect()
}

/// Grid marks for a time axis: labelled steps at least ~75 px apart (egui_plot only labels
/// steps over 60 px apart, so its powers of ten left a narrow 0-80 s axis with "0" alone), and
/// thin lines between them.
pub fn time_marks(input: GridInput) -> Vec<GridMark> {
    let Some(per_px) = per_px(&input) else { return Vec::new() };
    marks(input.bounds, nice_step(per_px * 75.0), per_px * 15.0)
}

/// Grid marks for a value axis: 1-2-5 steps labelled at least ~28 px apart, so a short plot
/// still reads several values (powers of 5 or 10 left one label on a 0-200 ms RTT plot).
pub fn value_marks(input: GridInput) -> Vec<GridMark> {
    let Some(per_px) = per_px(&input) else { return Vec::new() };
    marks(input.bounds, nice_125(per_px * 28.0), per_px * 9.0)
}

/// A time axis label: as many decimals as the step needs.
pub fn time_label(mark: GridMark) -> String {
    let decimals = if mark.step_size >= 1.0 { 0 } else { (-mark.step_size.log10()).ceil() as usize };
    let v = if mark.value.abs() < mark.step_size * 1e-6 { 0.0 } else { mark.value };
    format!("{v:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rolling_window_ends_at_the_head_and_starts_at_zero_while_the_run_is_young() {
        let mut w = TimeWindow::default();
        assert_eq!(w.range(5.0, 7.0), (0.0, 7.0), "whole run");
        w.pick(Span::Last(30.0));
        assert_eq!(w.range(5.0, 5.0), (0.0, 30.0));
        assert_eq!(w.range(100.0, 100.0), (70.0, 100.0));
    }

    #[test]
    fn zooming_keeps_following_and_panning_stops_it() {
        let mut w = TimeWindow::default();
        w.pick(Span::Last(30.0));
        w.observe((70.0, 100.0), (70.0, 100.0), false);
        assert!(w.following());
        w.observe((70.0, 100.0), (80.0, 95.0), true);
        assert!(w.following());
        assert_eq!(w.range(200.0, 200.0), (185.0, 200.0), "follows with the zoomed width");
        w.observe((185.0, 200.0), (180.0, 195.0), false);
        assert!(!w.following());
        assert_eq!(w.range(300.0, 300.0), (180.0, 195.0), "stays where it was panned");
        w.resume();
        assert_eq!(w.range(300.0, 300.0), (285.0, 300.0));
    }

    #[test]
    fn a_narrow_80_second_axis_gets_several_labels() {
        // 80 s over 200 px: egui_plot passes the value of 8 px.
        let marks = time_marks(GridInput { bounds: (0.0, 80.0), base_step_size: 80.0 / 200.0 * 8.0 });
        let labelled: Vec<f64> = marks.iter().filter(|m| m.step_size >= 30.0).map(|m| m.value).collect();
        assert_eq!(labelled, [0.0, 30.0, 60.0]);
        assert_eq!(time_label(GridMark { value: 0.30000000000000004, step_size: 0.1 }), "0.3");
        assert_eq!(time_label(GridMark { value: 60.0, step_size: 30.0 }), "60");
        // 0-210 ms over 130 px: labels every 50 ms.
        let marks = value_marks(GridInput { bounds: (0.0, 210.0), base_step_size: 210.0 / 130.0 * 8.0 });
        let labelled: Vec<f64> = marks.iter().filter(|m| m.step_size >= 50.0).map(|m| m.value).collect();
        assert_eq!(labelled, [0.0, 50.0, 100.0, 150.0, 200.0]);
    }
}
