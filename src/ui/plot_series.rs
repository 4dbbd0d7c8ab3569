//! What the Overview draws, as data: each plot kind and its series (name, colour, how drawn,
//! where its samples live).
//!
//! One table feeds the drawing, the legend row, the hover readout and the Y range, so a series
//! cannot appear in one and be missing from another.

use egui::Color32;
use egui_plot::LineStyle;

use crate::model::{Connection, Sample};

/// Colours used for the same quantity everywhere.
pub const COLOR_A: Color32 = Color32::from_rgb(90, 170, 255);
pub const COLOR_B: Color32 = Color32::from_rgb(255, 160, 60);
pub const COLOR_TRUTH: Color32 = Color32::from_rgb(120, 220, 120);
/// The effective truth (link drops + the receiver's discards), beside the link's truth.
pub const COLOR_EFFECTIVE: Color32 = Color32::from_rgb(230, 200, 70);
pub const COLOR_BUDGET: Color32 = Color32::from_rgb(200, 120, 255);
pub const COLOR_FLOW: Color32 = Color32::LIGHT_RED;

/// `color` for the theme: as is on a dark background, darker on a light one, where the bright
/// blues and greens wash out on white.
pub fn themed(color: Color32, dark: bool) -> Color32 {
    if dark {
        return color;
    }
    let d = |c: u8| (c as f32 * 0.72) as u8;
    Color32::from_rgba_premultiplied(d(color.r()), d(color.g()), d(color.b()), color.a())
}

/// The Overview's plots, top to bottom.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub enum Kind {
    Rtt,
    Loss,
    Bandwidth,
    /// The send budget (UE4 QueuedBits, the chunk accumulator): its own thin plot, because its
    /// values dwarf sent/received and flattened them when it shared their axis.
    Budget,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Rtt, Kind::Loss, Kind::Bandwidth, Kind::Budget];

    /// The plot id prefix (`rtt_glenn`, `bw_ue4`...).
    pub fn id(self) -> &'static str {
        match self {
            Kind::Rtt => "rtt",
            Kind::Loss => "loss",
            Kind::Bandwidth => "bw",
            Kind::Budget => "budget",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Kind::Rtt => "RTT (ms)",
            Kind::Loss => "packet loss (%)",
            Kind::Bandwidth => "bandwidth (kbps)",
            Kind::Budget => "send budget (kbps equiv.)",
        }
    }

    /// Height relative to the main plots.
    pub fn weight(self) -> f32 {
        if self == Kind::Budget {
            0.45
        } else {
            1.0
        }
    }
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug)]
pub enum Draw {
    Line {
        width: f32,
        style: LineStyle,
    },
    Dots {
        radius: f32,
    },
    /// A 0/1 mode drawn as steps near the top of the plot (1 = high); not part of the Y range.
    Steps,
}

impl Draw {
    const THICK: Draw = Draw::Line { width: 2.0, style: LineStyle::Solid };
    /// egui_plot's default width.
    const PLAIN: Draw = Draw::Line { width: 1.5, style: LineStyle::Solid };

    fn styled(style: LineStyle) -> Draw {
        Draw::Line { width: 1.5, style }
    }
}

/// One series of a plot.
#[derive(Clone, Copy)]
pub struct Series {
    pub name: &'static str,
    pub color: Color32,
    pub draw: Draw,
    pub data: fn(&Connection) -> &[Sample],
}

