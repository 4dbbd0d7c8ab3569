//! Command-line entry: `ackscope` opens the window; `ackscope run` runs headless.

use std::process::ExitCode;

use std::path::PathBuf;

use ackscope::{overrides, report, session};
use ackscope_protocol::Scenario;
use clap::{Args, Parser, Subcommand};

/// Network inspector and protocol testbed for real-time game networking.
#[derive(Parser, Debug)]
#[command(name = "ackscope", version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Cmd>,
    /// A session to replay or a scenario to run live in the window.
    path: Option<PathBuf>,
    /// Window: open on this tab (overview, messages, slices, packets, summary).
    #[arg(long, value_name = "TAB")]
    tab: Option<String>,
    /// Window: run a second strategy beside the first on the same link trace (A/B).
    #[arg(long, value_name = "STRATEGY")]
    ab: Option<String>,
    /// Window: start without the first-run hints.
    #[arg(long)]
    no_intro: bool,
    /// Overrides for the scenario the window starts with (NAME=VALUE, dotted names).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run a scenario headless on virtual time, as fast as the CPU allows, and print a summary.
    Run(RunArgs),
    /// Run one endpoint on real time over real UDP against another process, and print a summary.
    ///
    /// The other end is another `ackscope peer`, or with --raw any reliable.io-format implementation.
    Peer(ackscope::peer_cmd::PeerArgs),
    /// Print the summary of a recorded session (the same figures `run` prints).
    Summary(SummaryArgs),
    /// Run Glenn redundancy (fixed 100 ms, RTT x 1.25, every packet) and UE4 Nak resend on the
    /// same seed, link trace and workload over loss 1/5/20 % and one-way latency 25/100 ms.
    Compare(CompareArgs),
}

/// What every virtual-time command starts from: a scenario, how long, which seed, overrides.
#[derive(Args, Debug)]
struct ScenarioArgs {
    /// Scenario (or session) file to start from; the built-in default scenario without one.
    scenario: Option<PathBuf>,
    /// Virtual seconds to simulate per run (message strategies then drain).
    #[arg(long, default_value_t = 60.0)]
    seconds: f64,
    /// Seed for every random decision (same seed and scenario = same events).
    #[arg(long)]
    seed: Option<u64>,
    /// Override any scenario parameter by dotted name, e.g. link.loss_percent=10 (both directions)
    /// or link.a_to_b.latency_ms=80 (one); repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
}

impl ScenarioArgs {
    /// The scenario and its recorded changes, or a one-line reason.
    fn load(&self) -> Result<(Scenario, Vec<session::Change>), String> {
        if !(self.seconds.is_finite() && self.seconds > 0.0) {
            return Err(format!("--seconds must be a positive number, got {}", self.seconds));
        }
        scenario_from(self.scenario.as_ref(), &self.set, self.seed).map_err(|e| format!("{e:#}"))
    }
}

#[derive(Args, Debug)]
struct CompareArgs {
    #[command(flatten)]
    base: ScenarioArgs,
    /// Loss percentages to compare (comma separated).
    #[arg(long, value_delimiter = ',', default_values_t = [1.0, 5.0, 20.0])]
    loss: Vec<f64>,
    /// One-way latencies in ms to compare (comma separated).
    #[arg(long, value_delimiter = ',', default_values_t = [25.0, 100.0])]
    latency: Vec<f64>,
    /// Print a JSON array of run objects instead of the table.
    #[arg(long)]
    json: bool,
    /// Also run the delivery-notification (dnm) and rellikt strategies.
    #[arg(long)]
    all: bool,
}

#[derive(Args, Debug)]
struct SummaryArgs {
    /// A session file written by `run --out` or saved from the window.
    session: PathBuf,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    base: ScenarioArgs,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    json: bool,
    /// Save the recorded session (header, changes, events) to this file.
    #[arg(long, value_name = "SESSION.ron")]
    out: Option<PathBuf>,
}

fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("ackscope: {msg}");
    ExitCode::from(2)
}

fn scenario_from(
    file: Option<&PathBuf>,
    set: &[String],
    seed: Option<u64>,
) -> anyhow::Result<(Scenario, Vec<session::Change>)> {
    let (mut s, changes) = match file {
        Some(p) => {
            let sess = session::load(p)?;
            (sess.scenario, sess.changes)
        }
        None => (Scenario::default(), Vec::new()),
    };
    overrides::apply_all(&mut s, set)?;
    if let Some(seed) = seed {
        s.seed = seed;
    }
    Ok((s, changes))
}

fn print_report(rep: &report::RunReport, json: bool) -> ExitCode {
    if json {
        match serde_json::to_string(rep) {
            Ok(s) => println!("{s}"),
            Err(e) => return fail(e),
        }
    } else {
        println!("{}", rep.to_text());
    }
    ExitCode::SUCCESS
}

fn run_cmd(args: RunArgs) -> ExitCode {
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
    print_report(&rep, args.json)
}

fn compare_cmd(args: CompareArgs) -> ExitCode {
    if let Some(bad) = args.loss.iter().chain(&args.latency).find(|v| !(v.is_finite() && **v >= 0.0)) {
        return fail(format!("loss and latency values must be non-negative numbers, got {bad}"));
    }
    let (scenario, _) = match args.base.load() {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let rows = ackscope::compare::compare(
        &scenario,
        args.base.seconds,
        &args.loss,
        &args.latency,
        if args.all { &ackscope::compare::Variant::ALL[..] } else { &ackscope::compare::Variant::DEFAULT[..] },
    );
    if args.json {
        match serde_json::to_string(&rows) {
            Ok(s) => println!("{s}"),
            Err(e) => return fail(e),
        }
    } else {
        println!("{}", ackscope::compare::to_table(&rows));
    }
    ExitCode::SUCCESS
}

fn summary_cmd(args: SummaryArgs) -> ExitCode {
    match session::load(&args.session) {
        Ok(s) => print_report(&report::from_session(&s), args.json),
        Err(e) => fail(format!("{e:#}")),
    }
}

fn gui(cli: Cli) -> ExitCode {
    let scenario = match scenario_from(None, &cli.set, None) {
        Ok((s, _)) => s,
        Err(e) => return fail(e),
    };
    let tab = match cli.tab.as_deref().map(ackscope::ui::Tab::parse) {
        Some(None) => return fail(format!("unknown tab '{}'", cli.tab.unwrap_or_default())),
        Some(Some(t)) => Some(t),
        None => None,
    };
    let ab = match &cli.ab {
        Some(name) => match ackscope_protocol::Strategy::parse(name) {
            Ok(s) => Some(s),
            Err(e) => return fail(e),
        },
        None => None,
    };
    let launch = ackscope::ui::Launch { path: cli.path, tab, ab, no_intro: cli.no_intro };
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default().with_inner_size([1280.0, 800.0]).with_title("ackscope"),
        ..Default::default()
    };
    let result = eframe::run_native(
        "ackscope",
        options,
        Box::new(move |cc| Ok(Box::new(ackscope::ui::AckscopeApp::new(cc, scenario, launch)))),
    );
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(format!("cannot open the window: {e}")),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // One line: clap's first line carries the reason.
            let text = e.to_string();
            let line = text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ");
            return fail(format!("{line} (see --help)"));
        }
    };
    match cli.command {
        Some(Cmd::Run(args)) => run_cmd(args),
        Some(Cmd::Peer(args)) => ackscope::peer_cmd::run(args),
        Some(Cmd::Summary(args)) => summary_cmd(args),
        Some(Cmd::Compare(args)) => compare_cmd(args),
        None => gui(cli),
    }
}
