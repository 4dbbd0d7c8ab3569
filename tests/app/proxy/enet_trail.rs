//! What crossed the proxy in each direction of an ENet pair, read from the batches' bytes with
//! ENet's own layout: enough for a failure to say which direction lost what.
//!
//! ENet delivers a channel's packets in order, so the receiving application gets nothing of a
//! channel until that channel's first reliable command (sequence 1, its head) has reached it; and
//! a server still waiting for the last ack of its handshake (the client's ack of VERIFY_CONNECT)
//! refuses, without acking, every data command it is sent. The trail therefore reports, per
//! sender, when the handshake completed, every copy of each channel's head (read and forwarded
//! by the proxy) and which of the channel's commands the other side acked.

use std::collections::{BTreeMap, BTreeSet};

use ackscope::proxy::Batch;
use ackscope_protocol::decode::enet::EnetFormat;
use ackscope_protocol::decode::WireFormat;
use ackscope_protocol::{ClientId, Dir, SimTime};

/// The key the decoder gives ENet's reliable command `seq` of `channel`.
pub fn key(channel: u8, seq: u16) -> u64 {
    (channel as u64) << 16 | seq as u64
}

/// VERIFY_CONNECT is the server's reliable command 1 on ENet's connection channel (0xFF).
const VERIFY_CONNECT: u64 = 0xFF << 16 | 1;

/// One datagram the proxy read.
struct Seen {
    dir: Dir,
    at: SimTime,
    /// The reliable commands it carries and the commands of the other side it acks (keys).
    items: Vec<u64>,
    acks: Vec<u64>,
    /// When each copy left the proxy (none: dropped by the link, or still on it at the stop).
    forwarded: Vec<SimTime>,
}

/// The datagrams of a proxy run, keyed by client and the link's send id.
#[derive(Default)]
pub struct EnetTrail {
    seen: BTreeMap<(ClientId, u64), Seen>,
    malformed: u64,
}

impl EnetTrail {
    /// Takes in a batch's datagrams and forwards (the proxy must keep bytes).
    pub fn feed(&mut self, b: &Batch) {
        for d in &b.datagrams {
            let (items, acks) = match EnetFormat.parse(d.dir, &d.bytes) {
                Ok(p) => (p.items.iter().map(|i| i.key).collect(), p.item_acks.iter().map(|a| a.key).collect()),
                Err(_) => {
                    self.malformed += 1;
                    (Vec::new(), Vec::new())
                }
            };
            let seen = Seen { dir: d.dir, at: d.at, items, acks, forwarded: Vec::new() };
            self.seen.insert((d.client, d.uid), seen);
        }
        for f in &b.forwards {
            if let Some(s) = self.seen.get_mut(&(f.client, f.uid)) {
                s.forwarded.push(f.at);
            }
        }
    }

    /// When the first copy of the client's ack of VERIFY_CONNECT left the proxy for the server:
    /// from then on the server's peer is connected and takes data.
    pub fn handshake_done(&self) -> Option<SimTime> {
        self.from(Dir::BtoA)
            .filter(|s| s.acks.contains(&VERIFY_CONNECT))
            .flat_map(|s| s.forwarded.iter().copied())
            .min()
    }

    fn from(&self, dir: Dir) -> impl Iterator<Item = &Seen> {
        self.seen.values().filter(move |s| s.dir == dir)
    }

    /// The copies of `item` sent by side `dir`: when each was read, and when it was forwarded.
    pub fn copies(&self, dir: Dir, item: u64) -> Vec<(SimTime, Option<SimTime>)> {
        self.from(dir).filter(|s| s.items.contains(&item)).map(|s| (s.at, s.forwarded.first().copied())).collect()
    }

    /// The commands of `channel` sent by side `dir` that the other side acked.
    pub fn acked(&self, dir: Dir, channel: u8) -> BTreeSet<u64> {
        let other = if dir == Dir::AtoB { Dir::BtoA } else { Dir::AtoB };
        self.from(other).flat_map(|s| s.acks.iter().copied()).filter(|k| k >> 16 == channel as u64).collect()
    }

    /// One paragraph: per direction what the proxy read, forwarded and dropped, when the handshake
    /// completed, and each sender's channel head, copy by copy.
    pub fn report(&self) -> String {
        let secs = |t: SimTime| format!("{:.3}", t.as_secs_f64());
        let handshake = self.handshake_done();
        let mut out = format!(
            "the server's handshake completed (client's ack of VERIFY_CONNECT forwarded) at {} s",
            handshake.map_or("never".into(), secs)
        );
        if self.malformed > 0 {
            out.push_str(&format!("; {} datagrams not ENet", self.malformed));
        }
        for (who, dir, channels) in [("client", Dir::BtoA, &[0u8][..]), ("server", Dir::AtoB, &[1u8, 0][..])] {
            let read = self.from(dir).count();
            let forwarded = self.from(dir).filter(|s| !s.forwarded.is_empty()).count();
            out.push_str(&format!("; {who}: {read} datagrams read by the proxy, {forwarded} forwarded"));
            for &channel in channels {
                let copies = self.copies(dir, key(channel, 1));
                let list: Vec<String> = copies
                    .iter()
                    .map(|&(at, fwd)| match (fwd, handshake) {
                        (None, _) => format!("{}->dropped", secs(at)),
                        (Some(f), Some(h)) if f >= h => format!("{}->{}", secs(at), secs(f)),
                        (Some(f), _) => format!("{}->{} (before the handshake)", secs(at), secs(f)),
                    })
                    .collect();
                let acked = self.acked(dir, channel);
                out.push_str(&format!(
                    ", channel {channel} head sent {} times [{}] and {} of its channel-{channel} commands acked (the head {})",
                    copies.len(),
                    list.join(", "),
                    acked.len(),
                    if acked.contains(&key(channel, 1)) { "among them" } else { "not" }
                ));
            }
        }
        out
    }
}
