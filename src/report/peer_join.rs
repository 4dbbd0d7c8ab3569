//! Two `ackscope peer --out` recordings of one run (side a's and side b's) joined into one
//! recording with full ground truth (`ackscope summary A.ron B.ron`).
//!
//! Each process knows half the truth: which of its own packets it believes acked, and what the
//! link it runs on its receive side did to the partner's datagrams. Its receiving link cannot name
//! a datagram by the sender's id (the wire format stays the strategy's own, see `UidBook`), so its
//! link events carry ids of its own, and the two processes' clocks start at different instants.
//! The join pairs them from the traffic itself:
//! - **Which datagram is which.** The datagrams the receiver's link read are the sender's sends in
//!   order (one socket to one socket: loopback and a LAN neither reorder nor lose at these rates;
//!   sends made before the receiver was up never arrive). The alignment is the offset into the
//!   sender's sends at which sizes agree and every delivered datagram's sequence (from the
//!   receiver's `PacketReceived` right after the delivery) equals the send's; a datagram that
//!   does not fit is searched for a little further on, and left unpaired if not found (counted).
//! - **One clock.** A datagram is read after it was sent: each paired datagram bounds the offset
//!   between the clocks from one side, each direction from the other; the offset is the middle
//!   of the tightest bounds (off by at most half the fastest one-way trip, microseconds on
//!   loopback).
//!
//! The joined recording then reads as a two-endpoint run: the same folds as `run` and `summary`
//! give false acks (an acked send its link never delivered), true loss per direction and every
//! reliable message's delivery (exactly once, in order).

use std::collections::HashMap;

use ackscope_protocol::{Dir, Event, EventKind, Side, SimTime, Step, SummaryAccumulator};
use anyhow::{bail, Result};
use serde::Serialize;

use super::RunReport;
use crate::lane::Origin;
use crate::session::Session;

/// Sends searched past a datagram that does not fit before it is left unpaired.
const RESYNC_WINDOW: usize = 64;
/// Arrivals whose fit decides the alignment.
const ALIGN_ARRIVALS: usize = 256;

/// One direction's ground truth in a joined run (`a_to_b` / `b_to_a` in `summary A B --json`).
#[derive(Debug, Clone, Serialize)]
pub struct DirectionTruth {
    /// Packets the sender sent (every datagram it handed its socket).
    pub sent: u64,
    /// Datagrams the receiver's link read, and how many of them were paired with a send.
    pub arrived: u64,
    pub paired: u64,
    /// What the receiver's link (the impairment) did to them.
    pub link_dropped: u64,
    pub delivered: u64,
    /// Sends that never reached the receiver's link (sent before it was up, after it ended, or
    /// lost on the real network).
    pub not_arrived: u64,
    /// Dropped by the link / datagrams it read (%).
    pub true_loss_percent: Option<f64>,
    /// Sends the sender believes acked.
    pub acked: u64,
    /// Acked sends the link never delivered.
    pub false_acks: u64,
}

/// What `ackscope summary A.ron B.ron` prints: each direction's truth, how the two recordings
/// were put on one clock, and the joined run's report (the shape `run --json` has).
#[derive(Debug, Clone, Serialize)]
pub struct JoinedReport {
    pub a_file: String,
    pub b_file: String,
    /// Side b's clock reading minus side a's at one instant (ms).
    pub clock_offset_ms: f64,
    pub a_to_b: DirectionTruth,
    pub b_to_a: DirectionTruth,
    #[serde(flatten)]
    pub run: RunReport,
}

/// A send as its sender recorded it.
#[derive(Debug, Clone, Copy)]
struct Send {
    t: u64,
    uid: u64,
    bytes: u32,
    seq: u32,
}

/// A datagram as the receiver's link read it, with the sequence its endpoint read from it.
#[derive(Debug, Clone, Copy)]
struct Arrival {
    t: u64,
    uid: u64,
    bytes: u32,
    seq: Option<u32>,
}

/// Sequences compared in their low 14 bits: every strategy's packet sequence (UE4's is 14 bits)
/// agrees there however each side widens it.
fn same_seq(a: u32, b: u32) -> bool {
    (a ^ b) & 0x3FFF == 0
}

