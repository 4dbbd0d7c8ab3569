//! `ackscope sweep`: every combination of the varied parameters, per strategy and seed, on virtual
//! time on all cores, one row per point and the latency-overhead frontier.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use ackscope_protocol::Strategy;
use clap::Args;

use super::common::{fail, print, ScenarioArgs};
use crate::report::sweep::{self, parse_vary, SweepSpec};

#[derive(Args, Debug)]
#[command(after_help = SWEEP_HELP)]
pub struct SweepArgs {
    #[command(flatten)]
    pub base: ScenarioArgs,
    /// A parameter to vary: NAME=START:END:STEP (numbers, END included) or NAME=V1,V2,...;
    /// repeatable (every combination runs). Names and ranges are the Parameters table's.
    #[arg(long = "vary", value_name = "NAME=START:END:STEP")]
    pub vary: Vec<String>,
    /// Message strategies to sweep (comma separated).
    #[arg(long, value_delimiter = ',', default_values_t = ["glenn".to_string(), "ue4".to_string(), "hybrid".to_string()])]
    pub strategies: Vec<String>,
    /// Seeds per point: seed k of every point is the scenario's seed + k (the same link trace
    /// for every strategy and setting).
    #[arg(long, default_value_t = 3)]
    pub seeds: u32,
    /// Worker threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Print a JSON array of rows instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write the rows as CSV to this file.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

const SWEEP_HELP: &str = "\
A parameter named after a strategy's settings (glenn.*, ue4.*, hybrid.*) varies that strategy's \
points only (hybrid also follows glenn's packet settings, not glenn's resend settings); the rest \
(link.*, workload.*, ...) varies every strategy.
Each row: means across seeds of p50/p95/p99 latency (queued -> delivered, ms), bytes per delivered \
message, sends per message and spurious resends; p99_ms_spread = largest - smallest seed; \
pareto = on the (p99, bytes per message) frontier of the whole sweep.
Example: ackscope sweep --set link.loss_percent=5 --vary glenn.resend_delay_ms=0:200:50 \
--vary hybrid.redundant_copies=0,1,2 --seconds 120";

/// Parses the arguments, runs the sweep with a progress bar on a terminal, prints the rows.
pub fn main(args: SweepArgs) -> ExitCode {
    let (base, changes) = match args.base.load() {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let mut vary = Vec::new();
    for v in &args.vary {
        match parse_vary(v) {
            Ok(x) => vary.push(x),
            Err(e) => return fail(e),
        }
    }
    if let Some(dup) = vary.iter().enumerate().find(|(i, v)| vary[..*i].iter().any(|w| w.name == v.name)) {
        return fail(format!("--vary names '{}' twice", dup.1.name));
    }
    let mut strategies = Vec::new();
    for name in &args.strategies {
        match Strategy::parse(name.trim()) {
            Ok(s) if !strategies.contains(&s) => strategies.push(s),
            Ok(_) => {}
            Err(e) => return fail(format!("--strategies: {e}")),
        }
    }
    let spec = SweepSpec { base, changes, seconds: args.base.seconds(), vary, strategies, seeds: args.seeds };
    let total = match sweep::check(&spec).and_then(|points| refuse_false_acks(&spec, &points, &args).map(|_| points)) {
        Ok(points) => points.len(),
        Err(e) => return fail(format!("{e:#}")),
    };
    let progress = Progress::new(total, std::io::stderr().is_terminal());
    let cancel = AtomicBool::new(false);
    let rows = match sweep::run(&spec, args.threads, &cancel, &|_, _| progress.point_done()) {
        Ok(Some(rows)) => rows,
        Ok(None) => return fail("the sweep was cancelled"),
        Err(e) => return fail(format!("{e:#}")),
    };
    progress.finish();
    if let Some(path) = &args.csv {
        if let Err(e) = std::fs::write(path, sweep::to_csv(&spec, &rows)) {
            return fail(format!("cannot write {}: {e}", path.display()));
        }
    }
    print(&rows, args.json, |rows| sweep::to_table(&spec, rows))
}

/// A one-line progress bar on stderr, redrawn as points finish (only on a terminal).
struct Progress {
    total: usize,
    done: AtomicUsize,
    shown: bool,
    start: Instant,
}

impl Progress {
    fn new(total: usize, shown: bool) -> Self {
        Self { total, done: AtomicUsize::new(0), shown, start: Instant::now() }
    }

    fn point_done(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if self.shown {
            let width = 30;
            let filled = done * width / self.total.max(1);
            let bar: String = "#".repeat(filled) + &" ".repeat(width - filled);
            let secs = self.start.elapsed().as_secs_f64();
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r[{bar}] {done}/{} points, {secs:.1} s", self.total);
            let _ = err.flush();
        }
    }

    fn finish(&self) {
        if self.shown {
            let _ = writeln!(std::io::stderr());
        }
    }
}

/// Refuses a point whose scenario never expires acks (`--vary ack.ack_expiry_ms=0,...`) unless
/// `--allow-false-acks` (the base was checked when it loaded).
fn refuse_false_acks(spec: &SweepSpec, points: &[sweep::Point], args: &SweepArgs) -> anyhow::Result<()> {
    for p in points {
        let s = sweep::scenario_of(&spec.base, p, 0)?;
        crate::params::false_acks::check(&s, &[], args.base.allow_false_acks)?;
    }
    Ok(())
}
