//! *Re-run*: the shown recording run again headless from its header and action log, on a worker
//! thread, compared event by event with the recording.
//!
//! It does what `ackscope run SESSION.ron --out AGAIN.ron` does (every lane of an A/B recording),
//! so the window can show that a recording reproduces: the result replaces the shown lanes (as a
//! replay, ready to save) and [`RerunJob`] says whether each lane's events are identical to the
//! recording's, or where they first differ.

use std::sync::Arc;

use ackscope_protocol::Event;
use anyhow::{anyhow, Result};
use crossbeam_channel::{bounded, Receiver, TryRecvError};

use super::files::Opened;
use super::AppState;
use crate::model::Recording;
use crate::session::{self, Progress, Session};

/// What a finished re-run hands back: its lanes and one line on how they compare.
pub struct Rerun {
    pub lanes: Vec<Recording>,
    pub outcome: String,
}

/// A re-run on its own thread.
pub struct RerunJob {
    result: Receiver<Result<Rerun>>,
}

/// "identical" or where `again` first differs from `recorded`.
fn compare(lane: usize, recorded: &[Event], again: &[Event]) -> Option<String> {
    let first = recorded.iter().zip(again).position(|(a, b)| a != b);
    match first {
        None if recorded.len() == again.len() => None,
        None => Some(format!("lane {}: {} events recorded, {} re-run", lane + 1, recorded.len(), again.len())),
        Some(i) => {
            Some(format!("lane {}: first difference at event {i} ({:.6} s)", lane + 1, recorded[i].time.as_secs_f64()))
        }
    }
}

impl RerunJob {
    /// Re-runs `header` (a recording's header and action logs) and compares the result with
    /// `recorded` (each lane's events, shared with the stores); `wake` is called when done.
    pub fn spawn(header: Session, recorded: Vec<Arc<Vec<Event>>>, wake: Arc<dyn Fn() + Send + Sync>) -> Self {
        let (tx, rx) = bounded(1);
        std::thread::Builder::new()
            .name("ackscope-rerun".into())
            .spawn(move || {
                let result = (|| -> Result<Rerun> {
                    let again = session::rerun_all(&header)?;
                    let lanes_again = [&again.events, &again.ab_events];
                    let diffs: Vec<String> =
                        recorded.iter().enumerate().filter_map(|(i, r)| compare(i, r, lanes_again[i])).collect();
                    let n: usize = recorded.iter().map(|r| r.len()).sum();
                    let outcome = if diffs.is_empty() {
                        format!("Re-run identical to the recording ({n} events)")
                    } else {
                        let why = match header.udp_from() {
                            Some(t) => format!(
                                " (expected: the recording ran over UDP sockets on real time from {:.3} s, which \
                                 a re-run simulates)",
                                t.as_secs_f64()
                            ),
                            None => String::new(),
                        };
                        format!("Re-run differs from the recording: {}{why}", diffs.join("; "))
                    };
                    let lanes = Recording::lanes_from_session(again, &Progress::new())
                        .ok_or_else(|| anyhow!("re-run cancelled"))?;
                    Ok(Rerun { lanes, outcome })
                })();
                let _ = tx.send(result);
                wake();
            })
            .expect("spawn re-run thread");
        Self { result: rx }
    }

    /// The result once the re-run has ended.
    pub fn try_finish(&self) -> Option<Result<Rerun>> {
        match self.result.try_recv() {
            Ok(r) => Some(r),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(anyhow!("the re-run thread stopped"))),
        }
    }
}

impl AppState {
    /// *Re-run*: runs the shown recording again headless (every lane) from its header and action
    /// log on a worker thread; the result replaces the shown lanes, and [`Self::rerun_outcome`]
    /// says whether it is identical to the recording.
    pub fn rerun(&mut self) {
        self.stop();
        let Some(header) = self.recording_header() else { return };
        let events = self.lanes.iter().map(|l| l.shared_events()).collect();
        self.rerun_outcome = Some("Re-running...".into());
        self.rerun = Some(RerunJob::spawn(header, events, self.wake.clone()));
    }

    /// True while a re-run is in progress.
    pub fn is_rerunning(&self) -> bool {
        self.rerun.is_some()
    }

    /// How the last re-run compared with the recording (or that one is running).
    pub fn rerun_outcome(&self) -> Option<&str> {
        self.rerun_outcome.as_deref()
    }

    /// Takes a finished re-run's lanes.
    pub(super) fn poll_rerun(&mut self) {
        let Some(result) = self.rerun.as_ref().and_then(RerunJob::try_finish) else { return };
        self.rerun = None;
        match result {
            Ok(r) => {
                self.notice = Some(r.outcome.clone());
                self.rerun_outcome = Some(r.outcome);
                self.show_opened(Opened::Recording(r.lanes), None);
            }
            Err(e) => {
                self.rerun_outcome = None;
                self.error = Some(format!("re-run: {e:#}"));
            }
        }
    }

    /// The session header of the shown lanes (the first lane's, with the A/B lane's strategy and
    /// actions), without events.
    pub(super) fn recording_header(&self) -> Option<crate::session::Session> {
        let mut header = self.lanes.first()?.header();
        if let Some(b) = self.lanes.get(1) {
            header.ab = b.scenario.as_ref().map(|s| s.strategy);
            header.ab_actions = b.actions.clone();
            // Its datagrams' bytes, saved as the first lane's are.
            header.ab_payloads = b.payloads.as_deref().map(crate::model::payloads::saved).unwrap_or_default();
            header.duration_us = header.duration_us.max(b.end_time().0);
        }
        Some(header)
    }
}
