//! Every settable scenario parameter: dotted name, label, unit, valid range and help.
//!
//! Rows are grouped as the scenario is (`protocol/src/scenario.rs`); the window's left panel shows
//! some of them, `--set` and session changes accept all of them (checked against the range), and
//! README's "Parameters" section is this table rendered by [`super::markdown`]. Ranges are the
//! values the endpoints handle sensibly (the window's sliders span the same range; a test runs
//! every strategy at both ends of every range).

use ackscope_protocol::Strategy;

use super::{Group, Kind, Param};

const fn num(
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    min: f64,
    max: f64,
    tip: &'static str,
) -> Param {
    Param { name, label, unit, kind: Kind::Number { min, max, integer: false, log: false }, tip }
}

impl Param {
    /// The same number with a logarithmic slider.
    const fn log(self) -> Param {
        match self.kind {
            Kind::Number { min, max, integer, .. } => {
                Param { kind: Kind::Number { min, max, integer, log: true }, ..self }
            }
            _ => self,
        }
    }

    /// The same number taking whole numbers only.
    const fn int(self) -> Param {
        match self.kind {
            Kind::Number { min, max, log, .. } => Param { kind: Kind::Number { min, max, integer: true, log }, ..self },
            _ => self,
        }
    }
}

/// A whole number.
const fn int(
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    min: f64,
    max: f64,
    tip: &'static str,
) -> Param {
    num(name, label, unit, min, max, tip).int()
}

/// A number that may also be unset (`null`): the value then comes from elsewhere.
const fn opt(
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    min: f64,
    max: f64,
    tip: &'static str,
) -> Param {
    Param { name, label, unit, kind: Kind::OptionalNumber { min, max }, tip }
}

const fn flag(name: &'static str, label: &'static str, tip: &'static str) -> Param {
    Param { name, label, unit: "", kind: Kind::Bool, tip }
}

/// A file's path.
const fn path(name: &'static str, label: &'static str, tip: &'static str) -> Param {
    Param { name, label, unit: "", kind: Kind::Path, tip }
}

const fn choice(name: &'static str, label: &'static str, names: fn() -> Vec<&'static str>, tip: &'static str) -> Param {
    Param { name, label, unit: "", kind: Kind::Choice(names), tip }
}

fn strategies() -> Vec<&'static str> {
    Strategy::all().map(|s| s.name()).collect()
}

/// The table's groups, in the order the window shows them; a row is in the group its name's
/// first segment names, else in the first (the scenario's top level). A strategy's own group is
/// the one its registry row names (`StrategyInfo::settings`).
pub static GROUPS: &[Group] = &[
    Group { prefix: "", label: "Seed, ticks and stats" },
    Group { prefix: "link", label: "Link" },
    Group { prefix: "ack", label: "Packet acks and estimators" },
    Group { prefix: "workload", label: "Workload" },
    Group { prefix: "chunk", label: "Large blocks" },
    Group { prefix: "flow", label: "Flow control" },
    Group { prefix: "glenn", label: "Glenn reliable-ordered messages" },
    Group { prefix: "hybrid", label: "Hybrid" },
    Group { prefix: "ue4", label: "UE4 bunches" },
    Group { prefix: "dnm", label: "Delivery notification manager" },
    Group { prefix: "rellikt", label: "rellikt" },
];

