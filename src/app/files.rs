//! File work off the UI thread: opening and saving sessions as jobs with progress, and the native
//! file dialogs.
//!
//! Opening a 1-million-event session takes about two seconds (read, check, parse, index) and
//! saving one about one, so each runs on its own thread and reports through a shared [`Progress`]
//! that the status bar draws while the window keeps running; the result comes back over a channel
//! and is picked up by the frame loop. A native dialog may block its thread until closed (zenity),
//! so dialogs also get their own thread and send back only the chosen path, or that none could
//! be shown: then the window asks for a path itself (see [`super::paths`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ackscope_protocol::Event;
use anyhow::{anyhow, Result};
use crossbeam_channel::{bounded, unbounded, Receiver, Sender, TryRecvError};

use super::paths::PromptKind;
use crate::model::Recording;
use crate::report::export::{self, ExportSummary, ExportTargets};
use crate::session::{self, Loading, Phase, Progress, Session};

/// What was last saved or opened: each lane's recording and how many events it held then, and
/// the bookmarks (a bookmark added or changed since is unsaved too).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SavedMark(pub(super) Vec<(u64, usize)>, pub(super) Vec<crate::session::Bookmark>);

impl SavedMark {
    /// Events of every lane: a session file holds both lanes of an A/B run, so a save's notice
    /// counts both (it counted the first only: 162,542 of 322,661, issue 25 defect 9).
    pub(super) fn events(&self) -> usize {
        self.0.iter().map(|l| l.1).sum()
    }

    /// How many lanes were saved or opened.
    pub(super) fn lanes(&self) -> usize {
        self.0.len()
    }
}

/// What a job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobKind {
    Open,
    Save,
    Export,
}

/// A finished open: a recording to replay (its lanes: two for an A/B session), or a scenario (no
/// events) to run live.
pub enum Opened {
    Recording(Vec<Recording>),
    Scenario(Box<Session>),
    /// The recording came through the job's [`LoadStream`], header and events, and is verified.
    Streamed,
}

/// An open's recording as it is parsed: what the worker has handed over and how much of it the
/// window has indexed (see [`session::load_streaming`]).
pub struct LoadStream {
    pub(super) rx: Receiver<Loading>,
    /// Events the file holds (known once the header came).
    pub(super) total: usize,
    /// Events indexed into the recording shown.
    pub(super) shown: usize,
    /// The recording the events go to, once the header made it.
    pub(super) lane: Option<u64>,
    /// Events received and not yet indexed.
    pub(super) pending: Option<std::vec::IntoIter<Event>>,
}

/// What a job hands back.
pub enum Finished {
    Opened(Opened),
    /// Bytes written.
    Saved(u64),
    /// The tables written.
    Exported(ExportSummary),
    /// A pcapng capture written (what `capture::write_pcapng` says of it).
    Captured(String),
}

/// A load or save running on its own thread.
pub struct FileJob {
    pub kind: JobKind,
    pub path: PathBuf,
    /// For a save: what the window held when it started (marked saved once it finished).
    pub(super) mark: Option<SavedMark>,
    /// For a save: the events the file holds, when not the window's (a trimmed live run's
    /// stream file holds the whole run).
    pub(super) events: Option<u64>,
    progress: Arc<Progress>,
    result: Receiver<Result<Finished>>,
    /// An open's header and events as they are parsed.
    pub(super) stream: Option<LoadStream>,
}

/// Calls `wake` when dropped, so the window looks at a job's end however the job ended.
struct WakeOnDrop(Arc<dyn Fn() + Send + Sync>);

impl Drop for WakeOnDrop {
    fn drop(&mut self) {
        (self.0)()
    }
}

