//! The common event language: every component reports what happened as a timestamped [`Event`].
//!
//! Two sides of the truth are kept apart on purpose. The link emits ground truth (a packet was put
//! on the wire, dropped and why, duplicated, delivered after how long); endpoints emit what they
//! believe (sent, received, acked, RTT samples, stats). Sessions record events, views draw them and
//! tests assert on them, so a new protocol only needs to speak this language to appear everywhere.

use serde::{Deserialize, Serialize};

/// Virtual time in microseconds since the start of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);

    pub fn from_secs_f64(s: f64) -> Self {
        SimTime((s.max(0.0) * 1e6).round() as u64)
    }
    pub fn from_millis_f64(ms: f64) -> Self {
        SimTime((ms.max(0.0) * 1e3).round() as u64)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    /// `self - earlier`, or zero when `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(earlier.0))
    }
    pub fn plus_micros(self, us: u64) -> SimTime {
        SimTime(self.0.saturating_add(us))
    }
}

/// `x.round() as u64` (half away from zero, saturating, NaN to 0), without a call into libm for
/// the values virtual times are made of: a tick, a send and a resend each round a time, and the
/// call was a fiftieth of a run.
///
/// Below 2^52 `x as i64` is `x`'s integer part exactly and `x` minus it its fraction, exactly
/// (as `i64`: one instruction each way, where `u64` takes a few).
#[inline]
pub(crate) fn round_u64(x: f64) -> u64 {
    if (0.0..4_503_599_627_370_496.0).contains(&x) {
        let whole = x as i64;
        (whole + i64::from(x - whole as f64 >= 0.5)) as u64
    } else {
        x.round() as u64
    }
}

/// One of the two endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Side {
    A,
    B,
}

impl Side {
    pub const BOTH: [Side; 2] = [Side::A, Side::B];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
    /// The direction this side sends on.
    pub fn outgoing(self) -> Dir {
        match self {
            Side::A => Dir::AtoB,
            Side::B => Dir::BtoA,
        }
    }
}

/// One direction of the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Dir {
    AtoB,
    BtoA,
}

impl Dir {
    pub const BOTH: [Dir; 2] = [Dir::AtoB, Dir::BtoA];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn sender(self) -> Side {
        match self {
            Dir::AtoB => Side::A,
            Dir::BtoA => Side::B,
        }
    }
    pub fn receiver(self) -> Side {
        self.sender().other()
    }
    /// The direction as the window writes it (`A->B`, `B->A`).
    pub fn label(self) -> &'static str {
        match self {
            Dir::AtoB => "A->B",
            Dir::BtoA => "B->A",
        }
    }
}

/// Why the link dropped a packet (ground truth).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DropReason {
    /// Independent random loss (`loss_percent`).
    Random,
    /// Gilbert-Elliott bad state.
    Burst,
    /// The bandwidth-limited queue was full (tail drop).
    QueueFull,
    /// Larger than the link MTU.
    Mtu,
}

/// Why an endpoint rejected a packet as malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MalformedReason {
    /// Shorter than its header says.
    Truncated,
    /// The header's encoding is invalid or non-canonical.
    BadHeader,
    /// The payload failed to decode (bad type id, out-of-range field, trailing garbage...).
    BadPayload,
    /// A packet of another protocol (wrong protocol id or kind).
    Foreign,
}

/// Why an endpoint discarded an intact packet without acking it (ground truth of what the
/// receiver did; the link delivered the packet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum DiscardReason {
    /// Older than the newest packet processed: UE4 ignores it (`PacketSequence <= InPacketId`)
    /// and so does dnm by the book's rule.
    Late,
    /// A copy of a packet already processed (UE4 and dnm drop it unacked; Glenn, acks and
    /// rellikt process a duplicate again and ack it, so they never report this).
    Duplicate,
    /// Older than the receiver's received-packets buffer holds (reliable.io's rule): neither
    /// processed nor acked (rellikt still reads its acks and messages).
    Stale,
    /// UE4: ahead of a missing packet while the packet order cache was full.
    OrderCacheFull,
    /// UE4: arrived after the connection closed.
    Closed,
    /// Chunks: a slice of neither the chunk being received nor the one read last, or one that
    /// disagrees with it (also reported as `SliceIgnored`).
    SliceIgnored,
}

impl DiscardReason {
    /// Every reason, in the order reports list them.
    pub const ALL: [DiscardReason; 6] = [
        DiscardReason::Late,
        DiscardReason::Duplicate,
        DiscardReason::Stale,
        DiscardReason::OrderCacheFull,
        DiscardReason::Closed,
        DiscardReason::SliceIgnored,
    ];

