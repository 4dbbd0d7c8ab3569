//! Two saved recordings side by side (`ackscope compare A.ron B.ron`, and the window's *Compare
//! with...*): the Compare tab's figures for every lane of each, the verdict with its reasons for
//! each pair of lanes, and the Summary's figures with the change from A to B.
//!
//! The usual question is "did my change make it better": A is the recording before, B after. The
//! two may differ in strategy, duration and clients; each lane's figures are over the whole of
//! its own recording (the window can cut both at its cursor instead), computed by the one fold
//! the Compare tab uses ([`LaneFigures`]) and the Summary's ([`ackscope_protocol::summarize`],
//! [`ackscope_protocol::reliable_metrics`]), so the command line and the window agree.

use std::path::{Path, PathBuf};

use ackscope_protocol::{LatencyMs, SimTime};
use anyhow::{bail, Context};
use serde::Serialize;

use crate::model::compare::{CompareTotals, LaneFigures, CAUSES};
use crate::model::verdict::{human_bytes, thousands, verdict, why};
use crate::model::{Recording, Shown};
use crate::session::{self, Progress, Verify};

/// Every lane of the recording in `path`: a session file (`.ron`, both lanes of an A/B one), a
/// JSON-lines event stream (`.jsonl`) or a packet capture (`.pcap`/`.pcapng`, read through the
/// capture importer as the window opens one). Errors name the file.
pub fn load_lanes(path: &Path, verify: Verify) -> anyhow::Result<Vec<Recording>> {
    let name = path.display().to_string();
    if crate::capture::import::is_capture_file(path) {
        return crate::capture::lanes::capture_lanes(path);
    }
    let progress = Progress::new();
    let lanes = if crate::session::jsonl::is_stream_path(path) {
        let stream =
            crate::session::jsonl::load(path).with_context(|| format!("{name}: not a readable event stream"))?;
        Recording::lanes_from_stream(stream, &name, &progress)
    } else {
        let s = session::load_verified(path, verify)?;
        if !s.has_events() {
            bail!("{name}: a scenario without events, nothing to compare; record it first (`ackscope run --out`)");
        }
        Recording::lanes_from_session(s, &progress)
    };
    let lanes = lanes.expect("never cancelled");
    if lanes.iter().all(|l| l.is_empty()) {
        bail!("{name}: no events, nothing to compare");
    }
    Ok(lanes)
}

/// The names lanes go by when two recordings are compared: the side, then the lane's own name
/// (`A glenn`, `B ue4`; `A glenn > ue4` for a lane that changed strategy).
pub fn side_name(side: char, lane: &Recording) -> String {
    format!("{side} {}", lane.info.label())
}

/// Which lane of A each lane of B is judged against: the A lane of the same name when there is
/// one not taken yet, else the first A lane not taken, else A's first. `(index in a, index in
/// b)`, one per B lane, in B's order.
pub fn pairs(a: &[String], b: &[String]) -> Vec<(usize, usize)> {
    let mut taken = vec![false; a.len()];
    let mut out = Vec::new();
    for (j, name) in b.iter().enumerate() {
        let same = (0..a.len()).find(|&i| !taken[i] && &a[i] == name);
        let Some(i) = same.or_else(|| (0..a.len()).find(|&i| !taken[i])).or((!a.is_empty()).then_some(0)) else {
            continue;
        };
        taken[i] = true;
        out.push((i, j));
    }
    out
}

/// One lane's figures in the comparison (JSON: one object of `lanes`).
#[derive(Debug, Clone, Serialize)]
pub struct LaneRow {
    /// `"A"` or `"B"`.
    pub side: String,
    /// The side and the lane's own name: `A glenn`.
    pub name: String,
    /// What the lane ran (every protocol, in order).
    pub protocol: String,
    pub seconds: f64,
    pub clients: usize,
    pub events: u64,
    /// Packets, from the link's ground truth (as `summary` prints them).
    pub packets_sent: u64,
    pub link_dropped: u64,
    pub acked: u64,
    /// The endpoints' own estimates (`null` when none was made).
    pub rtt_ms: Option<f64>,
    pub loss_percent: Option<f64>,
    /// Reliable messages delivered, and their latency queued -> delivered.
    pub delivered: u64,
    pub latency_ms: LatencyMs,
    /// Wire bytes both ways / messages delivered (reliable and snapshot alike).
    pub bytes_per_message: f64,
    pub wire_bytes: u64,
    pub sends_per_message: f64,
    pub lost: u64,
    /// Resends by cause: delay, nak, redundant, timeout, and their total.
    pub resends: ResendsByCause,
    /// Resends after the peer's application already had the message.
    pub spurious: u64,
    /// Spurious resends / resends, percent (0 without resends).
    pub spurious_percent: f64,
    /// Copies that brought the receiver nothing (see `CompareTotals::redundant_copy_bytes`).
    pub redundant_copies: u64,
    pub redundant_copy_bytes: u64,
    /// Time delivered messages waited, after arriving, for an earlier one: summed and largest.
    pub hol_total_ms: f64,
    pub hol_max_ms: f64,
}

