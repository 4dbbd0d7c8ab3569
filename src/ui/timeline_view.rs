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
}

impl Default for TimelineState {
    fn default() -> Self {
        Self {
            filter: MessageFilter::default(),
            expr: Default::default(),
            follow_live: true,
            span_s: 5.0,
            right_s: 5.0,
            rows_from_bottom: 0.0,
            selected: None,
            last_layout: None,
            lane: 0,
            seen: RevealSeen::default(),
            scroll_to: None,
            rows: Vec::new(),
            mark: None,
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
}

/// The `rows_from_bottom` that puts row `pos` of `n` near the middle of `capacity` shown rows.
pub(super) fn rows_from_bottom_showing(pos: usize, n: usize, capacity: usize) -> f32 {
    let end = (pos + capacity / 2 + 1).clamp(capacity.min(n), n);
    (n - end) as f32
}
