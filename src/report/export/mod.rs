//! Exporting a recording as tables for spreadsheets and scripts: packets, messages and series,
//! as CSV files or as JSON.
//!
//! The tables are read from the model the window shows ([`Recording`]: the packet log joined with
//! the `PacketLedger`, the message and chunk indexes, the store's series), never from a second
//! fold over the events, so an export says exactly what the window and `summary` say. The
//! columns are listed in [`tables`] (an interface: new columns go at the end, before `lane`).
//!
//! This lives in `report`, beside the JSON run report, rather than in `model`: it is output
//! people script against, shared by `ackscope export` and the window's file thread, and it
//! writes files; the model stays free of I/O.
//!
//! - Rows are written as they are produced ([`cells`]): no table is held as text.
//! - Files are written beside their target and renamed into place only after every requested
//!   table was written ([`atomic`]): an export that fails or is cancelled changes no file.
//! - Every table ends with a `lane` column naming the strategy of the recording the row comes
//!   from; an A/B recording exports both lanes into the same files, one after the other.

pub mod atomic;
pub mod cells;
pub mod tables;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use self::atomic::AtomicFile;
use self::cells::{Cell, CsvSink, JsonArraySink, RowSink};
use self::tables::Lane;
use crate::model::Recording;
use crate::session::{Phase, Progress};

/// Rows written between two progress reports (and cancellation checks).
const PROGRESS_ROWS: u64 = 4096;

/// One of the exported tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Packets,
    Messages,
    Series,
}

impl Table {
    pub const ALL: [Table; 3] = [Table::Packets, Table::Messages, Table::Series];

    /// Its name: the JSON key and the `--packets`/`--messages`/`--series` flag.
    pub fn name(self) -> &'static str {
        match self {
            Table::Packets => "packets",
            Table::Messages => "messages",
            Table::Series => "series",
        }
    }

    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Table::Packets => tables::PACKET_COLUMNS,
            Table::Messages => tables::MESSAGE_COLUMNS,
            Table::Series => tables::SERIES_COLUMNS,
        }
    }

    /// How many rows it has for `lanes`, known before writing any.
    fn rows(self, lanes: &[Lane]) -> u64 {
        match self {
            Table::Packets => tables::packet_rows(lanes),
            Table::Messages => tables::message_rows(lanes),
            Table::Series => tables::series_rows(lanes),
        }
    }

    /// Writes the header, every row and the end to `sink`.
    fn write(self, lanes: &[Lane], sink: &mut dyn RowSink) -> io::Result<()> {
        sink.begin(self.columns())?;
        match self {
            Table::Packets => tables::write_packets(lanes, sink)?,
            Table::Messages => tables::write_messages(lanes, sink)?,
            Table::Series => tables::write_series(lanes, sink)?,
        }
        sink.end()
    }
}

/// The recordings with their `lane` names: the strategy's name, made unique by its position
/// should two lanes run the same strategy.
pub fn lanes(recs: &[Recording]) -> Vec<Lane<'_>> {
    let names: Vec<&str> = recs.iter().map(|r| r.info.first().name.as_str()).collect();
    recs.iter()
        .enumerate()
        .map(|(i, rec)| {
            let name = names[i];
            let label = if names.iter().filter(|n| **n == name).count() > 1 {
                format!("{name}-{}", i + 1)
            } else {
                name.into()
            };
            Lane { label, rec, keep: tables::Keep::default() }
        })
        .collect()
}

/// Which tables to write, and where.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportTargets {
    pub packets: Option<PathBuf>,
    pub messages: Option<PathBuf>,
    pub series: Option<PathBuf>,
}

impl ExportTargets {
    /// All three tables beside `base`: `run.csv` (or `run`) gives `run-packets.csv`,
    /// `run-messages.csv` and `run-series.csv` (what the window's *Export...* writes).
    pub fn beside(base: &Path) -> Self {
        let stem = base.file_stem().map_or_else(|| "export".into(), |s| s.to_string_lossy().into_owned());
        let at = |t: Table| Some(base.with_file_name(format!("{stem}-{}.csv", t.name())));
        Self { packets: at(Table::Packets), messages: at(Table::Messages), series: at(Table::Series) }
    }

    pub fn get(&self, table: Table) -> Option<&Path> {
        match table {
            Table::Packets => self.packets.as_deref(),
            Table::Messages => self.messages.as_deref(),
            Table::Series => self.series.as_deref(),
        }
    }

    pub fn is_empty(&self) -> bool {
        Table::ALL.iter().all(|t| self.get(*t).is_none())
    }

    /// Refuses two tables into one file, and writing over `session` (the file exported from).
    pub fn check(&self, session: Option<&Path>) -> Result<()> {
        let mut seen: Vec<(PathBuf, Table)> = Vec::new();
        for t in Table::ALL {
            let Some(p) = self.get(t) else { continue };
            let key = comparable(p);
            if let Some((_, other)) = seen.iter().find(|(k, _)| *k == key) {
                bail!("{}: given for both --{} and --{}", p.display(), other.name(), t.name());
            }
            if session.is_some_and(|s| comparable(s) == key) {
                bail!("{}: is the session being exported; choose another file for --{}", p.display(), t.name());
            }
            seen.push((key, t));
        }
        Ok(())
    }
}

