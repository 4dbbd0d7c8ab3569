//! The simulation driver: two endpoints and a two-way lossy link on virtual time.
//!
//! [`Simulation::run_until`] processes, in time order, link deliveries (first, in link order),
//! then each side's send ticks, then stats samples. It runs as fast as the CPU allows; the app
//! paces it by calling `run_until(wall-clock elapsed)`. Ground truth is checked as it goes: every
//! ack an endpoint reports is looked up against the link's record of that very send (the link
//! tags each send with a run-unique id because 16-bit sequences wrap).

use crate::event::{Dir, Event, EventKind, Side, SimTime};
use crate::link::{Link, LinkConfig};
use crate::measure::PacketLedger;
pub use crate::measure::{summarize, EstimateSummary, PacketTotals};
use crate::peer::{Peer, PeerCommand};
use crate::registry::live_settings;
pub use crate::registry::make_peer;
use crate::reliability::flow::FlowControl;
pub use crate::scenario::{LinkPair, Scenario, Strategy};

/// Send ticks at `pps` counted from `base`, so rate changes never accumulate rounding drift.
/// Shared by the simulation and the real-time UDP endpoints so both tick the same way.
#[derive(Debug, Clone, Copy)]
pub struct Ticker {
    pub base: SimTime,
    /// Ticks already taken since `base`.
    pub count: u64,
    pub pps: f64,
}

impl Ticker {
    /// When the next tick is due (never, at a rate of zero or below).
    pub fn next(&self) -> SimTime {
        if self.pps.is_nan() || self.pps <= 0.0 || !self.pps.is_finite() {
            return SimTime(u64::MAX);
        }
        self.base.plus_micros((self.count as f64 * 1e6 / self.pps).round() as u64)
    }
    fn set_rate(&mut self, now: SimTime, pps: f64) {
        self.base = now;
        self.count = 0;
        self.pps = pps;
    }
}

/// Two endpoints, a two-way link, virtual time.
pub struct Simulation {
    scenario: Scenario,
    now: SimTime,
    links: [Link; 2],
    peers: [Box<dyn Peer>; 2],
    tickers: [Ticker; 2],
    next_stats: SimTime,
    next_uid: u64,
    events: Vec<Event>,
    keep_events: bool,
    truth: PacketLedger,
    loss_sum: f64,
    loss_n: u64,
    flows: [FlowControl; 2],
    /// Index of the next scripted link step (`scenario.script`, sorted by time).
    next_step: usize,
}

/// Safety cap on packets one endpoint may send in a single tick.
pub const MAX_PACKETS_PER_TICK: usize = 4096;

impl Simulation {
    pub fn new(scenario: Scenario) -> Self {
        let peers = [make_peer(&scenario, Side::A), make_peer(&scenario, Side::B)];
        Self::with_peers(scenario, peers)
    }

    /// A simulation around endpoints built elsewhere (tests, other strategies).
    pub fn with_peers(mut scenario: Scenario, peers: [Box<dyn Peer>; 2]) -> Self {
        scenario.script.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
        let links = [
            Link::new(Dir::AtoB, scenario.link.a_to_b, scenario.seed),
            Link::new(Dir::BtoA, scenario.link.b_to_a, scenario.seed),
        ];
        let t = Ticker { base: SimTime::ZERO, count: 0, pps: scenario.send_rate_pps };
        Self {
            now: SimTime::ZERO,
            links,
            peers,
            tickers: [t, t],
            next_stats: SimTime::ZERO,
            next_uid: 0,
            events: Vec::new(),
            keep_events: true,
            truth: PacketLedger::new(),
            loss_sum: 0.0,
            loss_n: 0,
            flows: [FlowControl::new(scenario.flow), FlowControl::new(scenario.flow)],
            next_step: 0,
            scenario,
        }
    }

