//! A real-UDP session (an `ackscope peer`, a proxy, a UDP loopback run) as a pcapng capture:
//! every datagram with the bytes its socket wrote or read, at the real instant it was sent.
//!
//! Such a recording cannot be re-run into bytes as a simulated one is ([`super::export`]): its
//! datagrams crossed real sockets, on real time, and some were another process's. But the
//! session keeps each datagram's exact bytes beside its events (`payloads`,
//! [`crate::session::payloads`]), named as the events name the datagram, `(client, uid)`. So the
//! capture is built from the events and those bytes, on the same two interfaces a simulated
//! lane gets and with the same addresses ([`super::address`]) and packet comments
//! ([`super::comment`]):
//! - `lane1-sent`: each datagram once, at its send instant: the sender's `PacketSent` where this
//!   process sent it (a UDP run's endpoints, a peer's own sends), else the link's `LinkSent` (a
//!   proxy's read, a peer's arrival: the instant its socket read it);
//! - `lane1-delivered`: each copy the recorded link delivered (`LinkDelivered`), at its arrival.
//!
//! A datagram the recording's link saw gets its fate (`fate=`, `delay_ms=`); a peer's own sends
//! crossed the other process's link, so their comment has no fate, and the capture shows that
//! direction on its sender side only, as a capture taken at the peer would. Times are
//! microseconds since the run started (the capture's epoch stands for the start), as the
//! recording keeps them.
//!
//! A recording without any bytes (a file written before ackscope kept them, an event stream) is
//! refused, saying what is missing. One whose store dropped its oldest datagrams to keep to the
//! live memory cap is written with what is known: those datagrams are left out, their number
//! said in the summary ([`PcapngSummary::without_bytes`]).

use std::collections::HashMap;
use std::io::Write;

use ackscope_protocol::{ClientId, Dir, DropReason, EventKind, Side, SimTime};
use anyhow::{bail, Context, Result};

use super::address::{client_addr, client_port, server_port, SERVER_ADDR};
use super::comment::Comment;
use super::pcapng::{CaptureWriter, PcapngSummary, Udp};
use crate::lane::Origin;
use crate::session::Session;

/// The server's port when the lane's protocol is none of ackscope's strategies and no upstream
/// port is known (the port ENet's own servers listen on by default).
const FOREIGN_SERVER_PORT: u16 = 7777;

/// What the events say about one datagram.
struct Datagram {
    client: ClientId,
    uid: u64,
    dir: Dir,
    sent_at: SimTime,
    /// Its size as the events give it (checked against the kept bytes).
    size: u32,
    /// The sender's packet sequence, when the sender was in this process.
    seq: Option<u32>,
    /// The recording's link saw it (`LinkSent`): its fate is known.
    on_link: bool,
    dropped: Option<DropReason>,
    copies: u32,
    first_delay_us: Option<u32>,
}

impl Datagram {
    fn fate(&self) -> &'static str {
        if !self.on_link {
            return "";
        }
        super::comment::fate_name(self.dropped, self.first_delay_us, self.copies)
    }
}

/// A delivered copy: its datagram (index into the list) and when it arrived.
struct Copy {
    datagram: usize,
    at: SimTime,
    delay_us: u32,
    nth: u32,
}

/// Every datagram and copy the events describe, in event order.
fn datagrams(session: &Session) -> (Vec<Datagram>, Vec<Copy>) {
    let mut list: Vec<Datagram> = Vec::new();
    let mut index: HashMap<(ClientId, u64), usize> = HashMap::new();
    let mut copies = Vec::new();
    for e in &session.events {
        let (dir, uid, size, seq, time) = match e.kind {
            EventKind::PacketSent { side, seq, bytes, uid } => (side.outgoing(), uid, bytes, Some(seq), e.time),
            EventKind::LinkSent { dir, uid, bytes } => (dir, uid, bytes, None, e.time),
            EventKind::LinkDropped { uid, reason, .. } => {
                if let Some(&i) = index.get(&(e.client, uid)) {
                    list[i].dropped = Some(reason);
                }
                continue;
            }
            EventKind::LinkDelivered { uid, delay_us, .. } => {
                if let Some(&i) = index.get(&(e.client, uid)) {
                    let d = &mut list[i];
                    d.copies += 1;
                    d.first_delay_us.get_or_insert(delay_us);
                    copies.push(Copy { datagram: i, at: e.time, delay_us, nth: d.copies });
                }
                continue;
            }
            _ => continue,
        };
        let on_link = matches!(e.kind, EventKind::LinkSent { .. });
        match index.get(&(e.client, uid)) {
            Some(&i) => {
                let d = &mut list[i];
                d.on_link |= on_link;
                d.seq = d.seq.or(seq);
                d.sent_at = d.sent_at.min(time);
            }
            None => {
                index.insert((e.client, uid), list.len());
                list.push(Datagram {
                    client: e.client,
                    uid,
                    dir,
                    sent_at: time,
                    size,
                    seq,
                    on_link,
                    dropped: None,
                    copies: 0,
                    first_delay_us: None,
                });
            }
        }
    }
    (list, copies)
}

