//! One protocol endpoint on its own thread, on a real UDP socket, with the lossy link applied on
//! its receive side.
//!
//! The link sits where packets arrive: every datagram read from the socket is put on a
//! [`protocol::Link`](ackscope_protocol::Link) for the direction *into* this endpoint and handed to
//! the [`Peer`] when the link says it is due. Two endpoints in different processes therefore each
//! model one direction, and nothing between them (loopback) has to be lossy. Time is real: the
//! endpoint's `SimTime` is microseconds since the run started, read here from a monotonic clock,
//! never in the protocol crate.
//!
//! The loop follows the same order as the simulation at each instant (scripted link steps,
//! deliveries, then send ticks, then stats), so a strategy behaves the same over UDP as in-process.

use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::io::ErrorKind;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ackscope_protocol::registry::live_settings;
use ackscope_protocol::script::LinkStep;
use ackscope_protocol::Ticker;
use ackscope_protocol::{Dir, Event, EventKind, FlowControl, Link, Peer, PeerCommand, Scenario, Side, SimTime};
use crossbeam_channel::{bounded, Receiver, SendTimeoutError, Sender, TryRecvError, TrySendError};

use super::{Batch, Command};
use crate::overrides;
use crate::session::Change;

/// Longest the endpoint waits for a datagram before looking at its clock and commands again.
const MAX_WAIT: Duration = Duration::from_millis(5);
/// How often a paused endpoint looks at its commands.
const PAUSED_POLL: Duration = Duration::from_millis(2);
/// Send ticks an endpoint catches up at once after a stall; beyond that it skips ahead rather
/// than bursting.
const MAX_CATCH_UP_TICKS: u32 = 4;
/// Longest an endpoint that reached its end waits for its consumer to take the last events.
const FINAL_FLUSH: Duration = Duration::from_secs(2);
/// Largest UDP payload (IPv4): the receive buffer never truncates a datagram.
const MAX_DATAGRAM_BYTES: usize = 65_536;
/// Send ids are `n * UID_KINDS + kind`: kind 0 and 1 are side A's and side B's sends, 2 and 3
/// datagrams side A or side B received without a name for them (another process's sends, see
/// [`UidBook`]). Ids from different sources never collide and stay small, since ground-truth
/// tallies (the simulation's among them) index tables by id.
pub const UID_KINDS: u64 = 4;

/// The id of `side`'s `n`-th send.
pub fn send_uid(side: Side, n: u64) -> u64 {
    n * UID_KINDS + side.index() as u64
}

/// The id of the `n`-th datagram `receiver` could not name.
pub fn unnamed_uid(receiver: Side, n: u64) -> u64 {
    n * UID_KINDS + 2 + receiver.index() as u64
}

/// A run's clock, shared by its endpoints so their events share one time axis; pausable.
#[derive(Debug)]
pub struct RunClock {
    state: Mutex<ClockState>,
}

#[derive(Debug, Clone, Copy)]
struct ClockState {
    wall_base: Instant,
    sim_base: SimTime,
    paused: bool,
}

impl RunClock {
    /// A clock reading zero now.
    pub fn start() -> Self {
        Self { state: Mutex::new(ClockState { wall_base: Instant::now(), sim_base: SimTime::ZERO, paused: false }) }
    }

    fn lock(&self) -> MutexGuard<'_, ClockState> {
        // The state is plain data, valid even if a holder panicked.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Microseconds of running (not paused) time since the start.
    pub fn now(&self) -> SimTime {
        let s = *self.lock();
        if s.paused {
            s.sim_base
        } else {
            s.sim_base.plus_micros(s.wall_base.elapsed().as_micros() as u64)
        }
    }

    /// Freezes the clock (idempotent).
    pub fn pause(&self) {
        let mut s = self.lock();
        if !s.paused {
            s.sim_base = s.sim_base.plus_micros(s.wall_base.elapsed().as_micros() as u64);
            s.paused = true;
        }
    }

    /// Lets the clock run again from where it was frozen (idempotent).
    pub fn resume(&self) {
        let mut s = self.lock();
        if s.paused {
            s.wall_base = Instant::now();
            s.paused = false;
        }
    }

    pub fn is_paused(&self) -> bool {
        self.lock().paused
    }
}

