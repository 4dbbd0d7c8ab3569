//! `ackscope run`: a scenario headless on virtual time, as fast as the CPU allows.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::common::{fail, print, ScenarioArgs};
use super::values::strategies_help;
use crate::report::{self, RunReport};
use crate::session;

#[derive(Args, Debug)]
#[command(after_help = strategies_help())]
pub struct RunArgs {
    #[command(flatten)]
    pub base: ScenarioArgs,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    pub json: bool,
    /// Save the recorded session (header, changes, events) to this file.
    #[arg(long, value_name = "SESSION.ron")]
    pub out: Option<PathBuf>,
}

/// Runs the scenario (replaying a session's changes), saves it with `--out`, prints the report.
pub fn main(args: RunArgs) -> ExitCode {
    let (scenario, changes) = match args.base.load() {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let finished = match report::run_with_changes(&scenario, args.base.seconds, &changes) {
        Ok(f) => f,
        Err(e) => return fail(format!("{e:#}")),
    };
    let mut rep = finished.report;
    if let Some(out) = &args.out {
        match session::save(&finished.session, out) {
            Ok(bytes) => rep.session_bytes = Some(bytes),
            Err(e) => return fail(format!("{e:#}")),
        }
    }
    print(&rep, args.json, RunReport::to_text)
}
