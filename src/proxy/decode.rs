//! The proxy's passive decoding (`--decode`): the relay's batches (each datagram's bytes and its
//! link's fate) fed to the protocol crate's [`Decoder`], which derives what each endpoint
//! believes (acks, RTT, its loss estimate, resends, spurious resends) beside the link's truth.
//!
//! It runs on the batches' reader, not on the relay thread, so decoding costs the relay nothing
//! but the bytes' copy. Two conventions meet here: the proxy's side A is the server (`BtoA` is
//! what a client sends), the decoder's side A is the client (`AtoB` client -> server); every
//! direction is turned at this one boundary ([`decoder_dir`]), and what comes back out (stats
//! events, the report) is in the proxy's terms.

use std::collections::HashMap;
use std::path::Path;

use ackscope_protocol::decode::{ClientStats, Datagram, DecodeArg, DecodeChoice, Decoder, Fate, HeaderSpec};
use ackscope_protocol::{ClientId, Dir, Event, EventKind, SimTime};
use anyhow::{anyhow, Result};

use super::record::file_uid;
use super::relay::Batch;

/// The decoder's direction for a proxy direction (see the module doc).
pub fn decoder_dir(proxy: Dir) -> Dir {
    match proxy {
        Dir::BtoA => Dir::AtoB,
        Dir::AtoB => Dir::BtoA,
    }
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

/// A decoder fed from the proxy's batches.
pub struct ProxyDecoder {
    decoder: Decoder,
    /// Stats events every this many µs of proxy time (and at the end).
    stats_every_us: u64,
    next_stats: u64,
}

impl ProxyDecoder {
    pub fn new(choice: DecodeChoice) -> Self {
        Self { decoder: Decoder::new(choice), stats_every_us: 1_000_000, next_stats: 1_000_000 }
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
        }
        // The decoder's own events use its convention; the proxy records its figures only.
        self.decoder.take_events();
        self.decoder.take_records();
        out
    }

    /// Ends probing with what was seen; the last figures at `now`.
    pub fn finish(&mut self, now: SimTime) -> Vec<Event> {
        self.decoder.finish_probe();
        self.decoder.take_events();
        self.decoder.take_records();
        self.stats_events(now)
    }

    /// The format in use, and why (`auto`'s probe).
    pub fn format(&self) -> Option<String> {
        self.decoder.format().map(|k| k.name().to_string())
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
