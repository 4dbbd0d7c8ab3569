//! One protocol endpoint on its own thread, on a real UDP socket, with the lossy link applied on
//! its receive side.
//!
//! The endpoint's protocol loop is the simulation's own [`EndpointDriver`]: scripted link steps,
//! deliveries, send ticks, stats, flow control and live changes are run by the same code, in the
//! same order, so a strategy behaves the same over UDP as in-process. This thread owns only what
//! real time adds: the socket, the clock ([`RunClock`]), the channels to the UI, the uid book,
//! catching up after a stall, and waiting for datagrams and commands.
//!
//! Time: the endpoint's `SimTime` is microseconds since the run started, read from a monotonic
//! clock here, never in the protocol crate. Every instant the driver has due (a send tick, a stats
//! sample, a scripted step, a delivery) is run *at its own time* once the clock has passed it, not
//! at whatever time the thread woke up, so sends are stamped with the tick's instant exactly as in
//! the simulation.
//!
//! The link sits where packets arrive: every datagram read from the socket is put on a
//! [`Link`](ackscope_protocol::Link) for the direction *into* this endpoint and handed to the
//! driver when the link says it is due. Two endpoints in different processes therefore each model
//! one direction, and nothing between them (loopback) has to be lossy. The link keys its random
//! draws by send time: within one process the [`UidBook`] carries each datagram's send instant
//! from the sender, so the link makes exactly the decision the simulation's link makes for that
//! send. Across processes (`ackscope peer`, no book) the arrival time stands in for the send time:
//! the fates are as random, but not those of a simulated run.

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ackscope_protocol::{
    Action, Dir, EndpointDriver, Event, Link, Outbound, Peer, PeerFactory, Scenario, Side, SimTime, Step, Transmit,
};
use crossbeam_channel::{bounded, Receiver, SendTimeoutError, Sender, TryRecvError, TrySendError};

pub use super::clock::RunClock;
pub use super::uid_book::{send_uid, unnamed_uid, UidBook, UID_KINDS};
use super::Batch;
use crate::params;

/// Longest the endpoint waits for a datagram before looking at its clock and commands again.
const MAX_WAIT: Duration = Duration::from_millis(5);
/// How often a paused endpoint looks at its commands.
const PAUSED_POLL: Duration = Duration::from_millis(2);
/// Send ticks an endpoint catches up, each at its own instant, after a stall; beyond that it
/// skips ahead to the present rather than bursting.
const MAX_CATCH_UP_TICKS: u32 = 4;
/// Longest an endpoint that reached its end waits for its consumer to take the last events.
const FINAL_FLUSH: Duration = Duration::from_secs(2);
/// Largest UDP payload (IPv4): the receive buffer never truncates a datagram.
const MAX_DATAGRAM_BYTES: usize = 65_536;

/// Everything one endpoint thread needs.
pub struct EndpointSpec {
    pub side: Side,
    pub scenario: Scenario,
    pub peer: Box<dyn Peer>,
    /// Bound and connected to the other endpoint.
    pub socket: UdpSocket,
    pub clock: Arc<RunClock>,
    /// The thread ends by itself at this time (None: only when stopped).
    pub end: Option<SimTime>,
    /// In-process runs: one book per direction (indexed by `Dir::index`), shared by both ends.
    pub books: Option<Arc<[UidBook; 2]>>,
    /// This endpoint reports live changes (`ParamChanged` events and restart markers, the
    /// action log in `Batch::actions`, refused changes): true for a lone endpoint and for side A
    /// of an in-process run, so an action both ends apply is recorded once. Bursts and chunks are
    /// recorded by the side that queues them.
    pub records_changes: bool,
    /// How a restart builds the new endpoint (None: the scenario's strategy, `make_peer`).
    pub factory: Option<PeerFactory>,
    /// Where every datagram sent (and every datagram read that no uid book names) is kept, byte
    /// for byte, for the bytes pane and the session file (None: nowhere).
    pub payloads: Option<crate::model::payloads::SharedPayloads>,
}

/// What an endpoint thread reports when it ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndpointExit {
    /// Datagrams the socket refused to send (e.g. nobody listening yet: ICMP port unreachable).
    pub send_errors: u64,
    /// Socket reads that failed for another reason than a timeout or a refused connection.
    pub recv_errors: u64,
    /// True when it ended at `end`, false when stopped or when the event receiver went away.
    pub ran_to_end: bool,
}

