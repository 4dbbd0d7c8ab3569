//! Series reduced to what a plot's pixel width can show (the smallest and largest value per
//! pixel column), kept between frames while the plot's time range, width and the series' length
//! stay the same: scrubbing or playing a replay then only splits it anew at the cursor.
//!
//! The same reduced points give a plot its Y range: they keep every column's extremes, so the
//! range is the data's, at a fraction of the cost.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault};

use egui_plot::PlotPoint;

use crate::model::Sample;

/// The part of `pts` (sorted by time) inside `[lo, hi]` and at or before `cursor`, reduced to at
/// most two points per pixel column.
pub fn visible(pts: &[Sample], lo: f64, hi: f64, cursor: f64, width_px: f32) -> Vec<PlotPoint> {
    let end = pts.partition_point(|p| p.t_s <= cursor.min(hi));
    let start = pts[..end].partition_point(|p| p.t_s < lo).saturating_sub(1);
    decimate(&pts[start..end], width_px)
}

/// Points (in time order) split at `cursor`: those at or before it, and those after it led by
/// the last one before (so the faded line continues the bright one); the second is empty when
/// nothing lies after the cursor.
pub fn split_at_cursor(points: &[PlotPoint], cursor: f64) -> (Vec<PlotPoint>, Vec<PlotPoint>) {
    let k = points.partition_point(|p| p.x <= cursor);
    let after = if k < points.len() { points[k.saturating_sub(1)..].to_vec() } else { Vec::new() };
    (points[..k].to_vec(), after)
}

/// `slice` reduced to the smallest and largest value per pixel column, in time order.
fn decimate(slice: &[Sample], width_px: f32) -> Vec<PlotPoint> {
    let point = |p: Sample| PlotPoint::new(p.t_s, p.y);
    let columns = (width_px.max(50.0) as usize).max(1);
    if slice.len() <= columns * 2 {
        return slice.iter().copied().map(point).collect();
    }
    let (x0, x1) = (slice[0].t_s, slice[slice.len() - 1].t_s);
    let span = (x1 - x0).max(f64::EPSILON);
    let mut out = Vec::with_capacity(columns * 2);
    let mut i = 0;
    for c in 0..columns {
        let edge = x0 + span * (c + 1) as f64 / columns as f64;
        let (mut lo_p, mut hi_p): (Option<Sample>, Option<Sample>) = (None, None);
        while i < slice.len() && (slice[i].t_s <= edge || c + 1 == columns) {
            let p = slice[i];
            if lo_p.is_none_or(|q| p.y < q.y) {
                lo_p = Some(p);
            }
            if hi_p.is_none_or(|q| p.y > q.y) {
                hi_p = Some(p);
            }
            i += 1;
        }
        match (lo_p, hi_p) {
            (Some(a), Some(b)) if a.t_s <= b.t_s => out.extend([point(a), point(b)]),
            (Some(a), Some(b)) => out.extend([point(b), point(a)]),
            _ => {}
        }
    }
    out.dedup_by(|a, b| a.x == b.x && a.y == b.y);
    out
}

/// A series reduced to a plot's pixel columns, with what it was reduced for.
#[derive(Debug, Default)]
struct Decimated {
    key: Option<(u64, u64, u32, usize)>,
    points: Vec<PlotPoint>,
}

/// The reduced series of every plot, by plot id and series name.
#[derive(Debug, Default)]
pub struct DecimationCache {
    slots: HashMap<u64, Decimated>,
}

impl DecimationCache {
    pub fn clear(&mut self) {
        self.slots.clear();
    }

    /// `pts` in `[lo, hi]` reduced to `width_px` columns, from the last frame when it still holds.
    pub fn get(&mut self, plot: &str, name: &str, pts: &[Sample], lo: f64, hi: f64, width_px: f32) -> &[PlotPoint] {
        let slot = BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one((plot, name));
        let key = (lo.to_bits(), hi.to_bits(), width_px.to_bits(), pts.len());
        let d = self.slots.entry(slot).or_default();
        if d.key != Some(key) {
            d.points = visible(pts, lo, hi, f64::INFINITY, width_px);
            d.key = Some(key);
        }
        &d.points
    }
}

/// The smallest and largest y of `points`, if any.
pub fn y_extent(points: &[PlotPoint]) -> Option<(f64, f64)> {
    points.iter().fold(None, |acc, p| match acc {
        None => Some((p.y, p.y)),
        Some((lo, hi)) => Some((lo.min(p.y), hi.max(p.y))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_keeps_extremes_and_respects_the_cursor() {
        let pts: Vec<Sample> = (0..100_000).map(|i| Sample { t_s: i as f64 / 1000.0, y: (i % 997) as f64 }).collect();
        let v = visible(&pts, f64::MIN, f64::MAX, 50.0, 500.0);
        assert!(v.len() <= 1000, "{}", v.len());
        assert!(v.iter().all(|p| p.x <= 50.0));
        assert_eq!(v.iter().map(|p| p.y).fold(0.0, f64::max), 996.0, "the maximum survives");
        assert!(v.windows(2).all(|w| w[0].x <= w[1].x), "x stays sorted");
        let few = visible(&pts[..10], f64::MIN, f64::MAX, 1.0, 500.0);
        assert_eq!(few.len(), 10);
    }

    #[test]
    fn the_part_after_the_cursor_continues_from_the_last_point_before_it() {
        let pts: Vec<PlotPoint> = (0..100).map(|i| PlotPoint::new(i as f64, (i % 7) as f64)).collect();
        let (before, after) = split_at_cursor(&pts, 49.5);
        assert_eq!((before.len(), before.last().unwrap().x), (50, 49.0));
        assert_eq!(after[0].x, 49.0, "the faded part starts where the bright part ends");
        assert_eq!((after.len(), after.last().unwrap().x), (51, 99.0));
        let (all, none) = split_at_cursor(&pts, 99.0);
        assert!(all.len() == 100 && none.is_empty(), "nothing after the cursor at the end");
        let (none, all) = split_at_cursor(&pts, -1.0);
        assert!(none.is_empty() && all.len() == 100);
    }
}
