//! A [`SessionStream`] written on a thread of its own: the thread taking a live run's events in
//! (the window's) hands each batch over a channel and never formats, writes or flushes a line.
//!
//! Written on the window's thread, a 64-client run's 60,000 events a second cost 0.25 ms a
//! frame on average, and the once-a-second flush (the trailer rewritten, the file handed to the
//! system) took 14-53 ms under I/O load: a frame over the 16 ms target each time
//! (`examples/live_clients.rs`, issue 23). Here the writer does all of it, in the order the
//! batches were handed over, so the file is the one [`SessionStream`] writes: complete and
//! checksummed after each flush, every event in it once [`StreamWriter::finish`] returns.
//!
//! The channel is unbounded: a writer held up by the disk never holds up the window, and its
//! backlog (the batches not yet written) waits in memory, none dropped. A failed write stops the
//! writer; the error is handed back by [`StreamWriter::failed`] at the next batch, and the run
//! goes on in memory alone, as it did when the window wrote the file itself.

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use ackscope_protocol::{Event, Step};
use anyhow::{anyhow, Result};
use crossbeam_channel::{bounded, unbounded, Receiver, RecvTimeoutError, Sender};

use super::stream::{SessionStream, FLUSH_EVERY};
use super::Session;
use crate::lane::ClientInfo;

/// Buffers kept for the next batches (a frame hands over one batch per lane, or a few).
const SPARE_BUFFERS: usize = 4;

/// What the writer is asked to do, in order.
enum Order {
    Append(Vec<Event>, Vec<Step>),
    Describe(Option<String>, Option<String>, Vec<ClientInfo>),
    SetDuration(u64),
    /// Flush, then say how it went (after every batch handed over before it).
    Flush(Sender<Result<(), String>>),
}

/// A session file written on its own thread while a run goes on (see the module's docs).
pub struct StreamWriter {
    path: PathBuf,
    /// Events handed over so far (the file holds them all once flushed).
    events: u64,
    orders: Option<Sender<Order>>,
    /// The error that stopped the writer, once.
    failed: Receiver<String>,
    /// Batches' buffers the writer is done with, to be filled again: freed on the writer's
    /// thread, a buffer the window's thread allocated would take the window's malloc arena lock
    /// (glibc), which the window's thread waits on.
    spare: Receiver<Vec<Event>>,
    thread: Option<JoinHandle<Result<u64>>>,
}

/// A flush asked of one or more writers: [`Self::wait`] returns once every file holds the events
/// handed over before it (a read-back's thread waits, not the window's).
#[derive(Default)]
pub struct Flushed(Vec<Receiver<Result<(), String>>>);

impl Flushed {
    /// Adds `other`'s flushes to these.
    pub fn join(&mut self, other: Flushed) {
        self.0.extend(other.0);
    }

    /// Waits for every flush; the first error.
    pub fn wait(self) -> Result<()> {
        for done in self.0 {
            done.recv().map_err(|_| anyhow!("the stream file's writer stopped"))?.map_err(|e| anyhow!(e))?;
        }
        Ok(())
    }
}

impl StreamWriter {
    /// [`SessionStream::create`] (on this thread: an error says at once that the file cannot be
    /// made), then written on a thread of its own.
    pub fn create(path: &Path, header: &Session) -> Result<Self> {
        Ok(Self::spawn(SessionStream::create(path, header)?))
    }

    /// [`SessionStream::create_described_later`], then written on a thread of its own.
    pub fn create_described_later(path: &Path, header: &Session) -> Result<Self> {
        Ok(Self::spawn(SessionStream::create_described_later(path, header)?))
    }

