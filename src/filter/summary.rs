//! `ackscope summary --filter`: the figures over a filter's rows.
//!
//! A filtered summary is not the run report recomputed from fewer events (dropping events
//! would make the ground truth lie: a packet's ack without its send). It is the same report's
//! kind of figures taken over the rows the filter keeps, per lane and per row kind the filter
//! applies to: how many packets, how many of them dropped, delivered, acked, their link delay
//! percentiles; how many messages, delivered, resent, spuriously, their latency percentiles;
//! the anomalies by kind. Its row counts are exactly the rows `export --filter` writes and the
//! window lists for the same filter (the same cache decides all three).

use std::collections::BTreeMap;

use ackscope_protocol::{Percentiles, SendKind};
use serde::Serialize;

use super::cache::{matching_rows, SharedFilter, Source};
use super::fields::{Row, RowKind, ANOMALY_KINDS};
use super::rows::{packet_facts, PacketFacts};
use super::FilterError;
use crate::model::anomaly::Anomaly;
use crate::model::index::MessageRecord;
use crate::model::{Connection, Recording, Shown};

/// Nearest-rank percentiles of a set of millisecond figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub samples: u64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

impl Spread {
    fn of(samples: Vec<f64>) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        let mean = samples.iter().sum::<f64>() / samples.len() as f64;
        let p = Percentiles::of(samples);
        Some(Self { samples: p.count(), p50: p.at(0.5), p95: p.at(0.95), p99: p.at(0.99), max: p.max(), mean })
    }

    fn text(&self) -> String {
        format!(
            "p50 {:.1} / p95 {:.1} / p99 {:.1} / max {:.1} ms (mean {:.1}, {} samples)",
            self.p50, self.p95, self.p99, self.max, self.mean, self.samples
        )
    }
}

/// Figures over the matching packets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PacketFigures {
    pub rows: u64,
    pub bytes: u64,
    pub dropped: u64,
    pub delivered: u64,
    pub duplicated: u64,
    pub in_flight: u64,
    pub acked: u64,
    pub nakked: u64,
    /// Link delay of the delivered ones.
    pub delay_ms: Option<Spread>,
}

/// Figures over the matching messages.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageFigures {
    pub rows: u64,
    pub reliable: u64,
    pub delivered: u64,
    pub acked: u64,
    pub sends: u64,
    pub resends: u64,
    pub spurious_sends: u64,
    pub refused: u64,
    /// Queued to first delivery, of the delivered ones.
    pub latency_ms: Option<Spread>,
}

/// Figures over the matching anomalies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnomalyFigures {
    pub rows: u64,
    /// Per kind (the filter's names: drop_loss, nak, stall...), kinds with none left out.
    pub by_kind: BTreeMap<&'static str, u64>,
}

/// One kind's figures, or why the filter does not apply to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Part<T> {
    Figures(T),
    NotApplicable { not_applicable: String },
}

/// One lane's filtered figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaneFigures {
    pub lane: String,
    pub packets: Part<PacketFigures>,
    pub messages: Part<MessageFigures>,
    pub anomalies: Part<AnomalyFigures>,
}

/// The summary over a filter's rows, every lane.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilteredSummary {
    pub filter: String,
    pub lanes: Vec<LaneFigures>,
}

/// The filter compiled for each kind it applies to (an error for the others). Fails when it
/// applies to none, with the error of the kind the text was probably meant for (the first
/// kind whose error is not "does not apply").
pub struct PerKind {
    pub packets: Result<SharedFilter<PacketFacts>, FilterError>,
    pub messages: Result<SharedFilter<MessageRecord>, FilterError>,
    pub anomalies: Result<SharedFilter<Anomaly>, FilterError>,
}

impl PerKind {
    pub fn compile(text: &str) -> Result<Self, FilterError> {
        let k = Self {
            packets: SharedFilter::compile(text),
            messages: SharedFilter::compile(text),
            anomalies: SharedFilter::compile(text),
        };
        if k.packets.is_ok() || k.messages.is_ok() || k.anomalies.is_ok() {
            return Ok(k);
        }
        let errs = [k.packets.err(), k.messages.err(), k.anomalies.err()];
        let errs: Vec<FilterError> = errs.into_iter().flatten().collect();
        let specific = errs.iter().find(|e| !e.message.contains("does not apply")).or(errs.first());
        Err(specific.cloned().unwrap_or_else(|| FilterError::at(text, 0..0, "no rows to filter")))
    }
}

fn part<R: Source, T>(
    view: Shown,
    f: &Result<SharedFilter<R>, FilterError>,
    figures: impl FnOnce(&[u32]) -> T,
) -> Part<T> {
    match f {
        Ok(f) => Part::Figures(figures(&matching_rows(view, f))),
        Err(e) => Part::NotApplicable { not_applicable: e.to_string() },
    }
}

fn packet_figures(conn: &Connection, rows: &[u32]) -> PacketFigures {
    let mut f = PacketFigures {
        rows: rows.len() as u64,
        bytes: 0,
        dropped: 0,
        delivered: 0,
        duplicated: 0,
        in_flight: 0,
        acked: 0,
        nakked: 0,
        delay_ms: None,
    };
    let mut delays = Vec::new();
    for &i in rows {
        let Some(p) = packet_facts(conn, i as usize, None) else { continue };
        let r = &p.row;
        f.bytes += r.bytes as u64;
        f.dropped += r.dropped.is_some() as u64;
        f.duplicated += r.duplicated as u64;
        f.acked += r.acked_at.is_some() as u64;
        f.nakked += r.nakked_at.is_some() as u64;
        match (r.dropped, r.delivered_at) {
            (None, Some(d)) => {
                f.delivered += 1;
                delays.push(d.saturating_since(r.time).as_millis_f64());
            }
            (None, None) => f.in_flight += 1,
            _ => {}
        }
    }
    f.delay_ms = Spread::of(delays);
    f
}