/// Lets the receiving endpoint name a datagram by the id its sender gave that send, when both
/// endpoints live in one process.
///
/// Ground truth (was this acked send ever delivered?) needs the link events on the receiving side
/// and the `PacketSent` on the sending side to carry the same id, but the wire format must stay
/// the strategy's own (for `--raw` interop), so the id cannot travel in the datagram. The sender
/// records `content -> id` before the datagram leaves; the receiver looks its bytes up. Identical
/// datagrams queue in send order.
#[derive(Debug, Default)]
pub struct UidBook {
    map: Mutex<HashMap<u64, VecDeque<u64>>>,
}

/// Entries kept before the book forgets everything (only datagrams lost outside the simulated
/// link, e.g. by a full socket buffer, are never taken back out).
const UID_BOOK_MAX_ENTRIES: usize = 1 << 16;

impl UidBook {
    fn key(bytes: &[u8]) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        bytes.hash(&mut h);
        h.finish()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, VecDeque<u64>>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes that the datagram `bytes` is send `uid`.
    pub fn record(&self, bytes: &[u8], uid: u64) {
        let mut m = self.lock();
        if m.len() >= UID_BOOK_MAX_ENTRIES {
            m.clear();
        }
        m.entry(Self::key(bytes)).or_default().push_back(uid);
    }

    /// The send id of the oldest unclaimed datagram with these bytes.
    pub fn take(&self, bytes: &[u8]) -> Option<u64> {
        let mut m = self.lock();
        let k = Self::key(bytes);
        let q = m.get_mut(&k)?;
        let uid = q.pop_front();
        if q.is_empty() {
            m.remove(&k);
        }
        uid
    }
}

/// The scenario's scripted link changes for the direction into one endpoint, in time order.
struct LinkScript {
    dir: Dir,
    steps: Vec<LinkStep>,
    next: usize,
}

impl LinkScript {
    fn new(scenario: &Scenario, dir: Dir) -> Self {
        let mut steps: Vec<LinkStep> = scenario.script.iter().filter(|s| s.dir.includes(dir)).copied().collect();
        steps.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
        Self { dir, steps, next: 0 }
    }

    /// Applies every step due at `now` to `link` (and the scenario), as `ParamChanged` events.
    fn apply_due(&mut self, now: SimTime, scenario: &mut Scenario, link: &mut Link, ev: &mut Vec<Event>) {
        while let Some(step) = self.steps.get(self.next).filter(|s| SimTime::from_secs_f64(s.at_s) <= now) {
            self.next += 1;
            let mut cfg = *scenario.link.get(self.dir);
            let changed = step.set.apply(&mut cfg);
            *scenario.link.get_mut(self.dir) = cfg;
            link.set_config(cfg);
            let d = match self.dir {
                Dir::AtoB => "a_to_b",
                Dir::BtoA => "b_to_a",
            };
            for (field, v) in changed {
                let kind = EventKind::ParamChanged { name: format!("link.{d}.{field}"), value: v.to_string() };
                ev.push(Event { time: now, kind });
            }
        }
    }
}

/// Everything one endpoint thread needs.
pub struct EndpointSpec {
    pub side: Side,
    pub scenario: Scenario,
    pub peer: Box<dyn Peer>,
    /// Bound and connected to the other endpoint.
    pub socket: UdpSocket,
    pub clock: Arc<RunClock>,
    /// The thread ends by itself at this time (None: only on `Shutdown`).
    pub end: Option<SimTime>,
    /// In-process runs: one book per direction (indexed by `Dir::index`), shared by both ends.
    pub books: Option<Arc<[UidBook; 2]>>,
    /// This endpoint reports live changes (`ParamChanged` events, `Batch::changes`, refused
    /// changes): true for a lone endpoint and for side A of an in-process run, so a change both
    /// ends apply is recorded once.
    pub records_changes: bool,
}

/// What an endpoint thread reports when it ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndpointExit {
    /// Datagrams the socket refused to send (e.g. nobody listening yet: ICMP port unreachable).
    pub send_errors: u64,
    /// Socket reads that failed for another reason than a timeout or a refused connection.
    pub recv_errors: u64,
    /// True when it ended at `end`, false on `Shutdown` or when the event receiver went away.
    pub ran_to_end: bool,
}

