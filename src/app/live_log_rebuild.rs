//! A live lane's newest events rebuilt into a fresh recording on a worker thread, for the memory
//! window of [`super::live_log`]: the worker is handed the lane's events from the cut on, a few
//! ms of copying per ingest, and then the lane's new events as they come until it is level with the lane; the
//! window's thread folds only the last frame or two of events into it, within a budget, and the
//! lane is replaced with it.
//!
//! Everything heavy runs on the worker, at a lower priority than the window's thread (see
//! [`background`]): a trim of a 64-client run (1.5 M events) held frames for 17-25 ms while the
//! window's thread caught the rebuild up 16,384 events per ingest (`examples/live_clients.rs`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ackscope_protocol::{Event, EventKind, Side, SimTime};
use crossbeam_channel::{bounded, unbounded, Receiver, Sender};

use crate::model::Recording;
use crate::session::Progress;

/// Events of the lane a finished rebuild takes in per ingest beyond those that ingest brought,
/// so the gap closes by at least this much each time: the rest waits for [`CATCH_UP_BUDGET`].
///
/// The worker is fed the lane's new events until it is within [`LEVEL_EVENTS`] of the lane, so
/// what is left to fold here is a frame or two of events. Catching up 16,384 events per ingest
/// from the whole time the worker built held 64-client frames for 17-25 ms
/// (`examples/live_clients.rs`, 2026-11-27).
const CATCH_UP_EVENTS: usize = 1024;

/// Time a finished rebuild may spend per ingest catching up beyond [`CATCH_UP_EVENTS`] and the
/// events that ingest brought.
const CATCH_UP_BUDGET: Duration = Duration::from_millis(2);

/// How close (in events) the worker's recording must be to the lane before it is sent back:
/// the rest is folded here, on the window's thread.
const LEVEL_EVENTS: usize = 4096;

/// Events of the lane handed to a rebuild's worker in one piece. Copying the whole newest half
/// in one go held a frame for 500-700 ms with 5 M events in memory (`examples/capture_open.rs`).
const HAND_OVER_EVENTS: usize = 8192;

/// Time an ingest may spend handing pieces to the worker (at least one piece goes each time).
///
/// 65,536 events per ingest, each piece in a fresh buffer freed by the worker, held 64-client
/// frames for 17-31 ms on a core with 1,100-1,400 page faults each
/// (`examples/live_clients.rs`, 2026-11-28): the buffers now come back to be filled again
/// ([`Rebuild::spare`]), and the hand-over stops at this budget. At 2 ms the worker is handed
/// several times the 60,000 events a second the run adds, so it still gets level within
/// seconds.
const HAND_OVER_BUDGET: Duration = Duration::from_millis(2);

/// Buffers the worker makes for the handed-over pieces, filled here again and again: the pieces
/// in flight at most.
///
/// A piece copied into a buffer allocated on the window's thread page-faulted the buffer in
/// there (4,000 faults, 8 ms of a 64-client frame: perf put most of the window thread's faults
/// during a rebuild in this copy, `examples/live_clients.rs`, 2026-11-28). The worker allocates
/// them and writes every page of them first, at its lower priority; the window's thread only
/// ever fills memory that is already there, and hands nothing over while all of them are out.
const SPARE_PIECES: usize = 8;

/// A recording of a lane's newest events being built on a worker thread.
pub(super) struct Rebuild {
    /// The recording it replaces (a restart makes its result useless).
    replaces: u64,
    /// Events of the replaced recording it was given or has caught up with.
    upto: usize,
    /// Hands the worker the events it is to hold, pieces per ingest within
    /// [`HAND_OVER_BUDGET`], and then the lane's new
    /// ones until it has folded nearly all of them ([`LEVEL_EVENTS`]); dropped then, which tells
    /// it to send its recording back.
    feed: Option<Sender<Vec<Event>>>,
    /// Buffers for the pieces, made by the worker ([`SPARE_PIECES`]) and handed back each time it
    /// has folded one: none is allocated or freed on the window's thread (freed on the worker's,
    /// a buffer allocated here took this thread's malloc arena lock (glibc), which the window's
    /// thread then waited on; a fresh one page-faulted in here).
    spare: Receiver<Vec<Event>>,
    /// Events the worker was handed: the lane's from `from` to `upto`.
    from: usize,
    /// Events the worker has folded so far.
    folded: Arc<AtomicUsize>,
    result: Receiver<Option<Recording>>,
    /// Hands the worker, once its recording is swapped in, the one it replaced to free; with
    /// every clone dropped, the worker ends ([`Worker`]).
    dispose: Sender<Recording>,
    /// The finished recording while it catches up with the lane, a piece per ingest.
    ///
    /// Catching up in one go held a frame for all the events that came while the worker built
    /// it: 816 ms opening a 1 GB capture (`examples/capture_open.rs`), whose reader fills the
    /// lane as fast as the window takes events.
    fresh: Option<Recording>,
}