/// The server's port: the strategy's (so the dissector knows the format), else the port the
/// proxy forwarded to, else [`FOREIGN_SERVER_PORT`].
fn server_port_of(session: &Session) -> u16 {
    if let Some(s) = session.protocol().strategy {
        return server_port(s);
    }
    match &session.origin {
        Some(Origin::Proxy { upstream, .. }) => {
            upstream.rsplit(':').next().and_then(|p| p.parse().ok()).unwrap_or(FOREIGN_SERVER_PORT)
        }
        _ => FOREIGN_SERVER_PORT,
    }
}

/// Writes a real-UDP `session` as pcapng to `out` from its events and kept bytes (module doc).
pub fn write_recorded(session: &Session, out: impl Write) -> Result<PcapngSummary> {
    let origin = session.origin.as_ref().map_or_else(|| "UDP loopback".to_string(), Origin::describe);
    if session.ab.is_some() || !session.ab_events.is_empty() {
        bail!("a recording over real UDP has one lane; this one names an A/B lane as well");
    }
    let (list, copies) = datagrams(session);
    if session.payloads.is_empty() {
        bail!(
            "the recording ran over real UDP ({origin}) and keeps none of its {} datagrams' bytes (no `payloads` field: it was saved \
             before ackscope kept them, or its source had none); a capture needs each datagram's bytes, so only \
             recordings saved with them, and simulated ones (re-run), export to pcapng",
            list.len()
        );
    }
    let bytes: HashMap<(ClientId, u64), &[u8]> =
        session.payloads.iter().map(|p| ((p.client, p.uid), p.hex.as_slice())).collect();
    for d in &list {
        if let Some(b) = bytes.get(&(d.client, d.uid)) {
            if b.len() != d.size as usize {
                bail!(
                    "client {}'s datagram {} at {:.6} s is {} bytes in the events and {} in `payloads`: the bytes \
                     are not this datagram's (was the file edited?)",
                    d.client,
                    d.uid,
                    d.sent_at.as_secs_f64(),
                    d.size,
                    b.len()
                );
            }
        }
    }
    let server = (SERVER_ADDR, server_port_of(session));
    let udp = |d: &Datagram, payload: &[u8]| {
        let client = (client_addr(d.client), client_port(1));
        let (src, dst) = match d.dir.sender() {
            Side::A => (server, client),
            Side::B => (client, server),
        };
        Udp { src, dst, payload: payload.to_vec() }
    };
    // (time, interface, order): sends before copies at one instant, each kind in event order.
    let mut records: Vec<(SimTime, u32, usize, Udp, String)> = Vec::new();
    let mut summary = PcapngSummary { lanes: 1, ..Default::default() };
    for (i, d) in list.iter().enumerate() {
        let Some(b) = bytes.get(&(d.client, d.uid)) else {
            summary.without_bytes += 1;
            continue;
        };
        let comment = Comment::new()
            .field("uid", d.uid)
            .field("side", format!("{:?}", d.dir.sender()))
            .field("client", d.client)
            .field("seq", d.seq.map(|s| s.to_string()).unwrap_or_default())
            .field("fate", d.fate())
            .field("delay_ms", d.first_delay_us.map(|us| format!("{:.3}", f64::from(us) / 1000.0)).unwrap_or_default())
            .finish();
        records.push((d.sent_at, 0, i, udp(d, b), comment));
        summary.sent += 1;
    }
    for (i, c) in copies.iter().enumerate() {
        let d = &list[c.datagram];
        let Some(b) = bytes.get(&(d.client, d.uid)) else { continue };
        let copy = if d.copies > 1 { format!("{}/{}", c.nth, d.copies) } else { String::new() };
        let comment = Comment::new()
            .field("uid", d.uid)
            .field("side", format!("{:?}", d.dir.sender()))
            .field("client", d.client)
            .field("seq", d.seq.map(|s| s.to_string()).unwrap_or_default())
            .field("delay_ms", format!("{:.3}", f64::from(c.delay_us) / 1000.0))
            .field("copy", copy)
            .finish();
        records.push((c.at, 1, list.len() + i, udp(d, b), comment));
        summary.delivered += 1;
    }
    records.sort_by_key(|r| (r.0, r.1, r.2));
    let comment = format!(
        "ackscope session over real UDP ({origin}), {:.3} s from 1970-01-01 00:00:00 UTC (the epoch stands for the \
         start of the run), every datagram with the bytes its socket wrote or read",
        SimTime(session.duration_us).as_secs_f64()
    );
    let mut w = CaptureWriter::new(out, &comment)?;
    let name = session.protocol().name;
    w.add_interface("lane1-sent", &format!("ackscope lane 1 ({name}, {origin}): every datagram when it was sent"))?;
    w.add_interface(
        "lane1-delivered",
        &format!("ackscope lane 1 ({name}, {origin}): every copy the recorded link delivered, when it arrived"),
    )?;
    for (time, interface, _, udp, comment) in &records {
        w.write_udp(*interface, time.0, udp, comment)?;
    }
    w.into_inner().flush().context("writing the capture")?;
    Ok(summary)
}
