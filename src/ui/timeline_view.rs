//! The message timeline's view state and geometry: what the user chose (filter, time window,
//! selection), where the last frame drew rows, and the pan/zoom arithmetic. Shared by the
//! canvas ([`super::timeline_canvas`]) and the toolbar ([`super::timeline_ui`]), drawing nothing.

use ackscope_protocol::SimTime;
use egui::{Pos2, Rect};

use crate::app::RevealSeen;
use crate::model::index::{MessageFilter, MsgKey};

/// Narrowest time window, seconds.
pub(super) const MIN_SPAN_S: f64 = 0.01;
/// Widest time window, seconds.
pub(super) const MAX_SPAN_S: f64 = 24.0 * 3600.0;

/// Share of the window left free right of the cursor while following.
pub const FOLLOW_MARGIN: f64 = 0.03;

/// What the user chose: filter, time window, selection.
#[derive(Debug)]
pub struct TimelineState {
    pub filter: MessageFilter,
    /// The display filter (ANDed with [`Self::filter`]) and its matching messages.
    pub expr: super::filter_bar::FilteredBy<crate::model::index::MessageRecord>,
    /// Keep the right edge of the window at the cursor.
    pub follow_live: bool,
    /// Width of the time window, seconds.
    pub span_s: f64,
    /// The window's width follows the message rate ([`fit_span_s`]) until the user zooms.
    pub span_auto: bool,
    /// Right edge of the window when not following, seconds.
    pub right_s: f64,
    /// Rows scrolled up from the newest (0 shows the newest rows).
    pub rows_from_bottom: f32,
    pub selected: Option<MsgKey>,
    /// Where the last frame drew things (tests and tools use it to aim the pointer).
    pub last_layout: Option<TimelineLayout>,
    /// This lane's position among the shown lanes (for links to other tabs).
    pub lane: usize,
    /// The last reveal acted on.
    pub seen: RevealSeen,
    /// Scroll this message's row into view next frame.
    pub scroll_to: Option<MsgKey>,
    pub(super) rows: Vec<usize>,
    /// The window's mark (set each frame): with one, each row's gutter gives its distance.
    pub mark: Option<crate::model::marks::Mark>,
    /// The hover card's size last frame (where it goes depends on it).
    pub detail_size: Option<egui::Vec2>,
}

impl Default for TimelineState {
    fn default() -> Self {
        Self {
            filter: MessageFilter::default(),
            expr: Default::default(),
            follow_live: true,
            span_s: 5.0,
            span_auto: true,
            right_s: 5.0,
            rows_from_bottom: 0.0,
            selected: None,
            last_layout: None,
            lane: 0,
            seen: RevealSeen::default(),
            scroll_to: None,
            rows: Vec::new(),
            mark: None,
            detail_size: None,
        }
    }
}

/// The geometry of the last frame.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineLayout {
    /// The rows' area (without the time axis).
    pub rows_rect: Rect,
    pub t0_s: f64,
    pub t1_s: f64,
    pub row_height: f32,
    /// Messages shown, top to bottom, with their row's vertical centre.
    pub rows: Vec<(MsgKey, f32)>,
    /// Messages in the window (more than `rows` when they do not all fit).
    pub rows_in_window: usize,
}

impl TimelineLayout {
    pub fn x_of(&self, t: SimTime) -> f32 {
        x_of(self.rows_rect, self.t0_s, self.t1_s, t.as_secs_f64())
    }

    /// The screen position of `key`'s row at time `t`, when shown.
    pub fn pos_of(&self, key: MsgKey, t: SimTime) -> Option<Pos2> {
        self.rows.iter().find(|(k, _)| *k == key).map(|(_, y)| Pos2::new(self.x_of(t), *y))
    }
}

pub(super) fn x_of(rect: Rect, t0: f64, t1: f64, t: f64) -> f32 {
    rect.left() + ((t - t0) / (t1 - t0).max(1e-9)) as f32 * rect.width()
}

/// Scales the window by `factor` keeping the time at fraction `anchor` (0 left, 1 right) fixed.
pub(super) fn zoom(state: &mut TimelineState, factor: f64, anchor: f64) {
    let new_span = (state.span_s * factor).clamp(MIN_SPAN_S, MAX_SPAN_S);
    if !state.follow_live {
        let left = state.right_s - state.span_s;
        let t = left + anchor * state.span_s;
        state.right_s = t + (1.0 - anchor) * new_span;
    }
    state.span_s = new_span;
    state.span_auto = false;
}

