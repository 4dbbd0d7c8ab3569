//! The decoded section of a report: what a passive decoder read from real traffic (a proxy's or a
//! capture's lane), folded from the recording's events alone, so `ackscope summary PROXY.ron`
//! gives the figures the proxy printed when it ran.
//!
//! Such a lane has no workload: its endpoints are a game's, so nothing says when a message was
//! queued or handed to the application, and the reliable and snapshot sections (which count
//! those) would be empty. What the traffic does show is each sender's reliable items (an ENet
//! reliable command, a KCP segment, a Glenn message): every copy sent (`MessageSent`), the first
//! ack of each (`MessageAcked`), the packets acked (`PacketAcked`), and whether a resend went
//! out although the link had delivered an earlier copy (the copy's carrier `PacketSent` names
//! the relay's send id, whose `LinkDelivered` is the truth): the same counts the decoder keeps.

use std::collections::HashMap;

use ackscope_protocol::{ClientId, Event, EventKind, Side, SimTime};
use serde::Serialize;

/// One sender's decoded figures (every client together).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DecodedDir {
    /// Reliable item copies sent (first sends and resends).
    pub items_sent: u64,
    pub resends: u64,
    /// Resends of an item one of whose earlier copies the link delivered.
    pub spurious_resends: u64,
    /// Distinct items the sender learned were acked.
    pub items_acked: u64,
    /// Packets the sender learned were acked.
    pub packets_acked: u64,
}

/// What side A and side B sent, as decoded (a proxy's side A is the server, B its clients).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DecodedSummary {
    pub a: DecodedDir,
    pub b: DecodedDir,
}

/// One item: copies sent, and the earliest copy the link delivered.
#[derive(Default)]
struct Item {
    copies: u32,
    delivered_min: Option<u32>,
}

/// One copy of an item a send carried: the sender, the item, its copy number.
type CarriedCopy = (Side, u64, u32);

/// A copy logged before its packet: when, in which sequence, the item and its copy number.
type WaitingCopy = (SimTime, u32, u64, u32);

/// Folds a decoded lane's events into a [`DecodedSummary`].
#[derive(Default)]
pub struct DecodedFold {
    dirs: [DecodedDir; 2],
    items: HashMap<(ClientId, Side, u64), Item>,
    /// The datagram each client's sender is describing (its latest `PacketSent`): its time,
    /// sequence and send id. Recordings from before the decoder logged messages ahead of their
    /// packet name the packet first.
    carrier: HashMap<(ClientId, Side), (SimTime, u32, u64)>,
    /// Copies whose `MessageSent` came before their `PacketSent` (the order every strategy and
    /// the decoder log in): their time and sequence, until the packet names its send id.
    waiting: HashMap<(ClientId, Side), Vec<WaitingCopy>>,
    /// The items (and copy numbers) each send carried, by client and send id, until its fate.
    carried: HashMap<(ClientId, u64), Vec<CarriedCopy>>,
}

