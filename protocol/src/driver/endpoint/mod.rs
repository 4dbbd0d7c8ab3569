//! One endpoint's loop on time it is given: scripted actions, deliveries, send ticks, stats,
//! flow control, and live changes.
//!
//! The simulation composes two of these with two links; the real-time transports (UDP, ...) run
//! one per endpoint thread around a socket and a clock. Both therefore apply the same order at an
//! instant, the same send ticks, the same flow control, the same live reconfiguration and the
//! same scripted actions ([`actions`]).

mod actions;
mod due;
mod io;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::action::{sort_steps, Action, Step};
use crate::event::{ClientId, Dir, Event, EventKind, Side, SimTime, FIRST_CLIENT};
use crate::link::{Link, LinkConfig};
use crate::peer::{Peer, PeerCommand, MAX_PACKETS_PER_TICK};
use crate::registry::{live_settings, make_peer};
use crate::reliability::flow::FlowControl;
use crate::scenario::Scenario;

use super::ticker::{TickRate, TickTiming, Ticker};

pub use actions::LinkUpdate;
pub use io::{Inbound, Outbound, Transmit};

/// Packet buffers an endpoint keeps for its sends (see [`EndpointDriver::receive`]).
const SPARE_BUFFERS: usize = 8;

/// Builds a fresh endpoint for a side under a scenario: [`make_peer`] by default; the app's
/// runtimes wrap it (an endpoint on its own thread, the raw packet-ack peer). A restart calls it.
pub type PeerFactory = Box<dyn FnMut(&Scenario, Side) -> Box<dyn Peer> + Send>;

/// Where an endpoint's send ids come from: called once per datagram, in send order.
///
/// Ground truth matches acks to link events by these ids, so they must be unique within a run.
/// The simulation shares one counter between both endpoints (ids in send order over both sides);
/// the UDP runtime numbers each side's sends apart (`send_uid(side, n)`), since its endpoints run
/// on different threads.
pub type SendIds = Box<dyn FnMut() -> u64 + Send>;

/// Where a driver's send ids come from.
pub(in crate::driver) enum IdSource {
    /// A counter the simulation's two drivers share: a plain atomic increment per datagram, where
    /// calling a boxed closure around it was 0.1 M instructions per 120 s sweep run (callgrind).
    Shared(Arc<AtomicU64>),
    /// The caller's own ([`EndpointDriver::new`]).
    Custom(SendIds),
}

impl IdSource {
    fn next(&mut self) -> u64 {
        match self {
            IdSource::Shared(counter) => counter.fetch_add(1, Ordering::Relaxed),
            IdSource::Custom(ids) => ids(),
        }
    }
}

