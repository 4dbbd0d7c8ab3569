//! The real-UDP transport: endpoints on their own threads, exchanging datagrams through sockets.
//!
//! [`UdpRun`] runs both endpoints of a scenario in this process over two sockets (the GUI's
//! "transport: UDP"); [`UdpEndpoint`] runs one, against another process (`ackscope peer`). Both
//! look like [`LiveRun`](super::LiveRun) to their user: [`Action`]s in, [`Batch`]es out over a
//! bounded channel (always lane 0: A/B lanes need one virtual clock and stay in-process), and `stop`
//! joins every thread, so no thread outlives its run.

use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use ackscope_protocol::{make_peer, AckPeer, Action, Peer, Scenario, Side, SimTime};
use anyhow::{anyhow, Context, Result};
use crossbeam_channel::{bounded, Receiver, Sender};

use super::endpoint_thread::{run_endpoint, EndpointExit, EndpointSpec, RunClock, UidBook};
use super::{Batch, Lanes};
use crate::model::payloads::SharedPayloads;

/// Batches in flight to the consumer before an endpoint keeps them in its own backlog.
const EVENT_CHANNEL_BATCHES: usize = 256;

/// Resolves `text` (`IP:PORT` or `host:port`) to one socket address.
pub fn resolve(text: &str) -> Result<SocketAddr> {
    let mut addrs = text.to_socket_addrs().map_err(|e| anyhow!("bad address '{text}': {e}"))?;
    addrs.next().ok_or_else(|| anyhow!("bad address '{text}': it resolves to nothing"))
}

/// Binds a socket on `bind`, with a one-line reason on failure.
fn bind(bind: SocketAddr) -> Result<UdpSocket> {
    UdpSocket::bind(bind).with_context(|| format!("cannot bind {bind}"))
}

fn spawn_thread(
    name: String,
    spec: EndpointSpec,
    commands: Receiver<Action>,
    events: Sender<Batch>,
    wake: Arc<dyn Fn() + Send + Sync>,
) -> Result<JoinHandle<EndpointExit>> {
    std::thread::Builder::new()
        .name(name)
        .spawn(move || run_endpoint(spec, commands, events, &*wake))
        .context("cannot start an endpoint thread")
}

/// How [`UdpEndpoint::spawn`] sets up its one endpoint.
#[derive(Debug, Clone)]
pub struct EndpointOptions {
    pub side: Side,
    pub scenario: Scenario,
    /// reliable.io packet acks with opaque payloads whatever `scenario.strategy` says.
    pub raw: bool,
    pub bind: SocketAddr,
    pub connect: SocketAddr,
    /// Ends by itself after this long (None: runs until stopped).
    pub seconds: Option<f64>,
}

/// The endpoint `side` runs: the scenario's strategy, or in raw mode the plain packet-ack peer
/// (which acks every well-formed reliable.io header, so it interoperates with any implementation).
pub fn endpoint_peer(scenario: &Scenario, side: Side, raw: bool) -> Box<dyn Peer> {
    if raw {
        Box::new(AckPeer::new(side, scenario.ack, scenario.payload_bytes as usize))
    } else {
        make_peer(scenario, side)
    }
}

/// Builds [`endpoint_peer`]s: what a restart of a lone endpoint runs.
fn peer_factory(raw: bool) -> ackscope_protocol::PeerFactory {
    Box::new(move |scenario, side| endpoint_peer(scenario, side, raw))
}

/// One endpoint on its own thread and socket, talking to an endpoint elsewhere.
pub struct UdpEndpoint {
    /// Dropped to stop the thread.
    commands: Option<Sender<Action>>,
    events: Receiver<Batch>,
    thread: Option<JoinHandle<EndpointExit>>,
    exit: Option<EndpointExit>,
    clock: Arc<RunClock>,
    local: SocketAddr,
    /// The bytes of every datagram the endpoint sent or read, when asked to keep them (its
    /// `--out` file keeps them).
    payloads: Option<SharedPayloads>,
}

impl UdpEndpoint {
    /// Binds, connects and starts the endpoint; `wake` is called whenever events are ready.
    pub fn spawn(opts: EndpointOptions, wake: impl Fn() + Send + Sync + 'static) -> Result<Self> {
        Self::spawn_keeping(opts, false, wake)
    }

