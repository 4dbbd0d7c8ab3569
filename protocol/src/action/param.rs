//! A typed parameter change: a parameter by its dotted `--set` name and its new value as a
//! number, a boolean, a name or "unset".
//!
//! Text (`NAME=VALUE`) is read once, where it comes in: `--set`, a file's `set` action, the
//! sweep's `--vary`. From there on every path carries the same [`ParamChange`]: the window's
//! controls build one directly from a slider's number, a live run applies it, the driver runs a
//! scripted one, a re-run applies the logged one, and each of them writes the value into the
//! scenario's typed field ([`crate::Scenario::apply_change`]) without reading text again. Text
//! comes back only on the way out: `ParamChanged` events and files.

use std::fmt;

/// A parameter's value.
///
/// Numbers are kept in one canonical form, so a value reads back from its text as the same value
/// (files and the window agree on what a change was): a whole number is an [`ParamValue::Int`],
/// exact for every `u64` (seeds) and `i64`, however it was written (`30`, `30.0`, `3e1`).
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// A whole number.
    Int(i128),
    /// A number with a fraction, or beyond the integers' range; NaN and infinities are kept as
    /// written so the range check can refuse them by the parameter's name.
    Float(f64),
    Bool(bool),
    /// One of a parameter's choices (`normal`, `ue4`, `lockstep`, ...).
    Name(String),
    /// No value: an optional parameter left to where it otherwise comes from (`null`).
    Unset,
}

/// Whole numbers up to this magnitude are kept as integers (every one is exact in an `i128`).
const INT_LIMIT: f64 = 1e38;

impl ParamValue {
    /// A number in its canonical form: whole numbers as [`ParamValue::Int`] (`-0.0` as `0`).
    pub fn number(v: f64) -> Self {
        if v.is_finite() && v.fract() == 0.0 && v.abs() < INT_LIMIT {
            // Whole and within i128's range: the conversion is exact.
            #[allow(clippy::cast_possible_truncation)]
            let i = v as i128;
            ParamValue::Int(i)
        } else {
            ParamValue::Float(v)
        }
    }

    /// Reads a value as `--set` and files write it: a number, `true` / `false`, `null` (also
    /// `none` or nothing: unset), a quoted or bare name.
    pub fn parse(text: &str) -> Self {
        let t = text.trim();
        match t {
            "" | "null" | "none" | "None" => return ParamValue::Unset,
            "true" => return ParamValue::Bool(true),
            "false" => return ParamValue::Bool(false),
            _ => {}
        }
        if let Ok(i) = t.parse::<i128>() {
            return ParamValue::Int(i);
        }
        if let Ok(v) = t.parse::<f64>() {
            return ParamValue::number(v);
        }
        match t.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
            Some(quoted) => ParamValue::Name(quoted.to_string()),
            None => ParamValue::Name(t.to_string()),
        }
    }

    /// The value as a number, if it is one.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            // Beyond 2^53 the nearest f64: a number parameter's range is far below that.
            #[allow(clippy::cast_precision_loss)]
            ParamValue::Int(i) => Some(i as f64),
            ParamValue::Float(v) => Some(v),
            _ => None,
        }
    }

    /// What kind of value this is, for messages ("a number", "true or false", ...).
    pub fn kind(&self) -> &'static str {
        match self {
            ParamValue::Int(_) | ParamValue::Float(_) => "a number",
            ParamValue::Bool(_) => "true or false",
            ParamValue::Name(_) => "a name",
            ParamValue::Unset => "unset (null)",
        }
    }
}

impl From<f64> for ParamValue {
    fn from(v: f64) -> Self {
        ParamValue::number(v)
    }
}

impl From<bool> for ParamValue {
    fn from(v: bool) -> Self {
        ParamValue::Bool(v)
    }
}