/// `p` in a form two spellings of one file share (as far as can be told without it existing).
fn comparable(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).or_else(|_| std::path::absolute(p)).unwrap_or_else(|_| p.to_path_buf())
}

/// One table written to a file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Written {
    pub path: PathBuf,
    pub rows: u64,
    pub bytes: u64,
}

/// What an export wrote: what `ackscope export --json` prints when it writes files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportSummary {
    /// The session file exported, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<PathBuf>,
    /// The `lane` names, in the order their rows appear.
    pub lanes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packets: Option<Written>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Written>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<Written>,
}

impl ExportSummary {
    pub fn get(&self, table: Table) -> Option<&Written> {
        match table {
            Table::Packets => self.packets.as_ref(),
            Table::Messages => self.messages.as_ref(),
            Table::Series => self.series.as_ref(),
        }
    }

    /// One line per file written: `packets: 7212 rows, 612.3 kB -> run-packets.csv`.
    pub fn to_text(&self) -> String {
        let lines: Vec<String> = Table::ALL
            .iter()
            .filter_map(|&t| {
                let w = self.get(t)?;
                Some(format!("{}: {} rows, {:.1} kB -> {}", t.name(), w.rows, w.bytes as f64 / 1e3, w.path.display()))
            })
            .collect();
        lines.join("\n")
    }
}

/// Counts the rows going through to `inner`, reports them to `progress` and stops the export
/// (an `Interrupted` error) when the progress is cancelled.
struct Tracked<'a> {
    inner: &'a mut dyn RowSink,
    progress: Option<&'a Progress>,
    done: &'a mut u64,
}

impl RowSink for Tracked<'_> {
    fn begin(&mut self, columns: &'static [&'static str]) -> io::Result<()> {
        self.inner.begin(columns)
    }

    fn row(&mut self, cells: &[Cell]) -> io::Result<()> {
        self.inner.row(cells)?;
        *self.done += 1;
        if let Some(p) = self.progress.filter(|_| (*self.done).is_multiple_of(PROGRESS_ROWS)) {
            p.advance_to(*self.done);
            if p.is_cancelled() {
                return Err(io::Error::new(io::ErrorKind::Interrupted, "cancelled"));
            }
        }
        Ok(())
    }

    fn end(&mut self) -> io::Result<()> {
        self.inner.end()
    }
}

/// Writes the tables `targets` names as CSV files (see the module docs: all or none replaced),
/// reporting rows written to `progress` (phase [`Phase::Writing`]) and stopping when it is
/// cancelled.
pub fn write_files(recs: &[Recording], targets: &ExportTargets, progress: Option<&Progress>) -> Result<ExportSummary> {
    write_lanes(&lanes(recs), targets, progress)
}

/// [`write_files`] of lanes made by [`lanes`] (and given the rows to keep).
pub fn write_lanes(lanes: &[Lane], targets: &ExportTargets, progress: Option<&Progress>) -> Result<ExportSummary> {
    targets.check(None)?;
    let chosen: Vec<(Table, &Path)> = Table::ALL.iter().filter_map(|&t| Some((t, targets.get(t)?))).collect();
    if let Some(p) = progress {
        p.start(Phase::Writing, chosen.iter().map(|(t, _)| t.rows(lanes)).sum());
    }
    let mut done = 0;
    let mut files = Vec::new();
    for (table, path) in chosen {
        let origin = path.display();
        let mut sink = CsvSink::new(AtomicFile::create(path)?);
        let before = done;
        let mut tracked = Tracked { inner: &mut sink, progress, done: &mut done };
        table.write(lanes, &mut tracked).with_context(|| format!("{origin}: write failed"))?;
        files.push((table, sink.into_inner(), done - before));
    }
    let mut summary = ExportSummary {
        session: None,
        lanes: lanes.iter().map(|l| l.label.clone()).collect(),
        packets: None,
        messages: None,
        series: None,
    };
    for (table, file, rows) in files {
        let path = file.path().to_path_buf();
        let bytes = file.commit()?;
        let slot = match table {
            Table::Packets => &mut summary.packets,
            Table::Messages => &mut summary.messages,
            Table::Series => &mut summary.series,
        };
        *slot = Some(Written { path, rows, bytes });
    }
    Ok(summary)
}

/// Writes every table as one JSON object on one line, `{"packets":[...],"messages":[...],
/// "series":[...]}`, each row an object keyed by column name (empty cells `null`).
pub fn write_json(recs: &[Recording], out: &mut dyn Write) -> io::Result<()> {
    write_lanes_json(&lanes(recs), out)
}

/// [`write_json`] of lanes made by [`lanes`] (and given the rows to keep).
pub fn write_lanes_json(lanes: &[Lane], out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 16, out);
    for (i, table) in Table::ALL.into_iter().enumerate() {
        write!(out, "{}\"{}\":", if i == 0 { "{" } else { "," }, table.name())?;
        let mut sink = JsonArraySink::new(&mut out);
        table.write(lanes, &mut sink)?;
    }
    writeln!(out, "}}")?;
    out.flush()
}
