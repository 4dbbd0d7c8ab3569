//! The proxy's passive decoding (`--decode`): the relay's batches (each datagram's bytes and its
//! link's fate) fed to the protocol crate's [`Decoder`], which derives what each endpoint
//! believes (acks, RTT, its loss estimate, resends, spurious resends) beside the link's truth.
//!
//! It runs on the batches' reader, not on the relay thread, so decoding costs the relay nothing
//! but the bytes' copy. What the decoder reads from each datagram (`PacketSent` with its
//! sequence, `MessageSent`, `PacketReceived`, `PacketAcked` / `PacketNakked`, `RttSample`,
//! `Malformed`) goes into the recording beside the link's events, each `PacketSent` naming the
//! relay's send id, so the Packets and Messages views show the decoded traffic and the
//! recording's ledger checks every decoded ack against the link's truth. Two conventions meet here: the proxy's side A is the server (`BtoA` is
//! what a client sends), the decoder's side A is the client (`AtoB` client -> server); every
//! direction is turned at this one boundary ([`decoder_dir`]), and what comes back out (stats
//! events, the report) is in the proxy's terms.

use std::collections::HashMap;
use std::path::Path;

use ackscope_protocol::decode::{
    ClientStats, Datagram, DecodeArg, DecodeChoice, Decoder, Fate, FormatKind, HeaderSpec,
};
use ackscope_protocol::{ClientId, Dir, Event, EventKind, SimTime};
use anyhow::{anyhow, Result};

use super::batch::Batch;
use super::stats::{DecodedFigures, ProxyReport};
use crate::lane::{Protocol, WireFormat};

/// Bits of a run-wide send id below the client: 2^40 sends per client.
pub const FILE_UID_CLIENT_SHIFT: u32 = 40;

/// A send id unique over the whole run for client `client`'s send `uid` (the decoder's key).
pub fn file_uid(client: ClientId, uid: u64) -> u64 {
    ((client as u64) << FILE_UID_CLIENT_SHIFT) | (uid & ((1 << FILE_UID_CLIENT_SHIFT) - 1))
}

/// The decoder's direction for a proxy direction (see the module doc).
pub fn decoder_dir(proxy: Dir) -> Dir {
    match proxy {
        Dir::BtoA => Dir::AtoB,
        Dir::AtoB => Dir::BtoA,
    }
}

/// A decoder event in the proxy's terms: its side turned (the decoder's side A, the client, is
/// the proxy's side B) and a send named by the relay's own id for it (the decoder's is
/// [`file_uid`], unique over every client; the recording's events carry the client apart).
pub fn proxy_event(mut e: Event) -> Event {
    use EventKind as K;
    match &mut e.kind {
        K::PacketSent { side, uid, .. } => {
            *side = side.other();
            *uid &= (1 << FILE_UID_CLIENT_SHIFT) - 1;
        }
        K::PacketReceived { side, .. }
        | K::PacketAcked { side, .. }
        | K::PacketNakked { side, .. }
        | K::RttSample { side, .. }
        | K::Stats { side, .. }
        | K::Malformed { side, .. }
        | K::PacketDiscarded { side, .. }
        | K::MessageSent { side, .. }
        | K::MessageAcked { side, .. }
        | K::MessageQueued { side, .. }
        | K::MessageDelivered { side, .. } => *side = side.other(),
        K::LinkSent { dir, .. }
        | K::LinkDropped { dir, .. }
        | K::LinkDuplicated { dir, .. }
        | K::LinkDelivered { dir, .. } => *dir = decoder_dir(*dir),
        _ => {}
    }
    e
}

/// Reads `header:FILE`'s description; an error names the file, the field and what is wrong.
pub fn read_header(path: &Path) -> Result<HeaderSpec> {
    let origin = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| anyhow!("--decode header:{origin}: cannot read: {e}"))?;
    let mut de = ron::Deserializer::from_str(&text)
        .map_err(|e| anyhow!("--decode header:{origin}: not a RON header description: {e}"))?;
    let spec: HeaderSpec = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let field = e.path().to_string();
        anyhow!("--decode header:{origin}: field `{field}`: {}", e.inner())
    })?;
    spec.validate().map_err(|e| anyhow!("--decode header:{origin}: {e}"))?;
    Ok(spec)
}