impl From<&str> for ParamValue {
    /// A name (not parsed: `"1"` stays the name `1`; use [`ParamValue::parse`] for text).
    fn from(v: &str) -> Self {
        ParamValue::Name(v.to_string())
    }
}

impl fmt::Display for ParamValue {
    /// The text form files, events and `--set` use; [`ParamValue::parse`] reads it back as the
    /// same value (numbers print as the shortest text that reads back exactly).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Float(v) => write!(f, "{v}"),
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Name(n) => f.write_str(n),
            ParamValue::Unset => f.write_str("null"),
        }
    }
}

/// A change of one parameter: its dotted name (`link.loss_percent` sets both link directions,
/// `link.a_to_b.loss_percent` one; see [`crate::scenario::set`]) and its new value.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamChange {
    name: String,
    value: ParamValue,
}

impl ParamChange {
    /// A change of `name` (surrounding blanks dropped) to `value`.
    pub fn new(name: &str, value: impl Into<ParamValue>) -> Self {
        Self { name: name.trim().to_string(), value: value.into() }
    }

    /// A change from text, as `--set NAME=VALUE` and files write it.
    pub fn parse(name: &str, value: &str) -> Self {
        Self::new(name, ParamValue::parse(value))
    }

    /// A change from `NAME=VALUE`.
    pub fn parse_assignment(text: &str) -> Result<Self, String> {
        match text.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() => Ok(Self::parse(name, value)),
            _ => Err(format!("expected NAME=VALUE, got '{text}'")),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn value(&self) -> &ParamValue {
        &self.value
    }

    /// True for a change of `strategy`, which rebuilds the endpoints (see [`crate::Action`]).
    pub fn is_strategy(&self) -> bool {
        self.name == "strategy"
    }
}

impl fmt::Display for ParamChange {
    /// `NAME=VALUE`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.name, self.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_reads_into_canonical_values_and_back() {
        use ParamValue::*;
        for (text, value, back) in [
            ("30", Int(30), "30"),
            (" 30.0 ", Int(30), "30"),
            ("3e1", Int(30), "30"),
            ("-0.0", Int(0), "0"),
            ("12.5", Float(12.5), "12.5"),
            ("0.0025", Float(0.0025), "0.0025"),
            ("18446744073709551615", Int(18_446_744_073_709_551_615), "18446744073709551615"),
            ("-1", Int(-1), "-1"),
            ("true", Bool(true), "true"),
            ("false", Bool(false), "false"),
            ("null", Unset, "null"),
            ("None", Unset, "null"),
            ("", Unset, "null"),
            ("normal", Name("normal".into()), "normal"),
            ("\"normal\"", Name("normal".into()), "normal"),
            ("fast", Name("fast".into()), "fast"),
        ] {
            let v = ParamValue::parse(text);
            assert_eq!(v, value, "{text:?}");
            assert_eq!(v.to_string(), back, "{text:?}");
            assert_eq!(ParamValue::parse(&v.to_string()), v, "{text:?} does not read back");
        }
        // NaN and infinities stay numbers, for the range check to refuse by name.
        assert!(matches!(ParamValue::parse("NaN"), Float(v) if v.is_nan()));
        assert_eq!(ParamValue::parse("inf"), Float(f64::INFINITY));
        // A slider's number and the same number read from a file are one value.
        assert_eq!(ParamValue::from(1500.0), ParamValue::parse("1500"));
        assert_eq!(ParamValue::from(1e300), ParamValue::parse(&1e300.to_string()));
    }

    #[test]
    fn assignments_need_a_name() {
        let c = ParamChange::parse_assignment(" link.loss_percent = 20 ").unwrap();
        assert_eq!((c.name(), c.value()), ("link.loss_percent", &ParamValue::Int(20)));
        assert_eq!(c.to_string(), "link.loss_percent=20");
        assert!(ParamChange::parse_assignment("noequals").is_err());
        assert!(ParamChange::parse_assignment(" =3").is_err());
    }
}
