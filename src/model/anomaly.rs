//! The anomaly index: every moment worth a look in a recording (link drops, naks, spurious
//! resends, head-of-line stalls, flow mode switches, connection closes, malformed packets), in
//! time order, each with the side it happened on and what to jump to.
//!
//! It is fed beside the other indexes, one event at a time, after the ledger and the message
//! index have folded the event: a drop's sequence and a nak's link send are the ledger's, a
//! resend's spuriousness and a delivery's head-of-line wait are read from the message index, so
//! nothing is rescanned and a live run extends it as events arrive. Entries are immutable once
//! pushed (a stall is pushed when the instant it ended is over), so a filtered view only ever
//! extends its cache (see [`super::anomaly_filter`]).

use ackscope_protocol::{
    DropReason, Event, EventKind, MalformedReason, PacketFate, PacketLedger, SendKind, Side, SimTime,
};

use super::index::{MessageIndex, MsgKey};

/// Head-of-line waits shorter than this are not kept: every reordered delivery waits a little,
/// and the threshold a user can choose starts here.
pub const STALL_FLOOR_US: u64 = 10_000;

/// The stall threshold the list starts with (a frame or six at 60 Hz is what players notice).
pub const DEFAULT_STALL_MS: f64 = 100.0;

/// What kind of anomaly, as the filters and the strip's colours group them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AnomalyClass {
    DropLoss,
    DropBurst,
    DropQueue,
    DropMtu,
    Nak,
    Spurious,
    Stall,
    FlowMode,
    Closed,
    Malformed,
}

/// How many classes there are (the length of per-class arrays).
pub const CLASSES: usize = 10;

impl AnomalyClass {
    /// Every class, in the order the filters list them.
    pub const ALL: [AnomalyClass; CLASSES] = [
        AnomalyClass::DropLoss,
        AnomalyClass::DropBurst,
        AnomalyClass::DropQueue,
        AnomalyClass::DropMtu,
        AnomalyClass::Nak,
        AnomalyClass::Spurious,
        AnomalyClass::Stall,
        AnomalyClass::FlowMode,
        AnomalyClass::Closed,
        AnomalyClass::Malformed,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    /// A short name for the filters and the list's kind column.
    pub fn name(self) -> &'static str {
        match self {
            AnomalyClass::DropLoss => "drop: loss",
            AnomalyClass::DropBurst => "drop: burst",
            AnomalyClass::DropQueue => "drop: queue",
            AnomalyClass::DropMtu => "drop: mtu",
            AnomalyClass::Nak => "nak",
            AnomalyClass::Spurious => "spurious",
            AnomalyClass::Stall => "hol stall",
            AnomalyClass::FlowMode => "flow mode",
            AnomalyClass::Closed => "closed",
            AnomalyClass::Malformed => "malformed",
        }
    }

    /// What the class means, for a hover text.
    pub fn tip(self) -> &'static str {
        match self {
            AnomalyClass::DropLoss => "The link dropped a packet at random (loss_percent)",
            AnomalyClass::DropBurst => "The link dropped a packet in its bad (burst) state",
            AnomalyClass::DropQueue => "The link's bandwidth queue was full (tail drop)",
            AnomalyClass::DropMtu => "The packet was larger than the link MTU",
            AnomalyClass::Nak => "A sender concluded a packet was lost (Nak, skipped range or timeout)",
            AnomalyClass::Spurious => "A message resent although the peer's application already had it",
            AnomalyClass::Stall => {
                "Messages that had arrived waited for a missing earlier one (head-of-line blocking) \
                 at least the threshold"
            }
            AnomalyClass::FlowMode => "Flow control switched between good and bad mode",
            AnomalyClass::Closed => "An endpoint closed its connection (UE4: e.g. its reliable buffer overflowed)",
            AnomalyClass::Malformed => "An endpoint rejected a packet as malformed",
        }
    }
}

/// What happened, with what the description needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AnomalyKind {
    /// The link dropped a send of this side (sequence when the endpoint had reported it).
    Drop {
        reason: DropReason,
        seq: Option<u16>,
    },
    Nak {
        seq: u32,
    },
    Spurious {
        msg: u64,
        seq: u32,
        send: SendKind,
    },
    /// `messages` reliable messages delivered at the same instant after waiting, the longest
    /// `wait_us`, behind a missing earlier one (this side is the receiver).
    Stall {
        messages: u32,
        wait_us: u64,
    },
    FlowMode {
        good: bool,
        penalty_ms: f32,
    },
    /// `reason` is an index into [`AnomalyIndex::close_reason`].
    Closed {
        reason: u32,
    },
    Malformed {
        reason: MalformedReason,
    },
}

