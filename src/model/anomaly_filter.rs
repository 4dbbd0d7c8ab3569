//! The anomalies a view shows: a filter (classes, sides, the stall threshold), the matching
//! entries of one recording's [`AnomalyIndex`] cached and extended as anomalies arrive, the
//! neighbours of an instant (previous / next / nearest) found by binary search, and the
//! per-column counts of the density strip under the time scrubber.
//!
//! A frame never walks the whole list: the cache only looks at entries pushed since the last
//! frame (entries never change once pushed), and the strip's counts are per-class binary
//! searches, one per column edge, kept until the range, the width or the data changes.

use ackscope_protocol::{Side, SimTime};

use crate::filter::matchset::MatchSet;

use super::anomaly::{Anomaly, AnomalyClass, AnomalyIndex, AnomalyKind, CLASSES, DEFAULT_STALL_MS};

/// Which anomalies a view shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnomalyFilter {
    /// Per [`AnomalyClass::index`].
    pub classes: [bool; CLASSES],
    /// Per [`Side::index`].
    pub sides: [bool; 2],
    /// Head-of-line stalls shorter than this are left out.
    pub stall_min_ms: f64,
}

impl Default for AnomalyFilter {
    /// Everything, stalls from [`DEFAULT_STALL_MS`].
    fn default() -> Self {
        Self { classes: [true; CLASSES], sides: [true; 2], stall_min_ms: DEFAULT_STALL_MS }
    }
}

impl AnomalyFilter {
    pub fn shows(&self, class: AnomalyClass) -> bool {
        self.classes[class.index()]
    }

    pub fn matches(&self, a: &Anomaly) -> bool {
        self.shows(a.kind.class()) && self.matches_any_class(a)
    }

    /// [`Self::matches`] with every class shown (what a class's toggle counts, on or off).
    pub fn matches_any_class(&self, a: &Anomaly) -> bool {
        if !self.sides[a.side.index()] {
            return false;
        }
        match a.kind {
            AnomalyKind::Stall { wait_us, .. } => wait_us as f64 >= self.stall_min_ms * 1000.0,
            _ => true,
        }
    }

    /// Shows only `class` (or every class again when it was the only one shown).
    pub fn solo(&mut self, class: AnomalyClass) {
        let only = self.classes.iter().enumerate().all(|(i, &on)| on == (i == class.index()));
        self.classes = if only { [true; CLASSES] } else { std::array::from_fn(|i| i == class.index()) };
    }

    pub fn shows_side(&self, side: Side) -> bool {
        self.sides[side.index()]
    }
}

/// One recording's anomalies matching a filter, cached and extended as anomalies arrive.
#[derive(Debug, Clone, Default)]
pub struct FilteredAnomalies {
    filter: Option<AnomalyFilter>,
    instance: u64,
    /// The display filter's identity (0: none).
    expr_id: u64,
    /// Entries of the index checked so far.
    checked: usize,
    /// Matching entries (positions in the index), in time order, and their times.
    rows: Vec<u32>,
    times: Vec<SimTime>,
    /// Times of the matching entries per class (the strip counts each class apart).
    class_times: [Vec<SimTime>; CLASSES],
    /// Per class, the entries the filter would show if that class were on.
    class_totals: [usize; CLASSES],
    /// How many full rebuilds happened (tests check the cache is kept).
    pub rebuilds: u64,
}

impl FilteredAnomalies {
    /// Brings the cache up to date with `index` and `filter`; cheap when neither changed.
    pub fn update(&mut self, index: &AnomalyIndex, filter: &AnomalyFilter) {
        self.update_with(index, filter, None);
    }

