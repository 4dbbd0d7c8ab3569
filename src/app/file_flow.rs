//! Opening and saving from the window: file jobs, dialogs and the in-window path field that
//! takes over where no dialog can be shown, confirmations, and saves the discard guard asked for.
//!
//! Every save ends in a message the user sees: a notice naming the file and its size, or an
//! error; an open that fails says why. Nothing here blocks the frame.

use std::path::{Path, PathBuf};

use ackscope_protocol::SimTime;

use super::files::{DialogResult, FileJob, Finished, JobKind, Opened};
use super::paths::{human_size, PromptKind};
use super::{AppCommand, AppState};
use crate::model::{Playback, Recording};
use crate::report::export::ExportTargets;
use crate::session::Session;

impl AppState {
    /// Starts opening a session or scenario file on a worker thread: once read, a recording is
    /// shown for replay and a scenario is run live; a capture is shown as it is read, as a live
    /// source. An open still running is given up for this one.
    pub fn open_path(&mut self, path: &Path) {
        for j in self.jobs.iter().filter(|j| j.kind == JobKind::Open) {
            j.cancel();
        }
        self.jobs.retain(|j| j.kind != JobKind::Open);
        if crate::capture::import::is_capture_file(path) {
            // A packet capture is a source read as the file is (`source::capture`): its first
            // events show at once and memory stays bounded however large the file.
            self.ab = None;
            self.focus = ackscope_protocol::FIRST_CLIENT;
            let options = crate::capture::import::ImportOptions::default();
            self.start_source(crate::source::Spec::Capture { path: path.to_path_buf(), options });
            return;
        }
        self.jobs.push(FileJob::open(path, self.wake.clone()));
    }

    /// Shows a loaded session: a recording for replay (cursor at the start; both lanes of an
    /// A/B session), or a scenario live.
    pub fn show_session(&mut self, s: Session, file: Option<PathBuf>) {
        if s.has_events() {
            let lanes = Recording::lanes_from_session(s, &crate::session::Progress::new()).expect("never cancelled");
            self.show_opened(Opened::Recording(lanes), file);
        } else {
            self.show_opened(Opened::Scenario(Box::new(s)), file);
        }
    }

    pub(super) fn show_opened(&mut self, opened: Opened, file: Option<PathBuf>) {
        self.stop();
        self.ab = None;
        match opened {
            Opened::Recording(lanes) => {
                // A lane of another origin has no scenario: the controls keep the current one.
                if let Some(s) = lanes[0].scenario.clone() {
                    self.scenario = s;
                }
                self.ab = lanes.get(1).and_then(|l| l.scenario.as_ref()).map(|s| s.strategy);
                self.focus = ackscope_protocol::FIRST_CLIENT;
                self.lanes = lanes;
                self.playback = Playback::default();
                self.playback.seek(SimTime::ZERO);
                self.replay_edits.clear();
                // A recording read from a file is saved as it is.
                self.saved = file.clone().map(|f| (self.mark(), f));
            }
            Opened::Scenario(s) => {
                self.scenario = s.scenario;
                self.start();
            }
            // Shown as its header came, filled as its events did (see `load_flow`).
            Opened::Streamed => return,
        }
        self.file = file;
    }

    /// Starts saving the recording, every lane (both of an A/B run), atomically to `path` on a
    /// worker thread.
    pub fn save_path(&mut self, path: &Path) {
        self.pull_events();
        let Some(header) = self.recording_header() else {
            self.error = Some("Nothing to save: no recording is shown.".into());
            return;
        };
        if self.jobs.iter().any(|j| j.kind == JobKind::Save && j.path == path) {
            self.error = Some(format!("{} is being saved already.", path.display()));
            return;
        }
        // A live run that kept only a window in memory saves its stream file, which has it all.
        // Streams are one lane each: an A/B pair saves what both lanes hold in memory.
        let full = match self.lanes.as_slice() {
            [lane] => self.live_log.full_log(lane),
            _ => None,
        };
        let mark = self.mark();
        let mut job = match full {
            Some((full, events)) => {
                // The stream file has every event; the bookmarks set in the window are written
                // into the copy's trailer.
                let payloads = header.payloads;
                let mut job = FileJob::copy_with_bookmarks(path, full, mark.1.clone(), payloads, self.wake.clone());
                job.events = Some(events);
                job
            }
            None => {
                let events = self.lanes.iter().map(|l| l.shared_events()).collect();
                FileJob::save(path, header, events, self.wake.clone())
            }
        };
        job.mark = Some(mark);
        self.jobs.push(job);
    }

