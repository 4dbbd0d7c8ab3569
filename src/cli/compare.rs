//! `ackscope compare`: resend policies side by side over a grid of loss and latency; or, given
//! two recordings (`compare A.ron B.ron`), those two side by side with a verdict and its reasons.

use std::path::PathBuf;
use std::process::ExitCode;

use ackscope_protocol::registry;
use clap::Args;

use super::common::{fail, print, ScenarioArgs};
use crate::report::compare::{self, Variant};
use crate::report::compare_sessions;
use crate::session::Verify;

#[derive(Args, Debug)]
#[command(after_help = variants_help())]
pub struct CompareArgs {
    #[command(flatten)]
    pub base: ScenarioArgs,
    /// A second recording (session .ron or event stream .jsonl): compare the first file's lanes
    /// with this one's (README, "Comparing two saved sessions") instead of running the grid.
    #[arg(value_name = "B.ron")]
    pub other: Option<PathBuf>,
    /// Loss percentages to compare (comma separated) [default: 1,5,20].
    #[arg(long, value_delimiter = ',')]
    pub loss: Vec<f64>,
    /// One-way latencies in ms to compare (comma separated) [default: 25,100].
    #[arg(long, value_delimiter = ',')]
    pub latency: Vec<f64>,
    /// Print a JSON array of run objects instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also run the delivery-notification (dnm) and rellikt strategies.
    #[arg(long)]
    pub all: bool,
}

/// The grid's loss percentages when none are given.
const DEFAULT_LOSS: [f64; 3] = [1.0, 5.0, 20.0];
/// The grid's one-way latencies when none are given.
const DEFAULT_LATENCY: [f64; 2] = [25.0, 100.0];

/// Runs every variant at every (loss, latency) pair and prints the table or the JSON rows; with
/// two files, compares the two recordings.
pub fn main(mut args: CompareArgs) -> ExitCode {
    if let Some(other) = args.other.take() {
        return two_recordings(&args, &other);
    }
    if args.loss.is_empty() {
        args.loss = DEFAULT_LOSS.to_vec();
    }
    if args.latency.is_empty() {
        args.latency = DEFAULT_LATENCY.to_vec();
    }
    if let Some(bad) = args.loss.iter().chain(&args.latency).find(|v| !(v.is_finite() && **v >= 0.0)) {
        return fail(format!("loss and latency values must be non-negative numbers, got {bad}"));
    }
    for (name, values) in [("link.loss_percent", &args.loss), ("link.latency_ms", &args.latency)] {
        for v in values {
            if let Err(e) = crate::params::get(name).check_value(name, Some(*v)) {
                return fail(e);
            }
        }
    }
    let (scenario, _) = match args.base.load() {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let variants = if args.all { &Variant::ALL[..] } else { &Variant::DEFAULT[..] };
    let rows = match compare::compare(&scenario, args.base.seconds(), &args.loss, &args.latency, variants) {
        Ok(rows) => rows,
        Err(e) => return fail(format!("{e:#}")),
    };
    print(&rows, args.json, |rows| compare::to_table(rows))
}

/// `compare A.ron B.ron`: the grid's options mean nothing here, so they are refused by name.
fn two_recordings(args: &CompareArgs, other: &std::path::Path) -> ExitCode {
    let b = &args.base;
    let grid_only = [
        ("--loss", !args.loss.is_empty()),
        ("--latency", !args.latency.is_empty()),
        ("--all", args.all),
        ("--seconds", b.seconds.is_some()),
        ("--seed", b.seed.is_some()),
        ("--set", !b.set.is_empty()),
        ("--allow-false-acks", b.allow_false_acks),
    ];
    if let Some((flag, _)) = grid_only.iter().find(|(_, given)| *given) {
        return fail(format!(
            "{flag} applies to the grid form (`compare [SCENARIO.ron]`); two recordings are compared as they were recorded"
        ));
    }
    let Some(first) = &b.scenario else { return fail("compare A.ron B.ron: two files") };
    let verify = if b.no_verify { Verify::Skip } else { Verify::Checksum };
    match compare_sessions::compare_files(first, other, verify) {
        Ok(c) => print(&c, args.json, compare_sessions::SessionsComparison::to_text),
        Err(e) => fail(format!("{e:#}")),
    }
}

/// The closing section of `compare --help`: each variant (a table row label) and the registry
/// strategy it runs.
fn variants_help() -> String {
    let width = Variant::ALL.iter().map(|v| v.label().len()).max().unwrap_or(0);
    let mut out = String::from("Variants and the strategy each runs ([--all]: only with --all):");
    for v in Variant::ALL {
        let row = registry::info(v.strategy());
        let all_only = if Variant::DEFAULT.contains(&v) { "" } else { " [--all]" };
        out.push_str(&format!("\n  {:width$}  {} ({}){all_only}", v.label(), row.strategy.name(), row.label));
    }
    out
}
