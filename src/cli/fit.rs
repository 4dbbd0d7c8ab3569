//! `ackscope fit`: a link fitted to a capture (or a recorded session), per direction, with how
//! well it imitates the capture; `--out` writes it as a link file for `--set link.file=...`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;

use super::common::{fail, print};
use crate::capture::records;
use crate::fit::{self, links, report};

#[derive(Args, Debug)]
pub struct FitArgs {
    /// A capture with both sides of the link (pcapng or pcap: ackscope's export, captures at
    /// both ends merged, or one path that saw each datagram before and after the link), or a
    /// recorded session file.
    pub capture: PathBuf,
    /// Write the fitted link here (RON), for `--set link.file=LINK.ron` or the window's Link panel.
    #[arg(long, value_name = "LINK.ron")]
    pub out: Option<PathBuf>,
    /// Print one JSON object: per direction the fitted values under the link's parameter names
    /// and the distances between the capture and the model.
    #[arg(long)]
    pub json: bool,
    /// Seeds of the fitted link simulated over the capture's send times for the comparison.
    #[arg(long, default_value_t = fit::CHECK_SEEDS, value_parser = clap::value_parser!(u32).range(2..=100))]
    pub seeds: u32,
}

pub fn main(args: FitArgs) -> ExitCode {
    let start = Instant::now();
    let records = match records::load(&args.capture).and_then(|r| r.require_fates(&args.capture)) {
        Ok(r) => r,
        Err(e) => return fail(format!("{e:#}")),
    };
    let fitted = fit::fit(&records, args.seeds);
    if fitted.dirs.iter().all(Option::is_none) {
        return fail(format!(
            "{}: too few datagrams with a known fate in either direction to fit a link (at least {} in one)",
            args.capture.display(),
            fit::MIN_PACKETS
        ));
    }
    let mut written = None;
    if let Some(out) = &args.out {
        let file = links::LinkFile {
            a_to_b: fitted.dirs[0].as_ref().map(|d| d.link),
            b_to_a: fitted.dirs[1].as_ref().map(|d| d.link),
        };
        match links::write_link_file(out, &file, &report::file_comment(&fitted)) {
            Ok(bytes) => written = Some((out.display().to_string(), bytes)),
            Err(e) => return fail(format!("{e:#}")),
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let out = written.as_ref().map(|(p, b)| (p.as_str(), *b));
    let value = report::to_json(&fitted, args.seeds, seconds, out.map(|(p, _)| p));
    print(&value, args.json, |_| report::to_text(&fitted, seconds, out))
}
