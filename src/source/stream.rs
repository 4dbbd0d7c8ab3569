//! A game's JSON-lines event stream as a source: a thread reads the file line by line
//! ([`crate::session::jsonl::StreamReader`]) and hands the events over in batches, and with
//! `follow` keeps reading what the game appends, as `tail -f` does, until stopped.
//!
//! The stream's own times are the recording's: nothing is paced or re-timed. A line the reader
//! refuses ends the stream with its message (the events before it stay shown); kinds and fields
//! this build does not know are counted and reported once the stream ends. The stream cannot be
//! acted on: parameter changes, bursts and restarts are refused ([`EventSource::send`] is false).

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ackscope_protocol::{Action, Event};
use anyhow::{Context, Result};

use super::reader::{reader_methods, ReaderHandle, ReaderSide, POLL};
use super::{EventSource, Spec};
use crate::lane::{LaneInfo, Origin};
use crate::model::Recording;
use crate::runtime::{Batch, Lanes};
use crate::session::jsonl::{Item, StreamReader};

/// Events per batch at most (a batch also goes when the file has no more lines for now).
const BATCH_EVENTS: usize = 4096;
/// Batches in flight to the window before the reader waits.
const CHANNEL_BATCHES: usize = 64;

/// A stream file being read on its own thread (which names the clients the stream names, and
/// looks for new lines at the end of the file every [`POLL`] when following).
pub struct StreamSource {
    reader: ReaderHandle,
}

/// The lanes a stream `spec` describes, from its header line (a lane of unknown protocol when
/// the file has no header yet: a follower may start before the game writes).
pub fn lanes_of(spec: &Spec) -> Vec<Recording> {
    let Spec::EventStream { path, .. } = spec else { return Vec::new() };
    let header = first_line(path).and_then(|line| {
        let mut r = StreamReader::new(path.display().to_string());
        match r.read_line(&line) {
            Ok(Item::Header(h)) => Some(h),
            _ => None,
        }
    });
    let source = path.display().to_string();
    match header {
        Some(h) => h
            .lanes()
            .iter()
            .map(|lane| {
                let origin = Origin::EventStream { source: source.clone(), producer: h.producer.clone() };
                let mut info = LaneInfo::new(origin, lane.protocol());
                for c in &h.clients {
                    info.name_client(c.clone());
                }
                Recording::of(info, None)
            })
            .collect(),
        None => vec![Recording::of(LaneInfo::new(spec.origin(), crate::model::Protocol::named("unknown", None)), None)],
    }
}

/// The first line of `path`, if it can be read.
fn first_line(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    std::io::BufReader::new(file).read_line(&mut line).ok()?;
    Some(line)
}

impl StreamSource {
    /// Opens `path` and starts reading it; `wake` is called whenever batches are ready.
    pub fn spawn(path: PathBuf, follow: bool, wake: impl Fn() + Send + Sync + 'static) -> Result<Self> {
        let file = std::fs::File::open(&path).with_context(|| format!("{}: cannot read", path.display()))?;
        let reader = ReaderHandle::spawn("ackscope-stream", "the stream reader", CHANNEL_BATCHES, move |side| {
            let input = std::io::BufReader::with_capacity(1 << 20, file);
            read_thread(input, &path.display().to_string(), follow, &side, &wake);
        })?;
        Ok(Self { reader })
    }
}

fn read_thread(mut input: impl BufRead, origin: &str, follow: bool, side: &ReaderSide, wake: &dyn Fn()) {
    let mut reader = StreamReader::new(origin);
    let mut pending: Vec<Vec<Event>> = vec![Vec::new()];
    let mut line = String::new();
    let mut last_sent = Instant::now();
    let flush = |pending: &mut Vec<Vec<Event>>| -> bool {
        for (lane, events) in pending.iter_mut().enumerate() {
            if !events.is_empty() {
                let batch = Batch { lane, events: std::mem::take(events), ..Batch::default() };
                if !side.deliver(batch, wake) {
                    return false;
                }
            }
        }
        true
    };
    while !side.stopped() {
        // `read_line` appends: a line the writer has not finished stays in `line` until the
        // rest of it arrives.
        let n = match input.read_line(&mut line) {
            Ok(n) => n,
            Err(e) => {
                let error = Some(format!("{origin}: cannot read: {e}"));
                let _ = flush(&mut pending) && side.deliver(Batch { error, ..Batch::default() }, wake);
                return;
            }
        };
        if n == 0 || (follow && !line.ends_with('\n')) {
            if !flush(&mut pending) {
                return;
            }
            last_sent = Instant::now();
            if !follow {
                break;
            }
            std::thread::sleep(POLL);
            continue;
        }
        match reader.read_line(line.trim_end_matches(['\n', '\r'])) {
            Ok(Item::Header(h)) => pending = vec![Vec::new(); h.lanes().len()],
            Ok(Item::Event { lane, event }) => pending[lane].push(event),
            Ok(Item::Client { lane, info }) => side.name(lane, info),
            Ok(Item::Nothing) => {}
            Err(e) => {
                let error = Some(format!("{e:#} (the events before it are shown)"));
                let _ = flush(&mut pending) && side.deliver(Batch { error, ..Batch::default() }, wake);
                return;
            }
        }
        line.clear();
        let full = pending.iter().any(|p| p.len() >= BATCH_EVENTS);
        if (full || last_sent.elapsed() >= POLL) && pending.iter().any(|p| !p.is_empty()) {
            if !flush(&mut pending) {
                return;
            }
            last_sent = Instant::now();
        }
    }
    if reader.header().is_none() {
        let error = Some(format!("{origin}: empty (no header line)"));
        side.deliver(Batch { error, ..Batch::default() }, wake);
    } else if !reader.skipped.is_empty() {
        let error = Some(format!("{origin}: {}", reader.skipped.describe()));
        side.deliver(Batch { error, ..Batch::default() }, wake);
    }
}

impl EventSource for StreamSource {
    /// A stream is only read: no action applies to it.
    fn send(&self, _: Lanes, _: Action) -> bool {
        false
    }
    reader_methods!();
}
