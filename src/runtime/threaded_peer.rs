//! Runs a protocol endpoint on a thread of its own behind the ordinary [`Peer`] interface.
//!
//! The simulation thread owns the link and virtual time; each endpoint lives on its own thread and
//! is driven by requests over channels. The endpoint sees exactly the calls, in exactly the order,
//! that an in-thread simulation makes, so a threaded run produces the same events as a
//! single-threaded one (tested), which keeps live recordings re-runnable from their header.
//! Dropping the handle stops and joins the thread.
//!
//! A request is a round trip between two threads, and on a busy machine each costs a scheduler
//! wake-up or two: a live run at 1000 packets/s made about six thousand a second and fell behind
//! the wall clock. So what the [`Peer`] contract fixes for an instant travels as one request:
//! a send tick is `on_tick` and then `poll_send` until it returns `None` or the endpoint's
//! packet limit is reached (the contract's call order, which every driver follows), so the
//! endpoint thread makes all of those calls on one request and the later `poll_send`s are
//! answered from its reply; a stats instant is `update` and then `stats`, so the estimates come
//! back with the update when anything reads them ([`Peer::set_reports_stats`]). Each call's
//! events are kept apart in the reply and handed out by the call that made them, so the events
//! come in the same order as from an endpoint in-thread.

use std::collections::VecDeque;

use ackscope_protocol::{Event, Peer, PeerCommand, Scenario, SimTime, StatsSample, MAX_PACKETS_PER_TICK};
use crossbeam_channel::{bounded, Receiver, Sender};

enum Request {
    /// A send tick: `on_tick`, then `poll_send` until `None` or the packet limit.
    Tick(SimTime),
    /// `on_tick` alone (calls not answered ahead).
    OnTick(SimTime),
    PollSend(SimTime),
    Receive(SimTime, Vec<u8>),
    /// `update`, then `stats` when asked for.
    Update(SimTime, bool),
    Stats,
    Command(SimTime, PeerCommand),
    UnackedReliable,
    ReportsPacketBeliefs(bool),
    MaxPacketsPerTick,
    ReportsStats(bool),
    ReportsRttSamples(bool),
}

/// What one `poll_send` made: its events and its packet, if any.
type Sent = (Vec<Event>, Option<(u32, Vec<u8>)>);

#[derive(Default)]
struct Reply {
    events: Vec<Event>,
    packet: Option<(u32, Vec<u8>)>,
    /// A tick's `poll_send` calls, in order (the last returned `None` unless the limit was hit).
    sends: Vec<Sent>,
    stats: Option<StatsSample>,
    count: usize,
    flag: bool,
}

/// A [`Peer`] whose calls are served by an endpoint on its own thread.
pub struct ThreadedPeer {
    requests: Option<Sender<Request>>,
    replies: Receiver<Reply>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The `poll_send`s the current tick made on the endpoint thread, not yet asked for, and the
    /// tick's instant.
    tick_sends: VecDeque<Sent>,
    tick_at: SimTime,
    /// The estimates made with the last update, until any other call (see the module doc).
    stats: Option<StatsSample>,
    /// Whether anything reads the stats ([`Peer::set_reports_stats`]; true at first).
    reports_stats: bool,
    /// Whether ticks and stats instants are answered ahead (see the module doc); without, every
    /// call is a round trip of its own, as before (kept to measure the difference and to test
    /// that both make the same events).
    ahead: bool,
}

/// How a [`ThreadedPeer`] serves the calls of one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calls {
    /// A tick's and a stats instant's calls on one request each (see the module doc).
    AnsweredAhead,
    /// Every call a round trip of its own.
    OneByOne,
}

fn serve(mut peer: Box<dyn Peer>, requests: Receiver<Request>, replies: Sender<Reply>) {
    for req in requests {
        let mut r = Reply::default();
        match req {
            Request::Tick(now) => {
                peer.on_tick(now, &mut r.events);
                // The driver's own limit: the peer's, capped by the contract's.
                for _ in 0..peer.max_packets_per_tick().min(MAX_PACKETS_PER_TICK) {
                    let (mut events, mut out) = (Vec::new(), Vec::with_capacity(256));
                    let packet = peer.poll_send(now, &mut out, &mut events).map(|seq| (seq, out));
                    let done = packet.is_none();
                    r.sends.push((events, packet));
                    if done {
                        break;
                    }
                }
            }
            Request::OnTick(now) => peer.on_tick(now, &mut r.events),
            Request::PollSend(now) => {
                let mut out = Vec::with_capacity(256);
                r.packet = peer.poll_send(now, &mut out, &mut r.events).map(|seq| (seq, out));
            }
            Request::Receive(now, bytes) => peer.receive(now, &bytes, &mut r.events),
            Request::Update(now, stats) => {
                peer.update(now, &mut r.events);
                r.stats = stats.then(|| peer.stats());
            }
            Request::Stats => r.stats = Some(peer.stats()),
            Request::Command(now, c) => peer.command(now, c),
            Request::UnackedReliable => r.count = peer.unacked_reliable(),
            Request::ReportsPacketBeliefs(on) => r.flag = peer.set_reports_packet_beliefs(on),
            Request::MaxPacketsPerTick => r.count = peer.max_packets_per_tick(),
            Request::ReportsStats(on) => peer.set_reports_stats(on),
            Request::ReportsRttSamples(on) => r.flag = peer.set_reports_rtt_samples(on),
        }
        if replies.send(r).is_err() {
            return;
        }
    }
}