    /// The name reports use (`late`, `order_cache_full`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DiscardReason::Late => "late",
            DiscardReason::Duplicate => "duplicate",
            DiscardReason::Stale => "stale",
            DiscardReason::OrderCacheFull => "order_cache_full",
            DiscardReason::Closed => "closed",
            DiscardReason::SliceIgnored => "slice_ignored",
        }
    }
}

/// An endpoint's estimates at one moment; never NaN or infinite.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct StatsSample {
    /// Smoothed RTT (slow EWMA, reliable.io's 0.0025 by default).
    pub rtt_ms: f32,
    /// Faster-smoothed RTT for display.
    pub rtt_display_ms: f32,
    /// Smallest and largest RTT sample among recent ones.
    pub rtt_min_ms: f32,
    pub rtt_max_ms: f32,
    /// Standard deviation of recent RTT samples around their mean.
    pub jitter_ms: f32,
    /// Share of judged packets (older than the RTT window) never acked.
    pub loss_percent: f32,
    /// No packet has been judged yet: `loss_percent` is no estimate (0 for want of one), and
    /// folds and plots leave it out. Written only when true; recordings made before it read
    /// false, as their samples were counted then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_loss_verdict: bool,
    pub sent_kbps: f32,
    pub received_kbps: f32,
    pub acked_kbps: f32,
}

/// A client (connection) of a run, numbered from 1, as `--set client.K...` names it.
///
/// A run is one server and N clients; every event names the client whose connection it belongs
/// to, as quinn-proto's events name their `ConnectionHandle`. A run with one client (every run
/// made before clients existed, every two-endpoint run) has only client 1. [`RUN_WIDE`] marks
/// the events of no single client (a parameter change for every client).
pub type ClientId = u32;

/// The one client of a single-connection run (and of every recording made before clients).
pub const FIRST_CLIENT: ClientId = 1;

/// The client id of events that belong to the whole run rather than one connection.
pub const RUN_WIDE: ClientId = 0;

/// A timestamped event of one client's connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub time: SimTime,
    /// Whose connection: see [`ClientId`].
    #[serde(default = "first_client")]
    pub client: ClientId,
    pub kind: EventKind,
}

fn first_client() -> ClientId {
    FIRST_CLIENT
}

impl Event {
    /// An event of client 1 (endpoints make their events so; a run of several clients names
    /// the client as it collects them, see [`Event::for_client`]).
    #[inline]
    pub fn new(time: SimTime, kind: EventKind) -> Self {
        Self { time, client: FIRST_CLIENT, kind }
    }

    /// An event of `client`.
    #[inline]
    pub fn for_client(time: SimTime, client: ClientId, kind: EventKind) -> Self {
        Self { time, client, kind }
    }
}

