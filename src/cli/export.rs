//! `ackscope export`: a recorded session's packets, messages and series as CSV files, or as
//! JSON on stdout.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::common::{fail, print};
use crate::capture;
use crate::filter::matching_rows;
use crate::filter::summary::PerKind;
use crate::model::{Recording, Shown};
use crate::report::export::tables::{Keep, Lane};
use crate::report::export::{self, ExportSummary, ExportTargets, Table};
use crate::session::{self, Progress, Session};

#[derive(Args, Debug)]
#[command(after_help = tables_help())]
pub struct ExportArgs {
    /// A session file written by `run --out` or saved from the window, or a JSON-lines stream.
    pub session: PathBuf,
    /// Write one row per link send (packet) to this CSV file.
    #[arg(long, value_name = "FILE.csv")]
    pub packets: Option<PathBuf>,
    /// Write one row per message (and per chunk) to this CSV file.
    #[arg(long, value_name = "FILE.csv")]
    pub messages: Option<PathBuf>,
    /// Write one row per stats instant per side (the plotted estimates and truths) to this CSV file.
    #[arg(long, value_name = "FILE.csv")]
    pub series: Option<PathBuf>,
    /// Write every datagram of the session to this pcapng file for Wireshark: per lane a sent and
    /// a delivered interface, IPv4/UDP, a comment per packet (README, "Wireshark"). A simulated
    /// recording is re-run with its endpoints tapped (virtual timestamps); a peer, proxy or UDP
    /// recording is written from the bytes its sockets wrote and read (real timestamps).
    #[arg(long, value_name = "FILE.pcapng", conflicts_with_all = ["packets", "messages", "series", "events"])]
    pub pcapng: Option<PathBuf>,
    /// Write every event as JSON lines (one event per line, the format README describes), the
    /// format a game streams into the window.
    #[arg(long, value_name = "FILE.jsonl")]
    pub events: Option<PathBuf>,
    /// With files: print one JSON object saying what was written (paths, rows, bytes). Without
    /// files: print every table as JSON on stdout instead.
    #[arg(long)]
    pub json: bool,
    /// Keep only the packet and message rows this display filter matches (README, "Display
    /// filters"), the rows the window lists for it: `--filter 'fate == dropped && seq > 900'`.
    /// Chunk rows are left out (a filter runs over messages); the series are written whole. A
    /// table asked for whose rows the filter does not apply to is refused.
    #[arg(long, value_name = "EXPR", conflicts_with_all = ["pcapng", "events"])]
    pub filter: Option<String>,
    /// Open a recording whose checksum is missing or does not match (a hand-edited file).
    #[arg(long)]
    pub no_verify: bool,
}

/// The closing section of `--help`: each table's columns (from the tables themselves), fates,
/// units, lanes and the JSON shapes.
fn tables_help() -> String {
    let mut out = String::from("Tables (columns in order):");
    for t in Table::ALL {
        out.push_str(&format!("\n  {:8}  {}", t.name(), t.columns().join(",")));
    }
    out.push_str(
        "\n\n\
packets: one row per link send, client by client, each in send order. side is the sender (A or
  B), dir a_to_b or b_to_a, link_id the run-unique send id (seq wraps). fate is the link's: delivered, duplicated (first copy
  delivered, the link made another), dropped_loss, dropped_burst, dropped_queue, dropped_mtu, or
  in_flight (the recording ended first). carried summarises the packet's contents.
messages: one row per message in queue order (kind reliable or unreliable), then one per chunk
  (kind chunk: sends counts slice sends). latency_ms is queued to first delivery to the receiving
  application; spurious_resends are sends made after the peer already had it; refused is
  send_queue_full, too_large or closed.
series: one row per stats instant per side: the endpoint's estimates and the ground truth beside
  them (rtt_raw_ms: the last RTT sample since the side's previous row; budget: the mean of the ticks
  since it; flow_good: 1 good, 0 bad, empty without flow control).

Times (_s) are seconds and delays (_ms) milliseconds, both exact to the microsecond; measured
figures keep 6 significant digits; empty fields mean not (yet) happened. Every table ends with
client, the client whose connection the row is of (numbered from 1; 1 in a run of one client),
and lane, the strategy of the recording the row belongs to: an A/B session exports both lanes
into the same files. CSV follows RFC 4180 (quoted only where needed, \\n line ends); the files are
written beside their targets and renamed into place once all of them are complete.

--json without files prints {\"packets\":[...],\"messages\":[...],\"series\":[...]} on one line, each
row an object keyed by column (empty fields null). With files it prints what was written:
{\"session\":...,\"lanes\":[...],\"packets\":{\"path\":...,\"rows\":N,\"bytes\":B},...}.",
    );
    out
}

/// `--pcapng`: writes the session's datagrams as a capture (`capture::write_pcapng`).
fn pcapng_main(args: &ExportArgs, path: &std::path::Path) -> ExitCode {
    let comparable =
        |p: &std::path::Path| std::fs::canonicalize(p).or_else(|_| std::path::absolute(p)).unwrap_or_else(|_| p.into());
    if comparable(path) == comparable(&args.session) {
        return fail(format!("{}: is the session being exported; choose another file for --pcapng", path.display()));
    }
    let verify = if args.no_verify { session::Verify::Skip } else { session::Verify::Checksum };
    let s = match session::load_verified(&args.session, verify) {
        Ok(s) => s,
        Err(e) => return fail(format!("{e:#}")),
    };
    let file = args.session.display();
    if !s.has_events() {
        return fail(format!("{file}: a scenario without events; record it first (ackscope run {file} --out S.ron)"));
    }
    match capture::write_pcapng(&s, path) {
        Ok(summary) => print(&summary, args.json, |s| s.to_text(path)),
        Err(e) => fail(format!("{file}: {e:#}")),
    }
}

