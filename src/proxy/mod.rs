//! The conditioning proxy: a UDP relay between game clients and a server that runs each client's
//! traffic through its own seeded links and records the ground truth of every datagram.
//!
//! # Design
//! - **One relay thread** ([`relay`]) owns every socket, every client's two [`ackscope_protocol::Link`]s
//!   and the clock, so a link's decisions are made in one order on one timeline, as in a
//!   simulation. It waits on one `mio` poll (epoll) over the listening socket, one socket per
//!   client towards the server (so the server sees each client as its own source address), a
//!   timerfd for deliveries ([`timer`]) and a waker for control.
//! - **Clients** ([`client`]) are told apart by source address and numbered from 1 in order of
//!   arrival; each gets its links from the scenario in force, seeded per client ([`apply`]), and
//!   expires after a silence ([`ProxyConfig::expire_after`]): its socket closes, its links deliver
//!   what they hold, and only its summary stays, so memory follows the live clients.
//! - **Scheduling** ([`schedule`]): a heap of each link's next delivery; the thread serves due
//!   deliveries and scripted steps in time order and sleeps until the next one (timerfd armed in
//!   nanoseconds, then a short non-blocking spin), or blocks when nothing is due.
//! - **Recording**: every datagram produces the link's events (`LinkSent`, `LinkDropped`,
//!   `LinkDuplicated`, `LinkDelivered`) with the client's id and a per-client send id, on the
//!   proxy's clock (µs since start), handed over in time-ordered [`Batch`]es with the bytes
//!   ([`bytes`]) when asked. Live and scripted link changes are `ParamChanged` events. From the
//!   events alone [`rerun`] re-makes every link decision.
//! - **Priority** ([`priority`]): with `--realtime` the relay thread runs on SCHED_FIFO, so a
//!   delay is honoured on a machine whose cores are busy with other work.
//! - **Report** ([`stats`]): per client and direction, counted as datagrams pass.
//! - **Decoding** ([`decode`]): with `--decode`, the batches' reader feeds the passive decoders,
//!   whose figures per client and direction (acks, RTT, loss estimate, resends) go into the
//!   report and, as `Stats` events each second, into the recording.
//!
//! The proxy has no endpoints: scripted steps other than link changes do nothing here.

pub mod apply;
pub mod batch;
pub mod bytes;
pub mod client;
pub mod config;
pub mod decode;
pub mod priority;
pub mod record;
pub mod relay;
pub mod rerun;
pub mod schedule;
pub mod stats;
pub mod timer;

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use ackscope_protocol::{Action, ClientId};
use anyhow::{anyhow, Context, Result};
use crossbeam_channel::{bounded, Receiver, Sender};
use mio::{Interest, Poll, Waker};

pub use batch::Batch;
pub use bytes::{ByteStore, Datagram, Forward};
pub use config::{DecodeChoice, ProxyConfig};
pub use record::{Recording, SessionOut};
pub use relay::RelayStatus;
pub use stats::{ClientSummary, DecodedFigures, DirSummary, ProxyReport, RelayOutcome};

use relay::{Control, Relay, LISTEN, WAKER};

/// Batches waiting for their reader before the relay keeps them itself.
const BATCH_QUEUE: usize = 1024;

/// A running proxy. Read its [`Batch`]es as they come ([`Self::batches`]); stop it with
/// [`Self::stop`] (dropping it stops it too).
pub struct Proxy {
    thread: Option<JoinHandle<Result<RelayOutcome>>>,
    control: Sender<Control>,
    waker: Arc<Waker>,
    batches: Receiver<Batch>,
    local: SocketAddr,
}