/// Everything that can happen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum EventKind {
    // ----- ground truth, from the link -----
    /// A packet entered the link; `uid` identifies this send uniquely for the whole run.
    LinkSent { dir: Dir, uid: u64, bytes: u32 },
    /// The link dropped it.
    LinkDropped { dir: Dir, uid: u64, reason: DropReason },
    /// The link made an extra copy (delivered separately).
    LinkDuplicated { dir: Dir, uid: u64 },
    /// A copy reached the receiving endpoint after `delay_us` on the link.
    LinkDelivered { dir: Dir, uid: u64, delay_us: u32 },

    // ----- beliefs, from the endpoints -----
    /// The endpoint sent packet `seq` (carried by link send `uid`).
    PacketSent { side: Side, seq: u32, bytes: u32, uid: u64 },
    /// The endpoint accepted packet `seq`.
    PacketReceived { side: Side, seq: u32, bytes: u32 },
    /// The endpoint learned that its packet `seq` reached the peer (reported once per send).
    PacketAcked { side: Side, seq: u32 },
    /// The endpoint concluded that its packet `seq` was lost (Nak, skipped range or timeout).
    PacketNakked { side: Side, seq: u32 },
    /// One RTT measurement from an ack.
    RttSample { side: Side, rtt_ms: f32 },
    /// Periodic estimates.
    Stats { side: Side, stats: StatsSample },
    /// A packet was rejected as malformed, counted and dropped.
    Malformed { side: Side, reason: MalformedReason },
    /// The endpoint got packet `seq` intact but will never ack it (see [`DiscardReason`]): its
    /// sender counts it lost although the link delivered it. Each delivered copy gets one
    /// verdict: `PacketReceived`, `PacketDiscarded` or `Malformed`.
    PacketDiscarded { side: Side, seq: u32, reason: DiscardReason },
    /// A scenario parameter changed while running (a live edit or a scripted link step), by its
    /// dotted `--set` name; reported on side A. Also the marker of a restart of both endpoints
    /// (name `restart`, value the strategy; or name `strategy`): see [`EventKind::is_restart`].
    ParamChanged { name: String, value: String },

    // ----- messages (workload level; `msg` is the sending side's workload id) -----
    /// The application queued message `msg` on `side` for sending.
    MessageQueued { side: Side, msg: u64, bytes: u32, reliable: bool },
    /// Message `msg` was included in packet `seq` (first send or a resend, and why).
    MessageSent { side: Side, msg: u64, seq: u32, kind: SendKind },
    /// The sender learned `msg` arrived, via the ack of packet `seq`.
    MessageAcked { side: Side, msg: u64, seq: u32 },
    /// The receiving application got the peer's message `msg` (`side` is the receiver).
    MessageDelivered { side: Side, msg: u64 },
    /// The sender could not queue `msg` (send queue full, too large...): explicit, never silent.
    MessageRefused { side: Side, msg: u64, reason: RefuseReason },
    /// The receiving application got message `msg` whose content failed `workload::check_payload`
    /// (`side` is the receiver; `msg` is read from the damaged payload, so it may be wrong).
    MessageCorrupted { side: Side, msg: u64 },
    /// A packet carried message id `message_id` beyond the receive window starting at `expected`;
    /// the packet was rejected and not acked (`side` is the receiver).
    MessageDesync { side: Side, message_id: u32, expected: u32 },

    // ----- large blocks (chunks/slices, and the fragmentation baseline) -----
    /// The sender put chunk `chunk` (wire id) of `bytes` in `slices` slices on the network.
    ChunkStarted { side: Side, chunk: u32, bytes: u32, slices: u32 },
    /// The sender sent slice `slice` of `chunk` (or fragment `slice` of a block); `resend` when
    /// it was sent before.
    SliceSent { side: Side, chunk: u32, slice: u32, resend: bool },
    /// The sender learned from an ack packet that slice `slice` of `chunk` arrived.
    SliceAcked { side: Side, chunk: u32, slice: u32 },
    /// The receiver stored slice `slice` of `chunk` for the first time.
    SliceReceived { side: Side, chunk: u32, slice: u32 },
    /// The sender learned every slice of `chunk` arrived, `elapsed_us` after `ChunkStarted`.
    ChunkCompleted { side: Side, chunk: u32, bytes: u32, elapsed_us: u64 },
    /// The receiving application read `chunk`, `elapsed_us` after its first slice arrived;
    /// `payload_id` is the workload id its content proves (None when corrupt).
    ChunkDelivered { side: Side, chunk: u32, bytes: u32, elapsed_us: u64, payload_id: Option<u64> },
    /// A send-budget accumulator at one send tick: bytes available at the start, bytes spent.
    Budget { side: Side, available_bytes: f32, spent_bytes: f32 },
    /// Fragmentation baseline: every fragment of attempt `attempt` at sending block `chunk` went
    /// out as packet sequence `seq`.
    FragmentBlockSent { side: Side, chunk: u32, attempt: u32, seq: u32, fragments: u32 },
    /// Fragmentation baseline: the receiver reassembled the whole packet `seq`.
    FragmentReassembled { side: Side, seq: u32 },
    /// Flow control switched mode (rellikt): `good` is the new mode, `penalty_ms` the current
    /// time good conditions must last before returning to good.
    FlowMode { side: Side, good: bool, penalty_ms: f32 },
    /// The chunk receiver ignored a well-formed slice that does not fit the chunk it is receiving.
    SliceIgnored { side: Side, chunk: u32, slice: u32, reason: SliceIgnoreReason },

    // ----- connection and budget -----
    /// The endpoint closed its connection (e.g. UE4's "Outgoing reliable buffer overflow").
    ConnectionClosed { side: Side, reason: String },
    /// UE4: a channel's queue of reliable bunches waiting behind a missing one changed (`side`
    /// is the receiver); `blocked_us` is how long the channel has been blocked, or was when
    /// `depth` returns to 0. `channel` and `kind` say which channel (recordings made before
    /// channels per actor read as the one actor channel).
    Ue4InRec {
        side: Side,
        depth: u32,
        blocked_us: u64,
        #[serde(default)]
        channel: u32,
        #[serde(default)]
        kind: Ue4ChannelKind,
    },
    /// UE4: the receiver could not process a bunch of packet `seq` and reported the packet
    /// lost (bSkipAck, `PacketNotify.NakSeq`) although it arrived (`side` is the receiver).
    Ue4SkipAck { side: Side, seq: u32 },
    /// UE4: the sender opened channel `channel` (its first bunch carries bOpen).
    Ue4ChannelOpened { side: Side, channel: u32, kind: Ue4ChannelKind },
    /// UE4: the sender closed channel `channel` (a reliable bunch with bClose); the index is
    /// free again once everything on it is acked.
    Ue4ChannelClosed { side: Side, channel: u32, kind: Ue4ChannelKind },
}