fn sends_of(events: &[Event], side: Side) -> Vec<Send> {
    events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::PacketSent { side: s, seq, bytes, uid } if s == side => {
                Some(Send { t: e.time.0, uid, bytes, seq })
            }
            _ => None,
        })
        .collect()
}

/// The receiver's link's datagrams on `dir`, in the order it read them, each with the sequence
/// of the packet its endpoint accepted (or discarded) right after the first delivered copy.
fn arrivals_of(events: &[Event], dir: Dir) -> Vec<Arrival> {
    let receiver = dir.receiver();
    let mut out: Vec<Arrival> = Vec::new();
    let mut index: HashMap<u64, usize> = HashMap::new();
    let mut just_delivered: Option<(u64, SimTime)> = None;
    for e in events {
        match e.kind {
            EventKind::LinkSent { dir: d, uid, bytes } if d == dir => {
                index.insert(uid, out.len());
                out.push(Arrival { t: e.time.0, uid, bytes, seq: None });
            }
            EventKind::LinkDelivered { dir: d, uid, .. } if d == dir => just_delivered = Some((uid, e.time)),
            EventKind::PacketReceived { side, seq, .. } | EventKind::PacketDiscarded { side, seq, .. }
                if side == receiver =>
            {
                if let Some((uid, _)) = just_delivered.take().filter(|&(_, t)| t == e.time) {
                    if let Some(a) = index.get(&uid).map(|&i| &mut out[i]) {
                        a.seq.get_or_insert(seq);
                    }
                }
            }
            EventKind::Malformed { side, .. } if side == receiver => just_delivered = None,
            _ => {}
        }
    }
    out
}

fn fits(s: &Send, a: &Arrival) -> bool {
    s.bytes == a.bytes && a.seq.is_none_or(|q| same_seq(q, s.seq))
}

/// Pairs each arrival with a send (index into `sends`), or None.
fn pair(sends: &[Send], arrivals: &[Arrival]) -> Vec<Option<usize>> {
    if arrivals.is_empty() || sends.is_empty() {
        return vec![None; arrivals.len()];
    }
    // The offset at which the first arrivals fit best; the smallest among equals (the receiver
    // missed only what it was not up for).
    let n = arrivals.len().min(ALIGN_ARRIVALS);
    let score = |k: usize| {
        (0..n).filter(|&j| sends.get(j + k).is_some_and(|s| fits(s, &arrivals[j]) && arrivals[j].seq.is_some())).count()
    };
    let best = (0..sends.len()).max_by_key(|&k| (score(k), std::cmp::Reverse(k))).unwrap_or(0);
    let mut out = Vec::with_capacity(arrivals.len());
    let mut next = best;
    for a in arrivals {
        let found = (next..sends.len().min(next + RESYNC_WINDOW)).find(|&i| fits(&sends[i], a));
        if let Some(i) = found {
            next = i + 1;
        }
        out.push(found);
    }
    out
}

/// Bounds on `offset = receiver clock - sender clock` from `dir`'s pairs: each arrival happened
/// after its send, so `offset <= arrival - send`: the upper bound (µs).
fn upper_bound_us(sends: &[Send], arrivals: &[Arrival], pairs: &[Option<usize>]) -> Option<i64> {
    pairs.iter().zip(arrivals).filter_map(|(p, a)| p.map(|i| a.t as i64 - sends[i].t as i64)).min()
}

/// The two recordings joined: side a's events on its own clock, side b's moved onto it, every
/// link event renamed to the sender's id of the datagram it is about.
pub struct Joined {
    pub session: Session,
    pub clock_offset_ms: f64,
    /// Per direction (A->B, B->A): datagrams the receiver's link read and how many were paired.
    pub arrived: [(u64, u64); 2],
    /// True when the second recording given was side a's.
    pub swapped: bool,
}