/// What a step of a rebuild came to.
pub(super) enum Stepped {
    /// Still building or catching up.
    Going,
    /// Of no use: the lane was replaced (a restart) or the worker is gone.
    Abandoned,
    /// Level with the lane: the recording to put in its place, and the worker that built it,
    /// waiting to free the one it replaces.
    Done(Box<Recording>, Worker),
}

/// The worker that built a lane's recording, once that recording is swapped in: it frees the
/// one replaced ([`Worker::dispose`]), then stays, idle, as long as this is kept, so the lane's
/// next rebuild runs on another malloc arena. Dropped when the next rebuild is swapped in, or the
/// run ends.
///
/// A thread takes the arena of one that ended before it (glibc reuses a free arena first), so
/// each rebuild's worker built in the very arena of the recording the window's thread was
/// growing (the previous worker's): the window waited on that arena's lock while the worker,
/// at nice 10, grew or copied its own vectors under it (64-client frames blocked 8-15 ms
/// inside `intake.fold`, always during a rebuild, `examples/live_clients.rs`, 2026-11-28).
pub(super) struct Worker(Sender<Recording>);

impl Worker {
    /// Frees `old` on the worker's thread (a thread of its own if the worker is gone).
    ///
    /// Freeing millions of events and their indexes takes 300-500 ms. On a thread of its own at
    /// nice 10 it ran beside the next rebuild's worker, also at nice 10, sharing a core with it
    /// while the run's thread had the other: whichever held a malloc arena lock the window's
    /// thread wanted then waited its turn for that core, and the window's frame with it (frames
    /// blocked 7-26 ms, `examples/live_clients.rs`, 2026-11-28). One busy background thread at
    /// a time (the worker frees, then idles; the next rebuild starts long after) is never
    /// waited for behind another: when the window's thread waits on it, it has that thread's core.
    pub(super) fn dispose(&self, old: Recording) {
        if let Err(crossbeam_channel::SendError(old)) = self.0.send(old) {
            let _ = std::thread::Builder::new().name("ackscope-free".into()).spawn(move || {
                background();
                drop(old)
            });
        }
    }
}