/// What a UE4 channel carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ue4ChannelKind {
    /// One actor's reliable messages (`NAME_Actor`), opened and closed on demand.
    #[default]
    Actor,
    /// The connection's control channel (`NAME_Control`): the close reason.
    Control,
    /// The workload's state snapshots, on a channel open from the start.
    Snapshot,
}

/// Why a chunk receiver ignored a slice (each is also counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SliceIgnoreReason {
    /// Neither the chunk being received nor the one read last.
    WrongChunk,
    /// Its slice count or last-slice size disagrees with the chunk's.
    Inconsistent,
    /// Its slice id is not below its slice count.
    OutOfRange,
}

/// Why a message was put in a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SendKind {
    /// The first time.
    First,
    /// Glenn: the resend delay elapsed with the message still unacked.
    DelayResend,
    /// Glenn with resend delay 0: an extra copy in every packet until acked.
    Redundant,
    /// UE4: the packet that carried it was reported lost (Nak).
    NakResend,
    /// A timeout declared the carrying packet lost (delivery notification / rellikt rules).
    TimeoutResend,
}

impl SendKind {
    /// The short name anomaly labels and packet comments write (`first`, `delay`, `redundant`,
    /// `nak`, `timeout`).
    pub fn name(self) -> &'static str {
        match self {
            SendKind::First => "first",
            SendKind::DelayResend => "delay",
            SendKind::Redundant => "redundant",
            SendKind::NakResend => "nak",
            SendKind::TimeoutResend => "timeout",
        }
    }
}

/// Why a message could not be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RefuseReason {
    /// The send queue is full: back-pressure to the caller.
    SendQueueFull,
    /// Larger than the packet budget (or the protocol's size limit).
    TooLarge,
    /// The connection is closed.
    Closed,
}

impl EventKind {
    /// True for the marker of a restart of both endpoints (a `ParamChanged` named `restart`,
    /// `strategy` or `transport`, see [`crate::action`]): folds keyed by per-run ids (message ids, chunk ids,
    /// sequences) start afresh there, as the new endpoints count from zero again.
    pub fn is_restart(&self) -> bool {
        matches!(self, EventKind::ParamChanged { name, .. } if name == "restart" || name == "strategy" || name == "transport")
    }

    /// The endpoint this event belongs to: the sender for link events.
    pub fn side(&self) -> Side {
        match self {
            EventKind::LinkSent { dir, .. }
            | EventKind::LinkDropped { dir, .. }
            | EventKind::LinkDuplicated { dir, .. }
            | EventKind::LinkDelivered { dir, .. } => dir.sender(),
            EventKind::ParamChanged { .. } => Side::A,
            EventKind::PacketSent { side, .. }
            | EventKind::PacketReceived { side, .. }
            | EventKind::PacketAcked { side, .. }
            | EventKind::PacketNakked { side, .. }
            | EventKind::RttSample { side, .. }
            | EventKind::Stats { side, .. }
            | EventKind::Malformed { side, .. }
            | EventKind::PacketDiscarded { side, .. }
            | EventKind::MessageQueued { side, .. }
            | EventKind::MessageSent { side, .. }
            | EventKind::MessageAcked { side, .. }
            | EventKind::MessageDelivered { side, .. }
            | EventKind::MessageRefused { side, .. }
            | EventKind::MessageCorrupted { side, .. }
            | EventKind::MessageDesync { side, .. }
            | EventKind::ChunkStarted { side, .. }
            | EventKind::SliceSent { side, .. }
            | EventKind::SliceAcked { side, .. }
            | EventKind::SliceReceived { side, .. }
            | EventKind::ChunkCompleted { side, .. }
            | EventKind::ChunkDelivered { side, .. }
            | EventKind::Budget { side, .. }
            | EventKind::FragmentBlockSent { side, .. }
            | EventKind::FragmentReassembled { side, .. }
            | EventKind::FlowMode { side, .. }
            | EventKind::SliceIgnored { side, .. }
            | EventKind::ConnectionClosed { side, .. }
            | EventKind::Ue4InRec { side, .. }
            | EventKind::Ue4SkipAck { side, .. }
            | EventKind::Ue4ChannelOpened { side, .. }
            | EventKind::Ue4ChannelClosed { side, .. } => *side,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::round_u64;

    #[test]
    fn round_u64_matches_round_as_u64() {
        let tricky = [
            0.0,
            -0.0,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            -0.4,
            -0.6,
            -2.5,
            16_666.5,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9_007_199_254_740_993.0,
            1.8e19,
            2e19,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
        ];
        let mut x = 0x1234_5678_9abc_def0_u64;
        let spread = (0..100_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 10f64.powi((x % 17) as i32)
        });
        for v in tricky.into_iter().chain(spread) {
            assert_eq!(round_u64(v), v.round() as u64, "{v:e}");
        }
    }
}
