//! A session file written while the run goes on: every event appended as it arrives, and the file
//! a complete, checksummed session after each flush.
//!
//! A live run keeps only a window of its events in memory (see `app::live_log`); the whole log
//! goes here. The layout is the one [`super::save`] writes except that `actions` and `duration_us`
//! follow the events (RON fields may come in any order), so that everything that grows stays at
//! the end: each flush writes the new event lines over the previous trailer, then a new trailer
//! (actions, duration, checksum) after them. The checksum is FNV-1a, which runs forward, so the
//! hash of the header and events so far is kept and only the trailer is hashed again. A killed
//! app therefore leaves a file that opens like any saved session, up to the last flush (at most
//! [`FLUSH_EVERY`] of wall time old); one killed while writing a flush is read by [`recover`].

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ackscope_protocol::{Event, EventKind, SimTime, Step};
use anyhow::{anyhow, Context, Result};
use serde::Serialize;

use super::save::pretty;
use super::{Session, CHECKSUM_KEY, CHECKSUM_PLACEHOLDER};
use crate::lane::ClientInfo;

/// Longest wall time between two flushes while events arrive.
pub const FLUSH_EVERY: Duration = Duration::from_secs(1);

const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a 64 of `bytes` continued from `h`.
fn fnv_more(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// What follows the events: the lane's description when it was left for later
/// ([`SessionStream::create_described_later`]), then what grows.
#[derive(Serialize)]
struct Trailer<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wire: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    clients: &'a [ClientInfo],
    actions: &'a [Step],
    duration_us: u64,
    /// Set once, before the last flush ([`SessionStream::keep_payloads`]).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    payloads: &'a [super::payloads::SavedPayload],
    checksum: Option<&'a str>,
}

/// A session file being written as a run goes on.
pub struct SessionStream {
    path: PathBuf,
    file: BufWriter<File>,
    /// FNV-1a of everything before the trailer.
    hash: u64,
    /// File offset where the trailer starts (the end of the last event line).
    events_end: u64,
    prev_us: u64,
    events: u64,
    actions: Vec<Step>,
    duration_us: u64,
    /// Events written since the last flush.
    dirty: bool,
    last_flush: Instant,
    writer: super::ron_line::LineWriter,
    /// The lane's description, when written in the trailer (see [`Self::describe`]).
    late: Option<Described>,
    /// The datagrams' bytes, written with the trailer (see [`Self::keep_payloads`]).
    payloads: Vec<super::payloads::SavedPayload>,
}

/// What a lane's source learns as it goes: the protocol its decoder picks, the clients it names.
#[derive(Debug, Clone, Default, PartialEq)]
struct Described {
    protocol: Option<String>,
    wire: Option<String>,
    clients: Vec<ClientInfo>,
}

impl SessionStream {
    /// Creates `path` (replacing it) with `header`'s scenario and no events yet.
    pub fn create(path: &Path, header: &Session) -> Result<Self> {
        Self::create_with(path, header, false)
    }

    /// [`Self::create`] for a lane whose source learns its protocol and names its clients as it
    /// goes (a proxy, a capture, a stream): `header`'s `protocol`, `wire` and `clients` go after
    /// the events, with the trailer, so [`Self::describe`] can change them until the file is
    /// finished. Loading reads them wherever they stand; [`recover`] (a file killed mid-flush)
    /// loses them.
    pub fn create_described_later(path: &Path, header: &Session) -> Result<Self> {
        Self::create_with(path, header, true)
    }

    /// What the lane runs and its clients as known now (a stream made by
    /// [`Self::create_described_later`]; no effect on another), written at the next flush.
    pub fn describe(&mut self, protocol: Option<String>, wire: Option<String>, clients: Vec<ClientInfo>) {
        let Some(late) = self.late.as_mut() else { return };
        let now = Described { protocol, wire, clients };
        if *late != now {
            *late = now;
            self.dirty = true;
        }
    }