/// The recordings of a loaded session, one per lane.
fn recordings(s: Session) -> Vec<Recording> {
    Recording::lanes_from_session(s, &Progress::new()).expect("an uncancelled progress")
}

/// Loads the session and writes the tables asked for (or prints them all as JSON).
pub fn main(args: ExportArgs) -> ExitCode {
    let targets =
        ExportTargets { packets: args.packets.clone(), messages: args.messages.clone(), series: args.series.clone() };
    if let Some(path) = &args.pcapng {
        return pcapng_main(&args, path);
    }
    if targets.is_empty() && !args.json && args.events.is_none() {
        return fail(
            "nothing to export: give --packets, --messages or --series FILE.csv, --events FILE.jsonl, --pcapng FILE.pcapng, or --json \
             (see --help)",
        );
    }
    if args.events.as_ref().is_some_and(|e| same_file(e, &args.session)) {
        return fail(format!(
            "{}: is the session being exported; choose another file for --events",
            args.session.display()
        ));
    }
    if session::jsonl::is_stream_path(&args.session) {
        return match session::jsonl::load(&args.session) {
            Ok(stream) => {
                let source = args.session.display().to_string();
                let recs = Recording::lanes_from_stream(stream, &source, &Progress::new()).expect("never cancelled");
                write_out(&args, targets, recs)
            }
            Err(e) => fail(format!("{e:#}")),
        };
    }
    if let Err(e) = targets.check(Some(&args.session)) {
        return fail(format!("{e:#}"));
    }
    let verify = if args.no_verify { session::Verify::Skip } else { session::Verify::Checksum };
    let s = match session::load_verified(&args.session, verify) {
        Ok(s) => s,
        Err(e) => return fail(format!("{e:#}")),
    };
    if !s.has_events() {
        let file = args.session.display();
        return fail(format!("{file}: a scenario without events; record it first (ackscope run {file} --out S.ron)"));
    }
    write_out(&args, targets, recordings(s))
}

/// The lanes of `recs` with the rows `filter` keeps (a kind it does not apply to keeps none),
/// or why a table asked for cannot be filtered.
fn filtered_lanes<'a>(recs: &'a [Recording], text: &str, targets: &ExportTargets) -> Result<Vec<Lane<'a>>, String> {
    let filters = PerKind::compile(text).map_err(|e| format!("--filter: {e}"))?;
    if targets.packets.is_some() {
        if let Err(e) = &filters.packets {
            return Err(format!("--filter with --packets: {e}"));
        }
    }
    if targets.messages.is_some() {
        if let Err(e) = &filters.messages {
            return Err(format!("--filter with --messages: {e}"));
        }
    }
    let mut lanes = export::lanes(recs);
    for lane in &mut lanes {
        // The rows export writes are the lane's first client's, as the window shows by default.
        let view = Shown::from(lane.rec);
        lane.keep = Keep {
            packets: Some(filters.packets.as_ref().map_or(Vec::new(), |f| matching_rows(view, f))),
            messages: Some(filters.messages.as_ref().map_or(Vec::new(), |f| matching_rows(view, f))),
        };
    }
    Ok(lanes)
}

/// Writes the tables and the event stream asked for from `recs`.
fn write_out(args: &ExportArgs, targets: ExportTargets, recs: Vec<Recording>) -> ExitCode {
    if let Some(text) = &args.filter {
        let lanes = match filtered_lanes(&recs, text, &targets) {
            Ok(l) => l,
            Err(e) => return fail(e),
        };
        if targets.is_empty() {
            let mut out = std::io::stdout().lock();
            return match export::write_lanes_json(&lanes, &mut out) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => fail(format!("cannot write the output: {e}")),
                _ => ExitCode::SUCCESS,
            };
        }
        return match export::write_lanes(&lanes, &targets, None) {
            Ok(summary) => {
                let summary = ExportSummary { session: Some(args.session.clone()), ..summary };
                print(&summary, args.json, ExportSummary::to_text)
            }
            Err(e) => fail(format!("{e:#}")),
        };
    }
    if let Some(path) = &args.events {
        let lanes: Vec<_> = recs.iter().map(|r| (&r.info, r.events())).collect();
        match session::jsonl_export::save_events(&lanes, path) {
            Ok(n) if targets.is_empty() && args.json => {
                let out = serde_json::json!({"session": args.session, "events": {"path": path, "rows": n}});
                return print(&out, true, |_| String::new());
            }
            Ok(n) if targets.is_empty() => {
                return print(&n, false, |n| format!("{n} events written to {}", path.display()))
            }
            Ok(_) => {}
            Err(e) => return fail(format!("{e:#}")),
        }
    }
    if targets.is_empty() {
        let mut out = std::io::stdout().lock();
        return match export::write_json(&recs, &mut out) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => fail(format!("cannot write the output: {e}")),
            _ => ExitCode::SUCCESS,
        };
    }
    match export::write_files(&recs, &targets, None) {
        Ok(summary) => {
            let summary = ExportSummary { session: Some(args.session.clone()), ..summary };
            print(&summary, args.json, ExportSummary::to_text)
        }
        Err(e) => fail(format!("{e:#}")),
    }
}

/// True when `a` and `b` name the same file (as far as can be told without it existing).
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    let c =
        |p: &std::path::Path| std::fs::canonicalize(p).or_else(|_| std::path::absolute(p)).unwrap_or(p.to_path_buf());
    c(a) == c(b)
}
