//! `ackscope [PATH]`: the window, opened on a session to replay or a scenario to run live.

use std::path::PathBuf;
use std::process::ExitCode;

use ackscope_protocol::Strategy;
use clap::Args;

use super::common::{fail, scenario_from};
use crate::ui::{AckscopeApp, Launch, Tab};

/// The window's options (the top level of the command line, without a subcommand).
#[derive(Args, Debug)]
pub struct WindowArgs {
    /// A session to replay or a scenario to run live in the window.
    pub path: Option<PathBuf>,
    /// Window: open on this tab (overview, messages, slices, packets, summary).
    #[arg(long, value_name = "TAB")]
    pub tab: Option<String>,
    /// Window: run a second strategy beside the first on the same link trace (A/B).
    #[arg(long, value_name = "STRATEGY")]
    pub ab: Option<String>,
    /// Window: start without the first-run hints.
    #[arg(long)]
    pub no_intro: bool,
    /// Overrides for the scenario the window starts with (NAME=VALUE, dotted names).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
}

/// Opens the window and returns when it closes.
pub fn main(args: WindowArgs) -> ExitCode {
    let scenario = match scenario_from(None, &args.set, None) {
        Ok((s, _)) => s,
        Err(e) => return fail(e),
    };
    let tab = match args.tab.as_deref().map(Tab::parse) {
        Some(None) => return fail(format!("unknown tab '{}'", args.tab.unwrap_or_default())),
        Some(Some(t)) => Some(t),
        None => None,
    };
    let ab = match &args.ab {
        Some(name) => match Strategy::parse(name) {
            Ok(s) => Some(s),
            Err(e) => return fail(e),
        },
        None => None,
    };
    let launch = Launch { path: args.path, tab, ab, no_intro: args.no_intro };
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default().with_inner_size([1280.0, 800.0]).with_title("ackscope"),
        ..Default::default()
    };
    let result = eframe::run_native(
        "ackscope",
        options,
        Box::new(move |cc| Ok(Box::new(AckscopeApp::new(cc, scenario, launch)))),
    );
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(format!("cannot open the window: {e}")),
    }
}
