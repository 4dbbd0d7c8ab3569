//! `--vary` specs: a parameter from the one parameter table and the values a sweep gives it,
//! checked against the table's range before anything runs.

use crate::params::{self, Kind};

/// Most runs (points x seeds) one sweep may have: about an hour of one core at 120 simulated
/// seconds a run; beyond it a typo (a step of 0.001 instead of 1) is far likelier than intent.
pub const MAX_RUNS: u64 = 20_000;
/// Most values one `--vary` may give.
pub const MAX_VALUES: usize = 1_000;

/// One varied parameter: its dotted name and its values as `--set` takes them.
#[derive(Debug, Clone, PartialEq)]
pub struct Vary {
    pub name: String,
    pub values: Vec<String>,
}

/// Parses `NAME=START:END:STEP` (numbers, END included) or `NAME=V1,V2,...` (any kind), with the
/// name from the parameter table and every value in its range; otherwise one line naming the
/// spec as given, the reason, and what the parameter takes (from the table), so the user can
/// fix it without opening README.
pub fn parse_vary(spec: &str) -> Result<Vary, String> {
    parse(spec).map_err(|reason| {
        let reason = reason.strip_prefix("--vary: ").unwrap_or(&reason);
        let name = spec.split_once('=').map_or(spec, |(n, _)| n).trim();
        let reason = reason.strip_prefix(&format!("--vary {name}: ")).unwrap_or(reason);
        let takes = params::find(name)
            .filter(|_| !reason.contains("valid from") && !reason.contains("from ") && !reason.contains("one of"))
            .map(|p| {
                let unit = if p.unit.is_empty() { String::new() } else { format!(" {}", p.unit) };
                format!(" ({name} takes {}{unit})", p.values_text())
            })
            .unwrap_or_default();
        format!("--vary '{spec}': {reason}{takes}")
    })
}

fn parse(spec: &str) -> Result<Vary, String> {
    let usage = "--vary expects NAME=START:END:STEP or NAME=V1,V2,...";
    let (name, rhs) = spec.split_once('=').ok_or_else(|| format!("{usage}, got '{spec}'"))?;
    let name = name.trim();
    if name.is_empty() || rhs.trim().is_empty() {
        return Err(format!("{usage}, got '{spec}'"));
    }
    match name {
        "seed" => return Err("--vary cannot vary the seed: --seeds N runs seeds 0..N of every point".into()),
        "strategy" => return Err("--vary cannot vary the strategy: name them with --strategies".into()),
        _ => {}
    }
    let param = params::find(name)
        .ok_or_else(|| format!("--vary: unknown parameter '{name}' (README's Parameters lists them)"))?;
    let raw = if rhs.contains(':') { range_values(name, param, rhs)? } else { list_values(rhs)? };
    let mut values: Vec<String> = Vec::with_capacity(raw.len());
    for v in raw {
        let v = check_value(name, param, &v)?;
        if !values.contains(&v) {
            values.push(v);
        }
    }
    Ok(Vary { name: name.to_string(), values })
}

fn list_values(rhs: &str) -> Result<Vec<String>, String> {
    let values: Vec<String> = rhs.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err(format!("--vary: empty value in the list '{rhs}'"));
    }
    if values.len() > MAX_VALUES {
        return Err(format!("--vary: {} values; at most {MAX_VALUES}", values.len()));
    }
    Ok(values)
}