/// One endpoint's driver: its peer, send ticks, stats schedule, flow control, its share of the
/// link script and its live settings.
///
/// Each endpoint owns the direction of the link *into* it ([`EndpointDriver::link_dir`]): its
/// scripted changes and live link edits, because in the real-time transports that link sits where
/// datagrams arrive. The caller holds the [`Link`] itself and updates it whenever a call reports
/// a [`LinkUpdate`] (new settings, or a new empty link after a restart).
///
/// The driver runs the script's actions that concern its endpoint ([`crate::action::Action::concerns`]):
/// link changes of its direction, bursts and chunks of its side, and every `set`, `restart` and
/// `strategy`. Side A's driver reports `set`s and restarts as events (see
/// [`Self::set_records_actions`]), so two drivers applying one action report it once.
///
/// Call order at one instant `now` ([`EndpointDriver::step`] makes these calls in this order;
/// the simulation makes them itself so that its two endpoints interleave as documented there):
/// 1. [`apply_script_step`](Self::apply_script_step) (a time-ordered action) while
///    [`next_script_step`](Self::next_script_step) has one due;
/// 2. [`receive`](Self::receive): every datagram due;
/// 3. [`tick`](Self::tick): at a send tick, `on_tick` then `poll_send` until the peer is done;
/// 4. [`sample_stats`](Self::sample_stats) at a stats instant, then
///    [`apply_flow`](Self::apply_flow).
///
/// [`EndpointDriver::next_due`] says when the next tick, stats sample or script step is due;
/// deliveries are the caller's to schedule (they sit on its link).
///
/// Send ticks fall on the endpoint's own grid, `phase + k / rate`, each up to `tick_jitter_ms`
/// late ([`TickTiming`]: the phase drawn from the seed per side by default,
/// `scenario.a/b.tick_phase_ms` to set it, exact ticks from 0 for both in lock-step), in every
/// transport alike. The phase is fixed for the run and belongs to the endpoint, not to
/// its rate: when the rate changes (a live change, flow control) the ticks move to the new rate's
/// grid with the same phase, so the two sides keep their offset however often either changes
/// rate. A live change ticks at the first grid instant at or after the change (as before phases,
/// possibly again at an instant that already had a tick); flow control's first tick at a new rate is the first grid instant at least one new
/// interval after the last tick and after the switch.
pub struct EndpointDriver {
    side: Side,
    scenario: Scenario,
    peer: Box<dyn Peer>,
    ticker: Ticker,
    /// The ticker's rate constants, kept with it (see [`Self::set_ticker`]).
    tick_rate: TickRate,
    /// `ticker.next()`, kept beside it: the simulation asks for it at every instant, and computing
    /// it (a rounding and a keyed draw) was a tenth of a run's time.
    next_tick_at: SimTime,
    /// The next tick's grid instant, kept with it: the tick notes it (see [`Self::sync_next_tick`]).
    next_tick_grid: SimTime,
    /// This endpoint's send-tick phase and lateness, fixed for the run.
    timing: TickTiming,
    /// The grid instant of the last send tick taken (before its lateness).
    last_tick: Option<SimTime>,
    next_stats: SimTime,
    /// The earliest of the next tick, stats sample and script step ([`Self::next_due`]), kept
    /// up to date by [`Self::sync_due`]: the simulation asks at every instant.
    next_due_at: SimTime,
    flow: FlowControl,
    /// The script's steps that concern this endpoint: (position in the time-sorted script, step),
    /// in time order.
    script: Vec<(usize, Step)>,
    next_step: usize,
    ids: IdSource,
    factory: PeerFactory,
    /// Reports `set` actions and restarts as `ParamChanged` events (side A by default).
    records: bool,
    now: SimTime,
    /// Packet buffers to send into: those of datagrams received (see [`Self::receive`]) and of
    /// the last call of a tick, which sent nothing.
    spare: Vec<Vec<u8>>,
    /// Whether a stats instant reports the peer's estimates as a `Stats` event (see
    /// [`Self::set_records_stats`]).
    records_stats: bool,
    /// Whether packet beliefs are wanted, and whether the peer leaves them out when they are not
    /// (see [`Self::set_records_packet_beliefs`]).
    records_packet_beliefs: bool,
    peer_follows_beliefs: bool,
    /// Whether `RttSample` events are wanted, and whether the peer leaves them out when neither
    /// they nor flow control's filter are (see [`Self::set_records_rtt_samples`]).
    records_rtt_samples: bool,
    peer_follows_rtt: bool,
    /// The peer's [`Peer::max_packets_per_tick`], capped at [`MAX_PACKETS_PER_TICK`].
    packets_per_tick: usize,
    /// Whether flow control's RTT filter goes unfed: flow control is off and stays off for the
    /// run (see [`Self::fix_flow_off`]).
    flow_filter_idle: bool,
    /// The client whose connection this endpoint is (its end, or the server's end of it): a
    /// `set` of `client.K.NAME` concerns it when K is this client.
    client: ClientId,
    /// The seed its tick phase and lateness are drawn from, when not its scenario's: the
    /// server's end of client k's connection ticks on the server's grid (see
    /// [`Self::set_client`]).
    tick_seed: Option<u64>,
}