    fn spawn(stream: SessionStream) -> Self {
        let path = stream.path().to_path_buf();
        let (orders, taken) = unbounded();
        let (fail, failed) = bounded(1);
        let (give_back, spare) = bounded(SPARE_BUFFERS);
        let thread = std::thread::Builder::new()
            .name("ackscope-stream".into())
            .spawn(move || write(stream, taken, fail, give_back))
            .expect("spawn stream writer thread");
        Self { path, events: 0, orders: Some(orders), failed, spare, thread: Some(thread) }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Events handed over so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The error that stopped the writer, if it stopped (handed back once).
    pub fn failed(&self) -> Option<anyhow::Error> {
        self.failed.try_recv().ok().map(|e| anyhow!(e))
    }

    /// Hands a copy of `events` (in time order, after those handed over) and `actions` to the
    /// writer.
    pub fn append(&mut self, events: &[Event], actions: &[Step]) {
        self.events += events.len() as u64;
        let mut batch = self.spare.try_recv().unwrap_or_default();
        batch.extend_from_slice(events);
        self.send(Order::Append(batch, actions.to_vec()));
    }

    /// [`SessionStream::describe`], in order with the batches.
    pub fn describe(&mut self, protocol: Option<String>, wire: Option<String>, clients: Vec<ClientInfo>) {
        self.send(Order::Describe(protocol, wire, clients));
    }

    /// [`SessionStream::set_duration`], in order with the batches.
    pub fn set_duration(&mut self, duration_us: u64) {
        self.send(Order::SetDuration(duration_us));
    }

    /// Asks for a flush after what was handed over so far, without waiting for it.
    pub fn flush_later(&self) -> Flushed {
        let (done, wait) = bounded(1);
        self.send(Order::Flush(done));
        Flushed(vec![wait])
    }

    /// Flushes and waits: the file then holds every event handed over (a save copying it).
    pub fn flush(&mut self) -> Result<()> {
        self.flush_later().wait()
    }

    /// Finishes the file (a last flush, synced) and waits for the writer: its size.
    pub fn finish(mut self) -> Result<u64> {
        self.close()
    }

    fn send(&self, order: Order) {
        // A writer that stopped said why through `failed`; what comes after it goes nowhere.
        if let Some(orders) = &self.orders {
            let _ = orders.send(order);
        }
    }

    fn close(&mut self) -> Result<u64> {
        drop(self.orders.take());
        let thread = self.thread.take().ok_or_else(|| anyhow!("{}: already finished", self.path.display()))?;
        thread.join().map_err(|_| anyhow!("{}: the writer panicked", self.path.display()))?
    }
}

impl Drop for StreamWriter {
    /// A writer dropped unfinished (the window closed) still finishes its file.
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.close();
        }
    }
}

/// The writer's thread: every order in turn, a flush when [`FLUSH_EVERY`] passed with nothing
/// handed over, and the file finished when the channel closes.
fn write(
    mut stream: SessionStream,
    orders: Receiver<Order>,
    fail: Sender<String>,
    give_back: Sender<Vec<Event>>,
) -> Result<u64> {
    let failed = |e: anyhow::Error| {
        let _ = fail.send(format!("{e:#}"));
        e
    };
    loop {
        match orders.recv_timeout(FLUSH_EVERY) {
            Ok(Order::Append(mut events, actions)) => {
                stream.append(&events, &actions).map_err(failed)?;
                events.clear();
                let _ = give_back.try_send(events);
            }
            Ok(Order::Describe(protocol, wire, clients)) => stream.describe(protocol, wire, clients),
            Ok(Order::SetDuration(us)) => stream.set_duration(us),
            Ok(Order::Flush(done)) => {
                let result = stream.flush();
                let _ = done.send(result.as_ref().map_err(|e| format!("{e:#}")).copied());
                result.map_err(failed)?;
            }
            // A paused run: what came last is flushed once it is due.
            Err(RecvTimeoutError::Timeout) => stream.append(&[], &[]).map_err(failed)?,
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    stream.finish().map_err(failed)
}

#[cfg(test)]
mod tests {
    use ackscope_protocol::{Scenario, SimTime, Simulation};

    use super::*;
    use crate::session::load;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ackscope-stream-writer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn the_writer_thread_keeps_every_batch_in_order_and_finishes_the_file() {
        let s = Scenario { seed: 5, ..Scenario::default() };
        let path = temp("order.ron");
        let mut writer = StreamWriter::create(&path, &Session::scenario_only(s.clone())).unwrap();
        let mut sim = Simulation::new(s);
        let mut all = Vec::new();
        for tenth in 1..=40u64 {
            sim.run_until(SimTime(tenth * 100_000));
            let batch: Vec<Event> = sim.drain_events().collect();
            all.extend(batch.iter().cloned());
            writer.append(&batch, &[]);
            if tenth == 20 {
                // Waited for: the file then holds every event handed over.
                writer.flush().unwrap();
                let back = load(&path).unwrap();
                assert!(back.events == all, "{} of {} events after the flush", back.events.len(), all.len());
            }
        }
        assert_eq!(writer.events(), all.len() as u64);
        writer.set_duration(4_200_000);
        let bytes = writer.finish().unwrap();
        assert_eq!(bytes, std::fs::metadata(&path).unwrap().len());
        let back = load(&path).unwrap();
        assert!(back.events == all, "{} of {} events", back.events.len(), all.len());
        assert_eq!(back.duration_us, 4_200_000);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_writer_dropped_unfinished_still_leaves_a_complete_file() {
        let s = Scenario { seed: 8, ..Scenario::default() };
        let path = temp("dropped.ron");
        let mut writer = StreamWriter::create(&path, &Session::scenario_only(s.clone())).unwrap();
        let mut sim = Simulation::new(s);
        sim.run_until(SimTime(2_000_000));
        let batch: Vec<Event> = sim.drain_events().collect();
        writer.append(&batch, &[]);
        drop(writer);
        let back = load(&path).unwrap();
        assert!(back.events == batch, "{} of {} events", back.events.len(), batch.len());
        let _ = std::fs::remove_file(&path);
    }
}
