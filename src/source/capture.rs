//! A packet capture as a source: the capture read through the passive decoders
//! ([`crate::capture::import`]) on its own thread and handed to the window in batches as the file
//! is read, like any live run, so the first events show while the rest of the file is still read.
//!
//! Nothing holds the whole file, nor all its events: the importer keeps only its matching window
//! ([`crate::capture::import::MATCH_WINDOW_NS`] of capture time), the channel to the window a few
//! batches (the reader waits while it is full), and the window's live log streams the events to
//! disk and keeps a bounded window of them in memory (`app::live_log`), as it does for a run.
//! `examples/capture_open.rs` measures a 1 GB capture opened this way.
//!
//! One lane, of origin *capture*, whose protocol is the format the decoder picked (probed from
//! the first datagrams by [`lanes_of`] before the source starts); each UDP flow is a client, named
//! by its ends as the reader finds it. Pause holds the reading; no other command applies.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ackscope_protocol::Action;
use anyhow::Result;

use super::reader::{reader_methods, ReaderHandle, ReaderSide, POLL};
use super::{EventSource, Spec};
use crate::capture::import::{ImportOptions, Importer};
use crate::lane::{ClientInfo, LaneInfo, Origin, Protocol};
use crate::model::payloads::SharedPayloads;
use crate::model::Recording;
use crate::runtime::{Batch, Lanes};

/// Events the importer hands over per batch (at least; it completes the packet it is at).
const BATCH_EVENTS: usize = 4096;
/// Batches in flight to the window before the reader waits.
const CHANNEL_BATCHES: usize = 64;

/// The lane a capture `spec` fills: origin *capture*, the protocol the decoder picks from the
/// first datagrams (read here, a few hundred at most; `unknown` when the file cannot be read,
/// which the source then reports).
pub fn lanes_of(spec: &Spec) -> Vec<Recording> {
    let Spec::Capture { path, options } = spec else { return Vec::new() };
    let decoder = match Importer::open(path, options) {
        Ok(mut importer) => {
            importer.next_batch(1);
            importer.decoder_name()
        }
        Err(_) => "unknown",
    };
    let origin = Origin::Capture { path: path.display().to_string() };
    vec![Recording::of(LaneInfo::new(origin, Protocol::named(decoder, None)), None)]
}

/// A capture being read on its own thread.
pub struct CaptureSource {
    /// The reader; it names each flow as a client of lane 0.
    reader: ReaderHandle,
    paused: Arc<AtomicBool>,
    /// Every datagram's payload as the capture holds it, for the bytes pane.
    payloads: SharedPayloads,
}

impl CaptureSource {
    /// Opens `path` (an error naming it when it is not a capture) and starts reading it; `wake`
    /// is called whenever batches are ready.
    pub fn spawn(path: PathBuf, options: ImportOptions, wake: impl Fn() + Send + Sync + 'static) -> Result<Self> {
        let mut importer = Importer::open(&path, &options)?;
        let payloads: SharedPayloads = Arc::default();
        importer.keep_payloads(payloads.clone());
        let paused = Arc::new(AtomicBool::new(false));
        let paused2 = paused.clone();
        let reader = ReaderHandle::spawn("ackscope-capture", "the capture reader", CHANNEL_BATCHES, move |side| {
            read_thread(importer, &path, &side, &paused2, &wake)
        })?;
        Ok(Self { reader, paused, payloads })
    }
}

fn read_thread(mut importer: Importer, path: &Path, side: &ReaderSide, paused: &AtomicBool, wake: &dyn Fn()) {
    let mut flows_named = 0;
    loop {
        while paused.load(Ordering::Relaxed) && !side.stopped() {
            std::thread::sleep(POLL);
        }
        if side.stopped() {
            return;
        }
        let events = importer.next_batch(BATCH_EVENTS);
        // Clients are named before their first events reach the window.
        let flows = importer.flows();
        if flows.len() > flows_named {
            for f in &flows[flows_named..] {
                let name = format!("{} <-> {}", f.client_end, f.server);
                side.name(0, ClientInfo { id: f.client, name, group: String::new() });
            }
            flows_named = flows.len();
        }
        if events.is_empty() {
            break;
        }
        if !side.deliver(Batch { lane: 0, events, ..Batch::default() }, wake) {
            return;
        }
    }
    let summary = importer.summary(path);
    let error = if summary.clients.is_empty() {
        let skipped = summary.skipped.describe();
        Some(format!(
            "{}: no UDP traffic to show ({} packets{})",
            path.display(),
            summary.skipped.packets,
            if skipped.is_empty() { String::new() } else { format!("; {skipped}") }
        ))
    } else {
        // Packets of other kinds are normal in a capture; only damage is worth an error.
        summary.skipped.damaged.as_ref().map(|d| format!("{}: {d} (the packets before it are shown)", path.display()))
    };
    if error.is_some() {
        side.deliver(Batch { error, ..Batch::default() }, wake);
    }
}

impl EventSource for CaptureSource {
    /// Pause holds the reading and Resume goes on; a capture cannot be acted on otherwise.
    fn send(&self, _: Lanes, action: Action) -> bool {
        match action {
            Action::Pause => self.paused.store(true, Ordering::Relaxed),
            Action::Resume => self.paused.store(false, Ordering::Relaxed),
            _ => return false,
        }
        true
    }
    reader_methods!();
    fn payloads(&self, lane: usize) -> Option<SharedPayloads> {
        (lane == 0).then(|| self.payloads.clone())
    }
}
