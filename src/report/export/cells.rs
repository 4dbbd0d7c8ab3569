//! The values of an exported table and the two ways rows are written: CSV and JSON.
//!
//! A table is produced once, as rows of [`Cell`]s, and a [`RowSink`] turns each row into text
//! straight away, so a million-event session is exported without holding its rows. Numbers are
//! written without float noise: times and delays are integer microseconds on the event log, so
//! they are written exactly in seconds or milliseconds (`12.345678`, `0.5`); measured figures (the
//! estimators work in f32) are rounded to [`SIGNIFICANT_DIGITS`], as `--json` reports are.

use std::io::{self, Write};

use ackscope_protocol::SimTime;

/// Significant digits kept for measured figures (RTT, loss, rates): `100.892`, not
/// `100.89190292358398`.
pub const SIGNIFICANT_DIGITS: usize = 6;

/// `x` rounded to `digits` significant digits (through scientific notation, so the result is the
/// nearest double to the rounded decimal and prints as it).
pub fn round_significant(x: f64, digits: usize) -> f64 {
    if !x.is_finite() || digits == 0 {
        return x;
    }
    format!("{x:.*e}", digits - 1).parse().unwrap_or(x)
}

/// One value of a row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    /// Nothing (yet): an empty CSV field, JSON `null`.
    Empty,
    Int(u64),
    /// Microseconds, written in seconds exactly.
    Secs(u64),
    /// Microseconds, written in milliseconds exactly.
    Millis(u64),
    /// A measured figure, rounded to [`SIGNIFICANT_DIGITS`]; not finite is written as [`Cell::Empty`].
    Float(f64),
    Text(&'a str),
}

impl Cell<'_> {
    /// The instant `t` in seconds, or empty.
    pub fn at(t: Option<SimTime>) -> Self {
        t.map_or(Cell::Empty, |t| Cell::Secs(t.0))
    }

    /// Writes a number cell's digits; false (nothing written) for text and empty cells.
    fn write_number(&self, out: &mut String) -> bool {
        use std::fmt::Write as _;
        match *self {
            Cell::Int(n) => drop(write!(out, "{n}")),
            Cell::Secs(us) => write_fixed(out, us, 6),
            Cell::Millis(us) => write_fixed(out, us, 3),
            Cell::Float(x) if x.is_finite() => {
                let r = round_significant(x, SIGNIFICANT_DIGITS);
                // Display never uses an exponent; `-0` is written as `0`.
                let _ = if r == 0.0 { write!(out, "0") } else { write!(out, "{r}") };
            }
            _ => return false,
        }
        true
    }
}

/// `units / 10^decimals` written exactly, without trailing zeros (`1500, 3` -> `1.5`).
fn write_fixed(out: &mut String, units: u64, decimals: u32) {
    use std::fmt::Write as _;
    let scale = 10u64.pow(decimals);
    let (whole, frac) = (units / scale, units % scale);
    let _ = write!(out, "{whole}");
    if frac > 0 {
        let digits = format!("{frac:0width$}", width = decimals as usize);
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
}

/// Where rows go: a table's columns once, then its rows, then the end.
pub trait RowSink {
    fn begin(&mut self, columns: &'static [&'static str]) -> io::Result<()>;
    fn row(&mut self, cells: &[Cell]) -> io::Result<()>;
    fn end(&mut self) -> io::Result<()>;
}

/// RFC 4180 CSV: a header line of column names, one line per row, fields quoted only when they
/// hold a comma, a quote or a line break (quotes doubled); lines end in `\n`, which every CSV
/// reader accepts and line tools (`cut`, `awk`) need.
pub struct CsvSink<W: Write> {
    out: W,
    line: String,
}