/// What a proxy lane runs, as the decoder read it: the protocol a recording's lane is described
/// by (its label, its colour, how the views rebuild its headers, which report sections apply).
/// ackscope's own formats are their strategy (`glenn`, `ue4`...: its sections apply); a foreign
/// protocol is named for what it is, laid out as the views can show it (ENet's and KCP's
/// commands: from their events only; reliable.io-style headers: as reliable.io's); nothing
/// decoded (`--decode none`, or `auto` found no format) is `unknown`.
pub fn lane_protocol(format: Option<&FormatKind>) -> Protocol {
    let named = |name: &str, wire| Protocol::named(name, Some(wire));
    match format {
        None => named("unknown", WireFormat::Opaque),
        Some(FormatKind::Reliable) => named("reliable.io", WireFormat::ReliableIo),
        Some(FormatKind::Header(_)) => named("header", WireFormat::ReliableIo),
        Some(FormatKind::Enet) => named("ENet", WireFormat::Opaque),
        Some(FormatKind::Kcp) => named("KCP", WireFormat::Opaque),
        Some(FormatKind::Kcptun) => named("KCP (kcptun)", WireFormat::Opaque),
        // glenn, ue4, chunks, fragments, dnm, rellikt: each is the strategy of that name.
        Some(k) => Protocol::named(k.name(), None),
    }
}

/// `--decode`'s value as the decoder takes it (a header file read and checked).
pub fn choice(text: &str) -> Result<DecodeChoice> {
    let arg: DecodeArg = text.parse().map_err(|e: String| anyhow!("--decode: {e}"))?;
    let header = match &arg {
        DecodeArg::HeaderFile(path) => Some(read_header(Path::new(path))?),
        _ => None,
    };
    arg.choice(header).map_err(|e| anyhow!("--decode: {e}"))
}

/// The name a choice is reported by.
pub fn choice_name(c: &DecodeChoice) -> String {
    match c {
        DecodeChoice::Auto => "auto".into(),
        DecodeChoice::Ackscope => "ackscope".into(),
        DecodeChoice::None => "none".into(),
        DecodeChoice::Format(k) => k.name().to_string(),
    }
}

/// Events held back at most while `auto` probes; beyond, probing ends with what it has seen.
const MAX_HELD_EVENTS: usize = 100_000;

/// A decoder fed from the proxy's batches.
pub struct ProxyDecoder {
    decoder: Decoder,
    /// The relay's events while `auto` (or `ackscope`) probes: the decoder reads the datagrams
    /// it held once it picks a format, at their own instants, so the events wait to be merged
    /// with what it then reads (the recording stays in time order).
    held: Vec<Event>,
    /// Stats events every this many µs of proxy time (and at the end).
    stats_every_us: u64,
    next_stats: u64,
}

impl ProxyDecoder {
    pub fn new(choice: DecodeChoice) -> Self {
        Self { decoder: Decoder::new(choice), held: Vec::new(), stats_every_us: 1_000_000, next_stats: 1_000_000 }
    }

    /// Feeds a batch: each datagram when its `LinkSent` comes, each fate when the link decides
    /// it, in the batch's time order. Returns the batch's events with the decoded figures
    /// (`Stats` per client and side, each second of proxy time) in their time order.
    pub fn feed(&mut self, batch: &Batch) -> Vec<Event> {
        let bytes: HashMap<(ClientId, u64), &[u8]> =
            batch.datagrams.iter().map(|d| ((d.client, d.uid), d.bytes.as_slice())).collect();
        let mut out = Vec::new();
        for e in &batch.events {
            while e.time.0 >= self.next_stats {
                out.extend(self.stats_events(SimTime(self.next_stats)));
                self.next_stats += self.stats_every_us;
            }
            out.push(e.clone());
            match e.kind {
                EventKind::LinkSent { dir, uid, .. } => {
                    // Datagrams without bytes (bytes not kept) cannot be decoded: skipped.
                    if let Some(b) = bytes.get(&(e.client, uid)) {
                        self.decoder.datagram(Datagram {
                            uid: file_uid(e.client, uid),
                            time: e.time,
                            dir: decoder_dir(dir),
                            client: e.client,
                            bytes: b,
                        });
                    }
                }
                EventKind::LinkDropped { uid, .. } => self.decoder.fate(file_uid(e.client, uid), Fate::Dropped),
                EventKind::LinkDelivered { uid, .. } => {
                    self.decoder.fate(file_uid(e.client, uid), Fate::Delivered { at: e.time })
                }
                _ => {}
            }
            // What the decoder read from this datagram, or learned from its fate, right after it.
            out.extend(self.decoder.take_events().into_iter().map(proxy_event));
        }
        // Records duplicate the events' fields (the views rebuild headers from events).
        self.decoder.take_records();
        self.release(out)
    }

