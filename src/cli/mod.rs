//! The command line: clap definitions and one file per subcommand.
//!
//! `main.rs` parses [`Cli`] and dispatches to a subcommand's `main`. Each subcommand's file holds
//! its arguments and its body, which calls into [`crate::report`] (or the window) and prints;
//! [`common`] holds what several share (the scenario arguments, `fail`, printing a report) and
//! [`values`] the parsers whose valid values come from the protocol's strategy registry, so
//! `--help` and the error for a bad value list them without a copy of the list here.
//!
//! Everything a user scripts against is defined here and must not drift: subcommands, flags,
//! defaults, exit status 2 with one `ackscope: ...` line on stderr for bad input.

pub mod common;
pub mod compare;
pub mod export;
pub mod fit;
pub mod gui;
pub mod peer;
pub mod proxy;
pub mod run;
pub mod summary;
pub mod sweep;
pub mod values;

use clap::{Parser, Subcommand};

/// Network inspector and protocol testbed for real-time game networking.
#[derive(Parser, Debug)]
#[command(name = "ackscope", version, about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Cmd>,
    // Without a subcommand: what the window opens with.
    #[command(flatten)]
    pub window: gui::WindowArgs,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Run a scenario headless on virtual time, as fast as the CPU allows, and print a summary.
    Run(run::RunArgs),
    /// Run one endpoint on real time over real UDP against another process, and print a summary.
    ///
    /// The other end is another `ackscope peer`, or with --raw any reliable.io-format implementation.
    Peer(peer::PeerArgs),
    /// Relay UDP between game clients and a server through a seeded, scripted link per client,
    /// recording every datagram's fate, and print a report per client and direction.
    Proxy(proxy::ProxyArgs),
    /// Print the summary of a recorded session (the same figures `run` prints).
    Summary(summary::SummaryArgs),
    /// Run Glenn redundancy (fixed 100 ms, RTT x 1.25, every packet) and UE4 Nak resend on the
    /// same seed, link trace and workload over loss 1/5/20 % and one-way latency 25/100 ms.
    Compare(compare::CompareArgs),
    /// Vary parameters over ranges for several strategies and seeds on virtual time, on every
    /// core, and print each point's latency and bytes per message with the frontier.
    Sweep(sweep::SweepArgs),
    /// Write a recorded session's packets, messages and series as CSV files (or print them as JSON).
    Export(export::ExportArgs),
    /// Fit a link to a capture with both sides (or a recorded session), per direction, and show
    /// how well the model imitates it; --out writes it for --set link.file=LINK.ron.
    Fit(fit::FitArgs),
}
