//! `ackscope peer`: one endpoint on real time over real UDP against another process.

use std::path::PathBuf;
use std::process::ExitCode;

use ackscope_protocol::{LinkConfig, Scenario, Side, Strategy};
use anyhow::{bail, Result};
use clap::{Args, ValueEnum};

use super::common::{fail, print};
use super::values::strategies_help;
use crate::params::overrides;
use crate::report::peer::{self, PeerReport};
use crate::runtime::udp::{resolve, EndpointOptions};
use crate::session;

/// Which endpoint of the scenario this process plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SideArg {
    A,
    B,
}

impl SideArg {
    pub fn side(self) -> Side {
        match self {
            SideArg::A => Side::A,
            SideArg::B => Side::B,
        }
    }
}

/// The closing section of `peer --help`: how the link and the report work, an example, and the
/// strategies `--set strategy=NAME` accepts.
fn peer_help() -> String {
    const NOTES: &str = "\
The lossy link is applied where packets arrive: this process runs the scenario's link for the \
direction INTO it (link.b_to_a for side a, link.a_to_b for side b), so run the other end with the \
other --side. The link is transparent (no delay, no loss) unless a SCENARIO file or --set link... asks for \
impairment. Time is real (microseconds since this process started its run).

With --json it prints one object shaped like `ackscope run --json`, describing this endpoint only: \
`sent`/`acked` are its own packets, `link_dropped`/`delivered`/`duplicated` its receiving link; \
ground truth that needs the other process (false_acks, true_rtt_ms, true_loss_percent) is null. \
Record both sides with --out and join them with `ackscope summary A.ron B.ron` for the whole \
truth. A peer that heard nothing from its partner says so and exits with status 1.

Example (two terminals):
  ackscope peer --side a --bind 127.0.0.1:4000 --connect 127.0.0.1:4001 --seconds 10 --out a.ron
  ackscope peer --side b --bind 127.0.0.1:4001 --connect 127.0.0.1:4000 --seconds 10 --out b.ron
  ackscope summary a.ron b.ron";
    format!("{NOTES}\n\n{}", strategies_help())
}

/// Arguments of `ackscope peer`.
#[derive(Args, Debug)]
#[command(after_help = peer_help())]
pub struct PeerArgs {
    /// Scenario (or session) file to start from, as `ackscope run` takes it: its strategy,
    /// workload and link apply (the link for the direction into this process); without one the
    /// default scenario with a transparent link.
    pub scenario: Option<PathBuf>,
    /// Local address to bind, e.g. 127.0.0.1:4000.
    #[arg(long, value_name = "ADDR")]
    pub bind: String,
    /// Address of the other endpoint; datagrams from anywhere else are ignored.
    #[arg(long, value_name = "ADDR")]
    pub connect: String,
    /// Real seconds to run before printing the summary.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// Override any scenario parameter by dotted name (as `ackscope run`), e.g.
    /// link.loss_percent=10; repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Which endpoint of the scenario to play (side a sends the chunk in chunk strategies).
    #[arg(long, value_enum, default_value_t = SideArg::A)]
    pub side: SideArg,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    pub json: bool,
    /// Send opaque payloads under the reliable.io header and ack every well-formed packet, to run
    /// against any other implementation of that header (strategy acks). Payloads above 1024 bytes
    /// (--set payload_bytes=N, up to 16384) go out as reliable.io fragments, and the peer's
    /// fragments are reassembled: a packet is acked once every fragment arrived.
    #[arg(long)]
    pub raw: bool,
    /// Accept ack.ack_expiry_ms=0 (acks never expire: false acks after a wrap), refused without it.
    #[arg(long)]
    pub allow_false_acks: bool,
    /// Record this side (its scenario, events and live changes) as a session file; run the
    /// other side with its own --out and join the two with `ackscope summary A.ron B.ron`.
    #[arg(long, value_name = "SESSION.ron")]
    pub out: Option<PathBuf>,
    /// Let `--out` replace an existing file (without it an existing file is refused before the
    /// run starts).
    #[arg(long, requires = "out")]
    pub force: bool,
}

/// The simulated link of a peer when nothing asks for impairment: no delay, no loss, nothing
/// dropped for size (the real network between the processes is the link). `--set link...`
/// settings apply on top of it.
pub fn transparent_link() -> LinkConfig {
    LinkConfig { latency_ms: 0.0, loss_percent: 0.0, mtu_bytes: 9000, ..LinkConfig::default() }
}

/// The scenario from the SCENARIO file (or the default with a transparent link) and `--set`
/// overrides, checked against `--raw`.
fn scenario_from(args: &PeerArgs) -> Result<Scenario> {
    let mut s = match &args.scenario {
        Some(p) => crate::session::load_verified(p, crate::session::Verify::Checksum)?.scenario,
        None => {
            let mut s = Scenario::default();
            (s.link.a_to_b, s.link.b_to_a) = (transparent_link(), transparent_link());
            s
        }
    };
    overrides::apply_all(&mut s, &args.set)?;
    if args.raw {
        // Raw mode is the acks strategy whatever the default; only an explicit other choice is refused.
        let explicit = args.set.iter().any(|a| a.split_once('=').is_some_and(|(k, _)| k.trim() == "strategy"));
        if explicit && s.strategy != Strategy::Acks {
            bail!("--raw sends opaque payloads (strategy acks); it cannot run strategy {}", s.strategy.name());
        }
        s.strategy = Strategy::Acks;
    }
    crate::params::false_acks::check(&s, &[], args.allow_false_acks)?;
    crate::fit::links::resolve(&mut s)?;
    Ok(s)
}

/// The endpoint the arguments describe, or why they cannot.
fn options(args: &PeerArgs) -> Result<EndpointOptions> {
    if !(args.seconds.is_finite() && args.seconds > 0.0) {
        bail!("--seconds must be a positive number, got {}", args.seconds);
    }
    let scenario = scenario_from(args)?;
    let bind = resolve(&args.bind)?;
    let connect = resolve(&args.connect)?;
    Ok(EndpointOptions { side: args.side.side(), scenario, raw: args.raw, bind, connect, seconds: Some(args.seconds) })
}

/// Runs the endpoint for `--seconds`, writes its recording (`--out`) and prints its report; a
/// partner never heard from is an error (exit status 1) after the report.
pub fn main(args: PeerArgs) -> ExitCode {
    if let Some(out) = args.out.as_ref().filter(|p| !args.force && p.exists()) {
        return fail(format!("{}: already exists; pass --force to replace it", out.display()));
    }
    let run = match options(&args).and_then(|o| peer::run(o, args.out.is_some())) {
        Ok(r) => r,
        Err(e) => return fail(format!("{e:#}")),
    };
    let mut report = run.report;
    if let (Some(out), Some(s)) = (&args.out, &run.session) {
        match session::save(s, out) {
            Ok(bytes) => report.session_bytes = Some(bytes),
            Err(e) => return fail(format!("{e:#}")),
        }
    }
    let code = print(&report, args.json, PeerReport::to_text);
    if report.datagrams_received == 0 {
        eprintln!(
            "ackscope: peer {}: nothing arrived from {} in {:.1} s: is the other `ackscope peer` running \
             with --connect {}?",
            report.side, report.connect, report.simulated_seconds, report.bind
        );
        return ExitCode::from(1);
    }
    code
}
