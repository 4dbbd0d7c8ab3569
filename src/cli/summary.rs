//! `ackscope summary`: the report of a recorded session, recomputed from its events.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::common::{fail, print};
use std::collections::BTreeMap;

use ackscope_protocol::PacketTotals;
use serde::Serialize;

use crate::filter::summary::{FilteredSummary, PerKind};
use crate::model::clients::{rows_at, ClientRow};
use crate::model::Recording;
use crate::report::peer_join::JoinedReport;
use crate::report::{self, RunReport};
use crate::session::{self, Progress};

#[derive(Args, Debug)]
pub struct SummaryArgs {
    /// A session file written by `run --out` or saved from the window, or a JSON-lines event
    /// stream (`.jsonl`, see `export --events`), or a packet capture (`.pcapng`, `.pcap`: read
    /// through the passive decoders, README "Opening captures").
    pub session: PathBuf,
    /// The other side's recording of the same `ackscope peer` run (`peer --out`, side a's and
    /// side b's in either order): the two are joined into one run with full ground truth (false
    /// acks, true loss per direction, every reliable message's delivery).
    #[arg(value_name = "PARTNER.ron")]
    pub partner: Option<PathBuf>,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    pub json: bool,
    /// The figures over the rows this display filter matches instead (README, "Display
    /// filters"): per lane and client, the matching packets, messages and anomalies counted and
    /// their delays, latencies and kinds, the rows `export --filter` writes.
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// Open a recording whose checksum is missing or does not match (a hand-edited file).
    #[arg(long)]
    pub no_verify: bool,
    /// Captures (.pcapng, .pcap): the decoder that reads the datagrams
    /// (auto|ackscope|reliable|glenn|ue4|chunks|fragments|dnm|rellikt|enet|kcp|kcptun|header:FILE.ron|none).
    #[arg(long, default_value = "auto")]
    pub decode: String,
    /// Captures: only UDP flows with this port at one end (that end is the server).
    #[arg(long)]
    pub port: Option<u16>,
    /// Captures: only flows whose client end is ADDR (and PORT).
    #[arg(long, value_name = "ADDR[:PORT]")]
    pub client_filter: Option<String>,
}

/// Loads the session and prints its report (the same figures `run` prints; both lanes of an A/B
/// session); a JSON-lines stream gets the figures its events allow, per client.
pub fn main(args: SummaryArgs) -> ExitCode {
    if let Some(partner) = &args.partner {
        return match joined(&args, partner) {
            Ok(r) => print(&r, args.json, JoinedReport::to_text),
            Err(e) => fail(format!("{e:#}")),
        };
    }
    if crate::capture::import::is_capture_file(&args.session) {
        if args.filter.is_some() {
            return fail(format!(
                "{}: --filter applies to sessions and JSON-lines streams; a capture's rows cannot be filtered yet",
                args.session.display()
            ));
        }
        return match capture_summary(&args) {
            Ok(s) => print(&s, args.json, crate::capture::import::ImportSummary::to_text),
            Err(e) => fail(format!("{e:#}")),
        };
    }
    if let Some(text) = &args.filter {
        return match filtered_summary(&args, text) {
            Ok(s) => print(&s, args.json, FilteredSummary::to_text),
            Err(e) => fail(format!("{e:#}")),
        };
    }
    if crate::session::jsonl::is_stream_path(&args.session) {
        return match stream_summary(&args.session) {
            Ok(s) => print(&s, args.json, StreamSummary::to_text),
            Err(e) => fail(format!("{e:#}")),
        };
    }
    let verify = if args.no_verify { session::Verify::Skip } else { session::Verify::Checksum };
    match session::load_verified(&args.session, verify) {
        Ok(s) => print(&report::from_session(&s), args.json, RunReport::to_text),
        Err(e) => fail(format!("{e:#}")),
    }
}

/// `summary A.ron B.ron`: two peers' recordings of one run, joined.
fn joined(args: &SummaryArgs, partner: &std::path::Path) -> anyhow::Result<JoinedReport> {
    if args.filter.is_some() {
        anyhow::bail!("--filter applies to one recording; join two peers' recordings without it");
    }
    let verify = if args.no_verify { session::Verify::Skip } else { session::Verify::Checksum };
    let a = session::load_verified(&args.session, verify)?;
    let b = session::load_verified(partner, verify)?;
    let (fa, fb) = (args.session.display().to_string(), partner.display().to_string());
    crate::report::peer_join::joined_report(&a, &b, &fa, &fb).map_err(|e| anyhow::anyhow!("{fa} and {fb}: {e:#}"))
}

/// A capture read through the decoders (`crate::capture::import`).
fn capture_summary(args: &SummaryArgs) -> anyhow::Result<crate::capture::import::ImportSummary> {
    use crate::capture::import::{decode_choice, summarize, ImportOptions};
    let client_filter = args.client_filter.as_deref().map(str::parse).transpose()?;
    let opts =
        ImportOptions { decode: decode_choice(&args.decode)?, port: args.port, client_filter, ..Default::default() };
    summarize(&args.session, &opts)
}

