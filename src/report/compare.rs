//! `ackscope compare`: Glenn redundancy and UE4 Nak-driven resend on the same seed, link trace and
//! workload, over a grid of loss and latency.
//!
//! Every variant runs the same scenario (same seed, so the same link draws at the same instants
//! and the same workload messages at the same times); only the strategy and its resend policy
//! differ, so every difference in the table is caused by the strategy.

use ackscope_protocol::{Scenario, Strategy};
use serde::Serialize;

use crate::report::{self, RunReport};

/// One resend policy under comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Variant {
    /// Glenn with a fixed resend delay (ms).
    GlennFixed(f64),
    /// Glenn with resend delay = RTT x 1.25.
    GlennRtt,
    /// Glenn with resend delay 0: every unacked message in every packet.
    GlennEveryPacket,
    /// UE4: resend only on Nak.
    Ue4,
    /// Delivery notification manager (ack ranges + timeout).
    Dnm,
    /// rellikt's header, 1 s loss rule.
    Rellikt,
}

impl Variant {
    /// The variants `compare` runs by default.
    pub const DEFAULT: [Variant; 4] =
        [Variant::GlennFixed(100.0), Variant::GlennRtt, Variant::GlennEveryPacket, Variant::Ue4];

    /// Every variant.
    pub const ALL: [Variant; 6] = [
        Variant::GlennFixed(100.0),
        Variant::GlennRtt,
        Variant::GlennEveryPacket,
        Variant::Ue4,
        Variant::Dnm,
        Variant::Rellikt,
    ];

    /// The variant's name in the table and in the JSON `variant` field.
    pub fn label(self) -> String {
        match self {
            Variant::GlennFixed(ms) => format!("glenn {ms:.0} ms"),
            Variant::GlennRtt => "glenn RTTx1.25".into(),
            Variant::GlennEveryPacket => "glenn every pkt".into(),
            Variant::Ue4 => "ue4 nak".into(),
            Variant::Dnm => "dnm".into(),
            Variant::Rellikt => "rellikt".into(),
        }
    }

    /// The strategy this variant runs.
    pub fn strategy(self) -> Strategy {
        match self {
            Variant::GlennFixed(_) | Variant::GlennRtt | Variant::GlennEveryPacket => Strategy::Glenn,
            Variant::Ue4 => Strategy::Ue4,
            Variant::Dnm => Strategy::Dnm,
            Variant::Rellikt => Strategy::Rellikt,
        }
    }

    /// `base` with this variant's strategy settings.
    pub fn apply(self, base: &Scenario) -> Scenario {
        let mut s = base.clone();
        s.strategy = self.strategy();
        match self {
            Variant::GlennFixed(ms) => {
                s.glenn.resend_delay_ms = ms;
                s.glenn.rtt_resend = false;
            }
            Variant::GlennRtt => s.glenn.rtt_resend = true,
            Variant::GlennEveryPacket => {
                s.glenn.resend_delay_ms = 0.0;
                s.glenn.rtt_resend = false;
            }
            Variant::Ue4 | Variant::Dnm | Variant::Rellikt => {}
        }
        s
    }
}

/// One cell of the comparison: a run object plus where it sits in the grid.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    pub variant: String,
    pub loss_percent: f64,
    pub latency_ms: f64,
    #[serde(flatten)]
    pub run: RunReport,
}

/// Runs every variant at every (loss, one-way latency) pair for `seconds`, on `base`.
pub fn compare(
    base: &Scenario,
    seconds: f64,
    losses: &[f64],
    latencies_ms: &[f64],
    variants: &[Variant],
) -> Vec<CompareRow> {
    let mut rows = Vec::new();
    for &latency_ms in latencies_ms {
        for &loss_percent in losses {
            let mut s = base.clone();
            for l in [&mut s.link.a_to_b, &mut s.link.b_to_a] {
                l.loss_percent = loss_percent;
                l.latency_ms = latency_ms;
            }
            for &v in variants {
                let run = report::run(&v.apply(&s), seconds).report;
                rows.push(CompareRow { variant: v.label(), loss_percent, latency_ms, run });
            }
        }
    }
    rows
}

/// The table README quotes.
pub fn to_table(rows: &[CompareRow]) -> String {
    let mut out = String::from(
        "| latency | loss | variant | p50 ms | p95 ms | p99 ms | bytes/msg | sends/msg | spurious | max HoL | lost |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let Some(m) = &r.run.reliable else { continue };
        let hol = r.run.ue4.as_ref().map_or("-".to_string(), |u| u.max_inrec_depth.to_string());
        out.push_str(&format!(
            "| {:.0} ms | {:.0} % | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {} | {} | {} |\n",
            r.latency_ms,
            r.loss_percent,
            r.variant,
            m.latency_ms.p50,
            m.latency_ms.p95,
            m.latency_ms.p99,
            m.wire_bytes_per_delivered,
            m.sends_per_message,
            m.spurious_resends,
            hol,
            m.lost
        ));
    }
    out
}