    /// True while probing has not picked a format.
    fn probing(&self) -> bool {
        matches!(self.decoder.choice(), DecodeChoice::Auto | DecodeChoice::Ackscope) && self.decoder.probe().is_none()
    }

    /// `out` once probing is over (with everything held before it, merged in time order), else
    /// nothing yet.
    fn release(&mut self, out: Vec<Event>) -> Vec<Event> {
        if self.held.is_empty() && !self.probing() {
            return out;
        }
        self.held.extend(out);
        if self.probing() && self.held.len() > MAX_HELD_EVENTS {
            self.decoder.finish_probe();
            self.held.extend(self.decoder.take_events().into_iter().map(proxy_event));
            self.decoder.take_records();
        }
        if self.probing() {
            return Vec::new();
        }
        let mut all = std::mem::take(&mut self.held);
        // Stable: at one instant the relay's event stays before what the decoder read from it.
        all.sort_by_key(|e| e.time);
        all
    }

    /// Ends probing with what was seen (the datagrams held while probing are decoded now, at
    /// their own instants, which may be before the last batch's); the last figures at `now`.
    pub fn finish(&mut self, now: SimTime) -> Vec<Event> {
        self.decoder.finish_probe();
        let mut out: Vec<Event> = self.decoder.take_events().into_iter().map(proxy_event).collect();
        self.decoder.take_records();
        out.extend(self.stats_events(now));
        self.release(out)
    }

    /// The format in use, and why (`auto`'s probe).
    pub fn format(&self) -> Option<String> {
        self.decoder.format().map(|k| k.name().to_string())
    }

    /// What the lane runs as read so far ([`lane_protocol`]): final once [`Self::deciding`] is false.
    pub fn protocol(&self) -> Protocol {
        lane_protocol(self.decoder.format())
    }

    /// True while `auto` (or `ackscope`) has not picked a format: the lane's protocol may change.
    pub fn deciding(&self) -> bool {
        self.probing()
    }

    pub fn probe_reason(&self) -> Option<String> {
        self.decoder.probe().map(|p| p.reason.clone())
    }

    /// Client `client`'s decoded figures in the proxy's directions: `[AtoB (server to client),
    /// BtoA (client to server)]`.
    pub fn client(&self, client: ClientId) -> Option<ClientStats> {
        self.decoder.client_stats(client).map(|s| {
            let mut dirs = s.dirs;
            dirs.swap(0, 1);
            ClientStats { dirs, ..s }
        })
    }

    /// One `Stats` per client and sending side, in the proxy's sides: the decoder's events (two per
    /// client, its A->B first) with each side swapped and each client's pair put in the proxy's
    /// direction order (its A->B, the decoder's B->A, first).
    fn stats_events(&self, now: SimTime) -> Vec<Event> {
        let mut out = self.decoder.stats_events(now);
        for pair in out.chunks_exact_mut(2) {
            pair.swap(0, 1);
        }
        for e in &mut out {
            if let EventKind::Stats { side, .. } = &mut e.kind {
                *side = side.other();
            }
        }
        out
    }
}

impl ProxyReport {
    /// Adds what the decoder derived: the format, the probe's reason, each client's figures.
    pub fn with_decoded(mut self, d: &ProxyDecoder) -> Self {
        self.decode_format = d.format();
        self.decode_probe = d.probe_reason();
        for c in &mut self.clients {
            c.decoded = d.client(c.client).map(|s| DecodedFigures {
                client_to_server: s.dirs[ackscope_protocol::Dir::BtoA.index()],
                server_to_client: s.dirs[ackscope_protocol::Dir::AtoB.index()],
                malformed: s.malformed,
            });
        }
        self.decoded = self.decode_format.is_some() && self.clients.iter().any(|c| c.decoded.is_some());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_wide_send_ids_keep_every_client_apart() {
        assert_ne!(file_uid(1, 0), file_uid(2, 0));
        assert_eq!(file_uid(3, 7) >> FILE_UID_CLIENT_SHIFT, 3);
        assert_eq!(file_uid(3, 7) & 0xFFFF, 7);
    }
}