impl FileJob {
    fn spawn(
        kind: JobKind,
        path: &Path,
        wake: Arc<dyn Fn() + Send + Sync>,
        work: impl FnOnce(&Path, &Arc<Progress>) -> Result<Finished> + Send + 'static,
    ) -> Self {
        let progress = Arc::new(Progress::new());
        let (tx, rx) = bounded(1);
        let (p, file) = (Arc::clone(&progress), path.to_path_buf());
        let name = match kind {
            JobKind::Open => "ackscope-open",
            JobKind::Save => "ackscope-save",
            JobKind::Export => "ackscope-export",
        };
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let _wake = WakeOnDrop(wake);
                let _ = tx.send(work(&file, &p));
            })
            .expect("spawn file thread");
        Self { kind, path: path.to_path_buf(), mark: None, events: None, progress, result: rx, stream: None }
    }

    /// Loads `path` on a worker thread, handing its header and events over as they are parsed
    /// (the window indexes and shows them meanwhile); files that cannot be streamed come back
    /// whole, as a recording with every index built or a scenario.
    pub fn open(path: &Path, wake: Arc<dyn Fn() + Send + Sync>) -> Self {
        let (tx, rx) = unbounded();
        let wake_on_block = Arc::clone(&wake);
        let mut job = Self::spawn(JobKind::Open, path, wake, move |path, progress| {
            if session::jsonl::is_stream_path(path) {
                // A game's event stream: read whole, no scenario (a stream still being written
                // is followed live instead: `AppState::follow_stream`).
                drop(tx);
                progress.start(Phase::Parsing, 1);
                let stream = session::jsonl::load(path)?;
                let source = path.display().to_string();
                let lanes = Recording::lanes_from_stream(stream, &source, progress)
                    .ok_or_else(|| anyhow!("{}: cancelled", path.display()))?;
                return Ok(Finished::Opened(Opened::Recording(lanes)));
            }
            // `tx` is dropped when this returns, so the stream ends before the result is sent.
            let streamed = session::load_streaming(path, progress, |msg| {
                if tx.send(msg).is_ok() {
                    wake_on_block();
                }
            })?;
            let Some(s) = streamed else { return Ok(Finished::Opened(Opened::Streamed)) };
            if !s.has_events() {
                return Ok(Finished::Opened(Opened::Scenario(Box::new(s))));
            }
            let lanes =
                Recording::lanes_from_session(s, progress).ok_or_else(|| anyhow!("{}: cancelled", path.display()))?;
            Ok(Finished::Opened(Opened::Recording(lanes)))
        });
        job.stream = Some(LoadStream { rx, total: 0, shown: 0, lane: None, pending: None });
        job
    }

    /// Saves `header` with each lane's `events` (shared with the stores, not copied; the second
    /// is the A/B lane's) on a worker thread.
    pub fn save(path: &Path, header: Session, events: Vec<Arc<Vec<Event>>>, wake: Arc<dyn Fn() + Send + Sync>) -> Self {
        Self::spawn(JobKind::Save, path, wake, move |path, progress| {
            let lane = |i: usize| events.get(i).map_or(&[][..], |e| &e[..]);
            session::save_with_progress(&header, [lane(0), lane(1)], path, progress).map(Finished::Saved)
        })
    }

    /// Saves by copying `source`, a complete session file (the stream file of a live run that
    /// keeps only a window in memory), on a worker thread, with `bookmarks` written into the
    /// copy's trailer (a stream file holds the events, not the window's bookmarks), and the
    /// datagrams' bytes the window kept (`payloads`).
    pub fn copy_with_bookmarks(
        path: &Path,
        source: PathBuf,
        bookmarks: Vec<session::Bookmark>,
        payloads: Vec<session::payloads::SavedPayload>,
        wake: Arc<dyn Fn() + Send + Sync>,
    ) -> Self {
        Self::spawn(JobKind::Save, path, wake, move |path, progress| {
            progress.start(Phase::Writing, 1);
            session::stream_bookmarks::copy_with_bookmarks(&source, path, &bookmarks, &payloads).map(Finished::Saved)
        })
    }

    /// Exports `lanes` (each a session header with its shared events) as the tables `targets`
    /// names, on a worker thread.
    ///
    /// The lanes' recordings are rebuilt on the thread from their events (about 0.3 s per million
    /// events, the indexing phase of an open): the window keeps its own and goes on drawing them,
    /// and a recording is a pure fold of its event log, so the tables are the window's.
    pub fn export(
        targets: ExportTargets,
        lanes: Vec<(Session, Arc<Vec<Event>>)>,
        wake: Arc<dyn Fn() + Send + Sync>,
    ) -> Self {
        let path = export::Table::ALL.iter().find_map(|&t| targets.get(t)).unwrap_or(Path::new("")).to_path_buf();
        Self::spawn(JobKind::Export, &path, wake, move |path, progress| {
            let mut recs = Vec::with_capacity(lanes.len());
            for (header, events) in lanes {
                let s = Session { events: events.to_vec(), ..header };
                let rec =
                    Recording::from_session(s, progress).ok_or_else(|| anyhow!("{}: cancelled", path.display()))?;
                recs.push(rec);
            }
            export::write_files(&recs, &targets, Some(progress)).map(Finished::Exported)
        })
    }

    /// Writes the recording (its lanes' events under the first lane's header) as a pcapng
    /// capture with `capture::write_pcapng` (written whole to a temporary file, then renamed);
    /// an existing file is refused, never replaced.
    pub fn export_pcapng(path: &Path, session: Session, wake: Arc<dyn Fn() + Send + Sync>) -> Self {
        Self::spawn(JobKind::Export, path, wake, move |path, _progress| {
            if path.exists() {
                return Err(anyhow!(
                    "{} exists: choose another name (an export never replaces a file)",
                    path.display()
                ));
            }
            let summary = crate::capture::write_pcapng(&session, path)?;
            Ok(Finished::Captured(summary.to_text(path)))
        })
    }

    /// The result once the job has ended.
    pub fn try_finish(&self) -> Option<Result<Finished>> {
        match self.result.try_recv() {
            Ok(r) => Some(r),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(anyhow!("{}: the file thread stopped", self.path.display()))),
        }
    }

    /// Blocks until the job ends or `timeout` passes; true when it ended.
    pub fn wait(&self, timeout: std::time::Duration) -> bool {
        !matches!(self.result.recv_timeout(timeout), Err(crossbeam_channel::RecvTimeoutError::Timeout))
    }

    /// The share of the job done, 0 to 1 (for a streaming open, of the events shown).
    pub fn fraction(&self) -> f32 {
        match &self.stream {
            Some(st) if st.total > 0 => 0.1 + 0.9 * (st.shown as f32 / st.total as f32).min(1.0),
            _ => self.progress.fraction(),
        }
    }

    pub fn phase(&self) -> Phase {
        self.progress.phase()
    }

    /// Asks the job to stop; its result is then an error nobody needs to show.
    pub fn cancel(&self) {
        self.progress.cancel();
    }

    /// A line for the status bar: what, which file, which phase, how far.
    pub fn describe(&self) -> String {
        let what = match self.kind {
            JobKind::Open => "Opening",
            JobKind::Save => "Saving",
            JobKind::Export => "Exporting",
        };
        let name =
            self.path.file_name().map_or_else(|| self.path.display().to_string(), |n| n.to_string_lossy().into());
        match &self.stream {
            Some(st) if st.total > 0 => {
                format!("{what} {name}: {} of {} events shown, {:.0} %", st.shown, st.total, self.fraction() * 100.0)
            }
            _ => format!("{what} {name}: {} {:.0} %", self.phase().label(), self.fraction() * 100.0),
        }
    }
}

