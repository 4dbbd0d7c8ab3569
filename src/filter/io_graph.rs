//! IO graphs, as Wireshark draws them: for a filter's rows, a value per time interval (the
//! count, the rate per second, or a field's sum, mean or max), one series per client's
//! connection.
//!
//! The bins are kept between frames, and built under the frame's budget as the cache is. Rows
//! the filter's cache adds go into their bin; rows it
//! checks again (a live packet acked after it was binned, which may change its match or its
//! field) make their bins be recomputed from the rows of that interval alone. Rows are in time
//! order in every list, so an interval's rows are found by binary search.

use super::budget::Budget;
use super::cache::{Matches, SharedFilter, Source};
use super::fields::{Get, Row};
use crate::model::{Connection, Shown};

/// What a graph plots per interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Measure {
    /// Matching rows.
    Count,
    /// Matching rows per second.
    Rate,
    /// A numeric field over the matching rows that have it.
    Sum(&'static str),
    Mean(&'static str),
    Max(&'static str),
}

impl Measure {
    /// The field it reads, if any.
    pub fn field(self) -> Option<&'static str> {
        match self {
            Measure::Count | Measure::Rate => None,
            Measure::Sum(f) | Measure::Mean(f) | Measure::Max(f) => Some(f),
        }
    }

    /// `count`, `rate`, `sum(delay_ms)`...
    pub fn label(self) -> String {
        match self {
            Measure::Count => "count".into(),
            Measure::Rate => "rate /s".into(),
            Measure::Sum(f) => format!("sum({f})"),
            Measure::Mean(f) => format!("mean({f})"),
            Measure::Max(f) => format!("max({f})"),
        }
    }
}

/// The numeric reader of field `name` of rows `R`.
pub fn numeric_field<R: Row>(name: &str) -> Option<fn(&R) -> Option<f64>> {
    R::fields().iter().find(|f| f.name == name).and_then(|f| match f.get {
        Get::Num(g) => Some(g),
        _ => None,
    })
}

/// One interval's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bin {
    pub count: u32,
    /// Rows that had the field, and its sum and max over them.
    pub values: u32,
    pub sum: f64,
    pub max: f64,
}

impl Default for Bin {
    fn default() -> Self {
        Self { count: 0, values: 0, sum: 0.0, max: f64::NEG_INFINITY }
    }
}

impl Bin {
    fn add(&mut self, v: Option<f64>) {
        self.count += 1;
        if let Some(v) = v {
            self.values += 1;
            self.sum += v;
            self.max = self.max.max(v);
        }
    }

    /// The measure's value, `None` where it has none (a mean of no values).
    pub fn value(&self, m: Measure, interval_s: f64) -> Option<f64> {
        match m {
            Measure::Count => Some(self.count as f64),
            Measure::Rate => Some(self.count as f64 / interval_s),
            Measure::Sum(_) => Some(self.sum),
            Measure::Mean(_) => (self.values > 0).then(|| self.sum / self.values as f64),
            Measure::Max(_) => (self.values > 0).then_some(self.max),
        }
    }
}

/// One graph's bins in one client's connection of a lane, kept up to date.
pub struct IoBins<R> {
    pub matches: Matches<R>,
    /// (interval, measure) the bins were made with.
    key: Option<(u64, Measure)>,
    /// Bins from time 0.
    pub bins: Vec<Bin>,
    /// Rows of the connection already binned (matching or not).
    binned: usize,
}

impl<R> Default for IoBins<R> {
    fn default() -> Self {
        Self { matches: Matches::default(), key: None, bins: Vec::new(), binned: 0 }
    }
}

impl<R: Source> IoBins<R> {
    /// Brings the bins up to date with `view`'s connection under `filter`; `interval_us` at
    /// least 1.
    pub fn update(
        &mut self,
        view: Shown,
        filter: &SharedFilter<R>,
        measure: Measure,
        interval_us: u64,
        budget: Budget,
    ) {
        let interval_us = interval_us.max(1);
        let before = self.matches.rows_checked();
        let rebuilds = self.matches.rebuilds;
        self.matches.update(view, filter, None, budget);
        let key = (interval_us, measure);
        if self.key != Some(key) || self.matches.rebuilds != rebuilds || self.matches.rows_checked() < before {
            self.key = Some(key);
            self.bins.clear();
            self.binned = 0;
        }
        let conn = view.conn;
        let get = measure.field().and_then(numeric_field::<R>);
        let acks = self.matches.acks();
        let bin_of = |t_s: f64| (t_s * 1e6 / interval_us as f64).max(0.0) as usize;
        // Bins of rows checked again: recomputed from their interval's rows.
        let mut redo: Vec<usize> = self
            .matches
            .rechecked
            .iter()
            .filter(|&&i| (i as usize) < self.binned)
            .filter_map(|&i| R::time_of(conn, i as usize).map(bin_of))
            .collect();
        redo.sort_unstable();
        redo.dedup();
        for b in redo {
            if let Some(x) = self.bins.get_mut(b) {
                *x = Bin::default();
            }
            let (t0, t1) = (b as f64 * interval_us as f64 / 1e6, (b + 1) as f64 * interval_us as f64 / 1e6);
            let lo = first_row_at(conn, t0, self.binned, R::time_of);
            let hi = first_row_at(conn, t1, self.binned, R::time_of);
            for i in self.matches.set().iter_range(lo, hi) {
                add_row::<R>(&mut self.bins, conn, i, acks, get, &bin_of);
            }
        }
        // Rows checked and not binned yet: under the same budget (a new measure or interval
        // bins every matching row again, a frame's share at a time).
        let (set, bins) = (self.matches.set(), &mut self.bins);
        self.binned = budget.run(self.binned, self.matches.rows_checked(), |i| {
            if set.get(i) {
                add_row::<R>(bins, conn, i, acks, get, &bin_of);
            }
        });
    }

    /// Rows of the connection binned so far (matching or not): all of them once built.
    pub fn rows_binned(&self) -> usize {
        self.binned
    }
}

/// The first row (below `n`) at or after `t_s`.
fn first_row_at(conn: &Connection, t_s: f64, n: usize, time_of: fn(&Connection, usize) -> Option<f64>) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if time_of(conn, mid).is_some_and(|t| t < t_s) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

fn add_row<R: Source>(
    bins: &mut Vec<Bin>,
    conn: &Connection,
    i: usize,
    acks: Option<&super::rows::AckTrack>,
    get: Option<fn(&R) -> Option<f64>>,
    bin_of: &dyn Fn(f64) -> usize,
) {
    let Some((t, v)) = R::read(conn, i, acks, |r| (r.time_s(), get.and_then(|g| g(r)))) else {
        return;
    };
    let b = bin_of(t);
    if bins.len() <= b {
        bins.resize(b + 1, Bin::default());
    }
    bins[b].add(v);
}