impl EndpointDriver {
    /// The driver of `side` at time 0, running `peer` under `scenario`; a restart builds the
    /// new endpoint with [`make_peer`] unless [`Self::set_peer_factory`] says otherwise.
    pub fn new(side: Side, scenario: Scenario, peer: Box<dyn Peer>, ids: SendIds) -> Self {
        Self::with_ids(side, scenario, peer, IdSource::Custom(ids))
    }

    /// [`Self::new`] with send ids from `ids`.
    pub(in crate::driver) fn with_ids(side: Side, scenario: Scenario, peer: Box<dyn Peer>, ids: IdSource) -> Self {
        let mut sorted = scenario.script.clone();
        sort_steps(&mut sorted);
        let script = sorted.into_iter().enumerate().filter(|(_, s)| s.action.concerns(side)).collect();
        let timing = TickTiming::of(&scenario, side);
        let ticker = Ticker::on_grid(&timing, scenario.send_rate_pps, SimTime::ZERO);
        let mut driver = Self {
            side,
            flow: FlowControl::new(scenario.flow),
            next_tick_at: ticker.next(),
            next_tick_grid: ticker.next_on_grid(),
            tick_rate: TickRate::of(&ticker),
            ticker,
            timing,
            last_tick: None,
            scenario,
            peer,
            next_stats: SimTime::ZERO,
            next_due_at: SimTime::ZERO,
            script,
            next_step: 0,
            ids,
            factory: Box::new(make_peer),
            records: side == Side::A,
            now: SimTime::ZERO,
            spare: Vec::new(),
            records_stats: true,
            records_packet_beliefs: true,
            peer_follows_beliefs: false,
            records_rtt_samples: true,
            peer_follows_rtt: false,
            packets_per_tick: MAX_PACKETS_PER_TICK,
            flow_filter_idle: false,
            client: FIRST_CLIENT,
            tick_seed: None,
        };
        driver.adopt_peer();
        driver.sync_due();
        driver
    }

    /// Tells the peer (the first, or one a restart built) every standing setting: which of its
    /// events are recorded, whether flow control reads its RTT samples, whether its stats are
    /// read; and notes how many packets it sends per tick.
    fn adopt_peer(&mut self) {
        self.packets_per_tick = self.peer.max_packets_per_tick().min(MAX_PACKETS_PER_TICK);
        self.peer_follows_beliefs = self.peer.set_reports_packet_beliefs(self.records_packet_beliefs);
        self.sync_rtt_reports();
        self.peer.set_reports_stats(self.records_stats);
    }

    /// Makes this the endpoint of client `client`'s connection, at time 0 (before its first
    /// call): a `set` of `client.K.NAME` then concerns it when K is `client`, and a `set` of the
    /// seed gives it the client's seed ([`crate::scenario::client_seed`]). `server_seed` (the
    /// run's own seed) is the seed of the server's tick grid: side A's ticks are drawn from it,
    /// the same instants for every connection of the server; side B keeps its own (its
    /// scenario's, the client's seed).
    pub fn set_client(&mut self, client: ClientId, server_seed: u64) {
        self.client = client;
        if self.side == Side::A && server_seed != self.scenario.seed {
            self.tick_seed = Some(server_seed);
            self.timing = self.tick_timing_now();
            self.set_ticker(Ticker::on_grid(&self.timing, self.scenario.send_rate_pps, self.now));
        }
    }

    /// The client whose connection this endpoint is.
    pub fn client(&self) -> ClientId {
        self.client
    }

    /// This endpoint's tick timing under its settings now (see [`Self::set_client`]).
    fn tick_timing_now(&self) -> TickTiming {
        match self.tick_seed {
            Some(seed) => TickTiming::of_seed(&self.scenario, self.side, seed),
            None => TickTiming::of(&self.scenario, self.side),
        }
    }

    /// How a restart builds this side's new endpoint.
    pub fn set_peer_factory(&mut self, factory: PeerFactory) {
        self.factory = factory;
    }

