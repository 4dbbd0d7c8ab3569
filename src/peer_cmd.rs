//! `ackscope peer`: one endpoint in this process, on real time and a real UDP socket, against an
//! endpoint in another process (another `ackscope peer`, or any reliable.io-format implementation
//! with `--raw`).

use std::process::ExitCode;
use std::time::Instant;

use ackscope_protocol::{Scenario, Side, Strategy};
use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;

use crate::overrides;
use crate::runtime::udp::{resolve, EndpointOptions, UdpEndpoint};
use crate::runtime::udp_truth::EventTally;

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

/// Arguments of `ackscope peer`.
#[derive(Args, Debug)]
#[command(after_help = "\
The lossy link is applied where packets arrive: this process runs the scenario's link for the \
direction INTO it (link.b_to_a for side a, link.a_to_b for side b), so run the other end with the \
other --side. Time is real (microseconds since this process started its run).

With --json it prints one object shaped like `ackscope run --json`, describing this endpoint only: \
`sent`/`acked` are its own packets, `link_dropped`/`delivered`/`duplicated` its receiving link; \
ground truth that needs the other process (false_acks, true_rtt_ms, true_loss_percent) is null.

Example (two terminals):
  ackscope peer --side a --bind 127.0.0.1:4000 --connect 127.0.0.1:4001 --seconds 10 --json
  ackscope peer --side b --bind 127.0.0.1:4001 --connect 127.0.0.1:4000 --seconds 10 --json")]
pub struct PeerArgs {
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
    /// against any other implementation of that header (strategy acks).
    #[arg(long)]
    pub raw: bool,
}

/// Packet counters of one endpoint (`packets` in `ackscope peer --json`).
///
/// Same names as [`ackscope_protocol::PacketTotals`], but one process only knows one end, so:
/// `sent`, `acked`, `duplicate_acks` are about this endpoint's own sends (it records which send
/// carried each sequence, so an ack repeated for the same send is detected locally);
/// `link_dropped`, `delivered`, `duplicated` are about the link it runs on its receive side (the
/// direction into it; summing both processes' reports gives the two-way totals of `run`);
/// `malformed` and `received` are datagrams it rejected or accepted. `false_acks` is always null:
/// whether an acked send was delivered is known only to the other process's link.
#[derive(Debug, Clone, Serialize)]
pub struct PeerPackets {
    pub sent: u64,
    pub link_dropped: u64,
    pub delivered: u64,
    pub duplicated: u64,
    pub acked: u64,
    pub false_acks: Option<u64>,
    pub duplicate_acks: Option<u64>,
    pub malformed: u64,
    pub received: u64,
}

/// Estimates of one endpoint (`estimates` in `ackscope peer --json`).
///
/// `rtt_ms` and `loss_percent` are this endpoint's own estimates (final smoothed RTT; mean loss
/// estimate after the first 2 s). Their truths, `true_rtt_ms` (both directions' link delay) and
/// `true_loss_percent` (drops on this endpoint's outgoing direction), live partly or wholly in the
/// other process: null. What this process does know is its incoming link's mean delay and drop
/// share, reported as `incoming_link_delay_ms` and `incoming_link_loss_percent` (null before any
/// datagram arrived).
#[derive(Debug, Clone, Serialize)]
pub struct PeerEstimates {
    pub rtt_ms: f64,
    pub true_rtt_ms: Option<f64>,
    pub loss_percent: f64,
    pub true_loss_percent: Option<f64>,
    pub incoming_link_delay_ms: Option<f64>,
    pub incoming_link_loss_percent: Option<f64>,
}

/// What `ackscope peer --json` prints: [`crate::report::RunReport`]'s shape for one endpoint.
#[derive(Debug, Clone, Serialize)]
pub struct PeerReport {
    pub seed: u64,
    pub strategy: String,
    /// `"a"` or `"b"`.
    pub side: String,
    /// The bound local address and the other endpoint's.
    pub bind: String,
    pub connect: String,
    /// Seconds of run time (real time since the endpoint started).
    pub simulated_seconds: f64,
    pub wall_seconds: f64,
    pub packets: PeerPackets,
    pub estimates: PeerEstimates,
    /// Events this endpoint produced.
    pub events: u64,
    /// Always null: a real-time peer stops at `--seconds` and does not drain (`run` reports the
    /// virtual time it spent draining reliable messages). The optional per-strategy sections of
    /// `run` (`reliable`, `snapshots`, `ue4`, chunk figures) are left out: each pairs one side's
    /// sends with the other side's deliveries, which one process cannot see.
    pub drain_seconds: Option<f64>,
    /// Datagrams the socket refused to send (typically while the other process was not up).
    pub send_errors: u64,
}

