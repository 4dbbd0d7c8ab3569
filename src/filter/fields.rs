//! Every field a filter can name, per row kind: its unit, what it means for that kind, and how
//! it is read from a row (a plain function pointer, so a compiled filter does no name lookup and
//! no string work per row).
//!
//! A field means one thing across kinds where it can (`time` is when the row happened: a
//! packet's send, a message's queueing, an anomaly's instant) and is simply absent from a kind
//! where it would mean nothing: naming it there is a compile error that says which kinds have
//! it (see [`super::compile`]). Facts are the recording's whole knowledge of the row, including
//! what happened after the time cursor (a packet acked later is `acked`), so a filter's rows do
//! not change while scrubbing and equal what `export --filter` writes.

use ackscope_protocol::{DropReason, RefuseReason, SendKind, Side};

use super::rows::PacketFacts;
use crate::model::anomaly::{Anomaly, AnomalyKind, Target};
use crate::model::index::MessageRecord;

/// What a filter runs over: the three lists the window shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RowKind {
    Packet,
    Message,
    Anomaly,
}

impl RowKind {
    pub const ALL: [RowKind; 3] = [RowKind::Packet, RowKind::Message, RowKind::Anomaly];

    /// The plural the messages and README use: `packets`, `messages`, `anomalies`.
    pub fn plural(self) -> &'static str {
        match self {
            RowKind::Packet => "packets",
            RowKind::Message => "messages",
            RowKind::Anomaly => "anomalies",
        }
    }
}

/// Named values of a field, each a bit (a group such as `dropped` is several bits).
pub type Names = &'static [(&'static str, u32)];

/// How a field is read from a row.
pub enum Get<R> {
    /// A number, or `None` where the row has none (a dropped packet's `delay_ms`).
    Num(fn(&R) -> Option<f64>),
    Bool(fn(&R) -> bool),
    /// The named values the row has, as a bit mask (0: none; several bits: a field with several
    /// values, such as a message's resend causes).
    Enum(fn(&R) -> u32, Names),
    /// The client of the row's connection (a number; every row of a connection has the same).
    Client,
}

impl<R> Clone for Get<R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for Get<R> {}

/// One field of one row kind.
pub struct Field<R> {
    pub name: &'static str,
    /// `s`, `ms`, `bytes`, or empty for counts, ids and names.
    pub unit: &'static str,
    /// What it is for this kind of row.
    pub about: &'static str,
    pub get: Get<R>,
}

/// A kind of row a filter runs over.
pub trait Row: Sized + 'static {
    const KIND: RowKind;
    fn fields() -> &'static [Field<Self>];
    /// When the row happened (the IO graph's bins).
    fn time_s(&self) -> f64;
}

pub const SIDES: Names = &[("a", 1), ("b", 2)];
pub const DIRS: Names = &[("a_to_b", 1), ("b_to_a", 2)];
pub const FATES: Names = &[
    ("delivered", 1),
    ("duplicated", 2),
    ("dropped", 4 | 8 | 16 | 32),
    ("dropped_loss", 4),
    ("dropped_burst", 8),
    ("dropped_queue", 16),
    ("dropped_mtu", 32),
    ("in_flight", 64),
];
pub const CAUSES: Names = &[("delay", 1), ("nak", 2), ("redundant", 4), ("timeout", 8)];
pub const MESSAGE_KINDS: Names = &[("reliable", 1), ("unreliable", 2)];
pub const ANOMALY_KINDS: Names = &[
    ("drop", 1 | 2 | 4 | 8),
    ("drop_loss", 1),
    ("drop_burst", 2),
    ("drop_queue", 4),
    ("drop_mtu", 8),
    ("nak", 16),
    ("spurious", 32),
    ("stall", 64),
    ("flow_mode", 128),
    ("closed", 256),
    ("malformed", 512),
];
pub const REFUSALS: Names = &[("send_queue_full", 1), ("too_large", 2), ("closed", 4)];

fn side_bit(s: Side) -> u32 {
    match s {
        Side::A => 1,
        Side::B => 2,
    }
}

/// A side's outgoing direction as a [`DIRS`] bit.
fn dir_bit(sender: Side) -> u32 {
    side_bit(sender)
}

fn drop_bit(r: DropReason) -> u32 {
    match r {
        DropReason::Random => 4,
        DropReason::Burst => 8,
        DropReason::QueueFull => 16,
        DropReason::Mtu => 32,
    }
}

