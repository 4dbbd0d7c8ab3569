//! `ackscope compare`: resend policies side by side over a grid of loss and latency.

use std::process::ExitCode;

use ackscope_protocol::registry;
use clap::Args;

use super::common::{fail, print, ScenarioArgs};
use crate::report::compare::{self, Variant};

#[derive(Args, Debug)]
#[command(after_help = variants_help())]
pub struct CompareArgs {
    #[command(flatten)]
    pub base: ScenarioArgs,
    /// Loss percentages to compare (comma separated).
    #[arg(long, value_delimiter = ',', default_values_t = [1.0, 5.0, 20.0])]
    pub loss: Vec<f64>,
    /// One-way latencies in ms to compare (comma separated).
    #[arg(long, value_delimiter = ',', default_values_t = [25.0, 100.0])]
    pub latency: Vec<f64>,
    /// Print a JSON array of run objects instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also run the delivery-notification (dnm) and rellikt strategies.
    #[arg(long)]
    pub all: bool,
}

/// Runs every variant at every (loss, latency) pair and prints the table or the JSON rows.
pub fn main(args: CompareArgs) -> ExitCode {
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
