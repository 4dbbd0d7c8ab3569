//! The relay thread: one poll over the listening socket, every client's socket towards the
//! server, the delivery timer and the control waker; every client's links; one clock.
//!
//! Each turn of the loop serves, in time order, every scripted step and every delivery due by
//! now, then reads what the sockets hold, then waits for the next deadline ([`super::timer`]).
//! Before each datagram is put on its link, everything due by its own arrival instant is served
//! first, so the events come out in time order and a link's decisions depend only on what was
//! sent on it before (the basis of [`super::rerun`]). A datagram due at once (no delay
//! configured) leaves in the same turn, before the next is read: the proxy's own latency is a
//! socket read, a link decision and a socket write.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ackscope_protocol::{Action, ClientId, Dir, Event, EventKind, Scenario, SimTime, Step, RUN_WIDE};
use anyhow::{anyhow, Result};
use crossbeam_channel::{Receiver, Sender, TrySendError};
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};

use super::apply::{apply_to_pair, is_link_setting};
use super::batch::Batch;
use super::bytes::{Datagram, Forward};
use super::client::{upstream_socket, Client, NEVER};
use super::config::{ProxyConfig, MAX_DATAGRAM_BYTES};
use super::schedule::{Due, Schedule};
use super::stats::{ClientSummary, RelayOutcome, RunCounters};
use super::timer::Timer;

pub const LISTEN: Token = Token(0);
pub const WAKER: Token = Token(1);
const TIMER: Token = Token(2);
/// Client slot `s` registers its socket towards the server as `Token(FIRST_CLIENT_TOKEN + s)`.
const FIRST_CLIENT_TOKEN: usize = 3;

/// Datagrams read from one socket before the loop serves deadlines again (the socket is read on
/// in the next turn): a flood on one socket cannot hold deliveries back.
const READ_BUDGET: usize = 64;

/// What the relay's owner can ask of it.
pub enum Control {
    /// Applies a link change now, to every client (`None`) or one; answered on `reply`.
    Apply { client: Option<ClientId>, action: Action, reply: Sender<Result<(), String>> },
    /// Reports what the relay holds now.
    Status(Sender<RelayStatus>),
    /// Stops the relay: what its links still hold is not forwarded.
    Stop,
}

/// What the relay holds at one moment: the measure of its memory, structure by structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelayStatus {
    /// Clients with a socket and links (expired ones still delivering included).
    pub live_clients: usize,
    /// Client slots allocated (the most live at once so far: slots are reused).
    pub slots: usize,
    /// Addresses mapped to clients.
    pub addresses: usize,
    /// Entries in the delivery schedule (live and stale).
    pub schedule_entries: usize,
    /// Summaries of expired clients kept for the report.
    pub expired_summaries: usize,
    /// Copies on every link.
    pub in_flight: usize,
}

pub struct Relay {
    poll: Poll,
    listen: UdpSocket,
    cfg: ProxyConfig,
    /// The run-wide scenario in force (its script taken out into `script`).
    scenario: Scenario,
    script: Vec<Step>,
    next_step: usize,
    clients: Vec<Option<Client>>,
    free_slots: Vec<usize>,
    by_addr: HashMap<SocketAddr, usize>,
    next_id: ClientId,
    finished: Vec<ClientSummary>,
    schedule: Schedule,
    start: Instant,
    timer: Timer,
    control: Receiver<Control>,
    out: Sender<Batch>,
    batch: Batch,
    buf: Vec<u8>,
    counters: RunCounters,
    /// Sockets left readable when their read budget ran out.
    unread: Vec<Token>,
    /// The sockets to read this turn (kept to reuse its allocation).
    tokens: Vec<Token>,
    next_expiry_check: SimTime,
    expiry_check_every: SimTime,
    /// When the last batch went to the owner (see [`HAND_OVER_EVERY`]).
    handed_at: Instant,
}

/// Longest the relay keeps events before handing them to the owner while it is busy, and the
/// least time to its next deadline for which it hands them over before waiting. Handing over on
/// every turn of the loop woke the owner's thread (a futex wake and a new batch's allocation) up
/// to 20,000 times a second, each wake-up a thread competing with the relay for one of two shared
/// cores. Fewer wake-ups cost the owner at most this much delay; their effect on the delay's p99
/// could not be told from the machine's load in `proxy_bench` (README, Proxy figures).
const HAND_OVER_EVERY: Duration = Duration::from_millis(2);
/// Events in a batch that are handed over at once whatever the time.
const HAND_OVER_EVENTS: usize = 4096;

