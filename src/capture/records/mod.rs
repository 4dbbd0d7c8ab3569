//! Per-packet link records, per direction: each datagram's send time, size and fate (delivered
//! after a delay, once or more; dropped; or unknown), from a recorded session or from a capture
//! that saw both sides of the link. They feed the exact replay (`link.trace`, as the protocol's
//! [`LinkTrace`]) and the fitted model (`ackscope fit`).
//!
//! - **A session** ([`from_session`]): its first lane's link events, which are ground truth:
//!   `LinkSent` (time, size), `LinkDropped` (with the reason), `LinkDelivered` (each copy's
//!   delay; more than one is a duplicate). A send with none of these was in flight when the
//!   recording ended or a restart emptied the link: its fate is unknown. Every client's packets
//!   go into their direction's records.
//! - **A capture** ([`capture`]): pcapng or pcap, where each datagram was seen twice, once as
//!   sent and once (or more) as delivered: ackscope's own export (a `-sent` and a `-delivered`
//!   interface), captures taken at both ends and merged, or one capture taken on a path that saw
//!   each datagram on both sides of a conditioner (before and after a proxy on loopback). The
//!   matching rule is in [`capture`]'s doc.
//! - **A capture with one side only** (one host's own capture: its sends, and the other side's
//!   sends as they arrived) cannot tell what the link did: nothing says which of the other side's
//!   datagrams were lost or when they left. Such a capture gives no records; [`RecordsInfo`]
//!   counts its packets as one-sided, and the fit and the replay refuse it with that reason.

pub mod capture;

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use ackscope_protocol::{Dir, DirTrace, EventKind, LinkTrace, SimTime, TraceFate};
use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::session::{self, Session, Verify};

/// What was read, beside the records: how the file was understood and what was left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RecordsInfo {
    /// `session`, `pcapng` or `pcap`.
    pub format: String,
    /// Packets (or link sends) read.
    pub packets: u64,
    /// Packets left out because they are not IPv4/UDP (or on a link type not read).
    pub skipped_not_udp: u64,
    /// Packets left out because their block was unreadable (an undeclared interface).
    pub skipped_malformed: u64,
    /// Set when the file is damaged or cut short: what was wrong and after how many packets
    /// reading stopped (the records hold what came before).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub damaged: Option<String>,
    /// Paths that gave records: a sender-side and a receiver-side stream of one direction.
    pub paired_flows: u64,
    /// Streams seen on one side only, and their packets: no fates from them.
    pub one_sided_flows: u64,
    pub one_sided_packets: u64,
    /// Delivered copies that matched no datagram sent before them (the capture started late,
    /// or the datagram was changed on the way).
    pub unmatched_copies: u64,
    /// Delivered copies matched among datagrams with identical bytes sent within the matching
    /// window: the rule picked one (see [`capture`]); a duplicate and a late twin look alike.
    pub ambiguous_copies: u64,
    /// Which endpoint stood for side A (the server) and which for B, as `addr:port`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side_a: Option<String>,
    /// Where the records' time 0 is, from the capture's epoch, in seconds (0 for ackscope's
    /// own exports and sessions, which run on virtual time from the epoch).
    pub origin_s: f64,
}

/// A link's records, both directions, and what reading them found.
#[derive(Debug, Clone)]
pub struct LinkRecords {
    pub trace: LinkTrace,
    pub info: RecordsInfo,
}

impl LinkRecords {
    /// Refuses records with no known fate in either direction, saying why.
    pub fn require_fates(self, path: &Path) -> Result<Self> {
        let known = Dir::BOTH
            .iter()
            .map(|d| self.trace.dir(*d).iter().filter(|p| p.fate != TraceFate::Unknown).count())
            .sum::<usize>();
        if known > 0 {
            return Ok(self);
        }
        let i = &self.info;
        if i.one_sided_packets > 0 {
            bail!(
                "{}: the capture has one side only ({} packets in {} flows, none seen both as sent and as delivered): \
                 it cannot tell which datagrams the link lost or how long they took. Capture on both sides of the \
                 link (two interfaces, or one path that sees each datagram before and after the link), or use a \
                 recorded session",
                path.display(),
                i.one_sided_packets,
                i.one_sided_flows
            );
        }
        bail!("{}: no datagram with a known fate in {} packets read", path.display(), i.packets)
    }
}