/// What a dialog answered.
#[derive(Debug, Clone, PartialEq)]
pub enum DialogResult {
    Chosen(PromptKind, PathBuf),
    /// The user closed the dialog without choosing.
    Cancelled(PromptKind),
    /// No dialog could be shown (it answered nothing within [`NO_DIALOG_WITHIN`]).
    Unavailable(PromptKind),
}

/// Shows a file dialog and returns the chosen path; `None` when cancelled or when no dialog
/// could be shown. Runs on a dialog thread.
pub type DialogBackend = Arc<dyn Fn(PromptKind) -> Option<PathBuf> + Send + Sync>;

/// A dialog that answers "nothing" sooner than this was never shown: rfd's portal backend
/// returns within milliseconds where no portal (and no zenity) runs, and nobody cancels a real
/// dialog that fast.
pub const NO_DIALOG_WITHIN: Duration = Duration::from_millis(250);

/// The native dialogs (rfd: the desktop portal, or zenity).
pub fn native_dialog(kind: PromptKind) -> Option<PathBuf> {
    let d = rfd::FileDialog::new().add_filter("ackscope session", &["ron"]);
    // Captures open too (README, "Opening captures"); saving stays a session.
    let d = if kind == PromptKind::Open { d.add_filter("packet capture", &["pcapng", "pcap"]) } else { d };
    match kind {
        PromptKind::Open => d.pick_file(),
        PromptKind::CompareWith => d.add_filter("event stream", &["jsonl"]).pick_file(),
        PromptKind::LinkFile => {
            rfd::FileDialog::new().add_filter("link file (ackscope fit --out)", &["ron"]).pick_file()
        }
        PromptKind::Save => d.set_file_name("session.ron").save_file(),
        PromptKind::Export => rfd::FileDialog::new()
            .add_filter("CSV", &["csv"])
            .add_filter("pcapng capture", &["pcapng"])
            .set_file_name("session.csv")
            .save_file(),
    }
}

/// File dialogs, each on its own thread, one at a time.
pub struct Dialogs {
    tx: Sender<DialogResult>,
    rx: Receiver<DialogResult>,
    backend: DialogBackend,
    showing: bool,
}

impl Default for Dialogs {
    fn default() -> Self {
        Self::with_backend(Arc::new(native_dialog))
    }
}

impl Dialogs {
    /// Dialogs shown by `backend` (tests give one that finds no dialog, as on a server).
    pub fn with_backend(backend: DialogBackend) -> Self {
        let (tx, rx) = bounded(4);
        Self { tx, rx, backend, showing: false }
    }

    /// Shows a dialog; the answer arrives later through [`Dialogs::poll`], and `wake` is called
    /// then. Does nothing while another dialog is shown.
    pub fn show(&mut self, kind: PromptKind, wake: Arc<dyn Fn() + Send + Sync>) {
        if self.showing {
            return;
        }
        self.showing = true;
        let (tx, backend) = (self.tx.clone(), Arc::clone(&self.backend));
        std::thread::spawn(move || {
            let asked = Instant::now();
            let answer = match backend(kind) {
                Some(p) => DialogResult::Chosen(kind, p),
                None if asked.elapsed() < NO_DIALOG_WITHIN => DialogResult::Unavailable(kind),
                None => DialogResult::Cancelled(kind),
            };
            let _ = tx.send(answer);
            wake();
        });
    }

    /// An answer given since the last call.
    pub fn poll(&mut self) -> Option<DialogResult> {
        let r = self.rx.try_recv().ok();
        if r.is_some() {
            self.showing = false;
        }
        r
    }
}