    /// Loads and saves still running, oldest first.
    pub fn file_jobs(&self) -> &[FileJob] {
        &self.jobs
    }

    /// Takes the answers of dialogs, the events of opens still parsing (within a time budget)
    /// and the results of finished file jobs (and re-runs); true when events were left waiting
    /// for the next frame.
    pub fn poll_files(&mut self) -> bool {
        self.poll_rerun();
        self.poll_compare_with();
        while let Some(answer) = self.dialogs.poll() {
            match answer {
                DialogResult::Chosen(PromptKind::Open, p) => self.apply(AppCommand::Open(p)),
                DialogResult::Chosen(PromptKind::Save, p) => self.save_path(&p),
                DialogResult::Chosen(PromptKind::CompareWith, p) => self.compare_with(&p),
                DialogResult::Chosen(PromptKind::Export, p) if is_pcapng(&p) => self.export_pcapng(&p),
                DialogResult::Chosen(PromptKind::Export, p) => self.export(ExportTargets::beside(&p)),
                DialogResult::Chosen(PromptKind::LinkFile, p) => self.load_link_file(&p),
                // A save the guard asked for did not happen: keep the run, drop what waited.
                DialogResult::Cancelled(_) => self.after_save = None,
                DialogResult::Unavailable(kind) => {
                    self.dialogs_missing = true;
                    self.prompt = Some(kind);
                }
            }
        }
        let mut i = 0;
        let mut behind = false;
        while i < self.jobs.len() {
            if let Some(left) = self.pump_stream(i) {
                behind |= left;
                i += 1;
                continue;
            }
            let Some(result) = self.jobs[i].try_finish() else {
                i += 1;
                continue;
            };
            let job = self.jobs.remove(i);
            match result {
                Ok(Finished::Opened(Opened::Streamed)) => self.streamed(job),
                Ok(Finished::Opened(opened)) => {
                    self.remember(&job.path);
                    self.show_opened(opened, Some(job.path));
                }
                Ok(Finished::Saved(bytes)) => self.saved_to(job, bytes),
                Ok(Finished::Captured(text)) => self.notice = Some(format!("Exported:\n{text}")),
                Ok(Finished::Exported(summary)) => {
                    self.notice = Some(format!("Exported:\n{}", summary.to_text()));
                    self.last_export = Some(summary);
                }
                Err(e) if job.kind == JobKind::Export => self.error = Some(format!("Not exported: {e:#}")),
                Err(e) if job.kind == JobKind::Save => {
                    self.error = Some(format!("Not saved: {e:#}"));
                    self.after_save = None;
                }
                Err(e) => {
                    self.error = Some(format!("Not opened: {e:#}"));
                    self.drop_streamed(&job);
                }
            }
        }
        behind
    }

    /// A save finished: say so, remember the file, and carry out what waited for it.
    fn saved_to(&mut self, job: FileJob, bytes: u64) {
        let events = job.events.unwrap_or_else(|| job.mark.as_ref().map_or(0, |m| m.events() as u64));
        let lanes = match job.mark.as_ref().map_or(1, |m| m.lanes()) {
            n if n > 1 => format!(" in {n} lanes"),
            _ => String::new(),
        };
        self.notice = Some(format!("Saved {} ({}, {events} events{lanes}).", job.path.display(), human_size(bytes)));
        self.remember(&job.path);
        if let Some(mark) = job.mark {
            self.saved = Some((mark, job.path.clone()));
        }
        self.file = Some(job.path);
        // The user chose "save, then carry on": a live run's events since the save began do
        // not ask again.
        if let Some(cmd) = self.after_save.take() {
            self.apply_unguarded(cmd);
        }
    }

    pub(super) fn remember(&mut self, path: &Path) {
        let p = path.to_path_buf();
        self.settings.recent.retain(|r| r != &p);
        self.settings.recent.insert(0, p);
        self.settings.recent.truncate(8);
    }

    /// Asks for a file to open: a native dialog on its own thread, or the path field where no
    /// dialog can be shown.
    pub fn open_dialog(&mut self) {
        self.ask_path(PromptKind::Open);
    }