impl AnomalyKind {
    pub fn class(&self) -> AnomalyClass {
        match self {
            AnomalyKind::Drop { reason, .. } => match reason {
                DropReason::Random => AnomalyClass::DropLoss,
                DropReason::Burst => AnomalyClass::DropBurst,
                DropReason::QueueFull => AnomalyClass::DropQueue,
                DropReason::Mtu => AnomalyClass::DropMtu,
            },
            AnomalyKind::Nak { .. } => AnomalyClass::Nak,
            AnomalyKind::Spurious { .. } => AnomalyClass::Spurious,
            AnomalyKind::Stall { .. } => AnomalyClass::Stall,
            AnomalyKind::FlowMode { .. } => AnomalyClass::FlowMode,
            AnomalyKind::Closed { .. } => AnomalyClass::Closed,
            AnomalyKind::Malformed { .. } => AnomalyClass::Malformed,
        }
    }
}

/// What a click on an anomaly selects besides moving the cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Nothing,
    /// A link send (the packet log's row).
    Packet(u64),
    /// A message (the timeline's selection).
    Message(MsgKey),
}

/// One anomaly: when, on which side, what, and what to jump to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Anomaly {
    pub time: SimTime,
    pub side: Side,
    pub kind: AnomalyKind,
    pub target: Target,
}

impl Anomaly {
    /// A short description such as `seq 1234 A->B` or `3 msgs held up to 240 ms` (the list's
    /// side and kind columns say the rest).
    pub fn describe(&self, index: &AnomalyIndex) -> String {
        let dir = self.side.outgoing().label();
        match self.kind {
            AnomalyKind::Drop { seq: Some(s), .. } => format!("seq {s} {dir}"),
            AnomalyKind::Drop { seq: None, .. } => format!("a packet {dir}"),
            AnomalyKind::Nak { seq } => format!("seq {seq} reported lost"),
            AnomalyKind::Spurious { msg, seq, send } => format!("msg {msg} in seq {seq} ({})", send.name()),
            AnomalyKind::Stall { messages, wait_us } => format!(
                "{messages} msg{} held up to {:.0} ms",
                if messages == 1 { "" } else { "s" },
                wait_us as f64 / 1000.0
            ),
            AnomalyKind::FlowMode { good, penalty_ms } => {
                format!("now {} (penalty {penalty_ms:.0} ms)", if good { "good" } else { "bad" })
            }
            AnomalyKind::Closed { reason } => index.close_reason(reason).to_string(),
            AnomalyKind::Malformed { reason } => format!("{reason:?}"),
        }
    }
}

/// A stall episode still open: deliveries at `time` that waited.
#[derive(Debug, Clone, Copy)]
struct OpenStall {
    time: SimTime,
    messages: u32,
    wait_us: u64,
    first: MsgKey,
}

/// Gives every index its own identity, so a cached filter notices when the app swaps indexes.
static NEXT_INSTANCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Every anomaly of one recording, in time order.
#[derive(Debug, Clone)]
pub struct AnomalyIndex {
    instance: u64,
    list: Vec<Anomaly>,
    /// Connection close reasons (kept once, anomalies name them by position).
    reasons: Vec<String>,
    /// Per receiving side: the latest stall episode (pushed once a later instant arrives).
    open_stall: [Option<OpenStall>; 2],
    /// Per receiving side: the last link delivery, to tie a `Malformed` of its instant to it.
    last_delivery: [Option<(SimTime, u64)>; 2],
}

impl Default for AnomalyIndex {
    fn default() -> Self {
        Self {
            instance: NEXT_INSTANCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            list: Vec::new(),
            reasons: Vec::new(),
            open_stall: [None; 2],
            last_delivery: [None; 2],
        }
    }
}