/// Runs the endpoint until `end`, until its command channel is closed, or until the event
/// receiver is dropped.
///
/// A second thread reads the socket and stamps nothing: it only queues datagrams, so this thread
/// waits on one channel with a precise timeout (socket read timeouts are kernel-tick coarse, several
/// ms, which showed as late deliveries and irregular send ticks). The reader is joined before this
/// returns, so the endpoint leaves no thread behind.
pub fn run_endpoint(
    spec: EndpointSpec,
    commands: Receiver<Action>,
    events: Sender<Batch>,
    wake: &(dyn Fn() + Send + Sync),
) -> EndpointExit {
    let mut exit = EndpointExit::default();
    let Ok(reader_socket) = spec.socket.try_clone() else {
        exit.recv_errors += 1;
        return exit;
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (dg_tx, dg_rx) = bounded::<Vec<u8>>(DATAGRAM_QUEUE);
    let reader = {
        let stop = stop.clone();
        std::thread::Builder::new()
            .name(format!("ackscope-udp-{:?}-rx", spec.side))
            .spawn(move || read_socket(reader_socket, dg_tx, &stop))
    };
    let Ok(reader) = reader else {
        exit.recv_errors += 1;
        return exit;
    };
    // Raised on every way out, a panicking peer included, so the reader never outlives us.
    let guard = StopOnDrop(stop);
    let mut exit = endpoint_loop(spec, commands, dg_rx, events, wake);
    drop(guard);
    exit.recv_errors += reader.join().unwrap_or(1);
    exit
}

/// Sets the reader's stop flag when dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Datagrams queued between the reader and the endpoint (beyond, they wait in the socket buffer).
const DATAGRAM_QUEUE: usize = 4096;
/// How often the reader looks at its stop flag.
const READER_POLL: Duration = Duration::from_millis(10);

/// Reads datagrams into `out` until `stop` or until the endpoint drops its receiver; returns the
/// number of failed reads.
fn read_socket(socket: UdpSocket, out: Sender<Vec<u8>>, stop: &AtomicBool) -> u64 {
    let mut errors = 0;
    if socket.set_read_timeout(Some(READER_POLL)).is_err() {
        return 1;
    }
    let mut buf = vec![0u8; MAX_DATAGRAM_BYTES];
    while !stop.load(Ordering::Relaxed) {
        match socket.recv(&mut buf) {
            Ok(n) => {
                let mut d = buf[..n].to_vec();
                loop {
                    match out.send_timeout(d, READER_POLL) {
                        Ok(()) => break,
                        Err(SendTimeoutError::Timeout(back)) if !stop.load(Ordering::Relaxed) => d = back,
                        Err(_) => return errors,
                    }
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            // ICMP port unreachable from an earlier send: the other endpoint is not up (yet, or
            // any more). Not an error of this endpoint.
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {}
            Err(_) => {
                errors += 1;
                std::thread::sleep(READER_POLL);
            }
        }
    }
    errors
}

/// Sends the driver's datagrams on the socket, first noting each in the uid book (in-process).
struct SocketOut<'a> {
    socket: &'a UdpSocket,
    book: Option<&'a UidBook>,
    errors: &'a mut u64,
    payloads: Option<&'a crate::model::payloads::Payloads>,
}

impl Outbound for SocketOut<'_> {
    fn transmit(&mut self, tx: Transmit, _events: &mut Vec<Event>) {
        if let Some(book) = self.book {
            book.record_sent(&tx.bytes, tx.uid, tx.sent_at);
        }
        if let Some(p) = self.payloads {
            p.keep(ackscope_protocol::FIRST_CLIENT, tx.uid, tx.sent_at, &tx.bytes);
        }
        if self.socket.send(&tx.bytes).is_err() {
            *self.errors += 1;
        }
    }
}

/// The endpoint's protocol side on this thread: its driver, the link into it, its socket.
struct Endpoint {
    side: Side,
    driver: EndpointDriver,
    link: Link,
    socket: UdpSocket,
    books: Option<Arc<[UidBook; 2]>>,
    clock: Arc<RunClock>,
    end: Option<SimTime>,
    records_changes: bool,
    payloads: Option<crate::model::payloads::SharedPayloads>,
    /// Datagrams received that the book could not name.
    unnamed: u64,
    send_errors: u64,
}

impl Endpoint {
    fn new(spec: EndpointSpec) -> Self {
        let side = spec.side;
        let ids = {
            let mut n = 0;
            Box::new(move || {
                n += 1;
                send_uid(side, n - 1)
            })
        };
        let mut driver = EndpointDriver::new(side, spec.scenario, spec.peer, ids);
        driver.set_records_actions(spec.records_changes);
        if let Some(f) = spec.factory {
            driver.set_peer_factory(f);
        }
        let link = {
            let scenario = driver.scenario();
            scenario.link.build(driver.link_dir(), scenario.seed)
        };
        Self {
            side,
            driver,
            link,
            socket: spec.socket,
            books: spec.books,
            clock: spec.clock,
            end: spec.end,
            records_changes: spec.records_changes,
            payloads: spec.payloads,
            unnamed: 0,
            send_errors: 0,
        }
    }

    /// When the driver or the link next has something due.
    fn next_due(&self) -> SimTime {
        let due = self.driver.next_due();
        self.link.next_delivery().map_or(due, |d| due.min(d))
    }

    /// Runs every instant due by `now`, each at its own time. A datagram that reached the link
    /// after its delivery time is delivered at the next instant run, never in the past.
    fn advance_to(&mut self, now: SimTime, ev: &mut Vec<Event>) {
        let mut late_ticks = 0;
        loop {
            let t = self.next_due();
            if t > now {
                return;
            }
            let t = t.max(self.driver.now());
            if self.driver.next_tick() <= t && t < now {
                late_ticks += 1;
                if late_ticks > MAX_CATCH_UP_TICKS {
                    // Stalled (paused debugger, overloaded machine): skip ahead instead of bursting.
                    self.driver.skip_ticks_to(now);
                    continue;
                }
            }
            let book = self.books.as_ref().map(|b| &b[self.side.outgoing().index()]);
            let payloads = self.payloads.as_deref();
            let mut out = SocketOut { socket: &self.socket, book, errors: &mut self.send_errors, payloads };
            self.driver.step_with_link(t, &mut self.link, &mut out, ev);
        }
    }

    /// Puts a datagram read at `now` on the link into this endpoint, at its send instant when the
    /// book knows it (else at `now`). Instants due by then run first, so the link has the settings
    /// of that instant (a scripted step at the send time applies to the send, as simulated).
    fn arrive(&mut self, bytes: Vec<u8>, now: SimTime, ev: &mut Vec<Event>) {
        let dir_in: Dir = self.driver.link_dir();
        let entry = self.books.as_ref().and_then(|b| b[dir_in.index()].take_entry(&bytes));
        let (uid, sent_at) = match entry {
            Some(e) => (e.uid, e.sent_at.unwrap_or(now).min(now)),
            None => {
                self.unnamed += 1;
                let uid = unnamed_uid(self.side, self.unnamed - 1);
                // Another process's datagram: its sender kept no bytes here, so its reader does
                // (named as its link events name it).
                if let Some(p) = &self.payloads {
                    p.keep(ackscope_protocol::FIRST_CLIENT, uid, now, &bytes);
                }
                (uid, now)
            }
        };
        self.advance_to(sent_at, ev);
        self.link.send(sent_at, uid, bytes, ev);
    }
}

/// What the consumer gets in the next batch: events, recorded actions, a refused action.
#[derive(Default)]
struct Reports {
    ev: Vec<Event>,
    actions: Vec<Step>,
    error: Option<String>,
}

/// Applies one action at `now` through the driver, as the simulation does: a `set` reaches the
/// link into this endpoint, its send rate, flow control (a live `flow.*` edit; turning it off
/// restores the configured rate) and the peer's live settings; a restart or strategy change
/// builds a new endpoint and an empty link; pause and resume stop and restart the clock.
fn apply_action(ep: &mut Endpoint, action: Action, now: SimTime, r: &mut Reports) {
    let records = ep.records_changes;
    match action {
        Action::Pause => ep.clock.pause(),
        Action::Resume => ep.clock.resume(),
        _ => {}
    }
    if !action.concerns(ep.side) {
        return;
    }
    let check = match &action {
        Action::Set(change) => params::check(change).map_err(|e| format!("{e:#}")),
        _ => Ok(()),
    };
    match check.and_then(|()| ep.driver.apply_action(now, &action, &mut r.ev).map_err(|e| e.to_string())) {
        Err(e) => {
            if records {
                r.error = Some(e);
            }
        }
        Ok(update) => {
            update.apply(&ep.driver, &mut ep.link, now);
            let own = matches!(action, Action::Burst { .. } | Action::SendChunk { .. });
            if records || own {
                r.actions.push(Step::new(now, action));
            }
        }
    }
}

fn endpoint_loop(
    spec: EndpointSpec,
    commands: Receiver<Action>,
    datagrams: Receiver<Vec<u8>>,
    events: Sender<Batch>,
    wake: &(dyn Fn() + Send + Sync),
) -> EndpointExit {
    let mut ep = Endpoint::new(spec);
    let mut exit = real_time_loop(&mut ep, commands, datagrams, events, wake);
    exit.send_errors = ep.send_errors;
    exit
}

/// Runs `ep` against the clock until `end`, until `commands` is closed, or until the event
/// receiver is dropped.
fn real_time_loop(
    ep: &mut Endpoint,
    commands: Receiver<Action>,
    datagrams: Receiver<Vec<u8>>,
    events: Sender<Batch>,
    wake: &(dyn Fn() + Send + Sync),
) -> EndpointExit {
    let (clock, end) = (ep.clock.clone(), ep.end);
    let mut exit = EndpointExit::default();
    let mut r = Reports::default();
    let mut backlog: VecDeque<Batch> = VecDeque::new();
    let mut pending: Option<Action> = None;

    loop {
        if !clock.is_paused() {
            let now = clock.now();
            if end.is_some_and(|end| now >= end) {
                push_batch(&mut backlog, &mut r);
                // A consumer that drains until the channel closes gets every event; one that
                // stopped reading costs at most FINAL_FLUSH, and closing the commands ends the
                // wait at once.
                let deadline = Instant::now() + FINAL_FLUSH;
                while !backlog.is_empty() && Instant::now() < deadline {
                    if !flush(&mut backlog, &events, wake)
                        || matches!(commands.try_recv(), Err(TryRecvError::Disconnected))
                    {
                        break;
                    }
                    if !backlog.is_empty() {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
                exit.ran_to_end = true;
                return exit;
            }
            ep.advance_to(now, &mut r.ev);
        }
        // Commands apply at the clock's reading, after every instant up to it has run.
        loop {
            let action = match pending.take().map(Ok).unwrap_or_else(|| commands.try_recv()) {
                Err(TryRecvError::Disconnected) => return exit,
                Ok(action) => action,
                Err(TryRecvError::Empty) => break,
            };
            apply_action(ep, action, clock.now(), &mut r);
        }
        push_batch(&mut backlog, &mut r);
        if !flush(&mut backlog, &events, wake) {
            return exit;
        }
        if clock.is_paused() {
            // Datagrams wait in the reader's queue; they meet the link when time runs again.
            std::thread::sleep(PAUSED_POLL);
            continue;
        }

        let due = end.map_or(ep.next_due(), |end| ep.next_due().min(end));
        let wait_us = due.0.saturating_sub(clock.now().0);
        if wait_us == 0 {
            continue;
        }
        let wait = Duration::from_micros(wait_us).min(MAX_WAIT);
        crossbeam_channel::select! {
            recv(datagrams) -> d => match d {
                Ok(bytes) => ep.arrive(bytes, clock.now(), &mut r.ev),
                Err(_) => {
                    // The reader ended on its own: the socket failed.
                    exit.recv_errors += 1;
                    return exit;
                }
            },
            recv(commands) -> c => match c {
                Ok(action) => pending = Some(action),
                Err(_) => return exit,
            },
            default(wait) => {}
        }
    }
}

/// Queues what happened since the last batch (the UDP transport runs one lane).
fn push_batch(backlog: &mut VecDeque<Batch>, r: &mut Reports) {
    if !r.ev.is_empty() || !r.actions.is_empty() || r.error.is_some() {
        backlog.push_back(Batch {
            lane: 0,
            events: std::mem::take(&mut r.ev),
            actions: std::mem::take(&mut r.actions),
            error: r.error.take(),
        });
    }
}

/// Hands queued batches to the consumer without blocking; false when the consumer is gone.
fn flush(backlog: &mut VecDeque<Batch>, events: &Sender<Batch>, wake: &(dyn Fn() + Send + Sync)) -> bool {
    let mut delivered = false;
    while let Some(batch) = backlog.pop_front() {
        match events.try_send(batch) {
            Ok(()) => delivered = true,
            Err(TrySendError::Full(batch)) => {
                backlog.push_front(batch);
                break;
            }
            Err(TrySendError::Disconnected(_)) => return false,
        }
    }
    if delivered {
        wake();
    }
    true
}