    fn create_with(path: &Path, header: &Session, late: bool) -> Result<Self> {
        let origin = path.display();
        // One lane per stream file: the A/B lane streams to a file of its own.
        let head = Session {
            actions: Vec::new(),
            duration_us: 0,
            events: Vec::new(),
            ab: None,
            ab_actions: Vec::new(),
            ab_events: Vec::new(),
            ..header.clone()
        };
        let (head, late) = if late {
            let described =
                Described { protocol: head.protocol.clone(), wire: head.wire.clone(), clients: head.clients.clone() };
            (Session { protocol: None, wire: None, clients: Vec::new(), ..head }, Some(described))
        } else {
            (head, None)
        };
        let text = super::to_text(&head)?;
        // `to_text` writes actions, duration and events after the scenario: keep what precedes.
        let cut = text.find("\nactions:").ok_or_else(|| anyhow!("unexpected session layout"))?;
        let head_text = format!("{}\nevents:[\n", &text[..cut]);
        let file = File::create(path).with_context(|| format!("{origin}: cannot create"))?;
        let mut s = Self {
            path: path.to_path_buf(),
            file: BufWriter::with_capacity(1 << 20, file),
            hash: fnv_more(FNV_START, head_text.as_bytes()),
            events_end: head_text.len() as u64,
            prev_us: 0,
            events: 0,
            actions: header.actions.clone(),
            duration_us: header.duration_us,
            dirty: false,
            last_flush: Instant::now(),
            writer: Default::default(),
            late,
            payloads: Vec::new(),
        };
        s.file.write_all(head_text.as_bytes()).with_context(|| format!("{origin}: write failed"))?;
        s.flush()?;
        Ok(s)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Events written so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Bytes of the file as of the last flush.
    pub fn bytes(&self) -> u64 {
        self.events_end
    }

    /// Appends `events` (in time order, after those written) and `actions`; flushes when the
    /// last flush is [`FLUSH_EVERY`] old.
    pub fn append(&mut self, events: &[Event], actions: &[Step]) -> Result<()> {
        let mut line = String::with_capacity(128);
        for e in events {
            line.clear();
            let dt = e.time.0 as i64 - self.prev_us as i64;
            if !super::event_line::write(&mut line, dt, e) {
                super::save::write_line(&mut self.writer, &mut line, &super::codec::Line::of(dt, e))?;
            }
            line.push_str(",\n");
            self.file.write_all(line.as_bytes()).with_context(|| format!("{}: write failed", self.path.display()))?;
            self.hash = fnv_more(self.hash, line.as_bytes());
            self.events_end += line.len() as u64;
            self.prev_us = e.time.0;
            self.duration_us = self.duration_us.max(e.time.0);
            self.events += 1;
            self.dirty = true;
        }
        self.actions.extend_from_slice(actions);
        self.dirty |= !actions.is_empty();
        if self.dirty && self.last_flush.elapsed() >= FLUSH_EVERY {
            self.flush()?;
        }
        Ok(())
    }

    /// Sets the duration the file covers (a run may end after its last event).
    pub fn set_duration(&mut self, duration_us: u64) {
        self.duration_us = self.duration_us.max(duration_us);
        self.dirty = true;
    }

    /// The exact bytes of the lane's datagrams (a proxy's), written with the trailer from the
    /// next flush on. Every flush rewrites the trailer, so a source sets them once, just before
    /// [`Self::finish`], not as it goes.
    pub fn keep_payloads(&mut self, payloads: Vec<super::payloads::SavedPayload>) {
        self.payloads = payloads;
        self.dirty = true;
    }

    /// Writes the trailer after the events and hands everything to the system: from here a
    /// killed process leaves a complete session. The next events overwrite the trailer.
    pub fn flush(&mut self) -> Result<()> {
        let origin = self.path.display().to_string();
        let late = self.late.as_ref();
        let trailer = Trailer {
            protocol: late.and_then(|d| d.protocol.as_deref()),
            wire: late.and_then(|d| d.wire.as_deref()),
            clients: late.map_or(&[], |d| &d.clients[..]),
            actions: &self.actions,
            duration_us: self.duration_us,
            payloads: &self.payloads,
            checksum: Some(CHECKSUM_PLACEHOLDER),
        };
        let text = ron::ser::to_string_pretty(&trailer, pretty()).context("serialising the trailer")?;
        // `(\nactions:...,\nchecksum:Some("0.."),\n)`: the fields go after `],` closing the events.
        let fields = text.strip_prefix("(\n").ok_or_else(|| anyhow!("unexpected trailer layout"))?;
        let mut tail = format!("],\n{fields}");
        let at = tail.rfind(CHECKSUM_KEY).ok_or_else(|| anyhow!("checksum missing"))? + CHECKSUM_KEY.len();
        let sum = format!("{:016x}", fnv_more(self.hash, tail.as_bytes()));
        tail.replace_range(at..at + 16, &sum);
        self.file.write_all(tail.as_bytes()).with_context(|| format!("{origin}: write failed"))?;
        self.file.flush().with_context(|| format!("{origin}: write failed"))?;
        let end = self.events_end + tail.len() as u64;
        self.file.get_ref().set_len(end).with_context(|| format!("{origin}: write failed"))?;
        self.file.seek(SeekFrom::Start(self.events_end)).with_context(|| format!("{origin}: seek failed"))?;
        self.dirty = false;
        self.last_flush = Instant::now();
        Ok(())
    }

    /// Flushes a last time and closes the file; its size.
    pub fn finish(mut self) -> Result<u64> {
        self.flush()?;
        self.file.get_ref().sync_all().with_context(|| format!("{}: sync failed", self.path.display()))?;
        std::fs::metadata(&self.path).map(|m| m.len()).with_context(|| format!("{}: cannot read", self.path.display()))
    }
}

/// Copies the session file `source` to `path` atomically (a temporary file beside it, synced,
/// renamed over it), without reading it into memory: the size.
pub fn copy_atomic(source: &Path, path: &Path) -> Result<u64> {
    replace_atomic(path, |tmp, origin| {
        let bytes =
            std::fs::copy(source, tmp).with_context(|| format!("{origin}: cannot copy {}", source.display()))?;
        File::open(tmp).and_then(|f| f.sync_all()).with_context(|| format!("{origin}: sync failed"))?;
        Ok(bytes)
    })
}

/// Replaces `path` by what `write` puts (and syncs) in a temporary file beside it, renamed over
/// it; the temporary file is removed when anything fails. `write` gets the temporary path and
/// the target's name for its messages, and returns the size written.
pub fn replace_atomic(path: &Path, write: impl FnOnce(&Path, &str) -> Result<u64>) -> Result<u64> {
    let origin = path.display().to_string();
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| anyhow!("{origin}: not a file name"))?.to_string_lossy();
    super::remove_stale_temps(dir);
    let tmp = dir.join(format!(".{name}{}{}", super::save::TEMP_MARK, std::process::id()));
    let result = write(&tmp, &origin).and_then(|bytes| {
        std::fs::rename(&tmp, path).with_context(|| format!("{origin}: cannot replace the file"))?;
        Ok(bytes)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Reads a stream file cut short while a flush was being written (no complete trailer): the
/// header and every complete event line, without verification; `None` when the file is not a
/// cut-short stream. The changes were in the lost trailer: each is still a `ParamChanged` event
/// in the log, but a re-run of the recovered session starts from the scenario alone.
pub fn recover(path: &Path) -> Result<Option<Session>> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).with_context(|| format!("{origin}: cannot read"))?;
    let Some(open) = text.find("\nevents:[\n") else { return Ok(None) };
    if text[open..].contains("\n],\n") {
        return Ok(None);
    }
    // Keep whole event lines only.
    let body = &text[..text.rfind("),\n").map_or(open + "\nevents:[\n".len(), |i| i + "),\n".len())];
    let closed = format!("{body}],\n)");
    let mut session = match super::fast_load::parse(&closed, &origin, None) {
        Some(s) => s?,
        None => {
            crate::params::strict::ron_options().from_str::<Session>(&closed).map_err(|e| anyhow!("{origin}: {e}"))?
        }
    };
    session.duration_us = session.events.last().map_or(0, |e| e.time.0);
    Ok(Some(session))
}

/// The events of the stream file `path` in `[from, until)`, read line by line without loading
/// the rest: what a live run shows when scrubbed before the window it keeps in memory.
///
/// Reading stops at the first event at or after `until` (events are in time order), at the end
/// of the events, or at a line cut short (a file being written or left by a killed app), so a
/// range near the start of an hour-long file costs little. Run it on a worker thread: it
/// parses every line before `until` (about 1.4 µs each).
pub fn read_range(path: &Path, from: SimTime, until: SimTime) -> Result<Vec<Event>> {
    let origin = path.display().to_string();
    let file = File::open(path).with_context(|| format!("{origin}: cannot read"))?;
    let mut lines = BufReader::with_capacity(1 << 20, file).lines();
    for line in lines.by_ref() {
        if line.with_context(|| format!("{origin}: cannot read"))? == "events:[" {
            break;
        }
    }
    let (mut out, mut prev_us) = (Vec::new(), 0u64);
    for line in lines {
        let line = line.with_context(|| format!("{origin}: cannot read"))?;
        let Some(item) = line.strip_suffix(',').filter(|l| l.ends_with(')')) else { break };
        let super::codec::Line(dt, kind, client) =
            ron::from_str::<super::codec::Line<EventKind>>(item).map_err(|e| anyhow!("{origin}: event line: {e}"))?;
        prev_us = prev_us.checked_add_signed(dt).ok_or_else(|| anyhow!("{origin}: event time out of range"))?;
        let time = SimTime(prev_us);
        if time >= until {
            break;
        }
        if time >= from {
            out.push(Event::for_client(time, client, kind));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use ackscope_protocol::{Action, ParamChange, Scenario, SimTime, Simulation};

    use super::*;
    use crate::runtime::action::apply_and_record;
    use crate::session::load;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ackscope-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn a_streamed_file_is_a_verified_session_after_every_flush() {
        let s = Scenario { seed: 3, ..Scenario::default() };
        let path = temp("flushes.ron");
        let mut stream = SessionStream::create(&path, &Session::scenario_only(s.clone())).unwrap();
        let mut sim = Simulation::new(s);
        let (mut all, mut changes) = (Vec::new(), Vec::new());
        for second in 1..=6u64 {
            let mut new_changes = Vec::new();
            if second == 3 {
                let set = Action::Set(ParamChange::parse("link.a_to_b.loss_percent", "30"));
                apply_and_record(&mut sim, &mut new_changes, set).unwrap();
            }
            sim.run_until(SimTime(second * 1_000_000));
            let batch: Vec<Event> = sim.drain_events().collect();
            stream.append(&batch, &new_changes).unwrap();
            all.extend(batch);
            changes.extend(new_changes);
            stream.flush().unwrap();
            let back = load(&path).unwrap();
            assert_eq!(back.events.len(), all.len(), "after second {second}");
            assert!(back.events == all, "after second {second}");
            assert_eq!(back.actions, changes);
            assert!(back.checksum.is_some());
        }
        stream.set_duration(6_500_000);
        let bytes = stream.finish().unwrap();
        let back = load(&path).unwrap();
        assert_eq!(back.duration_us, 6_500_000);
        assert_eq!(bytes, std::fs::metadata(&path).unwrap().len());
        assert!(back.events == all && changes.len() == 1);
        assert_eq!(recover(&path).unwrap(), None, "a complete file is not recovered");

        // Killed in the middle of writing a flush: the trailer and half a line are missing.
        let text = std::fs::read_to_string(&path).unwrap();
        let cut = text.find("\n],\n").unwrap() - 10;
        std::fs::write(&path, &text[..cut]).unwrap();
        let got = recover(&path).unwrap().unwrap();
        assert_eq!(got.events.len(), all.len() - 1);
        assert!(got.events[..] == all[..all.len() - 1]);
        let _ = std::fs::remove_file(&path);
    }
}