    /// [`Self::update`] with a display filter's matches too (`(identity, matches)`: a new
    /// identity starts over): entries it has not checked yet wait for it.
    pub fn update_with(&mut self, index: &AnomalyIndex, filter: &AnomalyFilter, expr: Option<(u64, &MatchSet)>) {
        let expr_id = expr.map_or(0, |e| e.0);
        if self.filter.as_ref() != Some(filter)
            || self.instance != index.instance()
            || self.checked > index.len()
            || self.expr_id != expr_id
        {
            *self = Self {
                filter: Some(*filter),
                instance: index.instance(),
                expr_id,
                rebuilds: self.rebuilds + 1,
                ..Self::default()
            };
        }
        let upto = expr.map_or(index.len(), |(_, m)| m.rows().min(index.len()));
        for (i, a) in index.list().iter().enumerate().take(upto).skip(self.checked) {
            if !filter.matches_any_class(a) || expr.is_some_and(|(_, m)| !m.get(i)) {
                continue;
            }
            self.class_totals[a.kind.class().index()] += 1;
            if filter.shows(a.kind.class()) {
                self.rows.push(i as u32);
                self.times.push(a.time);
                self.class_times[a.kind.class().index()].push(a.time);
            }
        }
        self.checked = self.checked.max(upto);
    }

    /// Matching anomalies in total.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The `k`-th match's position in the index.
    pub fn get(&self, k: usize) -> Option<u32> {
        self.rows.get(k).copied()
    }

    /// The time of the `k`-th match.
    pub fn time(&self, k: usize) -> Option<SimTime> {
        self.times.get(k).copied()
    }

    /// Matches at or before `t`.
    pub fn count_by(&self, t: SimTime) -> usize {
        self.times.partition_point(|&x| x <= t)
    }

    /// Entries of `class` the filter shows, or would show were the class on.
    pub fn class_total(&self, class: AnomalyClass) -> usize {
        self.class_totals[class.index()]
    }

    /// The last match strictly before `t` (as `k`).
    pub fn prev_before(&self, t: SimTime) -> Option<usize> {
        self.times.partition_point(|&x| x < t).checked_sub(1)
    }

    /// The first match strictly after `t` (as `k`).
    pub fn next_after(&self, t: SimTime) -> Option<usize> {
        let k = self.count_by(t);
        (k < self.len()).then_some(k)
    }

    /// The match closest in time to `t` (the earlier on a tie).
    pub fn nearest(&self, t: SimTime) -> Option<usize> {
        let k = self.times.partition_point(|&x| x < t);
        let before = k.checked_sub(1);
        let after = (k < self.len()).then_some(k);
        match (before, after) {
            (Some(b), Some(a)) => {
                Some(if t.saturating_since(self.times[b]) <= self.times[a].saturating_since(t) { b } else { a })
            }
            (b, a) => b.or(a),
        }
    }

    /// Matches of each class in each of `columns` equal slices of `[from, to)`.
    pub fn column_counts(&self, from: SimTime, to: SimTime, columns: usize, out: &mut Vec<[u32; CLASSES]>) {
        out.clear();
        out.resize(columns, [0; CLASSES]);
        if columns == 0 || to <= from {
            return;
        }
        let span = (to.0 - from.0) as f64;
        let edge = |c: usize| SimTime(from.0 + (span * c as f64 / columns as f64) as u64);
        for (class, times) in self.class_times.iter().enumerate() {
            if times.is_empty() {
                continue;
            }
            let mut lo = times.partition_point(|&x| x < from);
            for (c, col) in out.iter_mut().enumerate() {
                if lo >= times.len() {
                    break;
                }
                let end = if c + 1 == columns { to } else { edge(c + 1) };
                let hi = lo + times[lo..].partition_point(|&x| x < end);
                col[class] = (hi - lo) as u32;
                lo = hi;
            }
        }
    }
}

/// The density strip's counts, kept until the range, the width or the matches change.
#[derive(Debug, Clone, Default)]
pub struct StripCounts {
    key: Option<(u64, usize, u64, u64, usize, u64)>,
    pub counts: Vec<[u32; CLASSES]>,
    /// How many times the counts were computed (tests check they are kept).
    pub computed: u64,
}

impl StripCounts {
    /// The counts of `f` over `[from, to)` in `columns` columns, recomputed only when needed.
    pub fn update(&mut self, f: &FilteredAnomalies, from: SimTime, to: SimTime, columns: usize) -> &[[u32; CLASSES]] {
        let key = (f.instance, f.len(), from.0, to.0, columns, f.rebuilds);
        if self.key != Some(key) {
            f.column_counts(from, to, columns, &mut self.counts);
            self.key = Some(key);
            self.computed += 1;
        }
        &self.counts
    }
}
