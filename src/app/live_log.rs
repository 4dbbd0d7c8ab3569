//! Bounded live memory: a live run streams its whole event log to a session file and keeps only a
//! window of it in memory.
//!
//! At 1000 packets/s each way a run makes about 13,000 events a second, and a recording holds
//! each with its share of the ledger, indexes and series, so memory grew without bound
//! (1.3 MB/s). What a recording holds is counted from its structures' capacities
//! ([`Recording::heap_bytes`], exact against a counting allocator: 175 bytes per event for one
//! client at 60 packets/s, 222 from 16 clients on, where every event is kept in the lane's log
//! and in its client's), not reckoned at one figure per event for any lane. Every event now goes
//! first to the lane's stream file, written on a thread of its own ([`StreamWriter`]: a
//! complete, checksummed session after every flush, so a killed app leaves a readable file), then
//! into the lane's recording. When the recording spans more than [`LiveLimits::window_s`] of run
//! time, or holds more than [`TRIM_SHARE`] of [`LiveLimits::max_bytes`], the newest half of it is rebuilt
//! into a fresh recording on a worker thread (the same fold as opening a file), caught up with
//! the events that arrived meanwhile, and swapped in: the window shown then covers between half
//! and all of the limits, and old plus new stay under the byte limit while the rebuild runs.
//!
//! Scrubbing before the window reads the run around the cursor back from the stream file
//! ([`LiveLog::stream_of`], [`super::readback`]); the file also opens like any saved session once
//! the run stops, and is what a save of a trimmed run writes.

use std::path::{Path, PathBuf};

use ackscope_protocol::{Event, SimTime, Step};
use anyhow::Result;

use super::live_log_rebuild::{Rebuild, Stepped, Worker};
use super::live_log_spans::span;
use crate::model::limits::LiveLimits;
use crate::model::{Origin, Recording};
use crate::session::stream_writer::{Flushed, StreamWriter};

/// The part of a lane's share of [`LiveLimits::max_bytes`] at which it is trimmed.
///
/// Trimmed at half, with its bytes counted exactly, a 64-client window still peaked at 2375 MiB
/// of RSS against a 2 GiB cap: the rebuild of the newest half (a quarter of the cap) is held
/// beside the lane until it is swapped in, and the allocator keeps what was freed in the
/// per-thread arenas the rebuild and free threads used. At a third, lane and rebuild together
/// take half the cap and the allocator's slack the rest.
pub const TRIM_SHARE: f64 = 1.0 / 3.0;

/// Stream files kept in the directory: older ones are removed when a run starts.
pub const KEEP_FILES: usize = 20;

#[derive(Default)]
struct LaneLog {
    stream: Option<StreamWriter>,
    rebuild: Option<Rebuild>,
    trims: usize,
    /// The lane's recording now (its id after the latest ingest).
    lane_id: u64,
    /// The instant before which the lane's events were dropped from memory (zero: none were).
    window_start: SimTime,
    /// The lane's recording since its latest trim (saving it must copy the stream file).
    trimmed_id: Option<u64>,
    /// The worker that built the lane's recording, kept idle until the next one is swapped in.
    worker: Option<Worker>,
    /// What the stream file says the lane runs and how many clients it names, for a lane whose
    /// source learns them as it goes (none for a lane of this process's endpoints).
    described: Option<(String, usize)>,
}

/// The stream files and the memory window of a live run's lanes.
pub struct LiveLog {
    pub limits: LiveLimits,
    dir: PathBuf,
    lanes: Vec<LaneLog>,
    /// Stream files of runs finished in this window, newest last.
    finished: Vec<PathBuf>,
    /// Recordings of finished runs that were trimmed, with the stream file holding all of them
    /// and its event count.
    trimmed: Vec<(u64, PathBuf, u64)>,
    /// Recordings of finished runs with their stream file, and the instant before which their
    /// events were dropped from memory (zero: none were).
    streamed: Vec<(u64, PathBuf, SimTime)>,
}

