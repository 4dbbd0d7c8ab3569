//! Reading back what a trimmed live run dropped from memory, when the cursor is scrubbed to it.
//!
//! A live run keeps only a window of its events in memory ([`super::live_log`]); the whole log is
//! in each lane's stream file. While the cursor is before the kept window, a slice of the run
//! around the cursor is read from those files on a worker thread ([`read_range`]) and built into
//! one recording per lane (the same fold as the live window's rebuild), which the panels show
//! instead of the lanes ([`super::AppState::shown_lanes`]) until the cursor leaves the slice.
//!
//! The slice covers half the run time the window now holds (at least [`MIN_SPAN_US`]), so
//! scrubbing back adds about half the window's memory, never the whole run. Like the window
//! itself, a slice starts mid-run: its folds (the Summary, the plots' series, the ledgers) count
//! from the slice's start, not the run's, and a packet sent before it shows as unknown. Whole-run
//! figures are in the stream file, which opens like any session once the run stops. One slice is
//! read at a time: while one is being read the previous one stays shown, and a cursor that moved
//! on meanwhile gets its own slice once that read has finished.

use std::path::PathBuf;

use ackscope_protocol::SimTime;
use crossbeam_channel::{bounded, Receiver};

use crate::model::Recording;
use crate::session::stream::read_range;
use crate::session::stream_writer::Flushed;

/// Shortest run time a slice covers (a tiny window would otherwise read slices of a few events).
pub const MIN_SPAN_US: u64 = 200_000;

/// Which files and which run time `[from, until)` a slice covers.
#[derive(Debug, Clone, PartialEq)]
struct Span {
    files: Vec<PathBuf>,
    from: SimTime,
    until: SimTime,
}

impl Span {
    fn covers(&self, files: &[PathBuf], t: SimTime) -> bool {
        self.files == files && self.from <= t && t < self.until
    }
}

/// A read under way on its worker thread.
struct Job {
    span: Span,
    result: Receiver<Result<Vec<Recording>, String>>,
}

/// The slice shown while the cursor is before a trimmed run's window, and the read under way.
#[derive(Default)]
pub struct ReadBack {
    shown: Option<(Span, Vec<Recording>)>,
    job: Option<Job>,
    /// The last read that failed, and why (not tried again for the same span).
    failed: Option<(Span, String)>,
}

impl ReadBack {
    /// Brings the slice in line with `cursor` over `lanes`, each with its stream file and the
    /// instant before which its events are only in that file (`None`: nothing to read back).
    /// `flush` asks for the files to hold every event so far (the read's thread waits for it);
    /// `wake` is called when a read finishes.
    pub fn update(
        &mut self,
        lanes: &[Recording],
        sources: Option<Vec<(PathBuf, SimTime)>>,
        cursor: SimTime,
        flush: impl FnOnce() -> Flushed,
        wake: impl Fn() + Send + 'static,
    ) {
        let Some(sources) = sources.filter(|s| s.len() == lanes.len()) else { return self.clear() };
        let limit = sources.iter().map(|s| s.1).max().unwrap_or(SimTime::ZERO);
        if cursor >= limit {
            return self.clear();
        }
        let files: Vec<PathBuf> = sources.iter().map(|s| s.0.clone()).collect();
        if let Some(job) = &self.job {
            match job.result.try_recv() {
                Ok(Ok(recs)) => self.shown = Some((job.span.clone(), recs)),
                Ok(Err(e)) => self.failed = Some((job.span.clone(), e)),
                Err(crossbeam_channel::TryRecvError::Empty) => return,
                Err(crossbeam_channel::TryRecvError::Disconnected) => {}
            }
            self.job = None;
        }
        let covered = |s: &Span| s.covers(&files, cursor);
        if self.shown.as_ref().is_some_and(|(s, _)| covered(s)) || self.failed.as_ref().is_some_and(|(s, _)| covered(s))
        {
            return;
        }
        let span = slice_span(lanes, &sources, cursor, limit);
        let flushed = flush();
        let headers: Vec<_> = lanes.iter().map(Recording::header).collect();
        let (tx, rx) = bounded(1);
        let job_span = Span { files, ..span };
        let read = job_span.clone();
        std::thread::Builder::new()
            .name("ackscope-readback".into())
            .spawn(move || {
                let result = flushed.wait().map_err(|e| format!("{e:#}")).and_then(|()| {
                    read.files
                        .iter()
                        .zip(&headers)
                        .map(|(file, header)| {
                            let events = read_range(file, read.from, read.until).map_err(|e| format!("{e:#}"))?;
                            let mut rec = Recording::from_header(header);
                            rec.ingest(events);
                            Ok(rec)
                        })
                        .collect()
                });
                let _ = tx.send(result);
                wake();
            })
            .expect("spawn read-back thread");
        self.job = Some(Job { span: job_span, result: rx });
    }

