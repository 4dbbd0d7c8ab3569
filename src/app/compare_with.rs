//! *Compare with...*: a second recording opened beside the one shown, for the Compare and Summary
//! tabs (README, "Comparing two saved sessions").
//!
//! It is read and indexed on a worker thread (a large session takes seconds) and only ever read
//! afterwards: the run shown, its saving, re-running and the other tabs are untouched by it, so
//! opening one can discard nothing. It stays until it is closed or another is opened beside.

use std::path::{Path, PathBuf};

use crossbeam_channel::{bounded, Receiver, TryRecvError};

use super::AppState;
use crate::model::{Recording, Shown};
use crate::report::compare_sessions::{load_lanes, side_name};

/// The second recording: its file and lanes.
pub struct Compared {
    pub path: PathBuf,
    pub lanes: Vec<Recording>,
}

/// The second recording shown beside, and the one being read.
#[derive(Default)]
pub struct CompareWith {
    shown: Option<Compared>,
    reading: Option<(PathBuf, Receiver<anyhow::Result<Vec<Recording>>>)>,
    /// Show the Compare tab once it is read (not when the window started on a tab of its own).
    show_tab: bool,
}

impl CompareWith {
    /// The recording beside the one shown, once read.
    pub fn shown(&self) -> Option<&Compared> {
        self.shown.as_ref()
    }

    /// The file being read, while it is.
    pub fn reading(&self) -> Option<&Path> {
        self.reading.as_ref().map(|(p, _)| p.as_path())
    }
}

impl AppState {
    /// Starts reading `path` to show beside the recording shown (a read still going is given
    /// up for this one); the result arrives through [`Self::poll_compare_with`].
    pub fn compare_with(&mut self, path: &Path) {
        self.read_beside(path, true);
    }

    /// [`Self::compare_with`], switching to the Compare tab once read when `show_tab`.
    pub fn read_beside(&mut self, path: &Path, show_tab: bool) {
        self.compare_with.show_tab = show_tab;
        let (tx, rx) = bounded(1);
        let (file, wake) = (path.to_path_buf(), self.wake.clone());
        let verify = crate::session::Verify::Checksum;
        std::thread::Builder::new()
            .name("compare-with".into())
            .spawn(move || {
                let _ = tx.send(load_lanes(&file, verify));
                wake();
            })
            .map_or_else(
                |e| self.error = Some(format!("{}: cannot start reading: {e}", path.display())),
                |_| self.compare_with.reading = Some((path.to_path_buf(), rx)),
            );
    }

    /// Takes the second recording once it is read; a file that could not be read says why.
    pub fn poll_compare_with(&mut self) {
        let Some((path, rx)) = &self.compare_with.reading else { return };
        match rx.try_recv() {
            Err(TryRecvError::Empty) => return,
            Ok(Ok(lanes)) => {
                self.compare_with.shown = Some(Compared { path: path.clone(), lanes });
                if self.compare_with.show_tab {
                    self.settings.tab = super::Tab::Compare;
                }
            }
            Ok(Err(e)) => self.error = Some(format!("Not compared: {e:#}")),
            Err(TryRecvError::Disconnected) => {
                self.error = Some(format!("Not compared: reading {} stopped", path.display()));
            }
        }
        self.compare_with.reading = None;
    }

    /// Closes the second recording.
    pub fn close_compared(&mut self) {
        self.compare_with = CompareWith::default();
    }

    /// Waits up to `timeout` for the second recording being read (tests, and a window that
    /// must show it before its first frame); true once none is being read.
    pub fn wait_compare_with(&mut self, timeout: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        while self.compare_with.reading.is_some() && std::time::Instant::now() < deadline {
            self.poll_compare_with();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        self.compare_with.reading.is_none()
    }

    /// What the Compare and Summary tabs show, each lane with its name: the lanes shown, and
    /// with a second recording beside, its lanes after them, named by side (`A glenn`, `B ue4`).
    /// The count of lanes of the recording shown comes first.
    pub fn compare_lanes(&self) -> (usize, Vec<(String, Shown<'_>)>) {
        let shown = self.shown();
        let Some(other) = &self.compare_with.shown else {
            let named = shown.into_iter().map(|s| (s.label(), s)).collect::<Vec<_>>();
            return (named.len(), named);
        };
        let mut named: Vec<(String, Shown<'_>)> = shown.into_iter().map(|s| (side_name('A', s.rec), s)).collect();
        let a = named.len();
        named.extend(other.lanes.iter().map(|rec| (side_name('B', rec), Shown::focus(rec, self.focus))));
        (a, named)
    }
}
