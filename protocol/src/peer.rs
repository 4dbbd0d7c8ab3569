//! The contract between the driver and a protocol endpoint: [`Peer`], the [`PeerCommand`]s it
//! takes besides the packet loop, and the [`LiveSettings`] a running endpoint may take.

use std::any::Any;

use crate::event::{Event, SimTime, StatsSample};
use crate::workload::WorkloadConfig;

/// Safety cap on packets one endpoint may send in a single tick: the contract's bound on
/// [`Peer::max_packets_per_tick`], which every driver enforces.
pub const MAX_PACKETS_PER_TICK: usize = 4096;

/// Something the driver asks of an endpoint besides the packet loop (a user action or a live
/// setting). Strategies act on what applies to them and ignore the rest.
pub enum PeerCommand {
    /// Queue a workload burst (message strategies).
    Burst,
    /// Queue one large block of `bytes` for sending (chunk strategies).
    SendChunk { bytes: usize },
    /// A bandwidth-budgeted sender's new target (chunk and fragment senders).
    TargetKbps(f64),
    /// The settings that may change while running; see [`LiveSettings`].
    Reconfigure(LiveSettings),
}

impl std::fmt::Debug for PeerCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerCommand::Burst => write!(f, "Burst"),
            PeerCommand::SendChunk { bytes } => write!(f, "SendChunk {{ bytes: {bytes} }}"),
            PeerCommand::TargetKbps(k) => write!(f, "TargetKbps({k})"),
            PeerCommand::Reconfigure(l) => write!(f, "Reconfigure({:?}, ..)", l.workload),
        }
    }
}

/// Live settings for one endpoint: the workload every message strategy shares, and the
/// strategy's own section of the scenario (`GlennConfig`, `Ue4Config`, ...), which the registry
/// builds and the endpoint downcasts. Endpoints thereby know their own config only, and nothing
/// here depends on the scenario or on any strategy.
pub struct LiveSettings {
    pub workload: WorkloadConfig,
    pub own: Box<dyn Any + Send>,
}

impl LiveSettings {
    /// The strategy's own section, if it is a `T`.
    pub fn own<T: 'static>(&self) -> Option<&T> {
        self.own.downcast_ref::<T>()
    }
}

/// A protocol endpoint driven on virtual time.
///
/// Call order at one instant: every packet due is passed to [`Peer::receive`]; then, at the
/// endpoint's send ticks, [`Peer::on_tick`] once and [`Peer::poll_send`] repeatedly until it returns
/// `None` (a peer may send several packets per tick, e.g. chunk slices, or none); then, at stats
/// instants, [`Peer::update`] and [`Peer::stats`]. Endpoints push what they believe happened into
/// `events`; the driver adds `PacketSent` (it knows the link's send id) and checks every
/// `PacketAcked` against the link's ground truth.
pub trait Peer: Send {
    /// A send tick at `now` (the endpoint's packet rate): decide what to send this tick.
    fn on_tick(&mut self, now: SimTime, events: &mut Vec<Event>);
    /// Writes the next packet into `out` (empty on entry) and returns its sequence, or `None` when
    /// nothing more goes out this tick.
    fn poll_send(&mut self, now: SimTime, out: &mut Vec<u8>, events: &mut Vec<Event>) -> Option<u32>;
    /// Handles one incoming datagram (any bytes: malformed ones are counted, never a panic).
    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>);
    /// Advances timers and estimators.
    fn update(&mut self, now: SimTime, events: &mut Vec<Event>);
    /// Current estimates.
    fn stats(&self) -> StatsSample;
    /// A user action or live setting (see [`PeerCommand`]); what does not apply is ignored.
    fn command(&mut self, now: SimTime, command: PeerCommand);
    /// Reliable messages queued and not yet acked, including any waiting for queue space (0 for
    /// strategies without reliable messages); a run has drained when both sides report 0.
    fn unacked_reliable(&self) -> usize;

    /// Whether to report `PacketReceived`, `PacketAcked` and `PacketNakked` (true at first; the
    /// endpoint behaves the same either way). Returns whether the endpoint follows the setting:
    /// by default it does not and reports them always, and a caller that wants them left out
    /// removes them itself (see [`crate::driver::EventFilter`]). Building them was a twentieth
    /// of a sweep's run.
    fn set_reports_packet_beliefs(&mut self, reports: bool) -> bool {
        let _ = reports;
        false
    }

    /// Most packets one tick sends ([`Self::poll_send`] is called until it returns `None` or
    /// this many went): Glenn's endpoints send at most one, so their driver makes no second call
    /// just to hear `None` (a call and a buffer round trip per tick). Fixed for the endpoint.
    fn max_packets_per_tick(&self) -> usize {
        MAX_PACKETS_PER_TICK
    }

    /// Whether anything will read [`Self::stats`] (true at first): when not, the endpoint may
    /// skip the upkeep of estimates only `stats` reports (bandwidth, loss verdicts, the RTT
    /// window), behaving exactly the same otherwise. Meant to be set before the endpoint's first
    /// packet and kept for the run (an estimate not kept cannot be made up later); by default
    /// ignored.
    fn set_reports_stats(&mut self, reports: bool) {
        let _ = reports;
    }

    /// Whether to report `RttSample` (true at first; the endpoint's own RTT estimate is kept
    /// either way). Returns whether the endpoint follows the setting, as
    /// [`Self::set_reports_packet_beliefs`] does. For runs where nothing reads the samples: no
    /// recording keeps them and flow control cannot need them (see the driver).
    fn set_reports_rtt_samples(&mut self, reports: bool) -> bool {
        let _ = reports;
        false
    }
}