impl ThreadedPeer {
    /// Moves `peer` onto a new thread named `name`, its ticks and stats instants answered ahead.
    pub fn spawn(name: &str, peer: Box<dyn Peer>) -> Self {
        Self::spawn_serving(name, peer, Calls::AnsweredAhead)
    }

    /// Moves `peer` onto a new thread named `name`, serving calls as `calls` says.
    pub fn spawn_serving(name: &str, peer: Box<dyn Peer>, calls: Calls) -> Self {
        let (req_tx, req_rx) = bounded(1);
        let (rep_tx, rep_rx) = bounded(1);
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || serve(peer, req_rx, rep_tx))
            .expect("spawn endpoint thread");
        Self {
            requests: Some(req_tx),
            replies: rep_rx,
            thread: Some(thread),
            tick_sends: VecDeque::new(),
            tick_at: SimTime::ZERO,
            stats: None,
            reports_stats: true,
            ahead: calls == Calls::AnsweredAhead,
        }
    }

    /// Sends a request and waits for its reply (an empty reply if the endpoint thread is gone).
    fn call(&self, req: Request) -> Reply {
        let sent = self.requests.as_ref().is_some_and(|tx| tx.send(req).is_ok());
        if !sent {
            return Reply::default();
        }
        self.replies.recv().unwrap_or_default()
    }

    /// Any call but the ones a tick or a stats instant answers ahead ends what they answered:
    /// the estimates are no longer current, and a tick's sends not asked for (a caller that
    /// broke the contract's call order) are not handed out later at another instant.
    fn settle(&mut self) {
        self.stats = None;
        debug_assert!(self.tick_sends.is_empty(), "a tick's poll_send calls were cut short");
        self.tick_sends.clear();
    }
}

impl ThreadedPeer {
    /// Closes the request channel and joins the endpoint thread (also done on drop).
    pub fn stop(&mut self) {
        self.requests.take();
        self.tick_sends.clear();
        self.stats = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// True while the endpoint thread runs.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for ThreadedPeer {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Peer for ThreadedPeer {
    fn on_tick(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.settle();
        let r = self.call(if self.ahead { Request::Tick(now) } else { Request::OnTick(now) });
        events.extend(r.events);
        self.tick_sends = r.sends.into();
        self.tick_at = now;
    }

    fn poll_send(&mut self, now: SimTime, out: &mut Vec<u8>, events: &mut Vec<Event>) -> Option<u32> {
        let (sent_events, packet) = if now == self.tick_at && !self.tick_sends.is_empty() {
            self.tick_sends.pop_front().expect("checked")
        } else {
            // A poll outside a tick the thread answered ahead (not what drivers do).
            self.settle();
            let r = self.call(Request::PollSend(now));
            (r.events, r.packet)
        };
        events.extend(sent_events);
        let (seq, bytes) = packet?;
        *out = bytes;
        Some(seq)
    }

    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        self.settle();
        events.extend(self.call(Request::Receive(now, packet.to_vec())).events);
    }

    fn update(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.settle();
        let r = self.call(Request::Update(now, self.ahead && self.reports_stats));
        events.extend(r.events);
        self.stats = r.stats;
    }

    fn stats(&self) -> StatsSample {
        match self.stats {
            Some(stats) => stats,
            None => self.call(Request::Stats).stats.unwrap_or_default(),
        }
    }

    fn command(&mut self, now: SimTime, command: PeerCommand) {
        self.settle();
        self.call(Request::Command(now, command));
    }

    fn unacked_reliable(&self) -> usize {
        self.call(Request::UnackedReliable).count
    }

    // The contract's defaulted methods too: left to their defaults, the driver would see another
    // endpoint than the one on the thread (a different packet limit, reports it cannot switch off).
    fn set_reports_packet_beliefs(&mut self, reports: bool) -> bool {
        self.settle();
        self.call(Request::ReportsPacketBeliefs(reports)).flag
    }

    fn max_packets_per_tick(&self) -> usize {
        self.call(Request::MaxPacketsPerTick).count
    }

    fn set_reports_stats(&mut self, reports: bool) {
        self.settle();
        self.reports_stats = reports;
        self.call(Request::ReportsStats(reports));
    }

    fn set_reports_rtt_samples(&mut self, reports: bool) -> bool {
        self.settle();
        self.call(Request::ReportsRttSamples(reports)).flag
    }
}