/// Joins side a's recording and side b's (either order in the arguments; each says its side).
pub fn join(a: &Session, b: &Session) -> Result<Joined> {
    for (s, name) in [(a, "first"), (b, "second")] {
        if !matches!(s.origin, Some(Origin::UdpPeer { .. })) {
            bail!("the {name} file is not a recording of `ackscope peer --out` (its origin is not a UDP peer)");
        }
    }
    let side_of = |s: &Session| {
        s.events.iter().find_map(|e| match e.kind {
            EventKind::PacketSent { side, .. } => Some(side),
            _ => None,
        })
    };
    let (a, b, swapped) = match (side_of(a), side_of(b)) {
        (Some(Side::A), Some(Side::B)) => (a, b, false),
        (Some(Side::B), Some(Side::A)) => (b, a, true),
        (Some(x), Some(y)) => bail!("both recordings are of side {x:?} and {y:?}: join side a's with side b's"),
        _ => bail!("a recording without any packet sent cannot be joined"),
    };
    // A->B: a's sends, b's link; B->A: b's sends, a's link.
    let (sends_ab, arr_ab) = (sends_of(&a.events, Side::A), arrivals_of(&b.events, Dir::AtoB));
    let (sends_ba, arr_ba) = (sends_of(&b.events, Side::B), arrivals_of(&a.events, Dir::BtoA));
    let (pairs_ab, pairs_ba) = (pair(&sends_ab, &arr_ab), pair(&sends_ba, &arr_ba));
    // offset = b clock - a clock: A->B arrivals give offset <= b_arr - a_send; B->A give
    // a_arr - b_send >= -offset, i.e. offset >= -(a_arr - b_send).
    let hi = upper_bound_us(&sends_ab, &arr_ab, &pairs_ab);
    let lo = upper_bound_us(&sends_ba, &arr_ba, &pairs_ba).map(|v| -v);
    let offset_us = match (lo, hi) {
        (Some(lo), Some(hi)) if lo <= hi => (lo + hi) / 2,
        (Some(lo), Some(hi)) => (lo + hi) / 2, // clocks drifted: the middle still errs least
        (Some(v), None) | (None, Some(v)) => v,
        (None, None) => bail!("no datagram of one recording appears in the other: not two sides of one run"),
    };
    // Side a's time t_a = t_b - offset; shift both so neither goes below zero.
    let shift_a = (offset_us.max(0)) as u64;
    let shift_b = (-offset_us).max(0) as u64;
    let rename = |arrivals: &[Arrival], pairs: &[Option<usize>], sends: &[Send]| -> HashMap<u64, u64> {
        arrivals.iter().zip(pairs).filter_map(|(a, p)| p.map(|i| (a.uid, sends[i].uid))).collect()
    };
    let names_ab = rename(&arr_ab, &pairs_ab, &sends_ab);
    let names_ba = rename(&arr_ba, &pairs_ba, &sends_ba);
    let moved = |events: &[Event], shift: u64, dir: Dir, names: &HashMap<u64, u64>| {
        events
            .iter()
            .map(move |e| {
                let mut e = e.clone();
                e.time = e.time.plus_micros(shift);
                match &mut e.kind {
                    EventKind::LinkSent { dir: d, uid, .. }
                    | EventKind::LinkDropped { dir: d, uid, .. }
                    | EventKind::LinkDuplicated { dir: d, uid }
                    | EventKind::LinkDelivered { dir: d, uid, .. }
                        if *d == dir =>
                    {
                        if let Some(n) = names.get(uid) {
                            *uid = *n;
                        }
                    }
                    _ => {}
                }
                e
            })
            .collect::<Vec<_>>()
    };
    // t_joined = t_a + shift_a = t_b - offset + shift_a (offset_us = shift_a - shift_b).
    let ev_a = moved(&a.events, shift_a, Dir::BtoA, &names_ba);
    let ev_b = moved(&b.events, shift_b, Dir::AtoB, &names_ab);
    let mut events = Vec::with_capacity(ev_a.len() + ev_b.len());
    let (mut i, mut j) = (0, 0);
    while i < ev_a.len() || j < ev_b.len() {
        let take_a = j >= ev_b.len() || (i < ev_a.len() && ev_a[i].time <= ev_b[j].time);
        if take_a {
            events.push(ev_a[i].clone());
            i += 1;
        } else {
            events.push(ev_b[j].clone());
            j += 1;
        }
    }
    let mut scenario = a.scenario.clone();
    scenario.link.a_to_b = b.scenario.link.a_to_b;
    let mut session = Session::scenario_only(scenario);
    session.transport = a.transport;
    let local = |s: &Session| match &s.origin {
        Some(Origin::UdpPeer { local, .. }) => local.clone(),
        _ => String::new(),
    };
    session.origin = Some(Origin::UdpPeer { local: local(a), remote: local(b) });
    let shifted = |s: &Step, by: u64| Step::new(s.at.plus_micros(by), s.action.clone());
    let mut actions: Vec<_> = a.actions.iter().map(|s| shifted(s, shift_a)).collect();
    actions.extend(b.actions.iter().map(|s| shifted(s, shift_b)));
    actions.sort_by_key(|s| s.at);
    session.actions = actions;
    session.duration_us = (a.duration_us + shift_a).max(b.duration_us + shift_b);
    session.events = events;
    let count = |p: &[Option<usize>]| (p.len() as u64, p.iter().flatten().count() as u64);
    Ok(Joined {
        session,
        clock_offset_ms: offset_us as f64 / 1000.0,
        arrived: [count(&pairs_ab), count(&pairs_ba)],
        swapped,
    })
}