fn message_figures(conn: &Connection, rows: &[u32]) -> MessageFigures {
    let all = conn.messages.messages();
    let mut f = MessageFigures {
        rows: rows.len() as u64,
        reliable: 0,
        delivered: 0,
        acked: 0,
        sends: 0,
        resends: 0,
        spurious_sends: 0,
        refused: 0,
        latency_ms: None,
    };
    let mut latencies = Vec::new();
    for m in rows.iter().filter_map(|&i| all.get(i as usize)) {
        f.reliable += m.reliable as u64;
        f.acked += m.acked_at.is_some() as u64;
        f.refused += m.refused.is_some() as u64;
        f.sends += m.sends.len() as u64;
        f.resends += m.sends.iter().filter(|s| s.kind != SendKind::First).count() as u64;
        f.spurious_sends += m.sends.iter().filter(|s| s.spurious).count() as u64;
        if let Some(d) = m.delivered_at {
            f.delivered += 1;
            latencies.push(d.saturating_since(m.queued_at).as_millis_f64());
        }
    }
    f.latency_ms = Spread::of(latencies);
    f
}

fn anomaly_figures(conn: &Connection, rows: &[u32]) -> AnomalyFigures {
    let kind = Anomaly::fields().iter().find(|f| f.name == "kind").map(|f| f.get);
    let mut by_kind = BTreeMap::new();
    for a in rows.iter().filter_map(|&i| conn.anomalies.get(i as usize)) {
        let bits = match kind {
            Some(super::fields::Get::Enum(g, _)) => g(a),
            _ => 0,
        };
        // The single-bit name (not the `drop` group).
        if let Some((name, _)) = ANOMALY_KINDS.iter().find(|(_, b)| *b == bits) {
            *by_kind.entry(*name).or_insert(0) += 1;
        }
    }
    AnomalyFigures { rows: rows.len() as u64, by_kind }
}

impl FilteredSummary {
    /// The figures of every client of every lane (`lanes`: each recording with its lane name;
    /// a lane of several clients gives one entry per client, `NAME client N`).
    pub fn of(text: &str, filters: &PerKind, lanes: &[(String, &Recording)]) -> Self {
        let mut out = Vec::new();
        for (name, rec) in lanes {
            let many = rec.clients().len() > 1;
            let conns: Vec<&Connection> =
                if rec.clients().is_empty() { vec![rec.primary()] } else { rec.clients().iter().collect() };
            for conn in conns {
                let view = Shown { rec, conn };
                out.push(LaneFigures {
                    lane: if many { format!("{name} client {}", conn.client) } else { name.clone() },
                    packets: part(view, &filters.packets, |rows| packet_figures(conn, rows)),
                    messages: part(view, &filters.messages, |rows| message_figures(conn, rows)),
                    anomalies: part(view, &filters.anomalies, |rows| anomaly_figures(conn, rows)),
                });
            }
        }
        let lanes = out;
        Self { filter: text.trim().to_string(), lanes }
    }

    /// The human form.
    pub fn to_text(&self) -> String {
        let mut out = format!("filter: {}\n", self.filter);
        for l in &self.lanes {
            out.push_str(&format!("\n{}\n", l.lane));
            match &l.packets {
                Part::Figures(p) => {
                    out.push_str(&format!(
                        "  packets    {} ({} bytes): {} dropped, {} delivered ({} duplicated), {} in flight; {} acked, {} nakked\n",
                        p.rows, p.bytes, p.dropped, p.delivered, p.duplicated, p.in_flight, p.acked, p.nakked
                    ));
                    if let Some(d) = &p.delay_ms {
                        out.push_str(&format!("             link delay {}\n", d.text()));
                    }
                }
                Part::NotApplicable { not_applicable } => out.push_str(&format!("  packets    - ({not_applicable})\n")),
            }
            match &l.messages {
                Part::Figures(m) => {
                    out.push_str(&format!(
                        "  messages   {} ({} reliable): {} delivered, {} acked, {} refused; {} sends, {} resends, {} spurious\n",
                        m.rows, m.reliable, m.delivered, m.acked, m.refused, m.sends, m.resends, m.spurious_sends
                    ));
                    if let Some(d) = &m.latency_ms {
                        out.push_str(&format!("             latency {}\n", d.text()));
                    }
                }
                Part::NotApplicable { not_applicable } => out.push_str(&format!("  messages   - ({not_applicable})\n")),
            }
            match &l.anomalies {
                Part::Figures(a) => {
                    let kinds: Vec<String> = a.by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
                    let sep = if kinds.is_empty() { "" } else { ": " };
                    out.push_str(&format!("  anomalies  {}{sep}{}\n", a.rows, kinds.join(", ")));
                }
                Part::NotApplicable { not_applicable } => out.push_str(&format!("  anomalies  - ({not_applicable})\n")),
            }
        }
        out.trim_end().to_string()
    }
}

/// The kinds a filter applies to, in [`RowKind::ALL`] order.
pub fn applies_to(filters: &PerKind) -> Vec<RowKind> {
    let mut v = Vec::new();
    if filters.packets.is_ok() {
        v.push(RowKind::Packet);
    }
    if filters.messages.is_ok() {
        v.push(RowKind::Message);
    }
    if filters.anomalies.is_ok() {
        v.push(RowKind::Anomaly);
    }
    v
}