impl LiveLog {
    /// Stream files go to `dir` (created when the first run starts).
    pub fn new(dir: PathBuf) -> Self {
        Self {
            limits: LiveLimits::default(),
            dir,
            lanes: Vec::new(),
            finished: Vec::new(),
            trimmed: Vec::new(),
            streamed: Vec::new(),
        }
    }

    /// Where the window's live runs are streamed: `$ACKSCOPE_LIVE_DIR`, or `ackscope-live` in the
    /// temporary directory.
    pub fn default_dir() -> PathBuf {
        std::env::var_os("ACKSCOPE_LIVE_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| std::env::temp_dir().join("ackscope-live"))
    }

    /// Opens a stream file for each of `lanes` (a new run). The run goes on in memory alone
    /// when a file cannot be created; the error says why.
    pub fn start(&mut self, lanes: &[Recording]) -> Result<()> {
        self.finish();
        self.lanes = lanes.iter().map(|_| LaneLog::default()).collect();
        std::fs::create_dir_all(&self.dir)?;
        prune(&self.dir, KEEP_FILES);
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        for (i, lane) in lanes.iter().enumerate() {
            let label: String =
                lane.info.first().name.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            let name = format!("live-{stamp}-{}-{i}-{label}.ron", std::process::id());
            let path = self.dir.join(name);
            // A proxy's decoder picks the protocol, and a source names its clients, after the
            // file is made: those lanes' descriptions stand after the events, kept up to date.
            let stream = if matches!(lane.info.origin, Origin::Simulated | Origin::UdpLoopback) {
                StreamWriter::create(&path, &lane.header())?
            } else {
                self.lanes[i].described = Some(described(lane));
                StreamWriter::create_described_later(&path, &lane.header())?
            };
            self.lanes[i].stream = Some(stream);
        }
        Ok(())
    }

    /// Moves a batch of lane `i`'s events into its stream file and its recording, then keeps the
    /// recording within the limits. The events reach the recording even when the file fails.
    ///
    /// The file is written on its writer's thread ([`StreamWriter`]): a write that failed is
    /// returned by the next ingest of the lane, and the run goes on in memory alone.
    pub fn ingest(&mut self, i: usize, lane: &mut Recording, events: Vec<Event>, actions: Vec<Step>) -> Result<()> {
        let mut result = Ok(());
        if let Some(log) = self.lanes.get_mut(i) {
            if let Some(e) = log.stream.as_ref().and_then(StreamWriter::failed) {
                result = Err(e);
                log.stream = None;
            }
            if let Some(stream) = &mut log.stream {
                let now = log.described.as_ref().map(|_| described(lane));
                if now.is_some() && now != log.described {
                    let first = lane.info.first();
                    let clients = lane.info.named_clients().cloned().collect();
                    stream.describe(Some(first.name.clone()), Some(first.wire.name().to_string()), clients);
                    log.described = now;
                }
                span("intake.stream", || stream.append(&events, &actions));
            }
        }
        lane.actions.extend(actions);
        let added = events.len();
        span("intake.fold", || lane.ingest(events));
        let lanes = self.lanes.len().max(1) as u64;
        let limits = self.limits;
        if let Some(log) = self.lanes.get_mut(i) {
            span("intake.rebuild", || log.swap_in_rebuild(lane, added));
            log.lane_id = lane.id();
            if log.rebuild.is_none() {
                if let Some(from) = span("intake.cut", || cut_for(lane, limits, lanes)) {
                    log.rebuild = Some(Rebuild::spawn(lane, from));
                }
            }
        }
        result
    }

    /// Waits for rebuilds under way and swaps them in (tests and examples, to see the result).
    pub fn settle(&mut self, lanes: &mut [Recording]) {
        for (log, lane) in self.lanes.iter_mut().zip(lanes) {
            if let Some((fresh, worker)) = log.rebuild.take().and_then(|r| r.finish(lane)) {
                log.swap_in(lane, fresh, worker);
            }
            log.lane_id = lane.id();
        }
    }

    /// Times in each lane before which events were dropped from memory (zero: none were).
    pub fn window_starts(&self, lanes: &[Recording]) -> Vec<SimTime> {
        self.lanes
            .iter()
            .zip(lanes)
            .map(
                |(log, lane)| {
                    if log.trims == 0 {
                        SimTime::ZERO
                    } else {
                        lane.events().first().map_or(SimTime::ZERO, |e| e.time)
                    }
                },
            )
            .collect()
    }

    /// The stream file of `rec`, a lane of the live run or of a finished one, and the instant
    /// before which its events are only in that file (zero: none were dropped). The file holds
    /// the events up to its last flush ([`Self::files`] flushes).
    pub fn stream_of(&self, rec: &Recording) -> Option<(PathBuf, SimTime)> {
        if let Some(l) = self.lanes.iter().find(|l| l.lane_id == rec.id()) {
            return Some((l.stream.as_ref()?.path().to_path_buf(), l.window_start));
        }
        self.streamed.iter().find(|(id, ..)| *id == rec.id()).map(|(_, p, t)| (p.clone(), *t))
    }

    /// True when a lane of the live run dropped events from memory.
    pub fn trimmed(&self) -> bool {
        self.lanes.iter().any(|l| l.trims > 0)
    }

    /// The stream file (flushed) holding every event of `rec` when `rec` is a live lane, or the
    /// lane of a finished run, that dropped events from memory, and how many events it holds:
    /// a save copies it (and names that count, not the window's).
    pub fn full_log(&mut self, rec: &Recording) -> Option<(PathBuf, u64)> {
        for l in &mut self.lanes {
            if l.trimmed_id == Some(rec.id()) {
                let stream = l.stream.as_mut()?;
                stream.flush().ok()?;
                return Some((stream.path().to_path_buf(), stream.events()));
            }
        }
        self.trimmed.iter().find(|(id, ..)| *id == rec.id()).map(|(_, p, n)| (p.clone(), *n))
    }

    /// Asks every lane's writer to flush what it was handed, without waiting: a read-back's
    /// thread waits for it ([`Flushed::wait`]) before reading the files.
    pub fn flush_later(&self) -> Flushed {
        let mut all = Flushed::default();
        for s in self.lanes.iter().filter_map(|l| l.stream.as_ref()) {
            all.join(s.flush_later());
        }
        all
    }

    /// The stream files of the run (one per lane), flushed (waiting for their writers).
    pub fn files(&mut self) -> Vec<PathBuf> {
        self.lanes
            .iter_mut()
            .filter_map(|l| l.stream.as_mut())
            .map(|s| {
                let _ = s.flush();
                s.path().to_path_buf()
            })
            .collect()
    }

    /// Stream files of the runs that ended, newest last.
    pub fn finished_files(&self) -> &[PathBuf] {
        &self.finished
    }

    /// Closes the run's stream files (each a complete session), ending with `duration_us`.
    pub fn finish_at(&mut self, duration_us: u64) {
        for l in &mut self.lanes {
            if let Some(s) = &mut l.stream {
                s.set_duration(duration_us);
            }
        }
        self.finish();
    }

    /// Closes the run's stream files.
    pub fn finish(&mut self) {
        for l in self.lanes.drain(..) {
            if let Some(s) = l.stream {
                let (path, events) = (s.path().to_path_buf(), s.events());
                if s.finish().is_ok() {
                    if let Some(id) = l.trimmed_id {
                        self.trimmed.push((id, path.clone(), events));
                    }
                    self.streamed.push((l.lane_id, path.clone(), l.window_start));
                    self.finished.push(path);
                }
            }
        }
    }
}

impl LaneLog {
    /// Moves the lane's rebuild, if any, on by one ingest's share ([`Rebuild::step`]; `added`:
    /// the events this ingest brought), and replaces `lane` with it once it has every event.
    fn swap_in_rebuild(&mut self, lane: &mut Recording, added: usize) {
        let Some(r) = &mut self.rebuild else { return };
        match r.step(lane, added) {
            Stepped::Going => {}
            Stepped::Abandoned => self.rebuild = None,
            Stepped::Done(fresh, worker) => {
                self.rebuild = None;
                self.swap_in(lane, *fresh, worker);
            }
        }
    }