impl Rebuild {
    /// Starts building a recording of `lane`'s events from `from` on a worker thread; the events
    /// are handed to it in pieces of [`HAND_OVER_EVENTS`] at each [`Self::step`], within
    /// [`HAND_OVER_BUDGET`].
    pub(super) fn spawn(lane: &Recording, from: usize) -> Self {
        let header = lane.header();
        let (feed, pieces) = unbounded::<Vec<Event>>();
        let (give_back, spare) = bounded(SPARE_PIECES);
        let (tx, rx) = bounded(1);
        let (dispose, old) = bounded::<Recording>(1);
        let folded = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&folded);
        std::thread::Builder::new()
            .name("ackscope-window".into())
            .spawn(move || {
                background();
                for _ in 0..SPARE_PIECES {
                    let _ = give_back.try_send(prefaulted(HAND_OVER_EVENTS));
                }
                // The same fold as opening a file: the header's recording, then every event in order.
                let rec = Recording::from_session(header, &Arc::new(Progress::new())).map(|mut rec| {
                    for mut piece in pieces {
                        let n = piece.len();
                        rec.ingest_iter(piece.drain(..));
                        count.fetch_add(n, Ordering::Relaxed);
                        let _ = give_back.try_send(piece);
                    }
                    rec
                });
                // Swapped in: free the recording it replaced, then stay (idle) until every sender
                // is dropped, while the recording it built is the lane's ([`Worker`]). An
                // abandoned rebuild drops them at once and the thread ends.
                if tx.send(rec).is_ok() {
                    old.iter().for_each(drop);
                }
            })
            .expect("spawn window thread");
        Self {
            replaces: lane.id(),
            upto: from,
            from,
            folded,
            feed: Some(feed),
            spare,
            result: rx,
            dispose,
            fresh: None,
        }
    }

    /// One ingest's share: hands the worker the next piece of `lane` (and lets it send its
    /// recording back once it is within [`LEVEL_EVENTS`] of the lane), or catches the recording
    /// it sent up with the lane: `added` (the events this ingest brought) and
    /// [`CATCH_UP_EVENTS`] more at least, then as many as [`CATCH_UP_BUDGET`] allows.
    pub(super) fn step(&mut self, lane: &Recording, added: usize) -> Stepped {
        if self.replaces != lane.id() {
            return Stepped::Abandoned;
        }
        let end = lane.events().len();
        if let Some(feed) = &self.feed {
            let started = Instant::now();
            loop {
                let to = end.min(self.upto + HAND_OVER_EVENTS);
                if to == self.upto {
                    break;
                }
                // All the worker's buffers out (or it has not made them yet): the rest waits.
                let Ok(mut piece) = self.spare.try_recv() else { break };
                piece.extend_from_slice(&lane.events()[self.upto..to]);
                if feed.send(piece).is_err() {
                    return Stepped::Abandoned;
                }
                self.upto = to;
                if started.elapsed() >= HAND_OVER_BUDGET {
                    break;
                }
            }
            if self.upto == end && self.folded.load(Ordering::Relaxed) + LEVEL_EVENTS >= end - self.from {
                self.feed = None;
            }
            return Stepped::Going;
        }
        if self.fresh.is_none() {
            match self.result.try_recv() {
                Ok(Some(rec)) => self.fresh = Some(rec),
                Err(crossbeam_channel::TryRecvError::Empty) => return Stepped::Going,
                _ => return Stepped::Abandoned,
            }
        }
        let fresh = self.fresh.as_mut().expect("set above");
        let (started, at_least) = (Instant::now(), self.upto.saturating_add(added.saturating_add(CATCH_UP_EVENTS)));
        while self.upto < end && (self.upto < at_least || started.elapsed() < CATCH_UP_BUDGET) {
            let to = end.min(self.upto + CATCH_UP_EVENTS);
            fresh.ingest_iter(lane.events()[self.upto..to].iter().cloned());
            self.upto = to;
        }
        match self.fresh.take() {
            Some(fresh) if self.upto == end => Stepped::Done(Box::new(fresh), Worker(self.dispose.clone())),
            fresh => {
                self.fresh = fresh;
                Stepped::Going
            }
        }
    }

    /// Waits for the rebuild: hands the worker the rest of `lane`, takes its recording back and
    /// catches it up with every event (tests and examples, to see the result), with the worker
    /// to free the lane it replaces; `None` when it was abandoned.
    pub(super) fn finish(mut self, lane: &Recording) -> Option<(Recording, Worker)> {
        if self.replaces != lane.id() {
            return None;
        }
        if let Some(feed) = self.feed.take() {
            let rest = lane.events()[self.upto..].to_vec();
            self.upto = lane.events().len();
            if !rest.is_empty() && feed.send(rest).is_err() {
                return None;
            }
        }
        if self.fresh.is_none() {
            self.fresh = Some(self.result.recv().ok()??);
        }
        loop {
            match self.step(lane, usize::MAX) {
                Stepped::Going => {}
                Stepped::Abandoned => return None,
                Stepped::Done(fresh, worker) => return Some((*fresh, worker)),
            }
        }
    }
}

/// An empty buffer for `events` events whose every page has been written, so filling it takes
/// no page fault (on the thread that fills it, the window's).
fn prefaulted(events: usize) -> Vec<Event> {
    let mut v = vec![Event::new(SimTime::ZERO, EventKind::PacketAcked { side: Side::A, seq: 0 }); events];
    v.clear();
    v
}

/// Lowers the calling thread (a rebuild's worker, the thread freeing a replaced recording) to
/// nice 10, so the window's thread and the run's take a core first when they wake.
///
/// With 64 clients the worker folds a million events or more per trim and the freeing takes
/// 300-500 ms: at the same priority, on 2 cores beside the run's thread, the window's frames
/// waited for a core behind them. Nice 10 is a tenth of the weight, not an idle class, so a
/// rebuild still finishes on a machine busy with other work (the lane grows meanwhile). Errors
/// are ignored: lowering one's own priority needs no privilege, and where it fails nothing is
/// worse than before.
pub(super) fn background() {
    #[cfg(target_os = "linux")]
    {
        use thread_priority::{set_current_thread_priority, ThreadPriority, ThreadPriorityValue};
        // The crate maps [0, 99] onto nice [19, -20] in 39 steps, truncating: 22 is nice 10
        // (the test reads it back).
        if let Ok(p) = ThreadPriorityValue::try_from(22u8) {
            let _ = set_current_thread_priority(ThreadPriority::Crossplatform(p));
        }
    }
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    #[test]
    fn a_background_thread_runs_at_nice_10() {
        let nice = std::thread::spawn(|| {
            super::background();
            // Field 19 of the thread's stat line (after the parenthesised name) is its nice value.
            let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
            let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split_whitespace().collect();
            fields[16].parse::<i32>().unwrap()
        })
        .join()
        .unwrap();
        // A process started under `nice` starts its threads there; lowering goes no higher.
        assert!(nice >= 10, "nice {nice}");
    }
}