    /// Whether this driver reports `set` actions and restarts as `ParamChanged` events (true for
    /// side A by default; a lone endpoint in a process of its own reports its own).
    pub fn set_records_actions(&mut self, records: bool) {
        self.records = records;
    }

    /// Whether a stats instant reports a `Stats` event (true by default). Without it the peer's
    /// estimates are not computed at all (a window pass and a few divisions per sample); its
    /// update still runs, so the endpoint behaves the same. For runs that read no `Stats`
    /// (a sweep: see [`super::EventFilter`]).
    pub fn set_records_stats(&mut self, records: bool) {
        self.records_stats = records;
        self.peer.set_reports_stats(records);
    }

    /// Whether the peer reports `PacketReceived`, `PacketAcked` and `PacketNakked` (true by
    /// default; kept across restarts). A peer may not follow it: see
    /// [`Self::builds_packet_beliefs`].
    pub fn set_records_packet_beliefs(&mut self, records: bool) {
        self.records_packet_beliefs = records;
        self.peer_follows_beliefs = self.peer.set_reports_packet_beliefs(records);
    }

    /// Whether `RttSample` events are recorded (true by default). Flow control's filter reads
    /// them from the peer's events, so the peer is told to leave them out only while that filter
    /// goes unfed as well ([`Self::fix_flow_off`]); a peer may not follow it: see
    /// [`Self::builds_rtt_samples`]. Kept across restarts.
    pub fn set_records_rtt_samples(&mut self, records: bool) {
        self.records_rtt_samples = records;
        self.sync_rtt_reports();
    }

    /// Tells the peer whether anything reads its RTT samples (after any change of the wish, of
    /// the filter's need or of the peer itself).
    fn sync_rtt_reports(&mut self) {
        let needed = self.records_rtt_samples || !self.flow_filter_idle;
        self.peer_follows_rtt = self.peer.set_reports_rtt_samples(needed);
    }

    /// Whether the peer reports RTT samples: wanted, needed by flow control, or a peer that
    /// reports them anyway.
    pub fn builds_rtt_samples(&self) -> bool {
        self.records_rtt_samples || !self.flow_filter_idle || !self.peer_follows_rtt
    }

    /// Whether the peer reports packet beliefs: wanted, or a peer that reports them anyway.
    pub fn builds_packet_beliefs(&self) -> bool {
        self.records_packet_beliefs || !self.peer_follows_beliefs
    }

    /// Declares that flow control stays off on this endpoint for the rest of the run, so its
    /// RTT filter, read only while flow control is on, need not be fed (a `powf` per RTT sample,
    /// about 2.5 % of a sweep run's instructions). Takes effect only where flow control is off
    /// and no remaining scripted step may switch it on ([`Self::may_switch_flow_on`]); returns
    /// whether it did. From then on a `set` that would switch flow control on is refused
    /// ([`Self::apply_action`]); [`Self::reconfigure`] with one lifts the declaration and starts
    /// the filter afresh from the next sample (it missed the samples since). One way otherwise:
    /// the samples left out cannot be fed again. The endpoint sends and
    /// reports exactly what it would have without the declaration (only [`Self::flow`]'s RTT
    /// stops following the samples). For runs whose live actions are known up front (a sweep).
    pub fn fix_flow_off(&mut self) -> bool {
        let scripted = self.script[self.next_step..].iter().any(|(_, s)| Self::may_switch_flow_on(&s.action));
        if !self.scenario.flow.enabled && !scripted {
            self.flow_filter_idle = true;
            self.sync_rtt_reports();
        }
        self.flow_filter_idle
    }

    /// Whether [`Self::fix_flow_off`] took effect.
    pub fn flow_fixed_off(&self) -> bool {
        self.flow_filter_idle
    }

    /// Whether `action` may switch flow control on: a `set` of a `flow.*` parameter.
    pub fn may_switch_flow_on(action: &Action) -> bool {
        matches!(action, Action::Set(change) if change.name().starts_with("flow"))
    }