impl DecodedFold {
    pub fn observe(&mut self, e: &Event) {
        match e.kind {
            EventKind::PacketSent { side, seq, uid, .. } => {
                self.carrier.insert((e.client, side), (e.time, seq, uid));
                if let Some(waiting) = self.waiting.remove(&(e.client, side)) {
                    let mine = waiting.into_iter().filter(|&(t, s, ..)| t == e.time && s == seq);
                    let copies = mine.map(|(_, _, msg, copy)| (side, msg, copy));
                    self.carried.entry((e.client, uid)).or_default().extend(copies);
                }
            }
            EventKind::MessageSent { side, msg, seq, .. } => {
                let item = self.items.entry((e.client, side, msg)).or_default();
                let copy = item.copies;
                item.copies += 1;
                let d = &mut self.dirs[side.index()];
                d.items_sent += 1;
                if copy > 0 {
                    d.resends += 1;
                    if item.delivered_min.is_some() {
                        d.spurious_resends += 1;
                    }
                }
                match self.carrier.get(&(e.client, side)) {
                    Some(&(t, s, uid)) if t == e.time && s == seq => {
                        self.carried.entry((e.client, uid)).or_default().push((side, msg, copy));
                    }
                    _ => self.waiting.entry((e.client, side)).or_default().push((e.time, seq, msg, copy)),
                }
            }
            EventKind::LinkDelivered { uid, .. } => {
                // A duplicate's second delivery finds nothing left: the first one counted.
                for (side, msg, copy) in self.carried.remove(&(e.client, uid)).unwrap_or_default() {
                    let Some(item) = self.items.get_mut(&(e.client, side, msg)) else { continue };
                    let after = |from: u32| u64::from(item.copies.saturating_sub(from + 1));
                    let d = &mut self.dirs[side.index()];
                    match item.delivered_min {
                        None => {
                            d.spurious_resends += after(copy);
                            item.delivered_min = Some(copy);
                        }
                        Some(m) if copy < m => {
                            d.spurious_resends += u64::from(m - copy);
                            item.delivered_min = Some(copy);
                        }
                        Some(_) => {}
                    }
                }
            }
            EventKind::LinkDropped { uid, .. } => {
                self.carried.remove(&(e.client, uid));
            }
            EventKind::MessageAcked { side, .. } => self.dirs[side.index()].items_acked += 1,
            EventKind::PacketAcked { side, .. } => self.dirs[side.index()].packets_acked += 1,
            _ => {}
        }
    }

    pub fn finish(&self) -> DecodedSummary {
        DecodedSummary { a: self.dirs[Side::A.index()], b: self.dirs[Side::B.index()] }
    }
}

impl DecodedSummary {
    /// The report's lines for it.
    pub fn to_text(&self) -> String {
        let line = |who: &str, d: &DecodedDir| {
            format!(
                "\ndecoded, side {who} sends: {} reliable items sent ({} resends, {} spurious), {} acked; {} packets acked",
                d.items_sent, d.resends, d.spurious_resends, d.items_acked, d.packets_acked
            )
        };
        line("A (server)", &self.a) + &line("B (client)", &self.b)
    }
}

#[cfg(test)]
mod tests {
    use ackscope_protocol::{Dir, SendKind};

    use super::*;

    fn ev(t: u64, kind: EventKind) -> Event {
        Event { time: SimTime(t), client: 1, kind }
    }

    #[test]
    fn a_resend_is_spurious_when_an_earlier_copy_was_delivered_whichever_comes_first() {
        let b = Side::B;
        let sent = |t, seq, uid| ev(t, EventKind::PacketSent { side: b, seq, bytes: 10, uid });
        let msg = |t, seq| ev(t, EventKind::MessageSent { side: b, msg: 7, seq, kind: SendKind::First });
        let delivered = |t, uid| ev(t, EventKind::LinkDelivered { dir: Dir::BtoA, uid, delay_us: 1 });
        // Messages logged before their packet (as the decoder and every strategy do now), and
        // after it (recordings made before that): the same figures.
        for messages_first in [true, false] {
            let mut f = DecodedFold::default();
            let pair = |t, seq, uid| {
                if messages_first {
                    [msg(t, seq), sent(t, seq, uid)]
                } else {
                    [sent(t, seq, uid), msg(t, seq)]
                }
            };
            let mut events = Vec::new();
            events.extend(pair(0, 1, 10));
            events.extend(pair(5, 2, 11));
            // The first copy arrives after its resend went out: that resend was needless.
            events.push(delivered(6, 10));
            events.extend(pair(7, 3, 12));
            events.push(delivered(8, 11));
            events.push(ev(9, EventKind::MessageAcked { side: b, msg: 7, seq: 1 }));
            events.push(ev(9, EventKind::PacketAcked { side: b, seq: 1 }));
            for e in &events {
                f.observe(e);
            }
            let d = f.finish().b;
            let got = (d.items_sent, d.resends, d.spurious_resends, d.items_acked, d.packets_acked);
            assert_eq!(got, (3, 2, 2, 1, 1), "messages first: {messages_first}");
        }
        let f = DecodedFold::default();
        assert_eq!(f.finish().a, DecodedDir::default());
    }
}
