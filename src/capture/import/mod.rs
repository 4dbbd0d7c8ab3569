//! Packet captures read back: a pcapng or pcap file's UDP traffic as an ackscope recording, with
//! the passive decoders ([`ackscope_protocol::decode`]) deriving what each endpoint believed and,
//! where the capture saw both sides of the link, the link's truth.
//!
//! The rules (README, "Opening captures"):
//! - **Flows are clients.** Each UDP flow (the two ends' addresses and ports) is a client of the
//!   recording, numbered from 1 in order of appearance; its server end is side A (the end on
//!   `--port`; in ackscope's own captures the address it gave the server; else the end more flows
//!   share; else the end that did not speak first: [`crate::capture::server_end`]). `--port N` keeps only
//!   flows with N at one end; `--client-filter ADDR[:PORT]` only flows whose client end matches.
//! - **Both sides.** A datagram seen again later on another stream (another interface, or
//!   another hop of one path) is a delivered copy of the first: the copy is matched to the
//!   earliest send with the same bytes not yet delivered within [`MATCH_WINDOW_NS`] before it,
//!   else to the latest (a duplicate); on the send's own interface only when both its ends differ
//!   from the send's (another hop: two clients of one server share an end and may send the same
//!   first bytes). A direction where copies were seen is two-sided: its
//!   sends with no copy within the window were dropped (the reason from ackscope's packet comment
//!   where there is one), those too close to the capture's end are in flight, and the
//!   recording gets the link's events (`LinkSent`, `LinkDelivered` with the one-way delay,
//!   `LinkDropped`, `LinkDuplicated`): true loss and delay. A direction seen on one side only
//!   has no truth: each datagram counts as delivered when the capture saw it.
//! - **Beliefs.** The decoder (`--decode`, default `auto`) gets each send at its send time and
//!   its fate when it happened, so acks count when they reached their endpoint: decoded acks,
//!   RTT from a send to its first ack, the loss each endpoint would estimate, resends and
//!   spurious resends, as events and per-direction figures.
//! - **Time.** A capture starting less than a day after the epoch runs on virtual time
//!   (ackscope's exports) and keeps its times; any other's time 0 is its first packet.
//! - **What is not read** (other link types, non-UDP packets, packets cut short, damaged
//!   blocks) is counted by reason and said in the summary ([`read`]), never a panic.
//!
//! Reading streams: [`Importer::next_batch`] gives events as the file is read, holding back only
//! [`MATCH_WINDOW_NS`] of capture time (the window opens the first events while the rest loads).

pub mod engine;
pub mod flows;
pub mod read;
pub mod report;

use std::path::Path;

use ackscope_protocol::decode::{DecodeArg, DecodeChoice, HeaderSpec};
use ackscope_protocol::Event;
use anyhow::{anyhow, Context, Result};

pub use engine::{Importer, MATCH_WINDOW_NS};
pub use flows::ClientFilter;
pub use read::{is_capture_file, Skipped};
pub use report::{ClientSummary, DirSummary, DirTruth, ImportSummary};

/// What to import and how to decode it.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    pub decode: DecodeChoice,
    /// Only flows with this port at one end (which is then the server end).
    pub port: Option<u16>,
    pub client_filter: Option<ClientFilter>,
    /// The first look at the file's start, shared by every importer opened with clones of these
    /// options (the window opens a capture twice: to name its lane, then to read it).
    pub first_look: engine::FirstLook,
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self { decode: DecodeChoice::Auto, port: None, client_filter: None, first_look: Default::default() }
    }
}

/// A `--decode` value (`auto|ackscope|reliable|enet|kcp|header:FILE.ron|none`, and every other
/// format [`ackscope_protocol::decode::DECODE_NAMES`] lists) as a choice, reading and checking
/// the header description `header:FILE` names.
pub fn decode_choice(value: &str) -> Result<DecodeChoice> {
    let arg: DecodeArg = value.parse().map_err(|e: String| anyhow!("--decode: {e}"))?;
    let header = match &arg {
        DecodeArg::HeaderFile(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--decode header:{path}: cannot read the header description"))?;
            let spec: HeaderSpec =
                ron::from_str(&text).map_err(|e| anyhow!("--decode header:{path}: not a header description: {e}"))?;
            Some(spec)
        }
        _ => None,
    };
    arg.choice(header).map_err(|e| anyhow!("--decode: {e}"))
}

/// Imports the whole capture at `path`: its events in time order, and the summary.
pub fn import(path: &Path, opts: &ImportOptions) -> Result<(Vec<Event>, ImportSummary)> {
    Ok(Importer::open(path, opts)?.run(path))
}

/// The summary of the capture at `path` alone: every event is made and dropped as it comes, so
/// memory stays bounded by the matching window however long the file is (`ackscope summary`;
/// holding the events peaked at 2037 MiB for 10 M packets, this at 25 MiB, `examples/capture_scale.rs`).
pub fn summarize(path: &Path, opts: &ImportOptions) -> Result<ImportSummary> {
    let mut importer = Importer::open(path, opts)?;
    while !importer.next_batch(1 << 16).is_empty() {}
    Ok(importer.summary(path))
}