/// The table, in README's order (one row per line, so the table reads as one).
#[rustfmt::skip]
pub static PARAMS: &[Param] = &[
    Param { name: "seed", label: "seed", unit: "", kind: Kind::AnyInteger, tip: "Seed of every random decision: the same seed and scenario give the same events." },
    choice("strategy", "strategy", strategies, "The protocol both endpoints run (see Strategies)."),
    num("send_rate_pps", "packets/s", "packets/s", 1.0, 10_000.0, "Packets each endpoint sends per second; every packet carries acks for the other side's.").log(),
    choice("tick_phase", "tick phase", || vec!["seeded", "lockstep"], "seeded: each side's send ticks start at a phase drawn from the seed and wake up to tick_jitter_ms late, as real endpoints do; lockstep: both tick at the same instants from 0 (the pathological case)."),
    num("tick_jitter_ms", "tick lateness ms", "ms", 0.0, 50.0, "How late a send tick may wake (drawn per side and tick, at most half a tick interval); not in lockstep."),
    opt("a.tick_phase_ms", "A tick phase ms", "ms", 0.0, 1000.0, "Side A's own send-tick phase: its ticks fall at phase + k / rate (taken modulo the tick interval); unset: drawn from the seed (or 0 in lockstep)."),
    opt("b.tick_phase_ms", "B tick phase ms", "ms", 0.0, 1000.0, "Side B's own send-tick phase, as a.tick_phase_ms."),
    int("payload_bytes", "payload bytes", "bytes", 0.0, 16384.0, "Opaque payload per packet of the acks strategy."),
    num("stats_interval_ms", "stats interval ms", "ms", 1.0, 10000.0, "How often each endpoint reports its estimates (the plots' sample spacing, the arrow keys' step)."),
    // Clients and the server (`client.K.NAME` sets NAME for client K alone: see Many clients).
    int("clients", "clients", "clients", 1.0, 65536.0, "Clients of the server (side A), each on its own link each way with its own workload and tick phase, seeded apart; a scenario file may list groups instead. Fixed for a run."),
    num("server.uplink_kbps", "server uplink kbps", "kbps", 0.0, 10_000_000.0, "The server's outgoing bandwidth shared by every client through one FIFO queue before each client's link, 28 bytes IP+UDP per packet counted (0 = unlimited)."),
    int("server.uplink_queue_bytes", "server uplink queue bytes", "bytes", 1500.0, 100_000_000.0, "Bytes the server's uplink queue holds before dropping (tail drop, reported as the client link's QueueFull).").log(),
    // The link, per direction: `link.X` sets both, `link.a_to_b.X` / `link.b_to_a.X` one.
    num("link.latency_ms", "latency ms", "ms", 0.0, 1000.0, "One-way base delay added to every packet (propagation + queueing you do not model otherwise)."),
    num("link.jitter_ms", "jitter ms", "ms", 0.0, 500.0, "Random variation of the delay (uniform half-width or normal standard deviation). Large jitter reorders packets."),
    choice("link.jitter_distribution", "jitter distribution", || vec!["uniform", "normal"], "Normal instead of uniform jitter (netem's distribution choice)"),
    flag("link.jitter_reorders", "jitter reorders", "When false, jitter never lets a packet overtake an earlier one (a FIFO link)."),
    num("link.loss_percent", "loss %", "%", 0.0, 100.0, "Independent random packet loss. The sender estimates it from packets never acked (Glenn's packet-level acks)."),
    num("link.burst.p_percent", "burst p %", "%", 0.0, 50.0, "Gilbert-Elliott burst loss: chance per 1 ms step of entering the bad state (0 = off); the chain runs on its own time grid, so every strategy meets the same bursts."),
    num("link.burst.r_percent", "burst r %", "%", 0.1, 100.0, "Gilbert-Elliott: chance per 1 ms step of leaving the bad state (mean burst = 100/r ms; bad p/(p+r) of the time)."),
    num("link.burst.loss_in_bad_percent", "loss in bad %", "%", 0.0, 100.0, "Gilbert-Elliott: loss while in the bad state."),
    num("link.duplicate_percent", "duplicate %", "%", 0.0, 50.0, "Chance the link delivers an extra copy. Receivers must ack and deliver each message exactly once."),
    num("link.reorder_percent", "reorder %", "%", 0.0, 50.0, "Chance a packet is held back by the reorder delay so later packets overtake it."),
    num("link.reorder_delay_ms", "reorder delay ms", "ms", 0.0, 1000.0, "How long a reordered packet is held back."),
    num("link.bandwidth_kbps", "bandwidth kbps", "kbps", 0.0, 10_000_000.0, "Link capacity including 28 bytes IP+UDP per packet, with a bounded queue that tail-drops (0 = unlimited).").log(),
    int("link.queue_bytes", "queue bytes", "bytes", 1500.0, 1_000_000.0, "Bytes the bandwidth-limited queue holds before dropping (bufferbloat vs tail drop).").log(),
    int("link.mtu_bytes", "MTU bytes", "bytes", 200.0, 9000.0, "Largest IP packet; larger ones are dropped (why Glenn slices large blocks)."),
    path("link.trace", "trace file", "Replay a recorded link, both directions: a capture with both sides (pcapng or pcap) or a session file; each packet meets the fate of the recorded packet nearest in time, and only the MTU of the settings above still applies (README, Links from captures). Read when the run starts."),
    path("link.file", "fitted link file", "Set both directions from a link file `ackscope fit --out` wrote (the values it holds; the rest take their defaults). Read when set; later settings change it further."),
    // Packet acks and the estimators (`dnm.stats.X` and `rellikt.stats.X` take the same fields).
    int("ack.sent_packets_buffer_size", "sent packets buffer", "packets", 1.0, 32768.0, "Sent packets remembered to match acks (reliable.io: 256)."),
    int("ack.received_packets_buffer_size", "received packets buffer", "packets", 1.0, 32768.0, "Received sequences remembered for the ack bits (reliable.io: 256)."),
    num("ack.ack_expiry_ms", "ack expiry ms", "ms", 0.0, 600_000.0, "After this long without receiving anything, stop acking what was received before (0 = never: false acks once sequence numbers wrap, so refused without `--allow-false-acks`; the window warns)."),
    num("ack.stats.rtt_smoothing", "RTT smoothing", "", 0.0, 1.0, "EWMA factor of the smoothed RTT (reliable.io: 0.0025; the first sample is taken as is)."),
    num("ack.stats.rtt_display_smoothing", "display RTT smoothing", "", 0.0, 1.0, "EWMA factor of the faster display RTT."),
    choice("ack.stats.rtt_filter", "RTT filter", || vec!["ewma", "rellikt"], "How the RTT is smoothed: reliable.io's EWMA or rellikt's low-pass filter."),
    num("ack.stats.bandwidth_smoothing", "bandwidth smoothing", "", 0.0, 1.0, "EWMA factor of the bandwidth figures (reliable.io: 0.1)."),
    int("ack.stats.rtt_window", "RTT window", "samples", 1.0, 65536.0, "RTT samples kept for min, max and jitter."),
    int("ack.stats.loss_window", "loss window", "packets", 1.0, 65536.0, "Judged packets kept for the loss percentage."),
    num("ack.stats.loss_rtt_factor", "loss RTT factor", "", 0.0, 100.0, "A packet is judged once older than this x display RTT + the loss margin."),
    num("ack.stats.loss_margin_ms", "loss margin ms", "ms", 0.0, 60_000.0, "Added to the judging age (and 1 s more before any RTT sample)."),
    num("ack.stats.bandwidth_interval_ms", "bandwidth interval ms", "ms", 1.0, 60_000.0, "Bandwidth is measured over intervals of this length."),
    // The message workload.
    num("workload.snapshot_rate_hz", "snapshots /s", "Hz", 0.0, 120.0, "Unreliable state snapshots each side sends per second (sent once, may be lost)."),
    int("workload.snapshot_bytes", "snapshot bytes", "bytes", 8.0, 1000.0, "Size of each snapshot.").log(),
    num("workload.reliable_rate_hz", "reliable events /s", "Hz", 0.0, 10_000.0, "Reliable events per second (Poisson), delivered in order exactly once.").log(),
    int("workload.reliable_min_bytes", "event min bytes", "bytes", 8.0, 1000.0, "Smallest reliable event."),
    int("workload.reliable_max_bytes", "event max bytes", "bytes", 8.0, 1000.0, "Reliable event sizes are drawn between the minimum (8) and this.").log(),
    choice("workload.reliable_size_distribution", "event sizes", || vec!["uniform", "exponential"], "Reliable event sizes: uniform, or exponential around the middle (many small, few large)."),
    choice("workload.senders", "senders", || vec!["both", "a_only", "b_only"], "Which endpoints generate messages."),
    int("workload.burst_messages", "burst messages", "messages", 0.0, 4096.0, "Reliable messages queued at once by a burst."),
    int("workload.actors", "actors", "actors", 1.0, 1024.0, "Actors the reliable messages belong to: UE4 sends each actor's on its own channel (ordered within it); the other strategies carry them on one stream."),
    int("workload.chunk_kib", "chunk KiB", "KiB", 0.0, 16384.0, "Size of the blocks side A sends back to back with the chunks and fragments strategies (0 = none; capped at max_slices x slice_bytes)."),
    choice("workload.snapshot_mode", "snapshot mode", || vec!["unreliable", "newest", "reliable"], "What dnm and rellikt do when a packet carrying a snapshot is lost: nothing, resend only the newest state, or resend it."),
    // Large blocks (chunks and fragments strategies).
    num("chunk.bandwidth_kbps", "chunk target kbps", "kbps", 16.0, 10000.0, "Glenn's chunk sender: the byte budget accumulated per tick from this bandwidth (headers counted).").log(),
    num("chunk.resend_delay_ms", "slice resend ms", "ms", 0.0, 1000.0, "Glenn's chunk sender: a slice is sent again at most this often until acked."),
    flag("chunk.rtt_resend", "slice resend = RTT x 1.25", "Derive the per-slice resend delay from the measured RTT (the large-blocks seed's suggestion)."),
    flag("chunk.initial_burst", "initial burst", "Send every slice once at the start of a chunk, wait the burst wait, then go budgeted."),
    num("chunk.burst_wait_ms", "burst wait ms", "ms", 0.0, 10_000.0, "How long the initial burst waits before budgeted sending."),
    int("chunk.slice_bytes", "slice bytes", "bytes", 1.0, 8192.0, "Bytes per slice; keep it under the link MTU minus 37."),
    int("chunk.max_slices", "max slices", "slices", 1.0, 4096.0, "Most slices per chunk."),
    num("chunk.ack_interval_ms", "ack interval ms", "ms", 0.0, 10_000.0, "The receiver sends at most one ack packet per this interval."),
    // rellikt's RTT-driven send-rate switch.
    flag("flow.enabled", "rellikt flow control", "rellikt's good/bad switch: RTT above the threshold drops to the bad rate; penalty time doubles on a quick relapse."),
    num("flow.rtt_threshold_ms", "RTT threshold ms", "ms", 10.0, 1000.0, "Flow control: RTT above this is 'bad' (rellikt: 250 ms)."),
    num("flow.good_rate_pps", "good rate", "packets/s", 1.0, 1000.0, "Flow control: packets per second in good mode."),
    num("flow.bad_rate_pps", "bad rate", "packets/s", 1.0, 1000.0, "Flow control: packets per second in bad mode."),
    num("flow.initial_penalty_ms", "initial penalty ms", "ms", 0.0, 600_000.0, "Flow control: time in bad mode before trying good again, at first."),
    num("flow.max_penalty_ms", "max penalty ms", "ms", 0.0, 3_600_000.0, "Flow control: the penalty doubles up to this."),
    num("flow.relapse_window_ms", "relapse window ms", "ms", 0.0, 600_000.0, "Flow control: a return to bad mode within this long after entering good mode doubles the penalty."),
    num("flow.good_reset_ms", "good reset ms", "ms", 0.0, 600_000.0, "Flow control: this long in good mode resets the penalty."),
    // Glenn's reliable-ordered messages.
    num("glenn.resend_delay_ms", "resend delay ms", "ms", 0.0, 1000.0, "Glenn: an unacked message is included again once this long has passed since it was last sent. 0 = in every packet until acked (pure redundancy)."),
    flag("glenn.rtt_resend", "resend delay = RTT x 1.25", "Adaptive redundancy: derive the resend delay from the measured RTT instead of the fixed value."),
    num("glenn.rtt_resend_factor", "RTT resend factor", "", 0.0, 10.0, "Glenn: the RTT-based resend delay is this x the measured RTT."),
    int("glenn.packet_budget_bytes", "packet budget bytes", "bytes", 64.0, 8192.0, "Glenn: bytes of messages one packet may carry; oldest unacked messages are packed first.").log(),
    int("glenn.max_messages_per_packet", "max messages / packet", "messages", 1.0, 256.0, "Glenn: most messages one packet carries.").log(),
    int("glenn.send_queue_size", "send queue", "messages", 1.0, 16384.0, "Glenn: unacked reliable messages the sender holds."),
    int("glenn.receive_queue_size", "receive queue", "messages", 1.0, 32768.0, "Glenn: out-of-order reliable messages the receiver holds; the sender never runs further ahead."),
    int("glenn.sent_packets_buffer_size", "sent packets buffer", "packets", 1.0, 32768.0, "Glenn: packets whose message ids are remembered to map acks to messages."),
    int("glenn.unreliable_queue_size", "unreliable queue", "messages", 0.0, 32768.0, "Glenn: snapshots waiting for room in a packet."),
    // ackscope's hybrid (its packets take glenn's packet settings, not glenn's resend settings).
    int("hybrid.reorder_tolerance_packets", "reorder tolerance", "packets", 1.0, 32.0, "Hybrid: a packet counts as lost only once the peer acked at least this many newer ones and its ack bit is clear (1 = the first); the reorder window it measures from late packets applies as well."),
    num("hybrid.rtt_factor", "timeout RTT factor", "", 0.5, 10.0, "Hybrid: the resend timeout's multiple of the smoothed RTT: a message unacked rtt_factor x srtt + rttvar_factor x rttvar after its last send goes again (whichever comes first with the Nak)."),
    num("hybrid.rttvar_factor", "timeout RTT-variation factor", "", 0.0, 16.0, "Hybrid: the resend timeout's multiple of the RTT variation before the first RTT sample, and the most it backs off to when timer resends prove spurious (4 as in TCP, ENet and KCP; the timeout stays at least a tick over the RTT)."),
    num("hybrid.tight_rttvar_factor", "timeout tight RTT-variation factor", "", 0.0, 16.0, "Hybrid: the least multiple of the RTT variation the timeout tightens to after the first RTT sample; each timer resend whose original was acked after all backs it off toward rttvar_factor, each that proved needed tightens it again (at or above rttvar_factor: fixed at that)."),
    num("hybrid.redundancy_age_rtts", "redundancy age RTTs", "RTTs", 0.0, 10.0, "Hybrid: blind copies go only within this many RTTs of the send they back (after that its ack could have come)."),
    int("hybrid.redundancy_budget_bytes", "redundancy bytes / packet", "bytes", 0.0, 1200.0, "Hybrid: bytes of blind copies one packet may carry (0 = none)."),
    int("hybrid.redundant_copies", "redundant copies", "copies", 0.0, 16.0, "Hybrid: blind copies per message and round (its first send, each resend) at most; as few as the measured loss needs; a first send gets none when this many cannot bring the tail within its share (0 = none)."),
    num("hybrid.recovery_target_ms", "recovery target ms", "ms", 0.0, 5000.0, "Hybrid: copies are planned only when a resend after a loss would come later than this (a loss would cost more delay), all within this of the send they back."),
    num("hybrid.tail_share_percent", "tail share %", "%", 0.0, 100.0, "Hybrid: share of messages allowed to wait for a resend (a lost one and those queued behind it); copies are planned to keep within it (1 = the p99; 0 = no copies)."),
    flag("hybrid.every_tick", "packet every tick", "Hybrid: send a packet every tick as Glenn does, instead of only with messages or an owed ack."),
    num("hybrid.initial_rtt_ms", "initial RTT ms", "ms", 1.0, 5000.0, "Hybrid: the RTT assumed before the first sample (timeout and copy planning)."),
    // UE4 bunches.
    num("ue4.net_speed_bytes_per_sec", "net speed B/s", "B/s", 0.0, 200_000.0, "UE4 CurrentNetSpeed: the QueuedBits throttle's budget (0 = unthrottled). Saturated, unreliable bunches wait or drop."),
    num("ue4.channel_close_s", "channel close s", "s", 0.0, 600.0, "UE4: an actor channel idle this long is closed with bClose and reopened on demand (RelevantTimeout; 0 = never)."),
    flag("ue4.whole_bunch_resend", "whole bunch resend", "UE4: a reliable bunch split into partial bunches is resent whole when any piece is Nak'ed (the seed's prose); off: per piece, as 4.25's code path."),
    int("ue4.partial_bunch_reliable_threshold", "partial reliable threshold", "pieces", 0.0, 256.0, "UE4 net.PartialBunchReliableThreshold: an unreliable message split into this many pieces goes reliably and pauses replication until acked (0 = off)."),
    num("ue4.desired_tick_rate_hz", "tick rate clamp", "Hz", 0.0, 1000.0, "UE4: clamp on the throttle's time step, 1 / this (0 = no clamp)."),
    int("ue4.max_packet_bytes", "max packet bytes", "bytes", 1.0, 16384.0, "UE4 MAX_PACKET_SIZE (raised to hold one full partial bunch)."),
    num("ue4.keepalive_ms", "keepalive ms", "ms", 0.0, 60_000.0, "UE4: send a packet when nothing went out for this long (KeepAliveTime)."),
    flag("ue4.order_cache_enabled", "order cache", "UE4: hold packets that arrive after a small gap until the end of the tick."),
    int("ue4.order_cache_max_missing", "order cache gap", "packets", 0.0, 32.0, "UE4: largest gap that starts caching (net.PacketOrderMaxMissingPackets)."),
    int("ue4.order_cache_capacity", "order cache slots", "packets", 1.0, 1024.0, "UE4: order cache slots (net.PacketOrderMaxCachedPackets)."),
    int("ue4.initial_packet_seq", "initial sequence", "", 0.0, 16383.0, "UE4: both sides' first packet sequence; near 16383 it crosses the 14-bit wrap early."),
    flag("ue4.merge_bunches", "merge bunches", "UE4: merge a message into the previous bunch on the same channel when it stays one bunch."),
    num("ue4.connection_timeout_ms", "connection timeout ms", "ms", 0.0, 3_600_000.0, "UE4: close the connection when nothing was received for this long (0 = never)."),
    int("ue4.max_waiting_unreliable", "waiting unreliable", "messages", 0.0, 1024.0, "UE4: unreliable messages that may wait for IsNetReady; older ones are dropped."),
    // Delivery notification manager.
    num("dnm.timeout_ms", "dnm timeout ms", "ms", 100.0, 5000.0, "Delivery notification manager: in-flight packets unacked this long are delivery failures.").log(),
    int("dnm.max_ack_ranges_per_packet", "ack ranges / packet", "ranges", 1.0, 16.0, "dnm: ack ranges written into one packet (the seed writes one)."),
    int("dnm.ack_repeat", "ack repeat", "packets", 1.0, 16.0, "dnm: packets each pending ack range is written into."),
    int("dnm.max_pending_ack_ranges", "pending ack ranges", "ranges", 1.0, 4096.0, "dnm: pending ack ranges kept; older ones are dropped and their packets time out."),
    num("dnm.receive_reset_ms", "receive reset ms", "ms", 0.0, 600_000.0, "dnm: after this long without accepting a packet, accept the next sequence whatever it is (0 = never)."),
    int("dnm.max_packet_bytes", "max packet bytes", "bytes", 64.0, 16384.0, "dnm: packet size limit; messages that do not fit wait for the next packet."),
    int("dnm.send_queue_messages", "send queue", "messages", 1.0, 32768.0, "dnm: the send window: messages held until acked; beyond it new reliable ones wait in the backlog (reported, never dropped)."),
    flag("dnm.accept_late", "accept late packets", "dnm: process a packet older than the newest received once (ack it, deliver its messages) instead of the book's rule, which drops it unacked."),
    // rellikt.
    int("rellikt.protocol_id", "protocol id", "", 0.0, 4_294_967_295.0, "rellikt: packets starting with another id are foreign."),
    num("rellikt.loss_timeout_ms", "rellikt loss ms", "ms", 100.0, 5000.0, "rellikt: a packet not acked within this time counts as lost.").log(),
    int("rellikt.sent_buffer_size", "sent buffer", "packets", 33.0, 32768.0, "rellikt: sent packets remembered for acks; one about to be forgotten unacked is lost early."),
    int("rellikt.received_buffer_size", "received buffer", "packets", 33.0, 32768.0, "rellikt: received sequences remembered for the ack bitfield."),
    num("rellikt.ack_expiry_ms", "ack expiry ms", "ms", 0.0, 600_000.0, "rellikt: stop acking after this long without receiving (0 = never)."),
    int("rellikt.max_packet_bytes", "max packet bytes", "bytes", 64.0, 16384.0, "rellikt: packet size limit."),
    int("rellikt.send_queue_messages", "send queue", "messages", 1.0, 32768.0, "rellikt: the send window: messages held until acked; beyond it new reliable ones wait in the backlog (reported, never dropped)."),
];