impl Relay {
    /// A relay on `listen` (already bound and registered as [`LISTEN`]) with the waker registered.
    pub fn new(
        cfg: ProxyConfig,
        poll: Poll,
        listen: UdpSocket,
        control: Receiver<Control>,
        out: Sender<Batch>,
    ) -> Result<Self> {
        let timer = Timer::new(cfg.spin).map_err(|e| anyhow!("cannot create the delivery timer: {e}"))?;
        timer.register(poll.registry(), TIMER).map_err(|e| anyhow!("cannot register the delivery timer: {e}"))?;
        let mut scenario = cfg.scenario.clone();
        let mut script = std::mem::take(&mut scenario.script);
        ackscope_protocol::action::sort_steps(&mut script);
        let every = (cfg.expire_after / 8).clamp(Duration::from_millis(1), Duration::from_secs(1));
        Ok(Self {
            poll,
            listen,
            scenario,
            script,
            next_step: 0,
            clients: Vec::new(),
            free_slots: Vec::new(),
            by_addr: HashMap::new(),
            next_id: 1,
            finished: Vec::new(),
            schedule: Schedule::default(),
            start: Instant::now(),
            timer,
            control,
            out,
            batch: Batch::default(),
            buf: vec![0; MAX_DATAGRAM_BYTES],
            counters: RunCounters::default(),
            unread: Vec::new(),
            next_expiry_check: SimTime(every.as_micros() as u64),
            expiry_check_every: SimTime(every.as_micros() as u64),
            tokens: Vec::new(),
            handed_at: Instant::now(),
            cfg,
        })
    }

    /// The proxy's clock: microseconds since it started.
    fn now(&self) -> SimTime {
        SimTime(self.start.elapsed().as_micros() as u64)
    }

    fn instant_of(&self, t: SimTime) -> Instant {
        self.start + Duration::from_micros(t.0)
    }

