//! Runs a protocol endpoint on a thread of its own behind the ordinary [`Peer`] interface.
//!
//! The simulation thread owns the link and virtual time; each endpoint lives on its own thread and
//! is driven by requests over channels. Every call waits for its reply, so the endpoints see
//! exactly the calls, in exactly the order, that an in-thread simulation makes: a threaded run
//! produces the same events as a single-threaded one (tested), which keeps live recordings
//! re-runnable from their header. Dropping the handle stops and joins the thread.

use ackscope_protocol::{Event, Peer, PeerCommand, Scenario, SimTime, StatsSample};
use crossbeam_channel::{bounded, Receiver, Sender};

enum Request {
    OnTick(SimTime),
    PollSend(SimTime),
    Receive(SimTime, Vec<u8>),
    Update(SimTime),
    Stats,
    Command(SimTime, PeerCommand),
    UnackedReliable,
    ReportsPacketBeliefs(bool),
    MaxPacketsPerTick,
    ReportsStats(bool),
    ReportsRttSamples(bool),
}

#[derive(Default)]
struct Reply {
    events: Vec<Event>,
    packet: Option<(u32, Vec<u8>)>,
    stats: StatsSample,
    count: usize,
    flag: bool,
}

/// A [`Peer`] whose calls are served by an endpoint on its own thread.
pub struct ThreadedPeer {
    requests: Option<Sender<Request>>,
    replies: Receiver<Reply>,
    thread: Option<std::thread::JoinHandle<()>>,
}

fn serve(mut peer: Box<dyn Peer>, requests: Receiver<Request>, replies: Sender<Reply>) {
    for req in requests {
        let mut r = Reply::default();
        match req {
            Request::OnTick(now) => peer.on_tick(now, &mut r.events),
            Request::PollSend(now) => {
                let mut out = Vec::with_capacity(256);
                r.packet = peer.poll_send(now, &mut out, &mut r.events).map(|seq| (seq, out));
            }
            Request::Receive(now, bytes) => peer.receive(now, &bytes, &mut r.events),
            Request::Update(now) => peer.update(now, &mut r.events),
            Request::Stats => r.stats = peer.stats(),
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
    /// Moves `peer` onto a new thread named `name`.
    pub fn spawn(name: &str, peer: Box<dyn Peer>) -> Self {
        let (req_tx, req_rx) = bounded(1);
        let (rep_tx, rep_rx) = bounded(1);
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || serve(peer, req_rx, rep_tx))
            .expect("spawn endpoint thread");
        Self { requests: Some(req_tx), replies: rep_rx, thread: Some(thread) }
    }

    /// Sends a request and waits for its reply (an empty reply if the endpoint thread is gone).
    fn call(&self, req: Request) -> Reply {
        let sent = self.requests.as_ref().is_some_and(|tx| tx.send(req).is_ok());
        if !sent {
            return Reply::default();
        }
        self.replies.recv().unwrap_or_default()
    }
}

impl ThreadedPeer {
    /// Closes the request channel and joins the endpoint thread (also done on drop).
    pub fn stop(&mut self) {
        self.requests.take();
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
        events.extend(self.call(Request::OnTick(now)).events);
    }

    fn poll_send(&mut self, now: SimTime, out: &mut Vec<u8>, events: &mut Vec<Event>) -> Option<u32> {
        let r = self.call(Request::PollSend(now));
        events.extend(r.events);
        let (seq, bytes) = r.packet?;
        *out = bytes;
        Some(seq)
    }

    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        events.extend(self.call(Request::Receive(now, packet.to_vec())).events);
    }

    fn update(&mut self, now: SimTime, events: &mut Vec<Event>) {
        events.extend(self.call(Request::Update(now)).events);
    }

    fn stats(&self) -> StatsSample {
        self.call(Request::Stats).stats
    }

    fn command(&mut self, now: SimTime, command: PeerCommand) {
        self.call(Request::Command(now, command));
    }

    fn unacked_reliable(&self) -> usize {
        self.call(Request::UnackedReliable).count
    }

    // The contract's defaulted methods too: left to their defaults, the driver would see another
    // endpoint than the one on the thread (a different packet limit, reports it cannot switch off).
    fn set_reports_packet_beliefs(&mut self, reports: bool) -> bool {
        self.call(Request::ReportsPacketBeliefs(reports)).flag
    }

    fn max_packets_per_tick(&self) -> usize {
        self.call(Request::MaxPacketsPerTick).count
    }

    fn set_reports_stats(&mut self, reports: bool) {
        self.call(Request::ReportsStats(reports));
    }

    fn set_reports_rtt_samples(&mut self, reports: bool) -> bool {
        self.call(Request::ReportsRttSamples(reports)).flag
    }
}

/// A simulation whose two endpoints each run on their own thread (names `ackscope-a`/`-b`),
/// also after a restart (the old endpoint's thread is joined when it is dropped).
pub fn threaded_simulation(scenario: Scenario) -> ackscope_protocol::Simulation {
    use ackscope_protocol::{make_peer, PeerFactory, Side};
    fn threaded(scenario: &Scenario, side: Side) -> Box<dyn Peer> {
        let name = if side == Side::A { "ackscope-a" } else { "ackscope-b" };
        Box::new(ThreadedPeer::spawn(name, make_peer(scenario, side)))
    }
    let peers: [Box<dyn Peer>; 2] = [threaded(&scenario, Side::A), threaded(&scenario, Side::B)];
    let mut sim = ackscope_protocol::Simulation::with_peers(scenario, peers);
    sim.set_peer_factory(|| -> PeerFactory { Box::new(threaded) });
    sim
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackscope_protocol::{Simulation, Strategy};

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