impl Proxy {
    /// Binds `cfg.listen` and starts relaying to `cfg.forward`; a bad address or a port in use is
    /// an error here, before anything runs.
    pub fn start(cfg: ProxyConfig) -> Result<Proxy> {
        let poll = Poll::new().context("cannot create the poll")?;
        let mut listen = client::udp_socket(cfg.listen, cfg.listen_buffer_bytes)
            .with_context(|| format!("cannot listen on {}", cfg.listen))?;
        let local = listen.local_addr().with_context(|| format!("cannot listen on {}", cfg.listen))?;
        poll.registry().register(&mut listen, LISTEN, Interest::READABLE).context("cannot register the socket")?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER).context("cannot create the waker")?);
        let (control, control_rx) = bounded(64);
        let (out, batches) = bounded(BATCH_QUEUE);
        let realtime = cfg.realtime;
        let relay = Relay::new(cfg, poll, listen, control_rx, out)?;
        // The thread says whether it got its priority before anything is relayed.
        let (ready, started) = bounded::<Result<(), String>>(1);
        let thread = std::thread::Builder::new()
            .name("ackscope-proxy".into())
            .spawn(move || {
                let priority = if realtime { priority::request_realtime() } else { Ok(()) };
                let _ = ready.send(priority.clone());
                priority.map_err(|e| anyhow!(e))?;
                relay.run()
            })
            .context("cannot start the relay thread")?;
        match started.recv() {
            Ok(Ok(())) => Ok(Proxy { thread: Some(thread), control, waker, batches, local }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(anyhow!(e))
            }
            Err(_) => {
                let _ = thread.join();
                Err(anyhow!("the relay thread ended before it started"))
            }
        }
    }

    /// The address clients send to (the bound one: port 0 becomes the port the OS chose).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// What the relay hands over, in time order; read it on, or the relay holds it in memory.
    pub fn batches(&self) -> &Receiver<Batch> {
        &self.batches
    }

    /// Applies a link change now (a `link.*` set or a link step): to every client and the
    /// clients to come (`client` None), or to one live client. Refused values change nothing.
    pub fn apply(&self, client: Option<ClientId>, action: Action) -> Result<()> {
        let (reply, answer) = bounded(1);
        self.control.send(Control::Apply { client, action, reply }).map_err(|_| anyhow!("the proxy has stopped"))?;
        self.waker.wake().context("cannot wake the proxy")?;
        match answer.recv_timeout(Duration::from_secs(10)) {
            Ok(r) => r.map_err(|e| anyhow!(e)),
            Err(_) => Err(anyhow!("the proxy did not answer")),
        }
    }

    /// What the relay holds now (clients, slots, schedule: the structures its memory follows).
    pub fn status(&self) -> Result<RelayStatus> {
        let (reply, answer) = bounded(1);
        self.control.send(Control::Status(reply)).map_err(|_| anyhow!("the proxy has stopped"))?;
        self.waker.wake().context("cannot wake the proxy")?;
        answer.recv_timeout(Duration::from_secs(10)).map_err(|_| anyhow!("the proxy did not answer"))
    }

    /// Stops relaying and returns every client's figures. Batches not yet read stay readable
    /// from [`Self::batches`]'s receiver (take it first with [`Self::stop_with_batches`]).
    pub fn stop(self) -> Result<RelayOutcome> {
        self.stop_with_batches().map(|(o, _)| o)
    }

    /// [`Self::stop`], also giving the receiver of the batches still unread.
    pub fn stop_with_batches(mut self) -> Result<(RelayOutcome, Receiver<Batch>)> {
        let _ = self.control.send(Control::Stop);
        let _ = self.waker.wake();
        let thread = self.thread.take().expect("running");
        // Read on while the relay finishes: its last batch is a blocking send.
        let batches = self.batches.clone();
        let mut pending = Vec::new();
        while !thread.is_finished() {
            if let Ok(b) = batches.recv_timeout(Duration::from_millis(5)) {
                pending.push(b);
            }
        }
        let outcome = thread.join().map_err(|_| anyhow!("the relay thread panicked"))??;
        let (tx, rx) = crossbeam_channel::unbounded();
        for b in pending.into_iter().chain(batches.try_iter()) {
            let _ = tx.send(b);
        }
        Ok((outcome, rx))
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = self.control.send(Control::Stop);
            let _ = self.waker.wake();
            // Keep the relay's last blocking send from waiting on a full queue.
            while !thread.is_finished() {
                let _ = self.batches.recv_timeout(Duration::from_millis(5));
            }
            let _ = thread.join();
        }
    }
}