fn cause_bit(k: SendKind) -> u32 {
    match k {
        SendKind::First => 0,
        SendKind::DelayResend => 1,
        SendKind::NakResend => 2,
        SendKind::Redundant => 4,
        SendKind::TimeoutResend => 8,
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

fn packet_fate(r: &PacketFacts) -> u32 {
    let p = &r.row;
    match (p.dropped, p.delivered_at) {
        (Some(reason), _) => drop_bit(reason),
        (None, Some(_)) if p.duplicated => 2,
        (None, Some(_)) => 1,
        (None, None) => 64,
    }
}

static PACKET_FIELDS: [Field<PacketFacts>; 24] = [
    Field { name: "time", unit: "s", about: "when it was sent", get: Get::Num(|r| Some(r.row.time.as_secs_f64())) },
    Field { name: "client", unit: "", about: "the client whose connection it belongs to", get: Get::Client },
    Field {
        name: "side",
        unit: "",
        about: "its sender: a or b",
        get: Get::Enum(|r| side_bit(r.row.dir.sender()), SIDES),
    },
    Field { name: "dir", unit: "", about: "a_to_b or b_to_a", get: Get::Enum(|r| dir_bit(r.row.dir.sender()), DIRS) },
    Field {
        name: "seq",
        unit: "",
        about: "its sequence as the sender numbered it",
        get: Get::Num(|r| Some(r.row.seq as f64)),
    },
    Field {
        name: "ack",
        unit: "",
        about:
            "the header's ack: the newest peer sequence its sender had accepted (none for slice packets or before any)",
        get: Get::Num(|r| r.ack.map(f64::from)),
    },
    Field {
        name: "link_id",
        unit: "",
        about: "the link's run-unique id of the send (sequences wrap)",
        get: Get::Num(|r| Some(r.row.uid as f64)),
    },
    Field { name: "bytes", unit: "bytes", about: "its size on the wire", get: Get::Num(|r| Some(r.row.bytes as f64)) },
    Field {
        name: "fate",
        unit: "",
        about: "the link's verdict: delivered, duplicated, dropped (dropped_loss, _burst, _queue, _mtu) or in_flight",
        get: Get::Enum(packet_fate, FATES),
    },
    Field { name: "dropped", unit: "", about: "the link dropped it", get: Get::Bool(|r| r.row.dropped.is_some()) },
    Field {
        name: "delivered",
        unit: "",
        about: "the link delivered it (a first copy arrived)",
        get: Get::Bool(|r| r.row.delivered_at.is_some()),
    },
    Field { name: "duplicated", unit: "", about: "the link made an extra copy", get: Get::Bool(|r| r.row.duplicated) },
    Field {
        name: "received",
        unit: "",
        about: "the receiving endpoint accepted it",
        get: Get::Bool(|r| r.row.received_at.is_some()),
    },
    Field {
        name: "malformed",
        unit: "",
        about: "the receiver rejected a copy as malformed",
        get: Get::Bool(|r| r.row.malformed_at.is_some()),
    },
    Field {
        name: "delay_ms",
        unit: "ms",
        about: "send to first delivery (delivered packets)",
        get: Get::Num(|r| r.row.delivered_at.map(|d| ms(d.saturating_since(r.row.time).0))),
    },
    Field {
        name: "acked",
        unit: "",
        about: "its sender reported it acked",
        get: Get::Bool(|r| r.row.acked_at.is_some()),
    },
    Field {
        name: "nakked",
        unit: "",
        about: "its sender reported it lost (Nak, skipped range or timeout)",
        get: Get::Bool(|r| r.row.nakked_at.is_some()),
    },
    Field {
        name: "ack_ms",
        unit: "ms",
        about: "send to its sender's ack",
        get: Get::Num(|r| r.row.acked_at.map(|a| ms(a.saturating_since(r.row.time).0))),
    },
    Field {
        name: "nak_ms",
        unit: "ms",
        about: "send to its sender's nak",
        get: Get::Num(|r| r.row.nakked_at.map(|a| ms(a.saturating_since(r.row.time).0))),
    },
    Field {
        name: "msgs",
        unit: "",
        about: "messages it carried (first sends and resends)",
        get: Get::Num(|r| Some(r.row.contents.msgs as f64)),
    },
    Field {
        name: "resends",
        unit: "",
        about: "messages it carried again",
        get: Get::Num(|r| Some(r.row.contents.resends as f64)),
    },
    Field {
        name: "resend",
        unit: "",
        about: "it carried a resent message or a resent slice",
        get: Get::Bool(|r| r.row.contents.resends > 0 || r.row.contents.slice_resend),
    },
    Field {
        name: "chunk",
        unit: "",
        about: "the chunk of the slice it carried",
        get: Get::Num(|r| r.row.contents.slice.map(|s| s.0 as f64)),
    },
    Field {
        name: "slice",
        unit: "",
        about: "the slice it carried",
        get: Get::Num(|r| r.row.contents.slice.map(|s| s.1 as f64)),
    },
];

impl Row for PacketFacts {
    const KIND: RowKind = RowKind::Packet;
    fn fields() -> &'static [Field<Self>] {
        &PACKET_FIELDS
    }
    fn time_s(&self) -> f64 {
        self.row.time.as_secs_f64()
    }
}

fn resend_causes(m: &MessageRecord) -> u32 {
    m.sends.iter().fold(0, |acc, s| acc | cause_bit(s.kind))
}

fn since_queued(m: &MessageRecord, t: Option<ackscope_protocol::SimTime>) -> Option<f64> {
    t.map(|t| ms(t.saturating_since(m.queued_at).0))
}

static MESSAGE_FIELDS: [Field<MessageRecord>; 21] = [
    Field { name: "time", unit: "s", about: "when it was queued", get: Get::Num(|m| Some(m.queued_at.as_secs_f64())) },
    Field { name: "client", unit: "", about: "the client whose connection it belongs to", get: Get::Client },
    Field { name: "side", unit: "", about: "its sender: a or b", get: Get::Enum(|m| side_bit(m.side), SIDES) },
    Field { name: "dir", unit: "", about: "the direction it travels: a_to_b or b_to_a", get: Get::Enum(|m| dir_bit(m.side), DIRS) },
    Field { name: "msg.id", unit: "", about: "its workload id on its side", get: Get::Num(|m| Some(m.id as f64)) },
    Field { name: "bytes", unit: "bytes", about: "its payload size", get: Get::Num(|m| Some(m.bytes as f64)) },
    Field { name: "kind", unit: "", about: "reliable or unreliable", get: Get::Enum(|m| if m.reliable { 1 } else { 2 }, MESSAGE_KINDS) },
    Field { name: "reliable", unit: "", about: "a reliable message", get: Get::Bool(|m| m.reliable) },
    Field { name: "msg.sends", unit: "", about: "times it was put in a packet (first send and resends)", get: Get::Num(|m| Some(m.sends.len() as f64)) },
    Field { name: "resends", unit: "", about: "times it was sent again", get: Get::Num(|m| Some(m.sends.iter().filter(|s| s.kind != SendKind::First).count() as f64)) },
    Field { name: "resend.cause", unit: "", about: "why it was resent: delay, nak, redundant, timeout (several when resent for several reasons: == matches any, != none)", get: Get::Enum(resend_causes, CAUSES) },
    Field { name: "spurious", unit: "", about: "a send went out after the peer's application already had it", get: Get::Bool(|m| m.sends.iter().any(|s| s.spurious)) },
    Field { name: "spurious_sends", unit: "", about: "sends made after the peer's application already had it", get: Get::Num(|m| Some(m.sends.iter().filter(|s| s.spurious).count() as f64)) },
    Field { name: "queue_ms", unit: "ms", about: "queued to its first send", get: Get::Num(|m| since_queued(m, m.sends.first().map(|s| s.time))) },
    Field { name: "acked", unit: "", about: "its sender learned it arrived", get: Get::Bool(|m| m.acked_at.is_some()) },
    Field { name: "ack_ms", unit: "ms", about: "queued to its sender's ack", get: Get::Num(|m| since_queued(m, m.acked_at)) },
    Field { name: "delivered", unit: "", about: "the receiving application got it", get: Get::Bool(|m| m.delivered_at.is_some()) },
    Field { name: "latency_ms", unit: "ms", about: "queued to its first delivery to the receiving application", get: Get::Num(|m| since_queued(m, m.delivered_at)) },
    Field { name: "duplicated", unit: "", about: "delivered more than once", get: Get::Bool(|m| m.deliveries > 1) },
    Field { name: "deliveries", unit: "", about: "times it was delivered", get: Get::Num(|m| Some(m.deliveries as f64)) },
    Field { name: "refused", unit: "", about: "why the sender refused it: send_queue_full, too_large, closed", get: Get::Enum(|m| m.refused.map_or(0, |(_, r)| refuse_bit(r)), REFUSALS) },
];

fn refuse_bit(r: RefuseReason) -> u32 {
    match r {
        RefuseReason::SendQueueFull => 1,
        RefuseReason::TooLarge => 2,
        RefuseReason::Closed => 4,
    }
}

impl Row for MessageRecord {
    const KIND: RowKind = RowKind::Message;
    fn fields() -> &'static [Field<Self>] {
        &MESSAGE_FIELDS
    }
    fn time_s(&self) -> f64 {
        self.queued_at.as_secs_f64()
    }
}