    /// Runs until told to stop (or the owner hangs up).
    pub fn run(mut self) -> Result<RelayOutcome> {
        let mut events = Events::with_capacity(1024);
        loop {
            let now = self.now();
            self.advance_to(now);
            self.check_expiry(now);
            if self.take_controls()? {
                break;
            }
            let deadline = self.next_deadline().map(|d| self.instant_of(d));
            // Hand over when the batch is large or old, or before a wait long enough that the
            // owner would otherwise see nothing for a while (an idle proxy hands over at once).
            let at = Instant::now();
            let waits_long =
                self.unread.is_empty() && deadline.is_none_or(|d| d.saturating_duration_since(at) >= HAND_OVER_EVERY);
            if waits_long
                || self.batch.events.len() >= HAND_OVER_EVENTS
                || at.duration_since(self.handed_at) >= HAND_OVER_EVERY
            {
                self.hand_over();
                self.handed_at = at;
            }
            let timeout = if self.unread.is_empty() {
                self.timer.timeout_for(Instant::now(), deadline)?
            } else {
                Some(Duration::ZERO)
            };
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(anyhow!("poll failed: {e}")),
            }
            let mut tokens = std::mem::take(&mut self.tokens);
            tokens.clear();
            tokens.append(&mut self.unread);
            for ev in events.iter() {
                match ev.token() {
                    TIMER => self.timer.fired(),
                    WAKER => {}
                    t => tokens.push(t),
                }
            }
            tokens.sort_unstable();
            tokens.dedup();
            for &t in &tokens {
                self.read_socket(t);
            }
            self.tokens = tokens;
        }
        Ok(self.finish())
    }

    /// The earliest instant something is due: a delivery, a scripted step, an expiry check.
    fn next_deadline(&self) -> Option<SimTime> {
        let mut d = self.schedule.peek().map(|d| d.at);
        if let Some(step) = self.script.get(self.next_step) {
            d = Some(d.map_or(step.at, |x| x.min(step.at)));
        }
        if self.clients.len() > self.free_slots.len() {
            d = Some(d.map_or(self.next_expiry_check, |x| x.min(self.next_expiry_check)));
        }
        d
    }

    /// Serves every scripted step and delivery due by `now`, in time order (a step before the
    /// deliveries of its instant, as a simulation applies its script).
    fn advance_to(&mut self, now: SimTime) {
        loop {
            let step_at = self.script.get(self.next_step).map_or(NEVER, |s| s.at);
            let due_at = self.schedule.peek().map_or(NEVER, |d| d.at);
            if step_at <= now && step_at <= due_at {
                let step = self.script[self.next_step].clone();
                self.next_step += 1;
                // The script was checked against the parameter table when loaded.
                let _ = self.apply(step.at, None, &step.action);
            } else if due_at <= now {
                let due = self.schedule.pop().expect("peeked");
                self.serve(due, now);
            } else {
                break;
            }
        }
    }

    /// Delivers the next copy of the link `due` names, if the entry is still live.
    fn serve(&mut self, due: Due, now: SimTime) {
        let Some(c) = self.clients.get_mut(due.slot).and_then(Option::as_mut) else { return };
        if c.id != due.client || c.scheduled[due.dir] != due.at {
            return;
        }
        c.scheduled[due.dir] = NEVER;
        self.deliver_one(due.slot, due.dir(), now);
        self.reschedule(due.slot, due.dir());
    }

    /// Puts the link's next delivery in the schedule.
    fn reschedule(&mut self, slot: usize, dir: Dir) {
        let Some(c) = self.clients[slot].as_mut() else { return };
        if let Some(at) = c.links[dir.index()].next_delivery() {
            let due = Due { at, slot, client: c.id, dir: dir.index() };
            self.schedule.note(due, &mut c.scheduled[dir.index()]);
        }
    }

    /// Takes the link's next copy due by `now` off it and sends it on.
    fn deliver_one(&mut self, slot: usize, dir: Dir, now: SimTime) -> bool {
        let Some(c) = self.clients[slot].as_mut() else { return false };
        let first = self.batch.events.len();
        let Some((uid, bytes)) = c.links[dir.index()].pop_due(now, &mut self.batch.events) else { return false };
        let mut read_at = now;
        for e in &mut self.batch.events[first..] {
            e.client = c.id;
            if let EventKind::LinkDelivered { delay_us, .. } = e.kind {
                read_at = SimTime(e.time.0.saturating_sub(delay_us as u64));
            }
        }
        let sent = match dir {
            Dir::AtoB => self.listen.send_to(&bytes, c.addr).map(|_| ()),
            Dir::BtoA => c.upstream.send(&bytes).map(|_| ()),
        };
        let left = SimTime(self.start.elapsed().as_micros() as u64);
        let st = &mut c.stats[dir.index()];
        match sent {
            Ok(()) => {
                st.forwarded += 1;
                st.added.record(left.saturating_since(read_at).0);
                if self.cfg.keep_bytes {
                    self.batch.forwards.push(Forward { client: c.id, uid, at: left });
                }
            }
            Err(_) => st.send_failed += 1,
        }
        true
    }

    /// Reads what socket `t` holds, up to the read budget.
    fn read_socket(&mut self, t: Token) {
        let mut buf = std::mem::take(&mut self.buf);
        let slot = t.0.wrapping_sub(FIRST_CLIENT_TOKEN);
        for _ in 0..READ_BUDGET {
            let got = if t == LISTEN {
                self.listen.recv_from(&mut buf).map(|(n, from)| (n, Some(from)))
            } else {
                match self.clients.get(slot).and_then(Option::as_ref) {
                    Some(c) if !c.draining => c.upstream.recv(&mut buf).map(|n| (n, None)),
                    // Gone or expired since the poll reported it: nothing to read there.
                    _ => {
                        self.buf = buf;
                        return;
                    }
                }
            };
            match got {
                Ok((n, Some(from))) => self.on_client_datagram(from, &buf[..n]),
                Ok((n, None)) => self.on_server_datagram(slot, &buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.buf = buf;
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // An unreachable server shows as an error on the client's connected socket; the
                // next datagram may well get through.
                Err(_) => self.counters.receive_errors += 1,
            }
        }
        self.unread.push(t);
        self.buf = buf;
    }

    fn on_client_datagram(&mut self, from: SocketAddr, data: &[u8]) {
        let now = self.now();
        self.advance_to(now);
        let slot = match self.by_addr.get(&from) {
            Some(&s) => s,
            None => match self.admit(from, now) {
                Some(s) => s,
                None => {
                    self.counters.refused_datagrams += 1;
                    return;
                }
            },
        };
        if let Some(c) = self.clients[slot].as_mut() {
            c.last_heard = now;
        }
        self.send_on(slot, Dir::BtoA, now, data);
    }

    fn on_server_datagram(&mut self, slot: usize, data: &[u8]) {
        let now = self.now();
        self.advance_to(now);
        self.send_on(slot, Dir::AtoB, now, data);
    }

    /// A new client from `from`: its socket towards the server, its links; `None` when the client
    /// limit is reached or no socket can be had.
    fn admit(&mut self, from: SocketAddr, now: SimTime) -> Option<usize> {
        let live = self.clients.len() - self.free_slots.len();
        if live >= self.cfg.max_clients {
            return None;
        }
        let mut upstream =
            upstream_socket(self.cfg.forward, self.cfg.upstream_bind, self.cfg.upstream_buffer_bytes).ok()?;
        let slot = self.free_slots.pop().unwrap_or_else(|| {
            self.clients.push(None);
            self.clients.len() - 1
        });
        let token = Token(FIRST_CLIENT_TOKEN + slot);
        if self.poll.registry().register(&mut upstream, token, Interest::READABLE).is_err() {
            self.free_slots.push(slot);
            return None;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.clients[slot] = Some(Client::new(id, from, upstream, &self.scenario, now));
        self.by_addr.insert(from, slot);
        self.batch.joined.push((id, from, now));
        Some(slot)
    }

    /// Puts a datagram read at `now` on the client's link for `dir` and sends on what is due.
    fn send_on(&mut self, slot: usize, dir: Dir, now: SimTime, data: &[u8]) {
        let keep = self.cfg.keep_bytes;
        let Some(c) = self.clients[slot].as_mut() else { return };
        let uid = c.next_uid;
        c.next_uid += 1;
        let first = self.batch.events.len();
        c.links[dir.index()].send(now, uid, data.to_vec(), &mut self.batch.events);
        let st = &mut c.stats[dir.index()];
        st.datagrams += 1;
        st.bytes += data.len() as u64;
        for e in &mut self.batch.events[first..] {
            e.client = c.id;
            match e.kind {
                EventKind::LinkDropped { .. } => st.dropped += 1,
                EventKind::LinkDuplicated { .. } => st.duplicated += 1,
                _ => {}
            }
        }
        if keep {
            let d = Datagram { client: c.id, dir, uid, at: now, bytes: data.to_vec(), forwarded: Vec::new() };
            self.batch.datagrams.push(d);
        }
        // Everything else due by now was served before this datagram: what is due on this link
        // now is this datagram (no delay configured), sent on at once.
        while self.deliver_one(slot, dir, now) {}
        self.reschedule(slot, dir);
    }

    /// Applies a link change at `at` to every client (`client` None, also the settings new
    /// clients get) or to one, reporting each change as a `ParamChanged` event.
    fn apply(&mut self, at: SimTime, client: Option<ClientId>, action: &Action) -> Result<(), String> {
        let is_link = matches!(action, Action::Link { .. })
            || matches!(action, Action::Set(change) if is_link_setting(change.name()));
        if !is_link {
            let what = match action {
                Action::Set(change) => change.name().to_string(),
                _ => action.name().to_string(),
            };
            return Err(format!(
                "the proxy runs links only: '{what}' has no effect on it (link.* settings and link steps do)"
            ));
        }
        let changes = match client {
            None => {
                let Some((pair, changes)) =
                    apply_to_pair(&self.scenario, self.scenario.link.clone(), action).map_err(|e| format!("{e:#}"))?
                else {
                    return Ok(());
                };
                // Check every client first: a change applies to all or none.
                let mut pairs = Vec::new();
                for c in self.clients.iter().flatten() {
                    let p = apply_to_pair(&self.scenario, c.pair(), action).map_err(|e| format!("{e:#}"))?;
                    pairs.push(p.map(|p| p.0).unwrap_or(c.pair()));
                }
                for (c, p) in self.clients.iter_mut().flatten().zip(pairs) {
                    c.set_pair(at, p);
                }
                self.scenario.link = pair;
                changes
            }
            Some(id) => {
                let c = self
                    .clients
                    .iter_mut()
                    .flatten()
                    .find(|c| c.id == id)
                    .ok_or_else(|| format!("no live client {id}"))?;
                let Some((pair, changes)) =
                    apply_to_pair(&self.scenario, c.pair(), action).map_err(|e| format!("{e:#}"))?
                else {
                    return Ok(());
                };
                c.set_pair(at, pair);
                changes
            }
        };
        let who = client.unwrap_or(RUN_WIDE);
        for (name, value) in changes {
            self.batch.events.push(Event::for_client(at, who, EventKind::ParamChanged { name, value }));
        }
        Ok(())
    }

    /// Expires clients silent for the expiry time, and frees expired ones whose links are empty.
    fn check_expiry(&mut self, now: SimTime) {
        if now < self.next_expiry_check {
            return;
        }
        self.next_expiry_check = now.plus_micros(self.expiry_check_every.0);
        let after = SimTime(self.cfg.expire_after.as_micros() as u64);
        for slot in 0..self.clients.len() {
            let Some(c) = self.clients[slot].as_mut() else { continue };
            if !c.draining && now.saturating_since(c.last_heard) >= after {
                c.draining = true;
                let _ = self.poll.registry().deregister(&mut c.upstream);
                self.by_addr.remove(&c.addr);
                self.batch.expired.push((c.id, now));
            }
            if c.draining && c.in_flight() == 0 {
                let c = self.clients[slot].take().expect("live");
                self.finished.push(c.summary(true));
                self.free_slots.push(slot);
            }
        }
    }

    /// Hands the batch over when the owner has room; it keeps growing here otherwise.
    fn hand_over(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.batch);
        self.counters.events += batch.events.len() as u64;
        match self.out.try_send(batch) {
            Ok(()) => {}
            Err(TrySendError::Full(b)) | Err(TrySendError::Disconnected(b)) => {
                self.counters.events -= b.events.len() as u64;
                let mut b = b;
                b.append(std::mem::take(&mut self.batch));
                self.batch = b;
            }
        }
    }

    /// Applies what the owner asked; true when it asked to stop (or hung up).
    fn take_controls(&mut self) -> Result<bool> {
        loop {
            match self.control.try_recv() {
                Ok(Control::Apply { client, action, reply }) => {
                    let now = self.now();
                    self.advance_to(now);
                    let result = self.apply(now, client, &action);
                    if result.is_ok() && client.is_none() {
                        self.batch.actions.push(Step::new(now, action));
                    }
                    let _ = reply.send(result);
                }
                Ok(Control::Status(reply)) => {
                    let _ = reply.send(self.status());
                }
                Ok(Control::Stop) => return Ok(true),
                Err(crossbeam_channel::TryRecvError::Empty) => return Ok(false),
                Err(crossbeam_channel::TryRecvError::Disconnected) => return Ok(true),
            }
        }
    }

    fn status(&self) -> RelayStatus {
        RelayStatus {
            live_clients: self.clients.len() - self.free_slots.len(),
            slots: self.clients.len(),
            addresses: self.by_addr.len(),
            schedule_entries: self.schedule.len(),
            expired_summaries: self.finished.len(),
            in_flight: self.clients.iter().flatten().map(Client::in_flight).sum(),
        }
    }

    /// The figures of every client, live ones as of now; the last batch handed over.
    fn finish(mut self) -> RelayOutcome {
        let now = self.now();
        for c in self.clients.iter().flatten() {
            self.counters.in_flight_at_stop += c.in_flight() as u64;
            self.finished.push(c.summary(c.draining));
        }
        self.finished.sort_by_key(|c| c.client);
        let batch = std::mem::take(&mut self.batch);
        self.counters.events += batch.events.len() as u64;
        // The owner reads until the channel closes: a blocking send loses nothing.
        let _ = self.out.send(batch);
        RelayOutcome { clients: self.finished, counters: self.counters, seconds: now.as_secs_f64() }
    }
}
