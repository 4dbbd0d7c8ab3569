//! Clap parsers whose valid values come from a list kept elsewhere: the protocol's strategy
//! registry, the window's tabs.
//!
//! A clap `ValueEnum` would need the names written out again here. [`Listed`] instead calls the
//! type's own parse (so its spelling rules and its error, which names the valid values, stay the
//! type's) and hands clap the list's values, which `--help` shows.

use std::ffi::OsStr;

use ackscope_protocol::{registry, Strategy};
use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Arg, Command};

/// A value parsed by `parse`, whose valid values `values` lists for `--help`.
#[derive(Clone)]
pub struct Listed<T> {
    parse: fn(&str) -> Result<T, String>,
    values: fn() -> Vec<PossibleValue>,
}

impl<T> Listed<T> {
    pub fn new(parse: fn(&str) -> Result<T, String>, values: fn() -> Vec<PossibleValue>) -> Self {
        Self { parse, values }
    }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Listed<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &Command, arg: Option<&Arg>, value: &OsStr) -> Result<T, clap::Error> {
        // clap's parser for a plain function: "invalid value 'X' for '--flag <NAME>': REASON".
        self.parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.values)().into_iter()))
    }
}

/// A strategy by name ([`Strategy::parse`]); `--help` lists every registry row with its label and
/// summary.
pub fn strategy() -> Listed<Strategy> {
    Listed::new(Strategy::parse, || {
        registry::all().map(|row| PossibleValue::new(row.strategy.name()).help(describe(row))).collect()
    })
}

/// "label: summary" of a registry row, as `--help` shows it.
fn describe(row: &registry::StrategyInfo) -> String {
    format!("{}: {}", row.label, row.summary)
}

/// The strategies `--set strategy=NAME` accepts, one per line with its label and summary: the
/// closing section of `--help` for commands that take a scenario.
pub fn strategies_help() -> String {
    let width = Strategy::all().map(|s| s.name().len()).max().unwrap_or(0);
    let mut out = String::from("Strategies (--set strategy=NAME):");
    for row in registry::all() {
        out.push_str(&format!("\n  {:width$}  {}", row.strategy.name(), describe(row)));
    }
    out
}
