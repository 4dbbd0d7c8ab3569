//! `ackscope [PATH]`: the window, opened on a session to replay or a scenario to run live.

use std::path::PathBuf;
use std::process::ExitCode;

use ackscope_protocol::Strategy;
use clap::builder::PossibleValue;
use clap::Args;

use super::common::{fail, scenario_from};
use super::values::{self, Listed};
use crate::app::{Launch, Tab};
use crate::window::AckscopeApp;

/// The window's options (the top level of the command line, without a subcommand).
#[derive(Args, Debug)]
pub struct WindowArgs {
    /// A session to replay or a scenario to run live in the window.
    pub path: Option<PathBuf>,
    /// Window: open on this tab.
    #[arg(long, value_name = "TAB", value_parser = tab())]
    pub tab: Option<Tab>,
    /// Window: run a second strategy beside the first on the same link trace (A/B).
    #[arg(long, value_name = "STRATEGY", value_parser = values::strategy())]
    pub ab: Option<Strategy>,
    /// Window: start without the first-run hints.
    #[arg(long)]
    pub no_intro: bool,
    /// Overrides for the scenario the window starts with (NAME=VALUE, dotted names).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Window: start in the dark or light theme (kept as the setting, like the top bar's button).
    #[arg(long, value_name = "THEME", value_parser = ["dark", "light"])]
    pub theme: Option<String>,
    /// Window: a second saved session to show beside PATH in the Compare and Summary tabs (as
    /// the top bar's *Compare with...*).
    #[arg(long, value_name = "B.ron")]
    pub compare_with: Option<PathBuf>,
    /// Window: open recordings whose checksum is missing or does not match (hand-edited files).
    #[arg(long)]
    pub no_verify: bool,
}

/// Opens the window and returns when it closes.
pub fn main(args: WindowArgs) -> ExitCode {
    let scenario = match scenario_from(None, &args.set, None) {
        Ok((s, _)) => s,
        Err(e) => return fail(e),
    };
    if args.no_verify {
        crate::session::skip_verification_from_now_on();
    }
    let dark = args.theme.as_deref().map(|t| t == "dark");
    let launch = Launch {
        path: args.path,
        tab: args.tab,
        ab: args.ab,
        no_intro: args.no_intro,
        dark,
        compare_with: args.compare_with,
    };
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

/// The tabs `--tab` accepts, with the names [`Tab::parse`] reads.
///
/// `Tab` offers no list of its tabs today, so this is the one place that lists them (the match
/// makes a new tab a compile error here, so it is not forgotten; a test checks every name parses to
/// its tab); when the ui has a tab registry, this function is what switches to it.
fn tab_names() -> [(Tab, &'static str); 9] {
    use Tab::*;
    let tabs = [
        (Overview, "overview"),
        (Clients, "clients"),
        (Messages, "messages"),
        (Slices, "slices"),
        (Packets, "packets"),
        (Anomalies, "anomalies"),
        (Summary, "summary"),
        (Compare, "compare"),
        (Tune, "tune"),
    ];
    for (t, _) in tabs {
        match t {
            Overview | Clients | Messages | Slices | Packets | Anomalies | Summary | Compare | Tune => {}
        }
    }
    tabs
}

/// A tab by name ([`Tab::parse`]), listing [`tab_names`] in `--help` and in the error.
fn tab() -> Listed<Tab> {
    Listed::new(
        |name| {
            Tab::parse(name).ok_or_else(|| {
                let valid: Vec<&str> = tab_names().iter().map(|(_, n)| *n).collect();
                format!("unknown tab '{name}' (valid: {})", valid.join(", "))
            })
        },
        || tab_names().into_iter().map(|(_, n)| PossibleValue::new(n)).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_tab_name_parses_to_its_tab() {
        for (tab, name) in tab_names() {
            assert_eq!(Tab::parse(name), Some(tab), "{name}");
        }
    }

    #[test]
    fn window_flags_parse_to_a_strategy_and_a_tab() {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(["ackscope", "--ab", "ue4", "--tab", "Packets", "x.ron"]).unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.window.ab, Some(Strategy::Ue4));
        assert_eq!(cli.window.tab, Some(Tab::Packets));
        assert_eq!(cli.window.path, Some(PathBuf::from("x.ron")));
        assert_eq!(cli.window.theme, None);
    }

    #[test]
    fn theme_takes_dark_or_light_only() {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(["ackscope", "--theme", "light", "--no-intro"]).unwrap();
        assert_eq!(cli.window.theme.as_deref(), Some("light"));
        assert!(cli.window.no_intro);
        assert!(crate::cli::Cli::try_parse_from(["ackscope", "--theme", "blue"]).is_err());
    }
}