/// A simulation whose client 1 has each of its two endpoints on a thread of its own (names
/// `ackscope-a`/`-b`), also after a restart (the old endpoint's thread is joined when it is
/// dropped). The other clients' endpoints run on the simulation's thread, before and after a
/// restart alike: a run of many clients would otherwise be two threads and a round trip per
/// call for each of them.
pub fn threaded_simulation(scenario: Scenario) -> ackscope_protocol::Simulation {
    threaded_simulation_serving(scenario, Calls::AnsweredAhead)
}

/// [`threaded_simulation`] with its endpoints serving calls as `calls` says.
pub fn threaded_simulation_serving(scenario: Scenario, calls: Calls) -> ackscope_protocol::Simulation {
    use ackscope_protocol::{make_peer, PeerFactory, Side};
    let threaded = move |scenario: &Scenario, side: Side| -> Box<dyn Peer> {
        let name = if side == Side::A { "ackscope-a" } else { "ackscope-b" };
        Box::new(ThreadedPeer::spawn_serving(name, make_peer(scenario, side), calls))
    };
    let peers: [Box<dyn Peer>; 2] = [threaded(&scenario, Side::A), threaded(&scenario, Side::B)];
    let mut sim = ackscope_protocol::Simulation::with_peers(scenario, peers);
    // The factory is asked for once per end, client by client: client 1's two ends first.
    let mut ends = 0;
    sim.set_peer_factory(|| -> PeerFactory {
        ends += 1;
        if ends <= 2 {
            Box::new(threaded)
        } else {
            Box::new(make_peer)
        }
    });
    sim
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackscope_protocol::{Action, Clients, Simulation, Strategy};

    #[test]
    fn a_threaded_run_produces_the_same_events_as_a_single_threaded_one() {
        for strategy in [Strategy::Glenn, Strategy::Ue4, Strategy::Chunks] {
            let mut s = Scenario { strategy, seed: 12, ..Scenario::default() };
            s.workload.chunk_kib = 32;
            s.link.a_to_b.loss_percent = 15.0;
            s.link.b_to_a.duplicate_percent = 5.0;
            let mut plain = Simulation::new(s.clone());
            let mut threaded = threaded_simulation(s);
            plain.run_for_secs(8.0);
            threaded.run_for_secs(8.0);
            threaded.reconfigure(|s| s.link.a_to_b.loss_percent = 40.0);
            plain.reconfigure(|s| s.link.a_to_b.loss_percent = 40.0);
            plain.run_for_secs(4.0);
            threaded.run_for_secs(4.0);
            assert!(plain.events().len() > 1000);
            assert!(plain.events() == threaded.events(), "{strategy:?}: threaded run differs");
            assert_eq!(plain.estimates(), threaded.estimates());
        }
    }

    /// Ticks that send many packets (chunk slices, answered ahead on one request), stats read
    /// and not read, several clients, a restart and a strategy change: the same events.
    #[test]
    fn a_threaded_run_of_several_clients_through_restarts_makes_the_same_events() {
        for (strategy, stats) in [(Strategy::Chunks, true), (Strategy::Glenn, false)] {
            let mut s = Scenario { strategy, seed: 7, send_rate_pps: 200.0, ..Scenario::default() };
            s.clients = Clients::Count(3);
            s.workload.chunk_kib = 64;
            s.link.a_to_b.loss_percent = 10.0;
            let mut plain = Simulation::new(s.clone());
            let mut threaded = threaded_simulation(s.clone());
            let mut one_by_one = threaded_simulation_serving(s, Calls::OneByOne);
            for sim in [&mut plain, &mut threaded, &mut one_by_one] {
                if !stats {
                    sim.set_event_filter(ackscope_protocol::EventFilter::MESSAGE_METRICS);
                    sim.set_summary(false);
                }
                sim.run_for_secs(3.0);
                sim.apply(&Action::SendChunk { side: ackscope_protocol::Side::A, kib: 48 }).unwrap();
                sim.run_for_secs(2.0);
                sim.apply(&Action::Restart).unwrap();
                sim.run_for_secs(2.0);
                sim.apply(&Action::Strategy(Strategy::Ue4)).unwrap();
                sim.run_for_secs(2.0);
            }
            assert!(plain.events().len() > 3000, "{} events", plain.events().len());
            assert!(plain.events() == threaded.events(), "{strategy:?}: threaded run differs");
            assert!(plain.events() == one_by_one.events(), "{strategy:?}: run with calls one by one differs");
            assert_eq!(plain.estimates(), threaded.estimates());
        }
    }

    #[test]
    fn stop_joins_the_endpoint_thread_and_later_calls_do_not_hang() {
        let mut p = ThreadedPeer::spawn(
            "ackscope-test",
            ackscope_protocol::make_peer(&Scenario::default(), ackscope_protocol::Side::A),
        );
        let mut events = Vec::new();
        p.on_tick(SimTime::ZERO, &mut events);
        let mut out = Vec::new();
        assert!(p.poll_send(SimTime::ZERO, &mut out, &mut events).is_some());
        assert!(!out.is_empty());
        assert!(p.is_running());
        p.stop();
        assert!(!p.is_running());
        assert!(p.poll_send(SimTime(1), &mut out, &mut events).is_none(), "a stopped endpoint sends nothing");
    }
}
