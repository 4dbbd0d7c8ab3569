//! What several subcommands share: the scenario arguments, the one-line failure, printing a report.

use std::fmt::Display;
use std::path::PathBuf;
use std::process::ExitCode;

use ackscope_protocol::{Scenario, Step};
use clap::Args;
use serde::Serialize;

use crate::params::{self, overrides};
use crate::report::export::cells::round_significant;
use crate::session::{self, Session, Verify};

/// What every virtual-time command starts from: a scenario, how long, which seed, overrides.
#[derive(Args, Debug)]
pub struct ScenarioArgs {
    /// Scenario (or session) file to start from; the built-in default scenario without one.
    pub scenario: Option<PathBuf>,
    /// Virtual seconds to simulate per run (message strategies then drain) [default: 60]. A
    /// recorded session given without it is re-run exactly: its actions, for its duration.
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Seed for every random decision (same seed and scenario = same events).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Override any scenario parameter by dotted name, e.g. link.loss_percent=10 (both directions)
    /// or link.a_to_b.latency_ms=80 (one); repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Open a recording whose checksum is missing or does not match (a hand-edited file).
    #[arg(long)]
    pub no_verify: bool,
    /// Accept ack.ack_expiry_ms=0 (acks never expire, so stale receipts can ack new packets
    /// after sequence numbers wrap: false acks), refused without it.
    #[arg(long)]
    pub allow_false_acks: bool,
}

impl ScenarioArgs {
    /// `--seconds`, or the default.
    pub fn seconds(&self) -> f64 {
        self.seconds.unwrap_or(crate::report::DEFAULT_SECONDS)
    }

    /// The scenario and the action log recorded in the file, or a one-line reason.
    pub fn load(&self) -> Result<(Scenario, Vec<Step>), String> {
        let s = self.load_session()?;
        Ok((s.scenario, s.actions))
    }

    /// The whole file (the default scenario without one) with `--set` and `--seed` applied to
    /// its scenario, every value checked against the parameter table, or a one-line reason.
    pub fn load_session(&self) -> Result<Session, String> {
        if let Some(s) = self.seconds.filter(|s| !(s.is_finite() && *s > 0.0 && *s <= MAX_SECONDS)) {
            return Err(format!("--seconds must be a positive number up to {MAX_SECONDS}, got {s}"));
        }
        let verify = if self.no_verify { Verify::Skip } else { Verify::Checksum };
        let s = session_from(self.scenario.as_ref(), &self.set, self.seed, verify).map_err(|e| format!("{e:#}"))?;
        params::false_acks::check(&s.scenario, &s.actions, self.allow_false_acks).map_err(|e| format!("{e:#}"))?;
        Ok(s)
    }
}

/// Most virtual seconds one run may last (a week): beyond, a run is a mistake, not a test.
pub const MAX_SECONDS: f64 = 7.0 * 24.0 * 3600.0;

/// The session in `file` (a session header around the default scenario without a file) with
/// `set` overrides and `seed` applied to its scenario and the result checked against the
/// parameter table.
pub fn session_from(
    file: Option<&PathBuf>,
    set: &[String],
    seed: Option<u64>,
    verify: Verify,
) -> anyhow::Result<Session> {
    let mut s = match file {
        Some(p) => session::load_verified(p, verify)?,
        None => Session::scenario_only(Scenario::default()),
    };
    overrides::apply_all(&mut s.scenario, set)?;
    if let Some(seed) = seed {
        s.scenario.seed = seed;
    }
    params::validate::scenario(&s.scenario)?;
    crate::fit::links::resolve(&mut s.scenario)?;
    Ok(s)
}

/// The scenario in `file` (the default one without a file) with `set` overrides and `seed`
/// applied, and the action log recorded in the file.
pub fn scenario_from(
    file: Option<&PathBuf>,
    set: &[String],
    seed: Option<u64>,
) -> anyhow::Result<(Scenario, Vec<Step>)> {
    let s = session_from(file, set, seed, Verify::Checksum)?;
    Ok((s.scenario, s.actions))
}

/// Reports bad input: `ackscope: REASON` on one line of stderr, exit status 2.
///
/// Scripts rely on both; a reason with several lines is cut to its first.
pub fn fail(reason: impl Display) -> ExitCode {
    let text = reason.to_string();
    eprintln!("ackscope: {}", text.lines().next().unwrap_or("error"));
    ExitCode::from(2)
}

/// Significant digits kept in JSON figures: a 100 ms RTT prints as `100.892`, not
/// `100.89190292358398` (the estimators work in f32; the tail digits were noise). The same as
/// exported tables keep.
const JSON_SIGNIFICANT_DIGITS: usize = crate::report::export::cells::SIGNIFICANT_DIGITS;

/// `value` as one JSON line, every float rounded to [`JSON_SIGNIFICANT_DIGITS`].
pub fn json_line<T: Serialize>(value: &T) -> serde_json::Result<String> {
    let mut tree = serde_json::to_value(value)?;
    round_floats(&mut tree);
    serde_json::to_string(&tree)
}

fn round_floats(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap_or(0.0);
            // Rounded to significant digits; serde_json then prints the shortest decimal that
            // reads back as that value.
            let rounded = round_significant(x, JSON_SIGNIFICANT_DIGITS);
            if let Some(r) = serde_json::Number::from_f64(rounded) {
                *n = r;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(round_floats),
        Value::Object(fields) => fields.values_mut().for_each(round_floats),
        _ => {}
    }
}

/// Prints `value` as one JSON line with `--json` (floats rounded, see [`json_line`]), else its
/// human `text`.
pub fn print<T: Serialize>(value: &T, json: bool, text: impl FnOnce(&T) -> String) -> ExitCode {
    if json {
        match json_line(value) {
            Ok(s) => emit(&s),
            Err(e) => fail(e),
        }
    } else {
        emit(&text(value))
    }
}

/// Writes `text` and a newline to stdout. A reader that went away (`ackscope run | head`) ends
/// the output quietly instead of panicking as `println!` does; other write errors are reported.
fn emit(text: &str) -> ExitCode {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(format!("cannot write the output: {e}")),
    }
}

/// What a clap error becomes: help and version print as clap has them (exit 0); anything else is
/// bad input, reported by [`fail`] with clap's first line, which carries the reason.
pub fn parse_failed(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let text = e.to_string();
    let line = text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ");
    fail(format!("{line} (see --help)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_floats_keep_six_significant_digits_and_integers_stay_exact() {
        let v = serde_json::json!({"rtt_ms": 100.89190292358398, "tiny": 0.0057123456, "n": 18446744073709551615u64,
            "list": [4.815059645801571, 30.1, 0.0]});
        assert_eq!(
            json_line(&v).unwrap(),
            r#"{"rtt_ms":100.892,"tiny":0.00571235,"n":18446744073709551615,"list":[4.81506,30.1,0.0]}"#
        );
    }
}