fn anomaly_kind(a: &Anomaly) -> u32 {
    match a.kind {
        AnomalyKind::Drop { reason, .. } => drop_bit(reason) >> 2,
        AnomalyKind::Nak { .. } => 16,
        AnomalyKind::Spurious { .. } => 32,
        AnomalyKind::Stall { .. } => 64,
        AnomalyKind::FlowMode { .. } => 128,
        AnomalyKind::Closed { .. } => 256,
        AnomalyKind::Malformed { .. } => 512,
    }
}

/// The direction of the traffic an anomaly is about: a drop, nak or spurious resend is its
/// sender's outgoing traffic, a stall or a malformed packet the receiver's incoming; a flow
/// mode switch or a close has none.
fn anomaly_dir(a: &Anomaly) -> u32 {
    match a.kind {
        AnomalyKind::Drop { .. } | AnomalyKind::Nak { .. } | AnomalyKind::Spurious { .. } => dir_bit(a.side),
        AnomalyKind::Stall { .. } | AnomalyKind::Malformed { .. } => dir_bit(a.side.other()),
        AnomalyKind::FlowMode { .. } | AnomalyKind::Closed { .. } => 0,
    }
}

fn anomaly_seq(a: &Anomaly) -> Option<f64> {
    match a.kind {
        AnomalyKind::Drop { seq, .. } => seq.map(f64::from),
        AnomalyKind::Nak { seq } | AnomalyKind::Spurious { seq, .. } => Some(seq as f64),
        _ => None,
    }
}