    /// [`Self::spawn`], keeping every datagram's bytes when `keep_bytes` ([`Self::payloads`]).
    pub fn spawn_keeping(
        opts: EndpointOptions,
        keep_bytes: bool,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> Result<Self> {
        let socket = bind(opts.bind)?;
        socket.connect(opts.connect).with_context(|| format!("cannot connect to {}", opts.connect))?;
        let local = socket.local_addr().context("socket address")?;
        let clock = Arc::new(RunClock::start());
        // To the window's default live caps, as the proxy keeps what it relays.
        let payloads =
            keep_bytes.then(|| crate::model::payloads::Payloads::shared(crate::model::limits::LiveLimits::default()));
        let end = match opts.seconds {
            Some(s) if !(s.is_finite() && s > 0.0) => return Err(anyhow!("seconds must be positive, got {s}")),
            Some(s) => Some(SimTime::from_secs_f64(s)),
            None => None,
        };
        let spec = EndpointSpec {
            side: opts.side,
            peer: endpoint_peer(&opts.scenario, opts.side, opts.raw),
            scenario: opts.scenario,
            socket,
            clock: clock.clone(),
            end,
            books: None,
            records_changes: true,
            factory: Some(peer_factory(opts.raw)),
            payloads: payloads.clone(),
        };
        let (cmd_tx, cmd_rx) = bounded(1024);
        let (ev_tx, ev_rx) = bounded(EVENT_CHANNEL_BATCHES);
        let thread = spawn_thread(format!("ackscope-udp-{:?}", opts.side), spec, cmd_rx, ev_tx, Arc::new(wake))?;
        Ok(Self { commands: Some(cmd_tx), events: ev_rx, thread: Some(thread), exit: None, clock, local, payloads })
    }

    /// The bytes of every datagram sent (by its send id) and read (by the id its link gave it),
    /// to the window's default live memory caps; `None` unless spawned keeping them.
    pub fn payloads(&self) -> Option<SharedPayloads> {
        self.payloads.clone()
    }

    /// The address the socket is bound to (the real port when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The endpoint's clock reading now.
    pub fn now(&self) -> SimTime {
        self.clock.now()
    }

    /// Queues `action` without blocking; false when the endpoint has ended.
    pub fn send(&self, action: Action) -> bool {
        self.commands.as_ref().is_some_and(|c| c.try_send(action).is_ok())
    }

    /// Every batch available now.
    pub fn try_batches(&self) -> impl Iterator<Item = Batch> + '_ {
        self.events.try_iter()
    }

    /// Every batch until the endpoint ends (blocking): its channel closes when the thread does.
    pub fn batches_until_end(&self) -> impl Iterator<Item = Batch> + '_ {
        self.events.iter()
    }

    /// True while the thread runs.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Stops the thread (if still running), waits for it and returns how it ended.
    pub fn stop(&mut self) -> EndpointExit {
        // The thread reads its commands every few ms and ends once their channel is closed.
        self.commands = None;
        if let Some(t) = self.thread.take() {
            self.exit = Some(t.join().unwrap_or_default());
        }
        self.exit.unwrap_or_default()
    }
}