    pub fn side(&self) -> Side {
        self.side
    }

    /// The direction of the link into this endpoint, whose steps and settings it owns.
    pub fn link_dir(&self) -> Dir {
        self.side.other().outgoing()
    }

    /// The current settings of the link into this endpoint.
    pub fn link_config(&self) -> &LinkConfig {
        self.scenario.link.get(self.link_dir())
    }

    /// The scenario as this endpoint runs it (its own link direction is authoritative; the other
    /// direction's is whatever the last reconfiguration said).
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    pub fn peer(&self) -> &dyn Peer {
        self.peer.as_ref()
    }

    /// Flow control state (meaningful when `scenario.flow.enabled`).
    pub fn flow(&self) -> &FlowControl {
        &self.flow
    }

    /// The latest instant this driver was called at.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Runs the instant `now`: scripted actions, every datagram `inbound` has due, the send tick,
    /// stats and flow control, in that order. Datagrams sent go to `outbound` as they are made.
    /// The caller applies the returned [`LinkUpdate`] to its link *before* the next call (a
    /// restart empties the link: see [`Self::step_with_link`], which does it).
    #[must_use = "a changed link must reach the caller's link"]
    pub fn step(
        &mut self,
        now: SimTime,
        inbound: &mut dyn Inbound,
        outbound: &mut dyn Outbound,
        events: &mut Vec<Event>,
    ) -> LinkUpdate {
        let mut update = LinkUpdate::None;
        while self.next_script_step(now).is_some() {
            update = update.and(self.apply_script_step(now, events));
        }
        self.receive(now, inbound, events);
        self.tick(now, outbound, events);
        if self.sample_stats(now, events) {
            self.apply_flow(now, events);
        }
        update
    }

    /// [`Self::step`] with `link` (the link into this endpoint) as its inbound side: a scripted
    /// change or restart reaches the link before any datagram is taken from it.
    pub fn step_with_link(
        &mut self,
        now: SimTime,
        link: &mut Link,
        outbound: &mut dyn Outbound,
        events: &mut Vec<Event>,
    ) {
        while self.next_script_step(now).is_some() {
            let update = self.apply_script_step(now, events);
            update.apply(self, link, now);
        }
        self.receive(now, link, events);
        self.tick(now, outbound, events);
        if self.sample_stats(now, events) {
            self.apply_flow(now, events);
        }
    }

    /// The position in the (time-sorted) scenario script of this endpoint's next step, if it is
    /// due at or before `now`.
    pub fn next_script_step(&self, now: SimTime) -> Option<usize> {
        let (i, step) = self.script.get(self.next_step)?;
        (step.at <= now).then_some(*i)
    }

    /// Applies this endpoint's next scripted action at `now` (see [`Self::apply_action`]); an
    /// action the endpoint cannot take (a `set` of an unknown name: scenario files are checked
    /// before a run, so only a caller building a scenario by hand gets here) is skipped.
    pub fn apply_script_step(&mut self, now: SimTime, events: &mut Vec<Event>) -> LinkUpdate {
        let Some((_, step)) = self.script.get(self.next_step) else {
            return LinkUpdate::None;
        };
        let action = step.action.clone();
        self.next_step += 1;
        let update = self.apply_action(now, &action, events).unwrap_or(LinkUpdate::None);
        self.sync_due();
        update
    }

    /// Hands every datagram `inbound` has due at `now` to the peer.
    ///
    /// Generic, so that the simulation's own link is polled without a virtual call per packet.
    pub fn receive<I: Inbound + ?Sized>(&mut self, now: SimTime, inbound: &mut I, events: &mut Vec<Event>) {
        self.touch(now);
        self.take_datagrams(now, inbound, events);
    }