static ANOMALY_FIELDS: [Field<Anomaly>; 18] = [
    Field { name: "time", unit: "s", about: "when it happened", get: Get::Num(|a| Some(a.time.as_secs_f64())) },
    Field { name: "client", unit: "", about: "the client whose connection it belongs to", get: Get::Client },
    Field {
        name: "side",
        unit: "",
        about: "the side it happened on (a drop's sender, a stall's receiver)",
        get: Get::Enum(|a| side_bit(a.side), SIDES),
    },
    Field {
        name: "dir",
        unit: "",
        about: "the traffic it is about (drop, nak, spurious: the sender's; stall, malformed: the receiver's incoming)",
        get: Get::Enum(anomaly_dir, DIRS),
    },
    Field {
        name: "kind",
        unit: "",
        about: "drop (drop_loss, _burst, _queue, _mtu), nak, spurious, stall, flow_mode, closed, malformed",
        get: Get::Enum(anomaly_kind, ANOMALY_KINDS),
    },
    Field {
        name: "seq",
        unit: "",
        about: "the packet sequence of a drop (when known), nak or spurious resend",
        get: Get::Num(anomaly_seq),
    },
    Field {
        name: "link_id",
        unit: "",
        about: "the link send it points at (drops, naks, malformed packets)",
        get: Get::Num(|a| match a.target {
            Target::Packet(uid) => Some(uid as f64),
            _ => None,
        }),
    },
    Field {
        name: "msg.id",
        unit: "",
        about: "the message of a spurious resend, or the first message a stall held up",
        get: Get::Num(|a| match a.target {
            Target::Message((_, id)) => Some(id as f64),
            _ => None,
        }),
    },
    Field {
        name: "resend.cause",
        unit: "",
        about: "why a spuriously resent message was resent: delay, nak, redundant, timeout",
        get: Get::Enum(
            |a| match a.kind {
                AnomalyKind::Spurious { send, .. } => cause_bit(send),
                _ => 0,
            },
            CAUSES,
        ),
    },
    Field {
        name: "fate",
        unit: "",
        about: "a drop's verdict: dropped_loss, _burst, _queue, _mtu (group: dropped)",
        get: Get::Enum(
            |a| match a.kind {
                AnomalyKind::Drop { reason, .. } => drop_bit(reason),
                _ => 0,
            },
            FATES,
        ),
    },
    Field {
        name: "dropped",
        unit: "",
        about: "a link drop",
        get: Get::Bool(|a| matches!(a.kind, AnomalyKind::Drop { .. })),
    },
    Field { name: "nakked", unit: "", about: "a nak", get: Get::Bool(|a| matches!(a.kind, AnomalyKind::Nak { .. })) },
    Field {
        name: "spurious",
        unit: "",
        about: "a spurious resend",
        get: Get::Bool(|a| matches!(a.kind, AnomalyKind::Spurious { .. })),
    },
    Field {
        name: "malformed",
        unit: "",
        about: "a malformed packet",
        get: Get::Bool(|a| matches!(a.kind, AnomalyKind::Malformed { .. })),
    },
    Field {
        name: "wait_ms",
        unit: "ms",
        about: "a stall's longest head-of-line wait",
        get: Get::Num(|a| match a.kind {
            AnomalyKind::Stall { wait_us, .. } => Some(ms(wait_us)),
            _ => None,
        }),
    },
    Field {
        name: "msgs",
        unit: "",
        about: "messages a stall released together",
        get: Get::Num(|a| match a.kind {
            AnomalyKind::Stall { messages, .. } => Some(messages as f64),
            _ => None,
        }),
    },
    Field {
        name: "good",
        unit: "",
        about: "a flow mode switch to good mode",
        get: Get::Bool(|a| matches!(a.kind, AnomalyKind::FlowMode { good: true, .. })),
    },
    Field {
        name: "penalty_ms",
        unit: "ms",
        about: "a flow mode switch's penalty after it",
        get: Get::Num(|a| match a.kind {
            AnomalyKind::FlowMode { penalty_ms, .. } => Some(penalty_ms as f64),
            _ => None,
        }),
    },
];

