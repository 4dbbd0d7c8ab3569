//! The reader thread behind a source that reads on a thread of its own (a proxy, a capture, a
//! game's stream): the channel of batches to the window, the thread, its stop flag and the
//! clients it named, owned in one place so each source holds only what is its own.
//!
//! [`ReaderHandle`] is the window's end ([`EventSource::try_batches`], `is_running`, `stop`,
//! `take_clients` forward to it, written once in [`reader_methods`]); [`ReaderSide`] is the
//! thread's end, which hands batches over while the window keeps up and gives up within a poll
//! once stopped.
//!
//! [`EventSource::try_batches`]: super::EventSource::try_batches

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};
use crossbeam_channel::{bounded, Receiver, SendTimeoutError, Sender};

use crate::lane::ClientInfo;
use crate::runtime::Batch;

/// How often a reader waiting on a full channel looks at the stop flag.
pub const POLL: Duration = Duration::from_millis(20);

/// Clients a reader named since the window last asked, with their lane.
type Named = Arc<Mutex<Vec<(usize, ClientInfo)>>>;

/// The window's end of a reader thread.
pub struct ReaderHandle {
    events: Receiver<Batch>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    named: Named,
}

/// The reader thread's end: where it hands batches and names clients, and its stop flag.
pub struct ReaderSide {
    tx: Sender<Batch>,
    stop: Arc<AtomicBool>,
    named: Named,
}

impl ReaderHandle {
    /// Starts `body` on a thread called `name` with a channel of `channel_batches` batches to
    /// the window; `what` names the reader in the error when the thread cannot start.
    pub fn spawn(
        name: &str,
        what: &str,
        channel_batches: usize,
        body: impl FnOnce(ReaderSide) + Send + 'static,
    ) -> Result<Self> {
        let (tx, events) = bounded(channel_batches);
        let stop = Arc::new(AtomicBool::new(false));
        let named = Named::default();
        let side = ReaderSide { tx, stop: stop.clone(), named: named.clone() };
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || body(side))
            .with_context(|| format!("cannot start {what}"))?;
        Ok(Self { events, stop, thread: Some(thread), named })
    }

    /// Every batch available now.
    pub fn try_batches(&self) -> Box<dyn Iterator<Item = Batch> + '_> {
        Box::new(self.events.try_iter())
    }

    /// True while the reader thread runs.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Asks the reader to stop and joins it. A reader waiting on a full channel gives up within
    /// a poll once stopped: the batches already sent stay for [`Self::try_batches`].
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Clients the reader named since the last call.
    pub fn take_clients(&self) -> Vec<(usize, ClientInfo)> {
        std::mem::take(&mut *self.named.lock().expect("not poisoned"))
    }
}

/// The [`EventSource`](super::EventSource) methods that a source reading on a thread of its own
/// takes from its `reader: ReaderHandle` field (its batches, whether it runs, stopping it, the
/// clients it named), placed inside that source's `impl EventSource`.
///
/// A macro, as a trait's default method cannot reach a field, and a blanket impl over a
/// "has a reader" trait would have to repeat the source trait's other methods and defaults.
macro_rules! reader_methods {
    () => {
        fn try_batches(&self) -> Box<dyn Iterator<Item = $crate::runtime::Batch> + '_> {
            self.reader.try_batches()
        }
        fn is_running(&self) -> bool {
            self.reader.is_running()
        }
        fn stop(&mut self) {
            self.reader.stop();
        }
        fn take_clients(&self) -> Vec<(usize, $crate::lane::ClientInfo)> {
            self.reader.take_clients()
        }
    };
}
pub(crate) use reader_methods;

impl Drop for ReaderHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

impl ReaderSide {
    /// True once the window asked the reader to stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Names a client of `lane` for the window (before its first events are handed over).
    pub fn name(&self, lane: usize, info: ClientInfo) {
        self.named.lock().expect("not poisoned").push((lane, info));
    }

    /// Hands `batch` to the window, waiting while it is full, and calls `wake`; false once
    /// stopped or the window is gone.
    pub fn deliver(&self, mut batch: Batch, wake: &dyn Fn()) -> bool {
        loop {
            match self.tx.send_timeout(batch, POLL) {
                Ok(()) => {
                    wake();
                    return true;
                }
                Err(SendTimeoutError::Timeout(b)) if !self.stopped() => batch = b,
                Err(_) => return false,
            }
        }
    }
}