impl AnomalyIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// Heap bytes the index holds (see [`crate::model::heap`]).
    pub fn heap_bytes(&self) -> usize {
        use crate::model::heap;
        heap::vec(&self.list) + heap::vec(&self.reasons) + self.reasons.iter().map(String::capacity).sum::<usize>()
    }

    /// Identity of this index (a cache built from another one starts again).
    pub fn instance(&self) -> u64 {
        self.instance
    }

    /// Every anomaly pushed so far, in time order.
    pub fn list(&self) -> &[Anomaly] {
        &self.list
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&Anomaly> {
        self.list.get(i)
    }

    /// A connection close reason by its position.
    pub fn close_reason(&self, i: u32) -> &str {
        self.reasons.get(i as usize).map_or("", |s| s.as_str())
    }

    /// Adds one event (in time order) that `ledger` and `messages` have just folded.
    pub fn ingest(&mut self, e: &Event, ledger: &PacketLedger, messages: &MessageIndex) {
        let t = e.time;
        for side in Side::BOTH {
            if let Some(s) = self.open_stall[side.index()].filter(|s| s.time < t) {
                self.open_stall[side.index()] = None;
                self.push_stall(side, s);
            }
        }
        let (side, kind, target) = match e.kind {
            EventKind::LinkDropped { dir, uid, reason } => {
                let seq = ledger.packet(uid).and_then(|p| p.seq);
                (dir.sender(), AnomalyKind::Drop { reason, seq }, Target::Packet(uid))
            }
            EventKind::PacketNakked { side, seq } => {
                let target = ledger.uid_of(side, seq as u16).map_or(Target::Nothing, Target::Packet);
                (side, AnomalyKind::Nak { seq }, target)
            }
            EventKind::MessageSent { side, msg, seq, kind } if kind != SendKind::First => {
                let spurious = messages.get((side, msg)).and_then(|m| m.sends.last()).is_some_and(|s| s.spurious);
                if !spurious {
                    return;
                }
                (side, AnomalyKind::Spurious { msg, seq, send: kind }, Target::Message((side, msg)))
            }
            EventKind::MessageDelivered { side, msg } => {
                self.delivered(t, side, (side.other(), msg), ledger, messages);
                return;
            }
            EventKind::LinkDelivered { dir, uid, .. } => {
                self.last_delivery[dir.receiver().index()] = Some((t, uid));
                return;
            }
            EventKind::FlowMode { side, good, penalty_ms } => {
                (side, AnomalyKind::FlowMode { good, penalty_ms }, Target::Nothing)
            }
            EventKind::ConnectionClosed { side, ref reason } => {
                let i = match self.reasons.iter().position(|r| r == reason) {
                    Some(i) => i,
                    None => {
                        self.reasons.push(reason.clone());
                        self.reasons.len() - 1
                    }
                };
                (side, AnomalyKind::Closed { reason: i as u32 }, Target::Nothing)
            }
            EventKind::Malformed { side, reason } => {
                let target = match self.last_delivery[side.index()] {
                    Some((at, uid)) if at == t => Target::Packet(uid),
                    _ => Target::Nothing,
                };
                (side, AnomalyKind::Malformed { reason }, target)
            }
            _ => return,
        };
        self.list.push(Anomaly { time: t, side, kind, target });
    }

    /// A first delivery of reliable message `key` to `receiver` at `t`: how long it waited since
    /// its first copy arrived (the Compare tab's head-of-line time), joined to this instant's episode.
    fn delivered(&mut self, t: SimTime, receiver: Side, key: MsgKey, ledger: &PacketLedger, messages: &MessageIndex) {
        let Some(m) = messages.get(key) else { return };
        if !m.reliable || m.delivered_at != Some(t) || m.deliveries != 1 {
            return;
        }
        let first = m
            .sends_by(t)
            .filter_map(|s| match ledger.fate_at(s.uid?, t) {
                PacketFate::Delivered { at, .. } => Some(at),
                _ => None,
            })
            .min();
        let Some(first) = first else { return };
        let wait_us = t.saturating_since(first).0;
        if wait_us < STALL_FLOOR_US {
            return;
        }
        let slot = &mut self.open_stall[receiver.index()];
        match slot {
            Some(s) if s.time == t => {
                s.messages += 1;
                s.wait_us = s.wait_us.max(wait_us);
            }
            _ => *slot = Some(OpenStall { time: t, messages: 1, wait_us, first: key }),
        }
    }

    fn push_stall(&mut self, receiver: Side, s: OpenStall) {
        let kind = AnomalyKind::Stall { messages: s.messages, wait_us: s.wait_us };
        self.list.push(Anomaly { time: s.time, side: receiver, kind, target: Target::Message(s.first) });
    }
}