/// The series of plot `kind`, in drawing order.
pub fn series(kind: Kind) -> Vec<Series> {
    use ackscope_protocol::Side::{A, B};
    let s = |name, color, draw, data: fn(&Connection) -> &[Sample]| Series { name, color, draw, data };
    let dashed = Draw::styled(LineStyle::dashed_loose());
    let dense = Draw::styled(LineStyle::dotted_dense());
    match kind {
        Kind::Rtt => vec![
            s("A raw", COLOR_A.gamma_multiply(0.5), Draw::Dots { radius: 1.5 }, |r| &r.store.side(A).rtt_raw_ms),
            s("A smoothed", COLOR_A, Draw::THICK, |r| &r.store.side(A).rtt_smoothed_ms),
            s("A display", COLOR_A.gamma_multiply(0.7), Draw::PLAIN, |r| &r.store.side(A).rtt_display_ms),
            s("B smoothed", COLOR_B, Draw::THICK, |r| &r.store.side(B).rtt_smoothed_ms),
            s("true RTT", COLOR_TRUTH, dashed, |r| &r.store.true_rtt_ms),
        ],
        Kind::Loss => vec![
            s("A estimate", COLOR_A, Draw::THICK, |r| &r.store.side(A).loss_estimate_percent),
            s("B estimate", COLOR_B, Draw::THICK, |r| &r.store.side(B).loss_estimate_percent),
            s("true A->B", COLOR_TRUTH, dashed, |r| &r.store.side(A).loss_true_percent),
            s("true B->A", COLOR_TRUTH.gamma_multiply(0.6), dense, |r| &r.store.side(B).loss_true_percent),
            s("effective A->B", COLOR_EFFECTIVE, dashed, |r| &r.store.side(A).loss_effective_percent),
            s("effective B->A", COLOR_EFFECTIVE.gamma_multiply(0.6), dense, |r| {
                &r.store.side(B).loss_effective_percent
            }),
        ],
        Kind::Bandwidth => vec![
            s("A sent", COLOR_A, Draw::THICK, |r| &r.store.side(A).sent_kbps),
            s("A acked", COLOR_A.gamma_multiply(0.6), Draw::PLAIN, |r| &r.store.side(A).acked_kbps),
            s("B received", COLOR_B, Draw::PLAIN, |r| &r.store.side(B).received_kbps),
            s("A flow mode (high = good)", COLOR_FLOW, Draw::Steps, |r| &r.store.side(A).flow_good),
        ],
        Kind::Budget => vec![
            s("A available", COLOR_BUDGET, Draw::PLAIN, |r| &r.store.side(A).budget_available),
            s("A spent", COLOR_BUDGET.gamma_multiply(0.6), dense, |r| &r.store.side(A).budget_spent),
        ],
    }
}

/// The series of `kind` that `lane` has data for (a strategy without flow control or a send
/// budget gets no legend entry for them).
pub fn present(kind: Kind, lane: &Connection) -> Vec<Series> {
    series(kind).into_iter().filter(|s| !(s.data)(lane).is_empty()).collect()
}

/// The value of `pts` (sorted by time) in force at `t`: the last sample at or before it.
pub fn value_at(pts: &[Sample], t: f64) -> Option<f64> {
    let n = pts.partition_point(|p| p.t_s <= t);
    n.checked_sub(1).map(|i| pts[i].y)
}

/// A series' value as the readout shows it.
pub fn format_value(s: &Series, y: f64) -> String {
    match s.draw {
        Draw::Steps => (if y >= 0.5 { "good" } else { "bad" }).to_string(),
        _ if y.abs() >= 100.0 => fixed(y, 0),
        _ => fixed(y, 1),
    }
}

/// `v` with `decimals` places, never a minus before a zero: a rate or size that rounds to zero
/// reads `0.0`, not `-0.0` (a float's negative zero, or a tiny negative from a difference; issue
/// 25, defect 10).
pub fn fixed(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_string(),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_value_at_a_time_is_the_last_sample_at_or_before_it() {
        let pts = [Sample { t_s: 1.0, y: 10.0 }, Sample { t_s: 2.0, y: 20.0 }];
        assert_eq!(value_at(&pts, 0.5), None);
        assert_eq!(value_at(&pts, 1.0), Some(10.0));
        assert_eq!(value_at(&pts, 1.9), Some(10.0));
        assert_eq!(value_at(&pts, 9.0), Some(20.0));
    }

    #[test]
    fn a_value_rounding_to_zero_has_no_minus() {
        assert_eq!(fixed(-0.0, 1), "0.0");
        assert_eq!(fixed(-0.04, 1), "0.0");
        assert_eq!(fixed(-0.4, 0), "0");
        assert_eq!(fixed(-0.06, 1), "-0.1");
        assert_eq!(fixed(12.34, 1), "12.3");
    }

    #[test]
    fn series_names_are_unique_within_a_plot() {
        for kind in Kind::ALL {
            let names: Vec<_> = series(kind).iter().map(|s| s.name).collect();
            let mut unique = names.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(names.len(), unique.len(), "{kind:?}");
        }
    }
}