    /// Replaces `lane` with `fresh`, its newest events rebuilt and caught up with every one; the
    /// rebuild's worker frees the old one ([`Worker::dispose`]) and is kept until the next.
    fn swap_in(&mut self, lane: &mut Recording, mut fresh: Recording, worker: Worker) {
        fresh.actions = std::mem::take(&mut lane.actions);
        // The anomaly index stays the whole run's (a few dozen bytes per drop, nak or stall), so
        // the Anomalies tab and the strip under the scrubber keep what was trimmed, and a jump to
        // one before the window reads that stretch back. The lane's index has seen every event,
        // those the rebuild caught up with included. So do the lane's description and clients.
        fresh.keep_history_of(lane);
        self.trimmed_id = Some(fresh.id());
        // Freeing millions of events and their indexes took 300-500 ms: the worker does it.
        worker.dispose(std::mem::replace(lane, fresh));
        // The previous worker, kept idle until now, ends.
        self.worker = Some(worker);
        self.window_start = lane.events().first().map_or(SimTime::ZERO, |e| e.time);
        self.trims += 1;
    }
}

/// What a lane's stream file says of it: its protocol and how many clients it names.
fn described(lane: &Recording) -> (String, usize) {
    (lane.info.first().name.clone(), lane.info.named_clients().count())
}

/// Where to cut `lane` when it is over `limits` (one of `lanes` sharing the bytes): the first
/// event to keep, halfway through the window by time or by count, whichever keeps fewer.
fn cut_for(lane: &Recording, limits: LiveLimits, lanes: u64) -> Option<usize> {
    let events = lane.events();
    let (first, last) = (events.first()?.time, events.last()?.time);
    let span_s = last.saturating_since(first).as_secs_f64();
    let bytes = lane.heap_bytes() as u64;
    let over_bytes = bytes as f64 > limits.max_bytes as f64 / lanes as f64 * TRIM_SHARE;
    if span_s <= limits.window_s && !over_bytes {
        return None;
    }
    let mut from = 0;
    if span_s > limits.window_s {
        let keep_from = last.0.saturating_sub((limits.window_s * 0.5e6) as u64);
        from = events.partition_point(|e| e.time.0 < keep_from);
    }
    if over_bytes {
        from = from.max(events.len() / 2);
    }
    // Cut between instants, so no instant is split between the file alone and memory.
    let at = events.get(from)?.time;
    Some(events.partition_point(|e| e.time < at)).filter(|&f| f > 0)
}

/// Removes all but the newest `keep` stream files (`live-STAMP-...`) in `dir`; errors are ignored.
fn prune(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut files: Vec<(u64, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stamp = name.strip_prefix("live-")?.split('-').next()?.parse().ok()?;
            name.ends_with(".ron").then(|| (stamp, e.path()))
        })
        .collect();
    files.sort();
    let excess = files.len().saturating_sub(keep);
    for (_, path) in files.into_iter().take(excess) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use ackscope_protocol::{Scenario, Simulation};