/// The scenario from `--set` overrides, checked against `--raw`.
fn scenario_from(args: &PeerArgs) -> Result<Scenario> {
    let mut s = Scenario::default();
    overrides::apply_all(&mut s, &args.set)?;
    if args.raw {
        // Raw mode is the acks strategy whatever the default; only an explicit other choice is refused.
        let explicit = args.set.iter().any(|a| a.split_once('=').is_some_and(|(k, _)| k.trim() == "strategy"));
        if explicit && s.strategy != Strategy::Acks {
            bail!("--raw sends opaque payloads (strategy acks); it cannot run strategy {}", s.strategy.name());
        }
        s.strategy = Strategy::Acks;
    }
    Ok(s)
}

/// Runs the endpoint for `args.seconds` and returns its report.
pub fn run_peer(args: &PeerArgs) -> Result<PeerReport> {
    if !(args.seconds.is_finite() && args.seconds > 0.0) {
        bail!("--seconds must be a positive number, got {}", args.seconds);
    }
    let scenario = scenario_from(args)?;
    let bind = resolve(&args.bind)?;
    let connect = resolve(&args.connect)?;
    let side = args.side.side();
    let start = Instant::now();
    let opts =
        EndpointOptions { side, scenario: scenario.clone(), raw: args.raw, bind, connect, seconds: Some(args.seconds) };
    let mut ep = UdpEndpoint::spawn(opts, || {})?;
    let mut tally = EventTally::new();
    for batch in ep.batches_until_end() {
        tally.observe(&batch.events);
    }
    let exit = ep.stop();
    let ran_s = if exit.ran_to_end { args.seconds } else { ep.now().as_secs_f64() };
    let dir_in = side.other().outgoing();
    Ok(PeerReport {
        seed: scenario.seed,
        strategy: scenario.strategy.name().to_string(),
        side: format!("{side:?}").to_lowercase(),
        bind: ep.local_addr().to_string(),
        connect: connect.to_string(),
        simulated_seconds: ran_s,
        wall_seconds: start.elapsed().as_secs_f64(),
        packets: PeerPackets {
            sent: tally.sent(side),
            link_dropped: tally.link_dropped(dir_in),
            delivered: tally.link_delivered(dir_in),
            duplicated: tally.duplicated(dir_in),
            acked: tally.acked(side),
            false_acks: None,
            duplicate_acks: Some(tally.duplicate_acks()),
            malformed: tally.malformed(),
            received: tally.received(side),
        },
        estimates: PeerEstimates {
            rtt_ms: tally.rtt_ms(),
            true_rtt_ms: None,
            loss_percent: tally.loss_percent(),
            true_loss_percent: None,
            incoming_link_delay_ms: tally.mean_link_delay_ms(dir_in),
            incoming_link_loss_percent: tally.link_loss_percent(dir_in),
        },
        events: tally.events(),
        drain_seconds: None,
        send_errors: exit.send_errors,
    })
}

impl PeerReport {
    /// A short human summary.
    pub fn to_text(&self) -> String {
        let p = &self.packets;
        let e = &self.estimates;
        let opt = |v: Option<f64>, unit: &str| v.map(|v| format!("{v:.2} {unit}")).unwrap_or_else(|| "-".into());
        format!(
            "ackscope peer {} ({} -> {}): strategy {}, seed {}, {:.1} s\n\
             sent {} packets, {} acked ({} duplicate acks); received {} ({} malformed)\n\
             incoming link: {} delivered, {} dropped ({}), {} duplicated, mean delay {}\n\
             estimates: RTT {:.1} ms, loss {:.2} %\n\
             events: {}, send errors: {}",
            self.side,
            self.bind,
            self.connect,
            self.strategy,
            self.seed,
            self.simulated_seconds,
            p.sent,
            p.acked,
            p.duplicate_acks.unwrap_or(0),
            p.received,
            p.malformed,
            p.delivered,
            p.link_dropped,
            opt(e.incoming_link_loss_percent, "%"),
            p.duplicated,
            opt(e.incoming_link_delay_ms, "ms"),
            e.rtt_ms,
            e.loss_percent,
            self.events,
            self.send_errors
        )
    }
}

/// `ackscope peer`: runs, prints, and exits non-zero with a one-line reason on bad input.
pub fn run(args: PeerArgs) -> ExitCode {
    let fail = |msg: String| {
        eprintln!("ackscope: {}", msg.lines().next().unwrap_or("error"));
        ExitCode::from(2)
    };
    let rep = match run_peer(&args) {
        Ok(r) => r,
        Err(e) => return fail(format!("{e:#}")),
    };
    if args.json {
        match serde_json::to_string(&rep) {
            Ok(s) => println!("{s}"),
            Err(e) => return fail(e.to_string()),
        }
    } else {
        println!("{}", rep.to_text());
    }
    ExitCode::SUCCESS
}
