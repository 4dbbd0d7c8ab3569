//! A packet capture opened in the window: the capture read through the passive decoders
//! ([`crate::capture::import`]) into one lane whose origin is the capture, each UDP flow a
//! client named by its ends, the protocol the decoder picked (an ackscope strategy's, so its
//! packets decode in the Packets tab, or the foreign format's name).
//!
//! The file is imported on the open job's thread with its progress shown; events are ingested
//! in steps as the importer gives them (it holds back only its matching window).

use std::path::Path;

use anyhow::{anyhow, Result};

use crate::capture::import::{ImportOptions, Importer};
use crate::model::lane::{ClientInfo, LaneInfo, Origin, Protocol};
use crate::model::Recording;
use crate::session::{Phase, Progress};

/// Events the importer hands over per step.
const STEP_EVENTS: usize = 1 << 16;

/// The recording of the capture at `path` (decoded with `auto`); an error naming the file when
/// it is not a capture or has no UDP traffic, or when `progress` is cancelled.
pub fn open_capture(path: &Path, progress: &Progress) -> Result<Vec<Recording>> {
    let mut importer = Importer::open(path, &ImportOptions::default())?;
    progress.start(Phase::Parsing, 1);
    let mut events = Vec::new();
    loop {
        if progress.is_cancelled() {
            return Err(anyhow!("{}: cancelled", path.display()));
        }
        let batch = importer.next_batch(STEP_EVENTS);
        if batch.is_empty() {
            break;
        }
        events.extend(batch);
    }
    let summary = importer.summary(path);
    if summary.clients.is_empty() {
        let skipped = summary.skipped.describe();
        return Err(anyhow!(
            "{}: no UDP traffic to show ({} packets{})",
            path.display(),
            summary.skipped.packets,
            if skipped.is_empty() { String::new() } else { format!("; {skipped}") }
        ));
    }
    let origin = Origin::Capture { path: path.display().to_string() };
    let mut info = LaneInfo::new(origin, Protocol::named(&summary.decoder, None));
    for c in &summary.clients {
        let name = format!("{} <-> {}", c.client_end, c.server);
        info.name_client(ClientInfo { id: c.client, name, group: String::new() });
    }
    let mut rec = Recording::of(info, None);
    progress.start(Phase::Indexing, events.len() as u64);
    let mut done = 0;
    let mut events = events.into_iter();
    loop {
        if progress.is_cancelled() {
            return Err(anyhow!("{}: cancelled", path.display()));
        }
        let step: Vec<_> = events.by_ref().take(STEP_EVENTS).collect();
        if step.is_empty() {
            break;
        }
        done += step.len();
        rec.ingest(step);
        progress.advance_to(done as u64);
    }
    Ok(vec![rec])
}