    /// [`Self::receive`] for a caller that tells the driver the instant itself
    /// ([`Self::touch`]): the simulation.
    pub(in crate::driver) fn take_datagrams<I: Inbound + ?Sized>(
        &mut self,
        now: SimTime,
        inbound: &mut I,
        events: &mut Vec<Event>,
    ) {
        let start = events.len();
        while let Some(bytes) = inbound.next_datagram(now, events) {
            self.peer.receive(now, &bytes, events);
            // The buffer goes to this endpoint's next send: a malloc and a free per packet
            // were a tenth of a run. Both ends send about as much as they receive, so a few
            // are enough.
            if self.spare.len() < SPARE_BUFFERS {
                self.spare.push(bytes);
            }
        }
        self.observe_rtt(events, start);
    }

    /// Feeds this side's RTT samples among `events` from `start` on to flow control's low-pass
    /// filter (kept warm while flow control is off, so turning it on reads a current RTT).
    /// Takes the whole list: an idle filter costs one test, not a slice's bounds check as well.
    fn observe_rtt(&mut self, events: &[Event], start: usize) {
        if self.flow_filter_idle {
            return;
        }
        for e in &events[start..] {
            if let EventKind::RttSample { side, rtt_ms } = e.kind {
                if side == self.side {
                    self.flow.add_rtt_sample(e.time, rtt_ms as f64);
                }
            }
        }
    }

    /// At a send tick due by `now`: the peer's tick, then every packet it sends (each with a
    /// `PacketSent` and a fresh send id) to `outbound`. Returns whether a tick was due.
    ///
    /// Generic, so that the simulation's own link takes each packet without a virtual call.
    pub fn tick<O: Outbound + ?Sized>(&mut self, now: SimTime, outbound: &mut O, events: &mut Vec<Event>) -> bool {
        self.touch(now);
        if self.next_tick_at > now {
            return false;
        }
        self.take_tick(now, outbound, events);
        true
    }

    /// [`Self::tick`] for a caller that knows the tick is due at `now` ([`Self::next_tick`]) and
    /// tells the driver the instant itself ([`Self::touch`]): the simulation, which checks every
    /// instant anyway.
    pub(in crate::driver) fn take_tick<O: Outbound + ?Sized>(
        &mut self,
        now: SimTime,
        outbound: &mut O,
        events: &mut Vec<Event>,
    ) {
        self.last_tick = Some(self.next_tick_grid);
        self.ticker.count += 1;
        self.sync_next_tick();
        let start = events.len();
        self.peer.on_tick(now, events);
        let side = self.side;
        for _ in 0..self.packets_per_tick {
            // The buffer of the call that sent nothing is kept for the next tick: most ticks end
            // in such a call, and allocating it each time was a malloc and free per tick.
            let mut out = self.spare.pop().unwrap_or_default();
            out.clear();
            out.reserve(256);
            let Some(seq) = self.peer.poll_send(now, &mut out, events) else {
                self.spare.push(out);
                break;
            };
            let uid = self.ids.next();
            events.push(Event::new(now, EventKind::PacketSent { side, seq, bytes: out.len() as u32, uid }));
            outbound.transmit(Transmit { uid, sent_at: now, bytes: out }, events);
        }
        self.observe_rtt(events, start);
    }

    /// At a stats instant due by `now`: the peer's update and a `Stats` event (when recorded:
    /// [`Self::set_records_stats`]). Returns whether a stats instant was due (flow control
    /// follows it: [`Self::apply_flow`]).
    pub fn sample_stats(&mut self, now: SimTime, events: &mut Vec<Event>) -> bool {
        self.touch(now);
        if self.next_stats > now {
            return false;
        }
        let start = events.len();
        self.peer.update(now, events);
        self.observe_rtt(events, start);
        if self.records_stats {
            let stats = self.peer.stats();
            events.push(Event::new(now, EventKind::Stats { side: self.side, stats }));
        }
        let iv = (self.scenario.stats_interval_ms.max(1.0) * 1000.0) as u64;
        self.next_stats = now.plus_micros(iv);
        self.sync_due();
        true
    }

