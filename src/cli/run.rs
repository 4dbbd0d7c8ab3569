//! `ackscope run`: a scenario headless on virtual time, as fast as the CPU allows.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::common::{fail, print, ScenarioArgs};
use super::values::strategies_help;
use crate::report::{self, RunReport};
use ackscope_protocol::SimTime;

#[derive(Args, Debug)]
#[command(after_help = strategies_help())]
pub struct RunArgs {
    #[command(flatten)]
    pub base: ScenarioArgs,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    pub json: bool,
    /// Save the recorded session (header, action log, events; both lanes of an A/B session) to
    /// this file.
    #[arg(long, value_name = "SESSION.ron")]
    pub out: Option<PathBuf>,
    /// Let `--out` replace an existing file (without it an existing file is refused before the
    /// run, so a recording is never replaced by accident).
    #[arg(long, requires = "out")]
    pub force: bool,
}

/// Runs the scenario or session file (a recording is re-run exactly, every lane), saves it with
/// `--out`, prints the report.
pub fn main(args: RunArgs) -> ExitCode {
    if let Some(out) = args.out.as_ref().filter(|p| !args.force && p.exists()) {
        return fail(format!("{}: already exists; pass --force to replace it", out.display()));
    }
    let file = match args.base.load_session() {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    if file.has_events() && args.base.seconds.is_none() {
        match file.udp_from() {
            Some(SimTime::ZERO) => eprintln!(
                "ackscope: note: this session was recorded over UDP on real time; the re-run simulates it \
                 in-process, so its events differ"
            ),
            Some(t) => eprintln!(
                "ackscope: note: this session ran over UDP on real time from {:.3} s (a transport change); the \
                 re-run reproduces the events before it and simulates the rest in-process, so those differ",
                t.as_secs_f64()
            ),
            None => {}
        }
    }
    // A run from a scenario keeps no event in memory: the report is folded as they come and
    // `--out` written as they come.
    let rep = match report::run_session(&file, args.base.seconds, args.out.as_deref()) {
        Ok(r) => r,
        Err(e) => return fail(format!("{e:#}")),
    };
    print(&rep, args.json, RunReport::to_text)
}