/// Resends per cause (JSON `resends`).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ResendsByCause {
    pub delay: u64,
    pub nak: u64,
    pub redundant: u64,
    pub timeout: u64,
    pub total: u64,
}

impl ResendsByCause {
    fn of(t: &CompareTotals) -> Self {
        let [delay, nak, redundant, timeout] = t.resends;
        Self { delay, nak, redundant, timeout, total: t.resends_total() }
    }
}

impl LaneRow {
    /// The row of `lane` from its figures.
    pub fn of(side: char, lane: &Recording, figures: &LaneFigures) -> Self {
        let t = &figures.totals;
        let (packets, estimates) = ackscope_protocol::summarize(lane.events());
        let m = ackscope_protocol::reliable_metrics(lane.events());
        let total = t.resends_total();
        LaneRow {
            side: side.to_string(),
            name: side_name(side, lane),
            protocol: lane.info.label(),
            seconds: lane.end_time().as_secs_f64(),
            clients: lane.clients().len(),
            events: lane.len() as u64,
            packets_sent: packets.sent,
            link_dropped: packets.link_dropped,
            acked: packets.acked,
            rtt_ms: estimates.rtt_ms,
            loss_percent: estimates.loss_percent,
            delivered: t.delivered,
            latency_ms: t.latency_ms,
            bytes_per_message: t.bytes_per_message(),
            wire_bytes: t.wire_bytes,
            sends_per_message: m.sends_per_message,
            lost: m.lost,
            resends: ResendsByCause::of(t),
            spurious: t.spurious,
            spurious_percent: if total == 0 { 0.0 } else { t.spurious as f64 * 100.0 / total as f64 },
            redundant_copies: t.redundant_copies,
            redundant_copy_bytes: t.redundant_copy_bytes,
            hol_total_ms: t.hol_total_ms,
            hol_max_ms: t.hol_max_ms,
        }
    }
}

/// One pair's verdict (JSON: one object of `verdicts`).
#[derive(Debug, Clone, Serialize)]
pub struct PairVerdict {
    /// The lanes judged: `A glenn`, `B ue4`.
    pub a: String,
    pub b: String,
    /// Who used fewer bytes per message and how the p99 compared.
    pub verdict: String,
    /// The causes the data shows (`null` before both delivered a reliable message).
    pub why: Option<String>,
}