    /// Starts exporting every lane's tables to `targets` on a worker thread (both lanes of an A/B
    /// run, told apart by the `lane` column); the window's recordings stay as they are.
    pub fn export(&mut self, targets: ExportTargets) {
        self.pull_events();
        if self.lanes.is_empty() {
            self.error = Some("Nothing to export: no recording is shown.".into());
            return;
        }
        let lanes = self.lanes.iter().map(|l| (l.header(), l.shared_events())).collect();
        self.jobs.push(FileJob::export(targets, lanes, self.wake.clone()));
    }

    /// Writes the recording as a pcapng capture on a worker thread (*Export...* given a
    /// `.pcapng` name): every datagram re-run from the session, as `export --pcapng` writes it.
    pub fn export_pcapng(&mut self, path: &Path) {
        self.pull_events();
        let Some(first) = self.lanes.first() else {
            self.error = Some("Nothing to export: no recording is shown.".into());
            return;
        };
        let mut session = first.header();
        session.events = first.shared_events().to_vec();
        if let Some(second) = self.lanes.get(1) {
            session.ab_events = second.shared_events().to_vec();
        }
        self.jobs.push(FileJob::export_pcapng(path, session, self.wake.clone()));
    }

    /// Asks for an export's base name (see [`Self::open_dialog`]).
    pub fn export_dialog(&mut self) {
        self.ask_path(PromptKind::Export);
    }

    /// Asks for a file to save to (see [`Self::open_dialog`]).
    pub fn save_dialog(&mut self) {
        self.ask_path(PromptKind::Save);
    }

    /// Asks for a link file to load into the link (see [`Self::open_dialog`]).
    pub fn link_file_dialog(&mut self) {
        self.ask_path(PromptKind::LinkFile);
    }

    pub(super) fn ask_path(&mut self, kind: PromptKind) {
        if self.dialogs_missing {
            self.prompt = Some(kind);
        } else {
            self.dialogs.show(kind, self.wake.clone());
        }
    }

    /// Uses `dialogs` to ask for paths (tests give one that finds no dialog, as on a server).
    pub fn set_dialogs(&mut self, dialogs: super::files::Dialogs) {
        self.dialogs = dialogs;
    }

    /// The path field answered: open or save there.
    pub(super) fn prompt_chosen(&mut self, path: PathBuf) {
        match self.prompt.take() {
            Some(PromptKind::Open) => self.apply(AppCommand::Open(path)),
            Some(PromptKind::Save) => self.save_path(&path),
            Some(PromptKind::CompareWith) => self.compare_with(&path),
            Some(PromptKind::Export) if is_pcapng(&path) => self.export_pcapng(&path),
            Some(PromptKind::Export) => self.export(ExportTargets::beside(&path)),
            Some(PromptKind::LinkFile) => self.load_link_file(&path),
            None => {}
        }
    }

    /// The path field was closed without a path: a save the guard waited for is not made.
    pub(super) fn prompt_cancelled(&mut self) {
        if self.prompt.take() == Some(PromptKind::Save) {
            self.after_save = None;
        }
    }

    /// Saves the run for the guard: to the file it was saved to before, else asks where.
    pub(super) fn save_for_guard(&mut self, then: AppCommand) {
        self.after_save = Some(then);
        match self.saved.as_ref().map(|(_, f)| f.clone()) {
            Some(f) => self.save_path(&f),
            None => self.save_dialog(),
        }
    }

    /// Removes temporary files interrupted saves left in the working directory and beside the
    /// recent files (see [`crate::session::remove_stale_temps`]), and says so.
    pub fn remove_stale_temps(&mut self) {
        let mut dirs: Vec<PathBuf> = std::env::current_dir().into_iter().collect();
        for r in &self.settings.recent {
            if let Some(d) = r.parent().filter(|d| !d.as_os_str().is_empty()) {
                dirs.push(d.to_path_buf());
            }
        }
        dirs.sort();
        dirs.dedup();
        let removed: Vec<PathBuf> = dirs.iter().flat_map(|d| crate::session::remove_stale_temps(d)).collect();
        if !removed.is_empty() {
            let names: Vec<String> = removed.iter().map(|p| p.display().to_string()).collect();
            self.notice = Some(format!("Removed what interrupted saves left behind: {}", names.join(", ")));
        }
    }
}

/// A name that asks for a pcapng capture rather than CSV tables.
fn is_pcapng(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("pcapng"))
}