    /// When false, events are checked against ground truth and then discarded (long soaks).
    pub fn set_keep_events(&mut self, keep: bool) {
        self.keep_events = keep;
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Changes one direction of the link from now on.
    pub fn set_link(&mut self, dir: Dir, config: LinkConfig) {
        *self.scenario.link.get_mut(dir) = config;
        self.links[dir.index()].set_config(config);
    }

    /// Changes both endpoints' send rate from now on.
    pub fn set_send_rate(&mut self, pps: f64) {
        self.scenario.send_rate_pps = pps;
        for t in &mut self.tickers {
            t.set_rate(self.now, pps);
        }
    }

    /// Changes the chunk/fragment senders' target bandwidth from now on.
    pub fn set_chunk_bandwidth_kbps(&mut self, kbps: f64) {
        self.scenario.chunk.bandwidth_kbps = kbps;
        for p in &mut self.peers {
            p.command(self.now, PeerCommand::TargetKbps(kbps));
        }
    }

    /// Applies every scripted link step due at or before `t`.
    fn apply_script(&mut self, t: SimTime) {
        while let Some(step) = self.scenario.script.get(self.next_step).copied() {
            if SimTime::from_secs_f64(step.at_s) > t {
                break;
            }
            self.next_step += 1;
            for dir in Dir::BOTH {
                if !step.dir.includes(dir) {
                    continue;
                }
                let mut cfg = *self.scenario.link.get(dir);
                let changed = step.set.apply(&mut cfg);
                self.set_link(dir, cfg);
                let d = match dir {
                    Dir::AtoB => "a_to_b",
                    Dir::BtoA => "b_to_a",
                };
                for (field, v) in changed {
                    let name = format!("link.{d}.{field}");
                    self.events.push(Event { time: t, kind: EventKind::ParamChanged { name, value: v.to_string() } });
                }
            }
        }
    }

    /// Each side's flow control state (meaningful when `scenario.flow.enabled`).
    pub fn flow(&self, side: Side) -> &FlowControl {
        &self.flows[side.index()]
    }

    /// Changes the scenario while running: `change` edits it, then links and send rate are
    /// updated where they changed and both endpoints take their live settings
    /// ([`Peer::reconfigure`]: workload, strategy section). Seed and strategy are fixed per run.
    pub fn reconfigure(&mut self, change: impl FnOnce(&mut Scenario)) {
        let mut s = self.scenario.clone();
        change(&mut s);
        for dir in Dir::BOTH {
            if s.link.get(dir) != self.scenario.link.get(dir) {
                self.set_link(dir, *s.link.get(dir));
            }
        }
        let flow_turned_off = self.scenario.flow.enabled && !s.flow.enabled;
        if s.send_rate_pps != self.scenario.send_rate_pps || flow_turned_off {
            // Without flow control the configured rate applies again.
            self.set_send_rate(s.send_rate_pps);
        }
        if s.flow != self.scenario.flow {
            for f in &mut self.flows {
                f.set_config(s.flow);
            }
        }
        s.seed = self.scenario.seed;
        s.strategy = self.scenario.strategy;
        self.scenario = s;
        for p in &mut self.peers {
            p.command(self.now, PeerCommand::Reconfigure(live_settings(&self.scenario)));
        }
    }

    /// Records a live parameter change (already applied) as a `ParamChanged` event at `now`.
    pub fn record_param_change(&mut self, name: &str, value: &str) {
        let kind = EventKind::ParamChanged { name: name.to_string(), value: value.to_string() };
        self.events.push(Event { time: self.now, kind });
    }

    /// Queues one large block of `bytes` on `side` (chunk and fragment strategies).
    pub fn send_chunk(&mut self, side: Side, bytes: usize) {
        self.peers[side.index()].command(self.now, PeerCommand::SendChunk { bytes });
    }

    /// Queues a workload burst on `side`.
    pub fn burst(&mut self, side: Side) {
        self.peers[side.index()].command(self.now, PeerCommand::Burst);
    }

    /// Reliable messages not yet acked, both sides together.
    pub fn unacked_reliable(&self) -> usize {
        self.peers.iter().map(|p| p.unacked_reliable()).sum()
    }

    /// Events recorded since the last drain.
    pub fn drain_events(&mut self) -> std::vec::Drain<'_, Event> {
        self.events.drain(..)
    }

    pub fn events(&self) -> &[Event] {
        &self.events
    }

    pub fn totals(&self) -> PacketTotals {
        self.truth.totals()
    }

    pub fn peer(&self, side: Side) -> &dyn Peer {
        self.peers[side.index()].as_ref()
    }