impl<W: Write> CsvSink<W> {
    pub fn new(out: W) -> Self {
        Self { out, line: String::new() }
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> RowSink for CsvSink<W> {
    fn begin(&mut self, columns: &'static [&'static str]) -> io::Result<()> {
        writeln!(self.out, "{}", columns.join(","))
    }

    fn row(&mut self, cells: &[Cell]) -> io::Result<()> {
        self.line.clear();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            if let Cell::Text(s) = c {
                push_csv_field(&mut self.line, s);
            } else {
                c.write_number(&mut self.line);
            }
        }
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())
    }

    fn end(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

fn push_csv_field(line: &mut String, s: &str) {
    if s.contains([',', '"', '\n', '\r']) {
        line.push('"');
        line.push_str(&s.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(s);
    }
}

/// A JSON array of objects, one per row, keyed by column name (`[{"time_s":0.5,...},...]`),
/// written on one line; empty cells are `null`.
pub struct JsonArraySink<W: Write> {
    out: W,
    columns: &'static [&'static str],
    rows: u64,
    line: String,
}

impl<W: Write> JsonArraySink<W> {
    pub fn new(out: W) -> Self {
        Self { out, columns: &[], rows: 0, line: String::new() }
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> RowSink for JsonArraySink<W> {
    fn begin(&mut self, columns: &'static [&'static str]) -> io::Result<()> {
        self.columns = columns;
        self.rows = 0;
        self.out.write_all(b"[")
    }

    fn row(&mut self, cells: &[Cell]) -> io::Result<()> {
        self.line.clear();
        if self.rows > 0 {
            self.line.push(',');
        }
        self.line.push('{');
        for (i, (name, c)) in self.columns.iter().zip(cells).enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            push_json_string(&mut self.line, name);
            self.line.push(':');
            match c {
                Cell::Text(s) => push_json_string(&mut self.line, s),
                c => {
                    if !c.write_number(&mut self.line) {
                        self.line.push_str("null");
                    }
                }
            }
        }
        self.line.push('}');
        self.rows += 1;
        self.out.write_all(self.line.as_bytes())
    }

    fn end(&mut self) -> io::Result<()> {
        self.out.write_all(b"]")
    }
}

fn push_json_string(line: &mut String, s: &str) {
    use std::fmt::Write as _;
    line.push('"');
    for ch in s.chars() {
        match ch {
            '"' => line.push_str("\\\""),
            '\\' => line.push_str("\\\\"),
            '\n' => line.push_str("\\n"),
            '\r' => line.push_str("\\r"),
            '\t' => line.push_str("\\t"),
            c if (c as u32) < 0x20 => drop(write!(line, "\\u{:04x}", c as u32)),
            c => line.push(c),
        }
    }
    line.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLUMNS: &[&str] = &["t_s", "delay_ms", "rtt_ms", "n", "what", "none"];

    fn row<'a>(what: &'a str, rtt_ms: f64) -> [Cell<'a>; 6] {
        [Cell::Secs(12_345_678), Cell::Millis(1500), Cell::Float(rtt_ms), Cell::Int(7), Cell::Text(what), Cell::Empty]
    }

    #[test]
    fn csv_numbers_are_exact_times_and_six_significant_digits_and_text_is_quoted_only_when_needed() {
        let mut sink = CsvSink::new(Vec::new());
        sink.begin(COLUMNS).unwrap();
        sink.row(&row("plain", 100.89190292358398)).unwrap();
        sink.row(&row("3 msgs, \"1\" resend", -0.0)).unwrap();
        sink.row(&[
            Cell::Secs(2_000_000),
            Cell::Millis(0),
            Cell::Float(0.1 + 0.2),
            Cell::Int(0),
            Cell::Text("a\nb"),
            Cell::Float(f64::NAN),
        ])
        .unwrap();
        sink.end().unwrap();
        let text = String::from_utf8(sink.into_inner()).unwrap();
        assert_eq!(
            text,
            "t_s,delay_ms,rtt_ms,n,what,none\n\
             12.345678,1.5,100.892,7,plain,\n\
             12.345678,1.5,0,7,\"3 msgs, \"\"1\"\" resend\",\n\
             2,0,0.3,0,\"a\nb\",\n"
        );
    }

    #[test]
    fn json_rows_are_objects_keyed_by_column_with_null_for_empty() {
        let mut sink = JsonArraySink::new(Vec::new());
        sink.begin(COLUMNS).unwrap();
        sink.row(&row("say \"hi\"\\", 0.0057123456)).unwrap();
        sink.row(&row("x", 4.815059645801571)).unwrap();
        sink.end().unwrap();
        let text = String::from_utf8(sink.into_inner()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v,
            serde_json::json!([
                {"t_s": 12.345678, "delay_ms": 1.5, "rtt_ms": 0.00571235, "n": 7, "what": "say \"hi\"\\", "none": null},
                {"t_s": 12.345678, "delay_ms": 1.5, "rtt_ms": 4.81506, "n": 7, "what": "x", "none": null},
            ])
        );
        assert!(!text.contains('\n'));
    }

    #[test]
    fn rounding_keeps_integers_and_large_values_readable() {
        let mut s = String::new();
        for x in [1234567.0, 1e-7, 250.0, 99.99996] {
            Cell::Float(x).write_number(&mut s);
            s.push(' ');
        }
        assert_eq!(s, "1234570 0.0000001 250 100 ");
    }
}