/// `summary --filter`: the session's (or stream's) lanes, and the figures over `text`'s rows.
pub fn filtered_summary(args: &SummaryArgs, text: &str) -> anyhow::Result<FilteredSummary> {
    let filters = PerKind::compile(text).map_err(|e| anyhow::anyhow!("--filter: {e}"))?;
    let progress = Progress::new();
    let recs = if crate::session::jsonl::is_stream_path(&args.session) {
        let stream = crate::session::jsonl::load(&args.session)?;
        Recording::lanes_from_stream(stream, &args.session.display().to_string(), &progress)
    } else {
        let verify = if args.no_verify { session::Verify::Skip } else { session::Verify::Checksum };
        let s = session::load_verified(&args.session, verify)?;
        if !s.has_events() {
            anyhow::bail!("{}: a scenario without events; record it first", args.session.display());
        }
        Recording::lanes_from_session(s, &progress)
    }
    .expect("never cancelled");
    let lanes: Vec<(String, &Recording)> =
        crate::report::export::lanes(&recs).into_iter().map(|l| (l.label, l.rec)).collect();
    Ok(FilteredSummary::of(text, &filters, &lanes))
}

/// What `summary FILE.jsonl` prints: no scenario, so only what the events say, per lane and per
/// client.
#[derive(Debug, Serialize)]
pub struct StreamSummary {
    pub file: PathBuf,
    pub producer: String,
    pub lanes: Vec<StreamLane>,
    /// Event kinds and fields this build does not know, skipped, with their counts.
    pub skipped_kinds: BTreeMap<String, u64>,
    pub skipped_fields: BTreeMap<String, u64>,
}

/// One lane of a stream.
#[derive(Debug, Serialize)]
pub struct StreamLane {
    pub protocol: String,
    pub wire: String,
    pub events: u64,
    pub seconds: f64,
    /// Every client together, from the link's ground truth and the endpoints' reports.
    pub packets: PacketTotals,
    /// Each client's figures at the end of the stream (the Clients tab's row).
    pub clients: Vec<ClientRow>,
}

/// Reads the stream and computes its figures.
pub fn stream_summary(path: &std::path::Path) -> anyhow::Result<StreamSummary> {
    let stream = crate::session::jsonl::load(path)?;
    let skipped = stream.skipped.clone();
    let producer = stream.header.producer.clone();
    let lanes =
        Recording::lanes_from_stream(stream, &path.display().to_string(), &Progress::new()).expect("never cancelled");
    let lanes = lanes
        .iter()
        .map(|rec| {
            let p = rec.info.first();
            StreamLane {
                protocol: rec.info.label(),
                wire: p.wire.name().to_string(),
                events: rec.len() as u64,
                seconds: rec.end_time().as_secs_f64(),
                packets: ackscope_protocol::summarize(rec.events()).0,
                clients: rows_at(rec, rec.end_time()),
            }
        })
        .collect();
    Ok(StreamSummary {
        file: path.to_path_buf(),
        producer,
        lanes,
        skipped_kinds: skipped.kinds,
        skipped_fields: skipped.fields,
    })
}

impl StreamSummary {
    /// A short human summary: each lane, then a line per client.
    pub fn to_text(&self) -> String {
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
        let mut out = format!("ackscope: event stream {}", self.file.display());
        if !self.producer.is_empty() {
            out.push_str(&format!(" from {}", self.producer));
        }
        for l in &self.lanes {
            let p = &l.packets;
            out.push_str(&format!(
                "\nlane {} (wire {}): {} events over {:.1} s, {} clients\n\
                 packets: {} sent, {} dropped by the link, {} delivered, {} acked, {} false acks",
                l.protocol,
                l.wire,
                l.events,
                l.seconds,
                l.clients.len(),
                p.sent,
                p.link_dropped,
                p.delivered,
                p.acked,
                p.false_acks
            ));
            for c in &l.clients {
                out.push_str(&format!(
                    "\n  {}{}: RTT {} ms (true {}), loss {} % (true {}), {} / {} kbps down / up, \
                     messages p95 {} p99 {} ms, {} resends, {} anomalies",
                    c.label(),
                    if c.group.is_empty() { String::new() } else { format!(" [{}]", c.group) },
                    f(c.rtt_ms),
                    f(c.true_rtt_ms),
                    f(c.loss_estimated_percent),
                    f(c.loss_true_percent),
                    f(c.down_kbps),
                    f(c.up_kbps),
                    f(c.message_p95_ms),
                    f(c.message_p99_ms),
                    c.resends,
                    c.anomalies
                ));
            }
        }
        let skipped =
            crate::session::jsonl::Skipped { kinds: self.skipped_kinds.clone(), fields: self.skipped_fields.clone() };
        if !skipped.is_empty() {
            out.push_str(&format!("\n{}", skipped.describe()));
        }
        out
    }
}