impl Drop for UdpEndpoint {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Both endpoints of a scenario in this process, each on its own thread and socket.
///
/// Because both ends are here, ground truth is complete: the sender records every datagram's send
/// id in a shared [`UidBook`] so the receiving link's events name the same send as `PacketSent`,
/// and [`super::udp_truth::EventTally`] can check every ack against what the link delivered.
pub struct UdpRun {
    /// One per endpoint (A, B); emptied to stop the threads.
    commands: Vec<Sender<Action>>,
    events: Receiver<Batch>,
    threads: Vec<JoinHandle<EndpointExit>>,
    exits: Vec<EndpointExit>,
    clock: Arc<RunClock>,
    addrs: [SocketAddr; 2],
    /// The bytes of every datagram either endpoint sent (client 1's send ids).
    payloads: SharedPayloads,
}

impl UdpRun {
    /// Binds side A on `addr_a` and side B on `addr_b` (port 0 picks a free port), connects them
    /// to each other and starts both at time 0; `wake` is called whenever events are ready.
    pub fn spawn(
        mut scenario: Scenario,
        addr_a: SocketAddr,
        addr_b: SocketAddr,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> Result<Self> {
        crate::fit::links::resolve(&mut scenario)?;
        let sockets = [bind(addr_a)?, bind(addr_b)?];
        let addrs =
            [sockets[0].local_addr().context("socket address")?, sockets[1].local_addr().context("socket address")?];
        for (i, s) in sockets.iter().enumerate() {
            let other = addrs[1 - i];
            s.connect(other).with_context(|| format!("cannot connect to {other}"))?;
        }
        let clock = Arc::new(RunClock::start());
        let books = Arc::new([UidBook::default(), UidBook::default()]);
        let payloads: SharedPayloads = Arc::default();
        let wake: Arc<dyn Fn() + Send + Sync> = Arc::new(wake);
        let (ev_tx, ev_rx) = bounded(EVENT_CHANNEL_BATCHES);
        let mut commands = Vec::new();
        let mut threads = Vec::new();
        for (side, socket) in Side::BOTH.into_iter().zip(sockets) {
            let spec = EndpointSpec {
                side,
                peer: endpoint_peer(&scenario, side, false),
                scenario: scenario.clone(),
                socket,
                clock: clock.clone(),
                end: None,
                books: Some(books.clone()),
                records_changes: side == Side::A,
                factory: None,
                payloads: Some(payloads.clone()),
            };
            let (cmd_tx, cmd_rx) = bounded(1024);
            commands.push(cmd_tx);
            match spawn_thread(format!("ackscope-udp-{side:?}"), spec, cmd_rx, ev_tx.clone(), wake.clone()) {
                Ok(t) => threads.push(t),
                Err(e) => {
                    // Closing their channels stops the threads already started.
                    drop(commands);
                    for t in threads {
                        let _ = t.join();
                    }
                    return Err(e);
                }
            }
        }
        Ok(Self { commands, events: ev_rx, threads, exits: Vec::new(), clock, addrs, payloads })
    }

    /// The address side `side` is bound to.
    pub fn local_addr(&self, side: Side) -> SocketAddr {
        self.addrs[side.index()]
    }

    /// The bytes of every datagram sent, by send id, as the sockets sent them.
    pub fn payloads(&self) -> SharedPayloads {
        self.payloads.clone()
    }

    /// The run's clock reading now (both endpoints share it).
    pub fn now(&self) -> SimTime {
        self.clock.now()
    }

    /// Queues `action` without blocking; false when the run has ended (or `lanes` is not lane 0:
    /// a UDP run has one lane).
    ///
    /// A parameter change, a restart or a strategy change goes to both endpoints (each applies
    /// what concerns it through its driver: the link into it, its send rate, its flow control,
    /// its peer's live settings, or a new endpoint and link; side A records it); a burst or a
    /// chunk goes to its side; pause and resume freeze and restart the shared clock, so both ends
    /// stop at one instant (side A records them).
    pub fn send(&self, lanes: Lanes, action: Action) -> bool {
        if !self.is_running() || !lanes.includes(0) || self.commands.len() != 2 {
            return false;
        }
        match action {
            Action::Pause | Action::Resume => {
                if action == Action::Pause {
                    self.clock.pause();
                } else {
                    self.clock.resume();
                }
                // Side A logs it (its clock call is a no-op by then).
                self.commands[Side::A.index()].try_send(action).is_ok()
            }
            Action::Burst { side } | Action::SendChunk { side, .. } => {
                self.commands[side.index()].try_send(action).is_ok()
            }
            _ => {
                let sent: Vec<bool> = self.commands.iter().map(|c| c.try_send(action.clone()).is_ok()).collect();
                sent.iter().all(|&ok| ok)
            }
        }
    }

    /// Every batch available now (each comes from one endpoint, in its time order).
    pub fn try_batches(&self) -> impl Iterator<Item = Batch> + '_ {
        self.events.try_iter()
    }

    /// Waits up to `timeout` for the next batch.
    pub fn recv_batch_timeout(&self, timeout: Duration) -> Option<Batch> {
        self.events.recv_timeout(timeout).ok()
    }

    /// True while both endpoint threads run.
    pub fn is_running(&self) -> bool {
        !self.threads.is_empty() && self.threads.iter().all(|t| !t.is_finished())
    }

    /// True when no endpoint thread is left (after `stop`, every thread has been joined).
    pub fn all_threads_finished(&self) -> bool {
        self.threads.iter().all(|t| t.is_finished())
    }

    /// Stops both endpoints and waits for their threads; returns how each ended (A, B).
    pub fn stop(&mut self) -> Vec<EndpointExit> {
        self.commands.clear();
        for t in self.threads.drain(..) {
            self.exits.push(t.join().unwrap_or_default());
        }
        self.exits.clone()
    }
}

impl Drop for UdpRun {
    fn drop(&mut self) {
        self.stop();
    }
}

/// How a live run's endpoints talk (defined with the session header that records it).
pub use crate::session::Transport;