/// Runs the endpoint until `end`, `Shutdown`, or the event receiver is dropped.
///
/// A second thread reads the socket and stamps nothing: it only queues datagrams, so this thread
/// waits on one channel with a precise timeout (socket read timeouts are kernel-tick coarse, several
/// ms, which showed as late deliveries and irregular send ticks). The reader is joined before this
/// returns, so the endpoint leaves no thread behind.
pub fn run_endpoint(
    spec: EndpointSpec,
    commands: Receiver<Command>,
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

fn endpoint_loop(
    mut spec: EndpointSpec,
    commands: Receiver<Command>,
    datagrams: Receiver<Vec<u8>>,
    events: Sender<Batch>,
    wake: &(dyn Fn() + Send + Sync),
) -> EndpointExit {
    let side = spec.side;
    let dir_in: Dir = side.other().outgoing();
    let dir_out: Dir = side.outgoing();
    let mut link = Link::new(dir_in, *spec.scenario.link.get(dir_in), spec.scenario.seed);
    let mut ticker = Ticker { base: SimTime::ZERO, count: 0, pps: spec.scenario.send_rate_pps };
    let mut flow = FlowControl::new(spec.scenario.flow);
    let mut next_stats = SimTime::ZERO;
    let mut sends: u64 = 0;
    let mut incoming: u64 = 0;
    let mut exit = EndpointExit::default();
    let mut ev: Vec<Event> = Vec::new();
    let mut backlog: VecDeque<Batch> = VecDeque::new();
    let mut changes: Vec<Change> = Vec::new();
    let mut error: Option<String> = None;
    let mut pending: Option<Command> = None;
    let clock = spec.clock.clone();
    let mut script = LinkScript::new(&spec.scenario, dir_in);

    loop {
        loop {
            let cmd = match pending.take().map(Ok).unwrap_or_else(|| commands.try_recv()) {
                Ok(cmd) => cmd,
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return exit,
            };
            match cmd {
                Command::Shutdown => return exit,
                Command::Set { name, value } => {
                    // As `Simulation::reconfigure`: links and send rate where they changed, then
                    // the peer takes its live settings; seed and strategy are fixed per run.
                    let now = clock.now();
                    let mut s = spec.scenario.clone();
                    match overrides::apply(&mut s, &format!("{name}={value}")) {
                        Err(e) => {
                            if spec.records_changes {
                                error = Some(format!("{e:#}"));
                            }
                        }
                        Ok(()) => {
                            s.seed = spec.scenario.seed;
                            s.strategy = spec.scenario.strategy;
                            if s.link.get(dir_in) != spec.scenario.link.get(dir_in) {
                                link.set_config(*s.link.get(dir_in));
                            }
                            if s.send_rate_pps != spec.scenario.send_rate_pps {
                                ticker = Ticker { base: now, count: 0, pps: s.send_rate_pps };
                            }
                            spec.scenario = s;
                            spec.peer.command(now, PeerCommand::Reconfigure(live_settings(&spec.scenario)));
                            if spec.records_changes {
                                let kind = EventKind::ParamChanged { name: name.clone(), value: value.clone() };
                                ev.push(Event { time: now, kind });
                                changes.push(Change { at_us: now.0, name, value });
                            }
                        }
                    }
                }
                Command::Burst(s) if s == side => spec.peer.command(clock.now(), PeerCommand::Burst),
                Command::SendChunk(s, bytes) if s == side => {
                    spec.peer.command(clock.now(), PeerCommand::SendChunk { bytes })
                }
                Command::Burst(_) | Command::SendChunk(..) => {}
                Command::Pause => clock.pause(),
                Command::Resume => clock.resume(),
            }
        }
        if clock.is_paused() {
            // Datagrams wait in the reader's queue; they meet the link when time runs again.
            push_batch(&mut backlog, &mut ev, &mut changes, &mut error);
            if !flush(&mut backlog, &events, wake) {
                return exit;
            }
            std::thread::sleep(PAUSED_POLL);
            continue;
        }
        let now = clock.now();
        if spec.end.is_some_and(|end| now >= end) {
            push_batch(&mut backlog, &mut ev, &mut changes, &mut error);
            // A consumer that drains until the channel closes gets every event; one that stopped
            // reading costs at most FINAL_FLUSH, and a `Shutdown` ends the wait at once.
            let deadline = Instant::now() + FINAL_FLUSH;
            while !backlog.is_empty() && Instant::now() < deadline {
                if !flush(&mut backlog, &events, wake) || matches!(commands.try_recv(), Ok(Command::Shutdown)) {
                    break;
                }
                if !backlog.is_empty() {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            exit.ran_to_end = true;
            return exit;
        }

        script.apply_due(now, &mut spec.scenario, &mut link, &mut ev);

        while let Some((_uid, bytes)) = link.pop_due(now, &mut ev) {
            spec.peer.receive(now, &bytes, &mut ev);
        }

        let mut ticks = 0;
        while ticker.next() <= now {
            if ticks == MAX_CATCH_UP_TICKS {
                // Stalled (paused debugger, overloaded machine): skip ahead instead of bursting.
                ticker = Ticker { base: now, count: 1, pps: ticker.pps };
                break;
            }
            ticks += 1;
            ticker.count += 1;
            spec.peer.on_tick(now, &mut ev);
            for _ in 0..ackscope_protocol::MAX_PACKETS_PER_TICK {
                let mut out = Vec::with_capacity(256);
                let Some(seq) = spec.peer.poll_send(now, &mut out, &mut ev) else {
                    break;
                };
                let uid = send_uid(side, sends);
                sends += 1;
                ev.push(Event { time: now, kind: EventKind::PacketSent { side, seq, bytes: out.len() as u32, uid } });
                if let Some(books) = &spec.books {
                    books[dir_out.index()].record(&out, uid);
                }
                if spec.socket.send(&out).is_err() {
                    exit.send_errors += 1;
                }
            }
        }

        if next_stats <= now {
            spec.peer.update(now, &mut ev);
            let stats = spec.peer.stats();
            ev.push(Event { time: now, kind: EventKind::Stats { side, stats } });
            if spec.scenario.flow.enabled {
                let rate = flow.update(now, stats.rtt_ms as f64);
                if flow.changed() {
                    let kind = EventKind::FlowMode { side, good: flow.is_good(), penalty_ms: flow.penalty_ms() as f32 };
                    ev.push(Event { time: now, kind });
                }
                if rate != ticker.pps {
                    ticker = Ticker { base: now, count: 1, pps: rate };
                }
            }
            let iv_us = (spec.scenario.stats_interval_ms.max(1.0) * 1000.0) as u64;
            next_stats = now.plus_micros(iv_us);
        }

        push_batch(&mut backlog, &mut ev, &mut changes, &mut error);
        if !flush(&mut backlog, &events, wake) {
            return exit;
        }

        let mut due = ticker.next().min(next_stats);
        if let Some(t) = link.next_delivery() {
            due = due.min(t);
        }
        if let Some(end) = spec.end {
            due = due.min(end);
        }
        let wait_us = due.0.saturating_sub(clock.now().0);
        if wait_us == 0 {
            continue;
        }
        let wait = Duration::from_micros(wait_us).min(MAX_WAIT);
        crossbeam_channel::select! {
            recv(datagrams) -> d => match d {
                Ok(bytes) => {
                    let t = clock.now();
                    script.apply_due(t, &mut spec.scenario, &mut link, &mut ev);
                    let uid = spec.books.as_ref().and_then(|b| b[dir_in.index()].take(&bytes)).unwrap_or_else(|| {
                        incoming += 1;
                        unnamed_uid(side, incoming - 1)
                    });
                    link.send(t, uid, bytes, &mut ev);
                }
                Err(_) => {
                    // The reader ended on its own: the socket failed.
                    exit.recv_errors += 1;
                    return exit;
                }
            },
            recv(commands) -> c => match c {
                Ok(cmd) => pending = Some(cmd),
                Err(_) => return exit,
            },
            default(wait) => {}
        }
    }
}

/// Queues what happened since the last batch (the UDP transport runs one lane).
fn push_batch(
    backlog: &mut VecDeque<Batch>,
    ev: &mut Vec<Event>,
    changes: &mut Vec<Change>,
    error: &mut Option<String>,
) {
    if !ev.is_empty() || !changes.is_empty() || error.is_some() {
        backlog.push_back(Batch {
            lane: 0,
            events: std::mem::take(ev),
            changes: std::mem::take(changes),
            error: error.take(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_book_names_identical_datagrams_in_send_order() {
        let book = UidBook::default();
        book.record(b"same", 4);
        book.record(b"other", 5);
        book.record(b"same", 6);
        assert_eq!(book.take(b"same"), Some(4));
        assert_eq!(book.take(b"same"), Some(6));
        assert_eq!(book.take(b"same"), None);
        assert_eq!(book.take(b"other"), Some(5));
    }

    #[test]
    fn paused_clock_stands_still_and_resumes_where_it_stopped() {
        let c = RunClock::start();
        std::thread::sleep(Duration::from_millis(5));
        c.pause();
        let t = c.now();
        assert!(t >= SimTime(5_000), "{t:?}");
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(c.now(), t);
        c.resume();
        let after = c.now();
        assert!(after >= t && after < t.plus_micros(15_000), "{t:?} -> {after:?}");
    }
}
