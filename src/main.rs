//! Command-line entry: `ackscope` opens the window; `ackscope run` runs headless.

use std::process::ExitCode;

use ackscope::{overrides, report};
use ackscope_protocol::Scenario;
use clap::{Args, Parser, Subcommand};

/// Network inspector and protocol testbed for real-time game networking.
#[derive(Parser, Debug)]
#[command(name = "ackscope", version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Cmd>,
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
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Virtual seconds to simulate.
    #[arg(long, default_value_t = 60.0)]
    seconds: f64,
    /// Seed for every random decision (same seed and scenario = same events).
    #[arg(long)]
    seed: Option<u64>,
    /// Override any scenario parameter by dotted name, e.g. link.loss_percent=10 (both directions)
    /// or link.a_to_b.latency_ms=80 (one); repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    json: bool,
}

fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("ackscope: {msg}");
    ExitCode::from(2)
}

fn scenario_from(set: &[String], seed: Option<u64>) -> anyhow::Result<Scenario> {
    let mut s = Scenario::default();
    overrides::apply_all(&mut s, set)?;
    if let Some(seed) = seed {
        s.seed = seed;
    }
    Ok(s)
}

fn run_cmd(args: RunArgs) -> ExitCode {
    if !(args.seconds.is_finite() && args.seconds > 0.0) {
        return fail(format!("--seconds must be a positive number, got {}", args.seconds));
    }
    let scenario = match scenario_from(&args.set, args.seed) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let rep = report::run(&scenario, args.seconds).report;
    if args.json {
        match serde_json::to_string(&rep) {
            Ok(s) => println!("{s}"),
            Err(e) => return fail(e),
        }
    } else {
        println!("{}", rep.to_text());
    }
    ExitCode::SUCCESS
}

fn gui(set: &[String]) -> ExitCode {
    let scenario = match scenario_from(set, None) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default().with_inner_size([1280.0, 800.0]).with_title("ackscope"),
        ..Default::default()
    };
    let result = eframe::run_native(
        "ackscope",
        options,
        Box::new(move |cc| Ok(Box::new(ackscope::ui::AckscopeApp::new(cc, scenario)))),
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
        None => gui(&cli.set),
    }
}