    /// Forgets the slice (the cursor is back in the window, or another run is shown).
    fn clear(&mut self) {
        *self = Self::default();
    }

    /// The slice's recordings, one per lane, while one is shown.
    pub fn shown(&self) -> Option<&[Recording]> {
        self.shown.as_ref().map(|(_, recs)| &recs[..])
    }

    /// The run time `[from, until)` the shown slice covers.
    pub fn shown_range(&self) -> Option<(SimTime, SimTime)> {
        self.shown.as_ref().map(|(s, _)| (s.from, s.until))
    }

    /// True while a slice is being read.
    pub fn reading(&self) -> bool {
        self.job.is_some()
    }

    /// What the status bar says: a slice being read, shown, or a read that failed.
    pub fn status(&self) -> Option<String> {
        let describe = |s: &Span| {
            let file = s.files.first().and_then(|f| f.file_name()).map(|n| n.to_string_lossy().into_owned());
            let more = if s.files.len() > 1 { format!(" (+{})", s.files.len() - 1) } else { String::new() };
            format!(
                "{:.2}-{:.2} s from {}{more}",
                s.from.as_secs_f64(),
                s.until.as_secs_f64(),
                file.unwrap_or_default()
            )
        };
        if let Some(job) = &self.job {
            return Some(format!("reading {}...", describe(&job.span)));
        }
        if let Some((s, e)) = &self.failed {
            return Some(format!("reading {} failed: {e}", describe(s)));
        }
        self.shown.as_ref().map(|(s, _)| format!("before the kept window: showing {}", describe(s)))
    }
}

/// The slice to read for `cursor`: half the shortest run time a trimmed lane keeps in memory
/// (at least [`MIN_SPAN_US`]), centred on the cursor and ending by `limit`, the latest window start.
fn slice_span(lanes: &[Recording], sources: &[(PathBuf, SimTime)], cursor: SimTime, limit: SimTime) -> Span {
    let kept = lanes
        .iter()
        .zip(sources)
        .filter(|(_, (_, start))| *start > SimTime::ZERO)
        .map(|(lane, _)| {
            let first = lane.store.events().first().map_or(SimTime::ZERO, |e| e.time);
            lane.store.end_time().saturating_since(first).0
        })
        .min()
        .unwrap_or(0);
    let span = (kept / 2).max(MIN_SPAN_US);
    let mut from = cursor.0.saturating_sub(span / 2);
    let mut until = from + span;
    if until > limit.0 {
        until = limit.0;
        from = until.saturating_sub(span);
    }
    Span { files: Vec::new(), from: SimTime(from), until: SimTime(until) }
}

impl super::AppState {
    /// The recordings the panels show: the lanes, or while the cursor is before a trimmed run's
    /// kept window, the slice read back around it (once read; the lanes until then).
    pub fn shown_lanes(&self) -> &[Recording] {
        self.readback.shown().unwrap_or(&self.lanes)
    }