fn range_values(name: &str, param: &params::Param, rhs: &str) -> Result<Vec<String>, String> {
    let Kind::Number { .. } = param.kind else {
        return Err(format!("--vary: '{name}' is not a number; list its values (NAME=V1,V2,...)"));
    };
    let parts: Vec<&str> = rhs.split(':').collect();
    let nums: Vec<f64> = parts.iter().filter_map(|p| p.trim().parse::<f64>().ok()).filter(|x| x.is_finite()).collect();
    if parts.len() != 3 || nums.len() != 3 {
        return Err(format!("--vary {name}: a range is START:END:STEP, three numbers, got '{rhs}'"));
    }
    let (start, end, step) = (nums[0], nums[1], nums[2]);
    if step <= 0.0 {
        return Err(format!("--vary {name}: the step must be greater than 0, got {step}"));
    }
    if end < start {
        return Err(format!("--vary {name}: empty range, END {end} is below START {start}"));
    }
    // Within a billionth of a step of the end counts as reaching it (0.1 steps add up unevenly).
    let steps = ((end - start) / step + 1e-9).floor();
    if steps + 1.0 > MAX_VALUES as f64 {
        return Err(format!("--vary {name}: {} values; at most {MAX_VALUES} (raise the step)", steps + 1.0));
    }
    Ok((0..=steps as u64).map(|k| tidy(start + k as f64 * step)).collect())
}

/// A generated value as text, without the float noise of repeated steps (`0.30000000000000004`).
fn tidy(x: f64) -> String {
    let rounded = (x * 1e9).round() / 1e9;
    format!("{rounded}")
}

/// A value checked against the table: in range (whole numbers where the parameter takes them),
/// one of the choices, or true/false; returned as `--set` takes it.
fn check_value(name: &str, param: &params::Param, value: &str) -> Result<String, String> {
    match param.kind {
        Kind::Number { .. } | Kind::OptionalNumber { .. } => {
            if value.parse::<f64>().is_err() {
                return Err(format!("--vary {name}: '{value}' is not a number"));
            }
            match param.check(name, value) {
                Ok(normal) => Ok(normal.unwrap_or_else(|| value.to_string())),
                Err(e) => Err(format!("--vary: {e:#}")),
            }
        }
        Kind::Bool if value == "true" || value == "false" => Ok(value.to_string()),
        Kind::Bool => Err(format!("--vary {name}: '{value}' is not true or false")),
        Kind::Choice(names) if names().contains(&value) => Ok(value.to_string()),
        Kind::Choice(names) => Err(format!("--vary {name}: '{value}' is not one of {}", names().join(", "))),
        Kind::AnyInteger | Kind::Path => Ok(value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_include_their_end_and_lists_keep_their_order() {
        let v = parse_vary("glenn.resend_delay_ms=0:100:25").unwrap();
        assert_eq!(v.values, ["0", "25", "50", "75", "100"]);
        let v = parse_vary("link.loss_percent=0.1:0.3:0.1").unwrap();
        assert_eq!(v.values, ["0.1", "0.2", "0.3"]);
        let v = parse_vary("glenn.rtt_resend=true,false").unwrap();
        assert_eq!(v.values, ["true", "false"]);
        let v = parse_vary("ue4.max_packet_bytes=1e3,1200").unwrap();
        assert_eq!(v.values, ["1000", "1200"], "whole numbers come back as digits");
    }

    #[test]
    fn bad_specs_are_refused_with_the_reason() {
        let cases = [
            ("nope.x=1,2", "unknown parameter 'nope.x'"),
            ("glenn.resend_delay_ms=100:0:10", "empty range"),
            ("glenn.resend_delay_ms=0:100:0", "step must be greater than 0"),
            ("glenn.resend_delay_ms=0:100:-5", "step must be greater than 0"),
            ("glenn.resend_delay_ms=0:5000:100", "out of range"),
            ("link.loss_percent=5,150", "out of range"),
            ("glenn.resend_delay_ms=0:1000:0.5", "at most 1000"),
            ("glenn.resend_delay_ms", "expects NAME=START:END:STEP"),
            ("glenn.resend_delay_ms=1:2", "three numbers"),
            ("glenn.rtt_resend=0:1:1", "not a number"),
            ("glenn.rtt_resend=yes", "not true or false"),
            ("link.jitter_distribution=gauss", "not one of uniform, normal"),
            ("glenn.packet_budget_bytes=100.5", "whole numbers"),
            ("seed=1,2", "--seeds"),
            ("link.loss_percent=1,,2", "empty value"),
        ];
        for (spec, want) in cases {
            let e = parse_vary(spec).unwrap_err();
            assert!(e.contains(want), "{spec}: {e}");
        }
    }
}
