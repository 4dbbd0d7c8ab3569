//! `ackscope summary`: the report of a recorded session, recomputed from its events.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::common::{fail, print};
use crate::report::{self, RunReport};
use crate::session;

#[derive(Args, Debug)]
pub struct SummaryArgs {
    /// A session file written by `run --out` or saved from the window.
    pub session: PathBuf,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    pub json: bool,
    /// Open a recording whose checksum is missing or does not match (a hand-edited file).
    #[arg(long)]
    pub no_verify: bool,
}

/// Loads the session and prints its report (the same figures `run` prints; both lanes of an A/B
/// session).
pub fn main(args: SummaryArgs) -> ExitCode {
    let verify = if args.no_verify { session::Verify::Skip } else { session::Verify::Checksum };
    match session::load_verified(&args.session, verify) {
        Ok(s) => print(&report::from_session(&s), args.json, RunReport::to_text),
        Err(e) => fail(format!("{e:#}")),
    }
}
