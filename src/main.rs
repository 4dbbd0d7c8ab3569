//! Command-line entry: `ackscope` opens the window; `ackscope run|summary|compare|sweep|peer|proxy|export|fit`
//! run headless. Parsing and dispatch only: the commands live in `ackscope::cli`.

use std::process::ExitCode;

use ackscope::cli::{self, Cli, Cmd};
use clap::Parser;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return cli::common::parse_failed(e),
    };
    match cli.command {
        Some(Cmd::Run(args)) => cli::run::main(args),
        Some(Cmd::Peer(args)) => cli::peer::main(args),
        Some(Cmd::Proxy(args)) => cli::proxy::main(args),
        Some(Cmd::Summary(args)) => cli::summary::main(args),
        Some(Cmd::Compare(args)) => cli::compare::main(args),
        Some(Cmd::Sweep(args)) => cli::sweep::main(args),
        Some(Cmd::Export(args)) => cli::export::main(args),
        Some(Cmd::Fit(args)) => cli::fit::main(args),
        None => cli::gui::main(cli.window),
    }
}