/// `dir`'s truth in the joined events: the sender's sends and acks against the receiver's link.
fn direction_truth(events: &[Event], dir: Dir, arrived: (u64, u64)) -> DirectionTruth {
    let sender = dir.sender();
    let mut acc = SummaryAccumulator::default();
    let mine: Vec<Event> = events
        .iter()
        .filter(|e| match &e.kind {
            EventKind::LinkSent { dir: d, .. }
            | EventKind::LinkDropped { dir: d, .. }
            | EventKind::LinkDuplicated { dir: d, .. }
            | EventKind::LinkDelivered { dir: d, .. } => *d == dir,
            EventKind::PacketSent { side, .. } | EventKind::PacketAcked { side, .. } => *side == sender,
            _ => false,
        })
        .cloned()
        .collect();
    acc.observe(&mine);
    let l = acc.ledger();
    let (link_sent, dropped) = (l.link_sent(dir), l.link_dropped(dir));
    DirectionTruth {
        sent: l.sent(sender),
        arrived: arrived.0,
        paired: arrived.1,
        link_dropped: dropped,
        delivered: l.link_delivered(dir),
        not_arrived: l.sent(sender).saturating_sub(arrived.1),
        true_loss_percent: (link_sent > 0).then(|| dropped as f64 * 100.0 / link_sent as f64),
        acked: l.acked(sender),
        false_acks: l.false_acks(),
    }
}

/// The joined report of two recordings read from `a_file` and `b_file`.
pub fn joined_report(a: &Session, b: &Session, a_file: &str, b_file: &str) -> Result<JoinedReport> {
    let j = join(a, b)?;
    let run = super::from_session(&j.session);
    let (a_file, b_file) = if j.swapped { (b_file, a_file) } else { (a_file, b_file) };
    Ok(JoinedReport {
        a_file: a_file.to_string(),
        b_file: b_file.to_string(),
        clock_offset_ms: j.clock_offset_ms,
        a_to_b: direction_truth(&j.session.events, Dir::AtoB, j.arrived[0]),
        b_to_a: direction_truth(&j.session.events, Dir::BtoA, j.arrived[1]),
        run,
    })
}

impl JoinedReport {
    /// A short human summary: each direction's truth, then the run's report.
    pub fn to_text(&self) -> String {
        let dir = |name: &str, d: &DirectionTruth| {
            format!(
                "{name}: {} sent, {} reached the link ({} paired), {} dropped by it ({}), {} delivered; \
                 {} acked, {} false acks",
                d.sent,
                d.arrived,
                d.paired,
                d.link_dropped,
                d.true_loss_percent.map_or("-".into(), |v| format!("{v:.2} %")),
                d.delivered,
                d.acked,
                d.false_acks
            )
        };
        format!(
            "ackscope: peers joined: {} (side a) and {} (side b), clocks {:+.3} ms apart\n{}\n{}\n{}",
            self.a_file,
            self.b_file,
            self.clock_offset_ms,
            dir("a -> b", &self.a_to_b),
            dir("b -> a", &self.b_to_a),
            self.run.to_text()
        )
    }
}