/// The records in `path`: a pcapng or pcap capture (by its first bytes), else a session file.
pub fn load(path: &Path) -> Result<LinkRecords> {
    let mut magic = [0u8; 4];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut magic))
        .with_context(|| format!("cannot read {}", path.display()))?;
    if n == 4 && capture::is_capture(magic) {
        return capture::from_capture(path);
    }
    let session = session::load_verified(path, Verify::Checksum)?;
    from_session(&session, &path.display().to_string())
}

/// The records of `session`'s first lane (module doc); `source` names it in the trace.
pub fn from_session(session: &Session, source: &str) -> Result<LinkRecords> {
    if !session.has_events() {
        bail!("{source}: a scenario without events has no link to record (run it first, with --out)");
    }
    let mut sends: [Vec<(SimTime, u32, TraceFate)>; 2] = Default::default();
    let mut by_uid: HashMap<u64, (Dir, usize)> = HashMap::new();
    let mut info = RecordsInfo { format: "session".into(), ..Default::default() };
    for e in &session.events {
        match e.kind {
            EventKind::LinkSent { dir, uid, bytes } => {
                by_uid.insert(uid, (dir, sends[dir.index()].len()));
                sends[dir.index()].push((e.time, bytes, TraceFate::Unknown));
                info.packets += 1;
            }
            EventKind::LinkDropped { uid, reason, .. } => {
                if let Some(&(dir, i)) = by_uid.get(&uid) {
                    sends[dir.index()][i].2 = TraceFate::Dropped(reason);
                }
            }
            EventKind::LinkDelivered { uid, delay_us, .. } => {
                if let Some(&(dir, i)) = by_uid.get(&uid) {
                    let fate = &mut sends[dir.index()][i].2;
                    match fate {
                        TraceFate::Delivered(copies) => copies.push(delay_us),
                        _ => *fate = TraceFate::Delivered(vec![delay_us]),
                    }
                }
            }
            _ => {}
        }
    }
    let [ab, ba] = sends.map(|list| {
        let mut d = DirTrace::default();
        for (t, bytes, fate) in &list {
            d.push(*t, *bytes, fate);
        }
        d
    });
    info.paired_flows = u64::from(!ab.is_empty()) + u64::from(!ba.is_empty());
    info.side_a = Some("side A (the server)".into());
    Ok(LinkRecords { trace: LinkTrace::new(source, ab, ba), info })
}

#[cfg(test)]
mod tests {
    use ackscope_protocol::{DropReason, Event, Scenario};

    use super::*;

    #[test]
    fn a_sessions_link_events_become_fates_per_direction() {
        let mut s = Session::scenario_only(Scenario::default());
        let ev = |t: u64, kind| Event::new(SimTime(t), kind);
        s.events = vec![
            ev(10, EventKind::LinkSent { dir: Dir::AtoB, uid: 0, bytes: 40 }),
            ev(10, EventKind::LinkSent { dir: Dir::BtoA, uid: 1, bytes: 41 }),
            ev(10, EventKind::LinkDropped { dir: Dir::BtoA, uid: 1, reason: DropReason::Burst }),
            ev(20, EventKind::LinkSent { dir: Dir::AtoB, uid: 2, bytes: 42 }),
            ev(20, EventKind::LinkDuplicated { dir: Dir::AtoB, uid: 2 }),
            ev(60, EventKind::LinkDelivered { dir: Dir::AtoB, uid: 0, delay_us: 50 }),
            ev(70, EventKind::LinkDelivered { dir: Dir::AtoB, uid: 2, delay_us: 50 }),
            ev(75, EventKind::LinkDelivered { dir: Dir::AtoB, uid: 2, delay_us: 55 }),
            ev(80, EventKind::LinkSent { dir: Dir::AtoB, uid: 3, bytes: 43 }),
        ];
        let r = from_session(&s, "mem").unwrap();
        let ab: Vec<_> = r.trace.dir(Dir::AtoB).iter().map(|p| (p.sent.0, p.bytes, p.fate)).collect();
        assert_eq!(
            ab,
            [
                (10, 40, TraceFate::Delivered(vec![50])),
                (20, 42, TraceFate::Delivered(vec![50, 55])),
                (80, 43, TraceFate::Unknown)
            ]
        );
        let ba: Vec<_> = r.trace.dir(Dir::BtoA).iter().map(|p| p.fate).collect();
        assert_eq!(ba, [TraceFate::Dropped(DropReason::Burst)]);
        assert_eq!(r.info.packets, 4);
    }
}
