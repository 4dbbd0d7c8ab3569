//! `ackscope export`: a recorded session's packets, messages and series as CSV files, or as
//! JSON on stdout.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::common::{fail, print};
use crate::model::Recording;
use crate::report::export::{self, ExportSummary, ExportTargets, Table};
use crate::session::{self, Progress, Session};

#[derive(Args, Debug)]
#[command(after_help = tables_help())]
pub struct ExportArgs {
    /// A session file written by `run --out` or saved from the window.
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
    /// With files: print one JSON object saying what was written (paths, rows, bytes). Without
    /// files: print every table as JSON on stdout instead.
    #[arg(long)]
    pub json: bool,
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
packets: one row per link send, in send order. side is the sender (A or B), dir a_to_b or b_to_a,
  link_id the run-unique send id (seq wraps). fate is the link's: delivered, duplicated (first copy
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

/// The recordings of a loaded session, one per lane.
fn recordings(s: Session) -> Vec<Recording> {
    Recording::lanes_from_session(s, &Progress::new()).expect("an uncancelled progress")
}

/// Loads the session and writes the tables asked for (or prints them all as JSON).
pub fn main(args: ExportArgs) -> ExitCode {
    let targets =
        ExportTargets { packets: args.packets.clone(), messages: args.messages.clone(), series: args.series.clone() };
    if targets.is_empty() && !args.json {
        return fail("nothing to export: give --packets, --messages or --series FILE.csv, or --json (see --help)");
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
    let recs = recordings(s);
    if targets.is_empty() {
        let mut out = std::io::stdout().lock();
        return match export::write_json(&recs, &mut out) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => fail(format!("cannot write the output: {e}")),
            _ => ExitCode::SUCCESS,
        };
    }
    match export::write_files(&recs, &targets, None) {
        Ok(summary) => {
            let summary = ExportSummary { session: Some(args.session), ..summary };
            print(&summary, args.json, ExportSummary::to_text)
        }
        Err(e) => fail(format!("{e:#}")),
    }
}
