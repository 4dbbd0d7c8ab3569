//! Showing a session while it opens: the open job's header becomes the recording shown at once,
//! and its events are indexed into it a time budget per frame, so the window draws the part
//! parsed so far (see [`crate::session::load_streaming`]).
//!
//! Indexing (ledger, store, panels' indexes) must see the events in order on the thread that
//! owns the recording, so it runs here, on the UI thread, while the worker parses what follows;
//! a frame spends at most [`LOAD_INGEST_BUDGET`] on it. Once the job ends the recording is the
//! file's, as if opened whole: marked saved, the file remembered. A job that fails (a checksum
//! mismatch found once everything was shown) takes what it showed away again.

use std::time::{Duration, Instant};

use crossbeam_channel::TryRecvError;

use super::files::{FileJob, Opened};
use super::AppState;
use crate::model::Recording;
use crate::session::Loading;

/// Most time a frame spends indexing an opening session's events while nobody touches the
/// window: the file loads fastest.
pub const LOAD_INGEST_BUDGET: Duration = Duration::from_millis(12);
/// The same while the user acts (pointer down or moving, keys: [`AppState::interacting`]): the
/// frame stays under 8 ms with the drawing, so scrubbing a file that is still loading stays
/// smooth, and the load goes on a little slower.
pub const LOAD_INGEST_BUDGET_INTERACTIVE: Duration = Duration::from_millis(4);
/// Events indexed between two looks at the clock (about 0.3 ms of indexing).
const SLICE: usize = 1024;

impl AppState {
    /// Indexes job `i`'s streamed events within the budget: `None` once its stream has ended
    /// and every event is indexed (the job's result is next), else whether events were left
    /// waiting for the next frame.
    pub(super) fn pump_stream(&mut self, i: usize) -> Option<bool> {
        let mut st = self.jobs[i].stream.take()?;
        let started = Instant::now();
        let budget = if self.interacting { LOAD_INGEST_BUDGET_INTERACTIVE } else { LOAD_INGEST_BUDGET };
        let left = loop {
            if let Some(events) = st.pending.as_mut() {
                if events.len() == 0 {
                    st.pending = None;
                    continue;
                }
                let n = events.len().min(SLICE);
                match self.lanes.first_mut().filter(|l| Some(l.id()) == st.lane) {
                    Some(lane) => lane.ingest_iter(events.by_ref().take(n)),
                    // The recording was replaced meanwhile: what follows goes nowhere.
                    None => drop(events.by_ref().take(n).count()),
                }
                st.shown += n;
                if started.elapsed() >= budget {
                    break Some(true);
                }
                continue;
            }
            match st.rx.try_recv() {
                Ok(Loading::Header(header, total)) => {
                    st.total = total;
                    let path = self.jobs[i].path.clone();
                    self.show_opened(Opened::Recording(vec![Recording::from_header(&header)]), Some(path));
                    st.lane = self.lanes.first().map(Recording::id);
                }
                Ok(Loading::Events(events)) => st.pending = Some(events.into_iter()),
                Err(TryRecvError::Empty) => break Some(false),
                Err(TryRecvError::Disconnected) => break None,
            }
        };
        // What came from the file is saved as it is: the discard guard must not ask about a
        // half-opened file.
        if st.lane.is_some() && self.lanes.first().map(Recording::id) == st.lane {
            self.saved = Some((self.mark(), self.jobs[i].path.clone()));
        }
        self.jobs[i].stream = Some(st);
        left
    }

    /// A streamed open ended well: the recording shown is the file's.
    pub(super) fn streamed(&mut self, job: FileJob) {
        let lane = job.stream.as_ref().and_then(|s| s.lane);
        if lane.is_some() && self.lanes.first().map(Recording::id) == lane {
            self.remember(&job.path);
            self.saved = Some((self.mark(), job.path.clone()));
            self.file = Some(job.path);
        }
    }

    /// A streamed open failed: the recording it showed is not the file's, so it goes.
    pub(super) fn drop_streamed(&mut self, job: &FileJob) {
        let lane = job.stream.as_ref().and_then(|s| s.lane);
        if lane.is_some() && self.lanes.first().map(Recording::id) == lane {
            self.lanes = vec![Recording::new(self.scenario.clone())];
            self.file = None;
            self.saved = None;
        }
    }
}