    /// With flow control on (at a stats instant): sets the packet rate from flow control's own
    /// low-pass RTT (rellikt's filter over this side's RTT samples, whatever the strategy: see
    /// `reliability::flow`; the stats sample is not read), reporting a mode switch as `FlowMode`. A new rate's first
    /// tick comes one new interval after the last tick, on this endpoint's grid, not immediately.
    pub fn apply_flow(&mut self, now: SimTime, events: &mut Vec<Event>) {
        if !self.scenario.flow.enabled {
            return;
        }
        let rate = self.flow.update(now, self.flow.rtt_ms());
        if self.flow.changed() {
            let (good, penalty_ms) = (self.flow.is_good(), self.flow.penalty_ms() as f32);
            events.push(Event::new(now, EventKind::FlowMode { side: self.side, good, penalty_ms }));
        }
        if rate != self.ticker.pps {
            self.restart_ticks(now, rate, true);
        }
    }

    /// Takes `scenario` as the new settings from `now`: the link into this endpoint where it
    /// changed, the send rate where it changed or when flow control was switched off (the
    /// configured rate applies again), flow control's settings, then the peer's live settings
    /// ([`Peer::command`] with `Reconfigure`). The strategy stays (a change of strategy rebuilds
    /// the endpoint: [`Self::restart`]); seed and tick phases are taken into the settings but the
    /// running endpoint keeps its own until a restart; scripted steps stay those the driver
    /// started with. Returns true when the link into this endpoint changed.
    /// Switching flow control on after [`Self::fix_flow_off`] took effect breaks that promise:
    /// the declaration is lifted and the RTT filter, which missed the samples since, starts
    /// afresh from the next one (as at the start of a run) rather than reading a stale RTT.
    #[must_use = "a changed link configuration must reach the caller's link"]
    pub fn reconfigure(&mut self, now: SimTime, mut scenario: Scenario) -> bool {
        if self.flow_filter_idle && scenario.flow.enabled {
            self.flow_filter_idle = false;
            self.flow.forget_rtt();
            self.sync_rtt_reports();
        }
        self.touch(now);
        let dir = self.link_dir();
        let link_changed = scenario.link.get(dir) != self.scenario.link.get(dir);
        let flow_turned_off = self.scenario.flow.enabled && !scenario.flow.enabled;
        if scenario.send_rate_pps != self.scenario.send_rate_pps || flow_turned_off {
            self.restart_ticks(now, scenario.send_rate_pps, false);
        }
        if scenario.flow != self.scenario.flow {
            self.flow.set_config(scenario.flow);
        }
        scenario.strategy = self.scenario.strategy;
        self.scenario = scenario;
        self.peer.command(now, PeerCommand::Reconfigure(live_settings(&self.scenario)));
        link_changed
    }

    /// Sets the link into this endpoint (the caller sets its `Link` too).
    pub fn set_link(&mut self, config: LinkConfig) {
        *self.scenario.link.get_mut(self.link_dir()) = config;
    }

    /// Changes the chunk/fragment sender's target bandwidth from `now`.
    pub fn set_chunk_bandwidth_kbps(&mut self, now: SimTime, kbps: f64) {
        self.touch(now);
        self.scenario.chunk.bandwidth_kbps = kbps;
        self.peer.command(now, PeerCommand::TargetKbps(kbps));
    }

    /// Queues a workload burst.
    pub fn burst(&mut self, now: SimTime) {
        self.touch(now);
        self.peer.command(now, PeerCommand::Burst);
    }

    /// Queues one large block of `bytes` (chunk and fragment strategies).
    pub fn send_chunk(&mut self, now: SimTime, bytes: usize) {
        self.touch(now);
        self.peer.command(now, PeerCommand::SendChunk { bytes });
    }

    /// Notes that the caller is at `now` ([`Self::now`]); every call taking a time does.
    pub(in crate::driver) fn touch(&mut self, now: SimTime) {
        self.now = self.now.max(now);
    }
}

#[cfg(test)]
mod tests;