    use super::*;
    use crate::session::load;

    /// Runs `s` for `secs`, feeding one-second batches through `log` into one lane as a live run
    /// would, waiting for each rebuild; the lane, every event and the largest event count held.
    fn drive(log: &mut LiveLog, s: Scenario, secs: u64) -> (Recording, Vec<Event>, usize) {
        let mut lanes = vec![Recording::new(s.clone())];
        log.start(&lanes).unwrap();
        let mut sim = Simulation::new(s);
        let (mut all, mut most) = (Vec::new(), 0);
        for second in 1..=secs {
            sim.run_until(SimTime(second * 1_000_000));
            let batch: Vec<Event> = sim.drain_events().collect();
            all.extend(batch.iter().cloned());
            log.ingest(0, &mut lanes[0], batch, Vec::new()).unwrap();
            most = most.max(lanes[0].len());
            log.settle(&mut lanes);
        }
        (lanes.pop().unwrap(), all, most)
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ackscope-live-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_live_lane_keeps_at_most_the_window_and_the_file_keeps_everything() {
        let dir = temp_dir("window");
        let mut log = LiveLog::new(dir.clone());
        log.limits.window_s = 10.0;
        let (lane, all, _) = drive(&mut log, Scenario { seed: 9, ..Scenario::default() }, 60);
        let events = lane.store.events();
        let span = events.last().unwrap().time.saturating_since(events[0].time).as_secs_f64();
        assert!(span <= 11.0, "{span} s in memory");
        assert!(span >= 5.0, "{span} s in memory: the newest half stays");
        assert!(log.trimmed());
        assert!(log.window_starts(std::slice::from_ref(&lane))[0] >= SimTime(49_000_000));
        // The recording in memory is exactly the end of the log.
        assert!(events == &all[all.len() - events.len()..]);
        let files = log.files();
        log.finish();
        let back = load(&files[0]).unwrap();
        assert!(back.events == all, "the stream file holds every event");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn events_before_the_window_are_read_back_from_the_stream_file() {
        let dir = temp_dir("read-back");
        let mut log = LiveLog::new(dir.clone());
        log.limits.window_s = 4.0;
        let (lane, all, _) = drive(&mut log, Scenario { seed: 6, ..Scenario::default() }, 30);
        let start = log.window_starts(std::slice::from_ref(&lane))[0];
        assert!(start >= SimTime(25_000_000), "the window starts at {start:?}");
        let files = log.files();
        // Scrubbed to 10 s, long before the window: a few seconds around the cursor.
        let (from, until) = (SimTime(8_000_000), SimTime(12_000_000));
        let back = crate::session::stream::read_range(&files[0], from, until).unwrap();
        let want: Vec<Event> = all.iter().filter(|e| e.time >= from && e.time < until).cloned().collect();
        assert!(want.len() > 1000, "{} events", want.len());
        assert!(back == want, "{} events read back, {} in the run then", back.len(), want.len());
        // The window's own events come back too, up to the last flush.
        let tail = crate::session::stream::read_range(&files[0], start, SimTime(u64::MAX)).unwrap();
        assert!(tail[..] == events_from(&all, start), "{} events", tail.len());
        log.finish();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_anomaly_index_keeps_the_whole_run_when_the_window_is_trimmed() {
        let dir = temp_dir("anomalies");
        let mut log = LiveLog::new(dir.clone());
        log.limits.window_s = 4.0;
        let mut s = Scenario { seed: 12, ..Scenario::default() };
        s.link.a_to_b.loss_percent = 10.0;
        let (lane, all, _) = drive(&mut log, s.clone(), 30);
        let start = log.window_starts(std::slice::from_ref(&lane))[0];
        assert!(start >= SimTime(25_000_000), "the window starts at {start:?}");
        let mut whole = Recording::new(s);
        whole.ingest(all);
        let before = |list: &[crate::model::anomaly::Anomaly]| -> Vec<crate::model::anomaly::Anomaly> {
            list.iter().filter(|a| a.time < start).copied().collect()
        };
        let (kept, want) = (before(lane.anomalies.list()), before(whole.anomalies.list()));
        assert!(want.len() > 100, "{} anomalies before the window", want.len());
        assert!(kept == want, "{} anomalies before the window kept, {} in the run", kept.len(), want.len());
        assert!(lane.anomalies.len() >= whole.anomalies.len() - 5, "and those after it");
        log.finish();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_trim_is_swapped_in_ingest_by_ingest_without_waiting_and_keeps_every_event() {
        let dir = temp_dir("frames");
        let mut log = LiveLog::new(dir.clone());
        log.limits.window_s = 8.0;
        let mut s = Scenario { seed: 3, ..Scenario::default() };
        crate::params::overrides::apply_all(&mut s, &["clients=4".to_string()]).unwrap();
        let mut lanes = vec![Recording::new(s.clone())];
        log.start(&lanes).unwrap();
        let mut sim = Simulation::new(s.clone());
        let mut all = Vec::new();
        // A tenth of a second per ingest, as frames take a live run in, never waiting for the
        // worker: it is fed the lane's new events until level, then caught up here.
        for tenth in 1..=300 {
            sim.run_until(SimTime(tenth * 100_000));
            let batch: Vec<Event> = sim.drain_events().collect();
            all.extend(batch.iter().cloned());
            log.ingest(0, &mut lanes[0], batch, Vec::new()).unwrap();
        }
        // Ingests with nothing new until a rebuild still under way is swapped in.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while log.lanes[0].rebuild.is_some() && std::time::Instant::now() < deadline {
            log.ingest(0, &mut lanes[0], Vec::new(), Vec::new()).unwrap();
            std::thread::yield_now();
        }
        assert!(log.lanes[0].rebuild.is_none(), "the rebuild was never swapped in");
        assert!(log.lanes[0].trims >= 2, "{} trims", log.lanes[0].trims);
        let lane = &lanes[0];
        let events = lane.events();
        let span = events.last().unwrap().time.saturating_since(events[0].time).as_secs_f64();
        assert!((3.0..=9.0).contains(&span), "{span} s in memory");
        assert!(events == &all[all.len() - events.len()..], "the window is exactly the end of the run");
        // Every client's indexes are those of a recording of the window's events alone.
        let mut whole = Recording::new(s);
        whole.ingest(events.to_vec());
        assert_eq!(lane.clients().len(), 4);
        for (c, w) in lane.clients().iter().zip(whole.clients()) {
            assert_eq!(
                (c.packets.len(), c.messages.len(), c.store.len()),
                (w.packets.len(), w.messages.len(), w.store.len())
            );
        }
        log.finish();
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn events_from(all: &[Event], t: SimTime) -> Vec<Event> {
        all.iter().filter(|e| e.time >= t).cloned().collect()
    }

    #[test]
    fn the_byte_limit_holds_with_many_clients() {
        let dir = temp_dir("bytes");
        let mut log = LiveLog::new(dir.clone());
        let cap: u64 = 96 << 20;
        log.limits.max_bytes = cap;
        let mut s = Scenario { seed: 4, send_rate_pps: 60.0, ..Scenario::default() };
        crate::params::overrides::apply_all(&mut s, &["clients=16".to_string()]).unwrap();
        let mut lanes = vec![Recording::new(s.clone())];
        log.start(&lanes).unwrap();
        let mut sim = Simulation::new(s);
        let (mut events, mut most_bytes, mut most_events) = (0, 0, 0);
        for second in 1..=60 {
            sim.run_until(SimTime(second * 1_000_000));
            let batch: Vec<Event> = sim.drain_events().collect();
            events += batch.len();
            log.ingest(0, &mut lanes[0], batch, Vec::new()).unwrap();
            most_bytes = most_bytes.max(lanes[0].heap_bytes() as u64);
            most_events = most_events.max(lanes[0].len());
            log.settle(&mut lanes);
        }
        let lane = &lanes[0];
        assert!(log.trimmed(), "{events} events, {} bytes", lane.heap_bytes());
        assert_eq!(lane.clients().len(), 16);
        // Each client's events are kept beside the lane's log, with 16 sets of indexes.
        let per_event = lane.heap_bytes() as f64 / lane.len() as f64;
        assert!(per_event > 150.0, "{per_event:.0} bytes per event");
        // Trimmed at a third of the cap: with the rebuild's half beside it, half the cap. (The
        // cap is well above the 16 MiB every client's ledger takes before its first event: a
        // table of the latest send of each 16-bit sequence, per direction.)
        assert!(most_bytes <= cap / 2, "{most_bytes} bytes held at most ({most_events} events), cap {cap}");
        assert!(lane.heap_bytes() as u64 >= cap / 16, "{} bytes kept", lane.heap_bytes());
        log.finish();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