    /// The run's estimates beside ground truth.
    pub fn estimates(&self) -> EstimateSummary {
        let s = [self.peers[0].stats(), self.peers[1].stats()];
        EstimateSummary {
            rtt_ms: (s[0].rtt_ms as f64 + s[1].rtt_ms as f64) / 2.0,
            true_rtt_ms: self.truth.true_rtt_ms(),
            loss_percent: if self.loss_n == 0 { 0.0 } else { self.loss_sum / self.loss_n as f64 },
            true_loss_percent: self.truth.true_loss_percent(),
        }
    }

    fn next_event_time(&self) -> SimTime {
        let mut t = self.next_stats.min(self.tickers[0].next()).min(self.tickers[1].next());
        if let Some(step) = self.scenario.script.get(self.next_step) {
            t = t.min(SimTime::from_secs_f64(step.at_s));
        }
        for l in &self.links {
            if let Some(d) = l.next_delivery() {
                t = t.min(d);
            }
        }
        t
    }

    /// Runs every event up to and including `until`.
    pub fn run_until(&mut self, until: SimTime) {
        loop {
            let t = self.next_event_time();
            if t > until {
                self.now = self.now.max(until);
                return;
            }
            self.now = t;
            self.step_at(t);
        }
    }

    /// Runs for `seconds` of virtual time.
    pub fn run_for_secs(&mut self, seconds: f64) {
        let until = self.now.plus_micros((seconds * 1e6).round() as u64);
        self.run_until(until);
    }

    fn step_at(&mut self, t: SimTime) {
        let mark = self.events.len();
        self.apply_script(t);
        for dir in Dir::BOTH {
            while let Some((_uid, bytes)) = self.links[dir.index()].pop_due(t, &mut self.events) {
                self.peers[dir.receiver().index()].receive(t, &bytes, &mut self.events);
            }
        }
        for side in Side::BOTH {
            let i = side.index();
            if self.tickers[i].next() <= t {
                self.tickers[i].count += 1;
                self.peers[i].on_tick(t, &mut self.events);
                for _ in 0..MAX_PACKETS_PER_TICK {
                    let mut out = Vec::with_capacity(256);
                    let Some(seq) = self.peers[i].poll_send(t, &mut out, &mut self.events) else {
                        break;
                    };
                    let uid = self.next_uid;
                    self.next_uid += 1;
                    let bytes = out.len() as u32;
                    self.events.push(Event { time: t, kind: EventKind::PacketSent { side, seq, bytes, uid } });
                    self.links[side.outgoing().index()].send(t, uid, out, &mut self.events);
                }
            }
        }
        if self.next_stats <= t {
            for side in Side::BOTH {
                let p = &mut self.peers[side.index()];
                p.update(t, &mut self.events);
                let stats = p.stats();
                if t >= SimTime(2_000_000) {
                    self.loss_sum += stats.loss_percent as f64 / 2.0;
                }
                self.events.push(Event { time: t, kind: EventKind::Stats { side, stats } });
            }
            if t >= SimTime(2_000_000) {
                self.loss_n += 1;
            }
            if self.scenario.flow.enabled {
                self.apply_flow(t);
            }
            let iv = (self.scenario.stats_interval_ms.max(1.0) * 1000.0) as u64;
            self.next_stats = t.plus_micros(iv);
        }
        self.truth.observe(&self.events[mark..]);
        if !self.keep_events {
            self.events.truncate(mark);
        }
    }

    /// Lets each side's flow control set its packet rate from that side's RTT estimate.
    fn apply_flow(&mut self, t: SimTime) {
        for side in Side::BOTH {
            let i = side.index();
            let rtt = self.peers[i].stats().rtt_ms as f64;
            let rate = self.flows[i].update(t, rtt);
            if self.flows[i].changed() {
                let kind = EventKind::FlowMode {
                    side,
                    good: self.flows[i].is_good(),
                    penalty_ms: self.flows[i].penalty_ms() as f32,
                };
                self.events.push(Event { time: t, kind });
            }
            if rate != self.tickers[i].pps {
                // The next tick comes one new interval from now, not immediately.
                self.tickers[i] = Ticker { base: t, count: 1, pps: rate };
            }
        }
    }
}