/// Each pair's verdict and reasons, from the lanes' totals (the window's Compare tab and the
/// command line share it).
pub fn pair_verdicts(a: &[(String, &CompareTotals)], b: &[(String, &CompareTotals)]) -> Vec<PairVerdict> {
    let names = |v: &[(String, &CompareTotals)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    // Pairs by the lanes' own names (without the side letter), so A/B sessions pair strategy
    // with strategy.
    let strip = |v: Vec<String>| v.into_iter().map(|n| n.get(2..).unwrap_or("").to_string()).collect::<Vec<_>>();
    pairs(&strip(names(a)), &strip(names(b)))
        .into_iter()
        .map(|(i, j)| {
            let (x, y) = ((a[i].0.as_str(), a[i].1), (b[j].0.as_str(), b[j].1));
            PairVerdict { a: x.0.to_string(), b: y.0.to_string(), verdict: verdict(x, y), why: why(x, y) }
        })
        .collect()
}

/// Named totals as [`pair_verdicts`] reads them.
fn refs(t: &[(String, CompareTotals)]) -> Vec<(String, &CompareTotals)> {
    t.iter().map(|(n, t)| (n.clone(), t)).collect()
}

/// One recording of the two (JSON `a`, `b`).
#[derive(Debug, Clone, Serialize)]
pub struct SideReport {
    pub file: PathBuf,
    /// Its lanes' names, as `lanes` names them.
    pub lanes: Vec<String>,
    pub seconds: f64,
    pub events: u64,
}

/// What `compare A.ron B.ron` prints.
#[derive(Debug, Clone, Serialize)]
pub struct SessionsComparison {
    pub a: SideReport,
    pub b: SideReport,
    /// Every lane of A, then every lane of B.
    pub lanes: Vec<LaneRow>,
    /// One per lane of B, judged against its A lane.
    pub verdicts: Vec<PairVerdict>,
}

/// Compares the recordings in `a` and `b`, each over the whole of its events.
pub fn compare_files(a: &Path, b: &Path, verify: Verify) -> anyhow::Result<SessionsComparison> {
    let lanes_a = load_lanes(a, verify)?;
    let lanes_b = load_lanes(b, verify)?;
    Ok(compare_lanes((a, &lanes_a), (b, &lanes_b)))
}

/// Compares two loaded recordings' lanes, each lane over all of its events.
pub fn compare_lanes(a: (&Path, &[Recording]), b: (&Path, &[Recording])) -> SessionsComparison {
    let side = |letter: char, lanes: &[Recording]| -> Vec<(LaneRow, LaneFigures)> {
        lanes
            .iter()
            .map(|lane| {
                let figures = LaneFigures::compute(Shown::from(lane), lane.end_time());
                (LaneRow::of(letter, lane, &figures), figures)
            })
            .collect()
    };
    let (rows_a, rows_b) = (side('A', a.1), side('B', b.1));
    let totals = |rows: &[(LaneRow, LaneFigures)]| -> Vec<(String, CompareTotals)> {
        rows.iter().map(|(r, f)| (r.name.clone(), f.totals)).collect()
    };
    let (ta, tb) = (totals(&rows_a), totals(&rows_b));
    let verdicts = pair_verdicts(&refs(&ta), &refs(&tb));
    let report = |file: &Path, lanes: &[Recording], rows: &[(LaneRow, LaneFigures)]| SideReport {
        file: file.to_path_buf(),
        lanes: rows.iter().map(|(r, _)| r.name.clone()).collect(),
        seconds: lanes.iter().map(|l| l.end_time()).max().unwrap_or(SimTime::ZERO).as_secs_f64(),
        events: lanes.iter().map(|l| l.len() as u64).sum(),
    };
    SessionsComparison {
        a: report(a.0, a.1, &rows_a),
        b: report(b.0, b.1, &rows_b),
        lanes: rows_a.into_iter().chain(rows_b).map(|(r, _)| r).collect(),
        verdicts,
    }
}

/// A figure row of the text table: its name, and how a lane reads (a number for the change
/// column, and its text).
type Figure = (&'static str, fn(&LaneRow) -> Option<f64>, fn(&LaneRow) -> String);

/// The figures table's rows, Summary's first, then Compare's.
const FIGURES: [Figure; 14] = [
    ("seconds", |r| Some(r.seconds), |r| format!("{:.1}", r.seconds)),
    ("clients", |r| Some(r.clients as f64), |r| r.clients.to_string()),
    ("packets sent", |r| Some(r.packets_sent as f64), |r| thousands(r.packets_sent)),
    ("link dropped", |r| Some(r.link_dropped as f64), |r| thousands(r.link_dropped)),
    ("RTT est. ms", |r| r.rtt_ms, |r| r.rtt_ms.map_or("-".into(), |v| format!("{v:.1}"))),
    ("loss est. %", |r| r.loss_percent, |r| r.loss_percent.map_or("-".into(), |v| format!("{v:.2}"))),
    ("reliable delivered", |r| Some(r.delivered as f64), |r| thousands(r.delivered)),
    ("latency p50 ms", |r| Some(r.latency_ms.p50), |r| format!("{:.1}", r.latency_ms.p50)),
    ("latency p99 ms", |r| Some(r.latency_ms.p99), |r| format!("{:.1}", r.latency_ms.p99)),
    ("bytes per delivered msg", |r| Some(r.bytes_per_message), |r| format!("{:.1}", r.bytes_per_message)),
    ("sends per message", |r| Some(r.sends_per_message), |r| format!("{:.2}", r.sends_per_message)),
    ("spurious resends", |r| Some(r.spurious as f64), |r| format!("{} ({:.0} %)", r.spurious, r.spurious_percent)),
    ("bytes in redundant copies", |r| Some(r.redundant_copy_bytes as f64), |r| human_bytes(r.redundant_copy_bytes)),
    ("head-of-line wait total ms", |r| Some(r.hol_total_ms), |r| format!("{:.0}", r.hol_total_ms)),
];

/// `b - a` with its sign and, where `a` is not zero, the percentage; counts (both whole
/// numbers) without decimals.
fn change(a: f64, b: f64) -> String {
    let d = b - a;
    if d == 0.0 {
        return "0".into();
    }
    let sign = if d > 0.0 { "+" } else { "" };
    let whole = a.fract() == 0.0 && b.fract() == 0.0;
    let abs = if whole || d.abs() >= 100.0 { format!("{sign}{d:.0}") } else { format!("{sign}{d:.2}") };
    let percent = d / a * 100.0;
    match a.abs() > 1e-9 {
        true if percent.abs() < 0.5 => format!("{abs} (<1 %)"),
        true => format!("{abs} ({sign}{percent:.0} %)"),
        false => abs,
    }
}

impl SessionsComparison {
    /// The human form: the two files, the figures per lane (with the change from A to B when
    /// each has one lane), resends by cause one row per lane, and each pair's verdict.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (letter, s) in [('A', &self.a), ('B', &self.b)] {
            out.push_str(&format!(
                "{letter}: {} ({}; {:.1} s, {} events)\n",
                s.file.display(),
                s.lanes.join(", "),
                s.seconds,
                thousands(s.events)
            ));
        }
        let one_pair = self.lanes.len() == 2;
        out.push_str("\n| figure |");
        for r in &self.lanes {
            out.push_str(&format!(" {} |", r.name));
        }
        out.push_str(if one_pair { " B - A |\n|---|" } else { "\n|---|" });
        out.push_str(&"---|".repeat(self.lanes.len() + usize::from(one_pair)));
        out.push('\n');
        for (name, number, text) in FIGURES {
            out.push_str(&format!("| {name} |"));
            for r in &self.lanes {
                out.push_str(&format!(" {} |", text(r)));
            }
            if one_pair {
                let d = match (number(&self.lanes[0]), number(&self.lanes[1])) {
                    (Some(a), Some(b)) => change(a, b),
                    _ => "-".into(),
                };
                out.push_str(&format!(" {d} |"));
            }
            out.push('\n');
        }
        out.push_str("\nResends by cause, one row per lane:\n| lane |");
        for (_, cause) in CAUSES {
            out.push_str(&format!(" {cause} |"));
        }
        out.push_str(" total | spurious |\n|---|---|---|---|---|---|---|\n");
        for r in &self.lanes {
            let c = &r.resends;
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} ({:.0} %) |\n",
                r.name, c.delay, c.nak, c.redundant, c.timeout, c.total, r.spurious, r.spurious_percent
            ));
        }
        for v in &self.verdicts {
            out.push_str(&format!("\nVerdict, {} vs {}: {}", v.a, v.b, v.verdict));
            if let Some(why) = &v.why {
                out.push_str(&format!("\n{why}"));
            }
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn lanes_pair_by_name_then_by_position() {
        assert_eq!(pairs(&names(&["glenn"]), &names(&["ue4"])), vec![(0, 0)]);
        assert_eq!(pairs(&names(&["glenn", "ue4"]), &names(&["ue4", "glenn"])), vec![(1, 0), (0, 1)]);
        assert_eq!(pairs(&names(&["glenn", "ue4"]), &names(&["dnm"])), vec![(0, 0)]);
        assert_eq!(pairs(&names(&["glenn"]), &names(&["glenn", "ue4"])), vec![(0, 0), (0, 1)]);
        assert!(pairs(&[], &names(&["glenn"])).is_empty());
    }

    #[test]
    fn change_reads_with_sign_and_percent() {
        assert_eq!(change(200.0, 150.0), "-50 (-25 %)");
        assert_eq!(change(2.0, 1.5), "-0.50 (-25 %)");
        assert_eq!(change(1000.0, 1500.0), "+500 (+50 %)");
        assert_eq!(change(0.0, 3.0), "+3");
        assert_eq!(change(98.0, 92.0), "-6 (-6 %)");
        assert_eq!(change(5.67, 5.66), "-0.01 (<1 %)");
        assert_eq!(change(15.1, 15.1), "0");
    }
}
