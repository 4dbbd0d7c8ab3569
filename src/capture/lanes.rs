//! A packet capture read whole into a recording, for *Compare with...* and `ackscope compare`.
//!
//! The window opens a capture as a source ([`crate::source::capture`]) that streams it in
//! batches; a comparison needs the whole file indexed before it can say anything, so here the
//! same importer ([`crate::capture::import::Importer`], default options: every flow, the
//! decoder probed from the first datagrams) is read to the end on the caller's thread, into the
//! lane that source would fill: origin *capture*, the decoder's protocol, each UDP flow a
//! client named by its ends, and the datagrams' bytes kept for the bytes pane.

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Result};

use crate::capture::import::{ImportOptions, Importer};
use crate::lane::{ClientInfo, LaneInfo, Origin, Protocol};
use crate::model::payloads::SharedPayloads;
use crate::model::Recording;

/// Events the importer hands over per batch.
const BATCH_EVENTS: usize = 1 << 16;

/// The lane of the capture at `path`; an error naming the file when it is not a readable
/// capture or holds no UDP traffic the decoders read.
pub fn capture_lanes(path: &Path) -> Result<Vec<Recording>> {
    let mut importer = Importer::open(path, &ImportOptions::default())?;
    let payloads: SharedPayloads = Arc::default();
    importer.keep_payloads(payloads.clone());
    let mut events = Vec::new();
    loop {
        let batch = importer.next_batch(BATCH_EVENTS);
        if batch.is_empty() {
            break;
        }
        events.extend(batch);
    }
    let summary = importer.summary(path);
    if summary.clients.is_empty() {
        let skipped = summary.skipped.describe();
        bail!(
            "{}: no UDP traffic to compare ({} packets{})",
            path.display(),
            summary.skipped.packets,
            if skipped.is_empty() { String::new() } else { format!("; {skipped}") }
        );
    }
    let origin = Origin::Capture { path: path.display().to_string() };
    let mut rec = Recording::of(LaneInfo::new(origin, Protocol::named(importer.decoder_name(), None)), None);
    for f in importer.flows() {
        let name = format!("{} <-> {}", f.client_end, f.server);
        rec.info.name_client(ClientInfo { id: f.client, name, group: String::new() });
    }
    rec.ingest(events);
    rec.payloads = Some(payloads);
    Ok(vec![rec])
}