/// Rows a timeline shows before it has drawn (its canvas at 1280x800).
pub(super) const DEFAULT_ROWS: usize = 30;
/// Narrowest and widest window the rate fit picks, seconds.
const FIT_MIN_S: f64 = 0.5;
const FIT_MAX_S: f64 = 30.0;
/// How far back the rate fit counts messages, seconds.
const FIT_LOOKBACK_S: f64 = 10.0;

/// The window width that holds about as many messages as `rows` rows show at the message rate
/// of the `FIT_LOOKBACK_S` before `cursor`, on the 1-2-5 series (so it does not jitter as the
/// rate moves a little).
///
/// A fixed 5 s window drew a 100 ms message life as a few pixels at 20 messages/s (issue 25,
/// defect 4): a window as long as the rows can list keeps each life readable and the diagonal
/// of messages spread over the canvas.
pub fn fit_span_s(index: &crate::model::index::MessageIndex, cursor: SimTime, rows: usize) -> f64 {
    let ms = index.messages();
    let to = ms.partition_point(|m| m.queued_at <= cursor);
    let from_t = SimTime::from_secs_f64((cursor.as_secs_f64() - FIT_LOOKBACK_S).max(0.0));
    let from = ms[..to].partition_point(|m| m.queued_at < from_t);
    let lookback_s = (cursor.as_secs_f64() - from_t.as_secs_f64()).max(1.0);
    let rate = (to - from) as f64 / lookback_s;
    if rate <= 0.0 {
        return 5.0;
    }
    let span = (rows.max(1) as f64 * 0.8 / rate).clamp(FIT_MIN_S, FIT_MAX_S);
    // The 1-2-5 value at or below `span` (at least FIT_MIN_S).
    let mag = 10f64.powf(span.log10().floor());
    let nice = [5.0, 2.0, 1.0].into_iter().map(|m| m * mag).find(|v| *v <= span + 1e-9).unwrap_or(mag);
    nice.clamp(FIT_MIN_S, FIT_MAX_S)
}

/// The `rows_from_bottom` that puts row `pos` of `n` near the middle of `capacity` shown rows.
pub(super) fn rows_from_bottom_showing(pos: usize, n: usize, capacity: usize) -> f32 {
    let end = (pos + capacity / 2 + 1).clamp(capacity.min(n), n);
    (n - end) as f32
}

/// The time window every lane's timeline shows: A/B lanes zoom, pan and follow together, as the
/// Overview's plots share their time axis (issue 25, defect 4: each lane zoomed on its own).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct LinkedWindow {
    last: Option<WindowOf>,
}

/// The part of a timeline's state that is its time window.
#[derive(Debug, Clone, Copy, PartialEq)]
struct WindowOf {
    span_s: f64,
    right_s: f64,
    follow_live: bool,
    span_auto: bool,
}

impl WindowOf {
    fn of(s: &TimelineState) -> Self {
        Self { span_s: s.span_s, right_s: s.right_s, follow_live: s.follow_live, span_auto: s.span_auto }
    }

    fn set(self, s: &mut TimelineState) {
        (s.span_s, s.right_s, s.follow_live, s.span_auto) =
            (self.span_s, self.right_s, self.follow_live, self.span_auto);
    }
}

impl LinkedWindow {
    /// Before the lanes draw: a lane that changed its window since the last frame (a click, a
    /// zoom, a drag, a reveal) gives it to the others; while the window follows the rate, its
    /// width is `fit_s()` (the busiest lane's fit).
    pub fn before(&mut self, mut lanes: Vec<&mut TimelineState>, fit_s: impl FnOnce() -> f64) {
        let changed = lanes.iter().map(|s| WindowOf::of(s)).find(|w| Some(*w) != self.last);
        let mut w = changed.or(self.last).or_else(|| lanes.first().map(|s| WindowOf::of(s)));
        if let Some(w) = w.as_mut().filter(|w| w.span_auto) {
            w.span_s = fit_s();
        }
        if let Some(w) = w {
            for s in lanes.iter_mut() {
                w.set(s);
            }
        }
        self.last = w;
    }

    /// After the lanes drew: whether one changed the window (the others take it next frame).
    pub fn changed(&self, lanes: &[&TimelineState]) -> bool {
        lanes.iter().any(|s| Some(WindowOf::of(s)) != self.last)
    }
}

/// How many rows the timeline's canvas showed last frame at the tallest row height (the rate
/// fit's target), or [`DEFAULT_ROWS`] before it drew.
pub fn rows_capacity(state: &TimelineState) -> usize {
    state.last_layout.as_ref().map_or(DEFAULT_ROWS, |l| ((l.rows_rect.height() / 18.0) as usize).max(4))
}