impl Row for Anomaly {
    const KIND: RowKind = RowKind::Anomaly;
    fn fields() -> &'static [Field<Self>] {
        &ANOMALY_FIELDS
    }
    fn time_s(&self) -> f64 {
        self.time.as_secs_f64()
    }
}

/// A field as documented across kinds: name, unit, and what it is for each kind that has it.
pub struct FieldDoc {
    pub name: &'static str,
    pub unit: &'static str,
    /// Per kind that has it ([`RowKind::ALL`] order): what it is, and its named values.
    pub per_kind: Vec<(RowKind, &'static str, Option<Names>)>,
}

fn doc_of<R: Row>(docs: &mut Vec<FieldDoc>) {
    for f in R::fields() {
        let names = match f.get {
            Get::Enum(_, n) => Some(n),
            _ => None,
        };
        let entry = (R::KIND, f.about, names);
        match docs.iter_mut().find(|d| d.name == f.name) {
            Some(d) => d.per_kind.push(entry),
            None => docs.push(FieldDoc { name: f.name, unit: f.unit, per_kind: vec![entry] }),
        }
    }
}

/// Every field name of every kind, in catalogue order (packets', then the messages' and the
/// anomalies' new ones).
pub fn all_fields() -> Vec<FieldDoc> {
    let mut docs = Vec::new();
    doc_of::<PacketFacts>(&mut docs);
    doc_of::<MessageRecord>(&mut docs);
    doc_of::<Anomaly>(&mut docs);
    docs
}

/// The kinds that have a field called `name`.
pub fn kinds_with(name: &str) -> Vec<RowKind> {
    let mut out = Vec::new();
    if PACKET_FIELDS.iter().any(|f| f.name == name) {
        out.push(RowKind::Packet);
    }
    if MESSAGE_FIELDS.iter().any(|f| f.name == name) {
        out.push(RowKind::Message);
    }
    if ANOMALY_FIELDS.iter().any(|f| f.name == name) {
        out.push(RowKind::Anomaly);
    }
    out
}

/// The names of the fields of `kind`, in catalogue order.
pub fn names_of(kind: RowKind) -> Vec<&'static str> {
    match kind {
        RowKind::Packet => PACKET_FIELDS.iter().map(|f| f.name).collect(),
        RowKind::Message => MESSAGE_FIELDS.iter().map(|f| f.name).collect(),
        RowKind::Anomaly => ANOMALY_FIELDS.iter().map(|f| f.name).collect(),
    }
}

/// The field `name` of `kind`: its unit, whether it is numeric, and its named values.
pub fn describe(kind: RowKind, name: &str) -> Option<(&'static str, &'static str, FieldType)> {
    fn find<R: Row>(name: &str) -> Option<(&'static str, &'static str, FieldType)> {
        R::fields().iter().find(|f| f.name == name).map(|f| (f.unit, f.about, FieldType::of(&f.get)))
    }
    match kind {
        RowKind::Packet => find::<PacketFacts>(name),
        RowKind::Message => find::<MessageRecord>(name),
        RowKind::Anomaly => find::<Anomaly>(name),
    }
}

/// A field's type, for completion and the IO graph's choice of fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    Number,
    Bool,
    Names(Names),
}

impl FieldType {
    fn of<R>(g: &Get<R>) -> Self {
        match g {
            Get::Num(_) => FieldType::Number,
            Get::Bool(_) => FieldType::Bool,
            Get::Enum(_, n) => FieldType::Names(n),
            Get::Client => FieldType::Number,
        }
    }
}