    /// Every lane (the whole run's, not a read-back slice: the anomaly index keeps the whole
    /// run) focused on the client the window is focused on.
    pub fn focused_lanes(&self) -> Vec<crate::model::Shown<'_>> {
        crate::model::Shown::all(&self.lanes, self.focus)
    }

    /// What the panels draw: each shown lane focused on the client the window is focused on.
    pub fn shown(&self) -> Vec<crate::model::Shown<'_>> {
        crate::model::Shown::all(self.shown_lanes(), self.focus)
    }

    /// Starts, picks up or drops the read-back for the cursor (once a frame, before drawing).
    pub fn poll_readback(&mut self) {
        let cursor = self.cursor();
        let sources: Option<Vec<_>> = self.lanes.iter().map(|l| self.live_log.stream_of(l)).collect();
        let sources = sources.filter(|s| s.iter().any(|(_, start)| *start > SimTime::ZERO));
        let wake = self.wake.clone();
        let live_log = &mut self.live_log;
        self.readback.update(&self.lanes, sources, cursor, || live_log.flush_later(), move || wake());
    }

    /// The read-back of a trimmed run's past: what is shown and what is being read.
    pub fn readback(&self) -> &ReadBack {
        &self.readback
    }
}

#[cfg(test)]
mod tests {
    use ackscope_protocol::{Event, Scenario, Simulation};

    use super::*;

    /// A lane holding a run's events from 4 s to 6 s (as a trimmed window would).
    fn lane() -> Recording {
        let mut sim = Simulation::new(Scenario { seed: 2, ..Scenario::default() });
        sim.run_until(SimTime(6_000_000));
        let mut rec = Recording::new(Scenario::default());
        rec.ingest(sim.drain_events().filter(|e: &Event| e.time >= SimTime(4_000_000)).collect());
        rec
    }

    #[test]
    fn a_slice_is_half_the_window_around_the_cursor_and_ends_by_the_window() {
        let lanes = [lane()];
        let sources = [(PathBuf::from("x.ron"), SimTime(4_000_000))];
        let s = slice_span(&lanes, &sources, SimTime(1_000_000), SimTime(4_000_000));
        assert!(s.until.0 - s.from.0 >= 950_000 && s.until.0 - s.from.0 <= 1_000_000, "{s:?}");
        assert!(s.from <= SimTime(1_000_000) && SimTime(1_000_000) < s.until, "{s:?}");
        let s = slice_span(&lanes, &sources, SimTime(3_900_000), SimTime(4_000_000));
        assert!(s.until == SimTime(4_000_000) && s.from <= SimTime(3_900_000), "{s:?}");
    }

    #[test]
    fn a_failed_read_is_said_once_and_the_window_drops_the_slice() {
        let lanes = [lane()];
        let sources = || Some(vec![(PathBuf::from("/nonexistent/ackscope/live-x.ron"), SimTime(4_000_000))]);
        let mut rb = ReadBack::default();
        rb.update(&lanes, sources(), SimTime(1_000_000), Flushed::default, || {});
        assert!(rb.reading() && rb.status().unwrap().starts_with("reading "), "{:?}", rb.status());
        while rb.reading() {
            std::thread::sleep(std::time::Duration::from_millis(5));
            rb.update(&lanes, sources(), SimTime(1_000_000), Flushed::default, || {});
        }
        assert!(rb.shown().is_none());
        assert!(rb.status().unwrap().contains("failed"), "{:?}", rb.status());
        // Not tried again while the cursor stays in the failed slice.
        rb.update(&lanes, sources(), SimTime(1_000_000), || panic!("read again"), || {});
        assert!(!rb.reading());
        // In the window: nothing to read back.
        rb.update(&lanes, sources(), SimTime(4_500_000), Flushed::default, || {});
        assert!(rb.status().is_none() && !rb.reading());
    }
}
