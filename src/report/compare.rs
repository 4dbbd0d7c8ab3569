//! `ackscope compare`: Glenn redundancy and UE4 Nak-driven resend on the same seed, link trace and
//! workload, over a grid of loss and latency.
//!
//! Every variant runs the same scenario (same seed, so the same link draws at the same instants
//! and the same workload messages at the same times); only the strategy and its resend policy
//! differ, so every difference in the table is caused by the strategy.
//!
//! Not every strategy promises the same thing: glenn and ue4 hand reliable messages over in send
//! order, dnm and rellikt as each first arrives. Their latency figures measure different things
//! (with and without head-of-line waiting), so every row says which kind it is (`ordered`) and
//! also carries the latency an application needing order would see (`in_order_latency_ms`), the
//! figure that compares across kinds.

use ackscope_protocol::{LatencyMs, Scenario, Strategy};
use serde::Serialize;

use crate::report::{self, RunFold, RunReport};

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

    /// Whether the receiver hands this variant's reliable messages over in send order (glenn,
    /// ue4) rather than as each first arrives (dnm, rellikt).
    pub fn ordered(self) -> bool {
        match self {
            Variant::GlennFixed(_) | Variant::GlennRtt | Variant::GlennEveryPacket | Variant::Ue4 => true,
            Variant::Dnm | Variant::Rellikt => false,
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
    /// True when reliable messages are handed over in send order: `reliable.latency_ms` then
    /// includes head-of-line waiting. False when each is handed over as it first arrives:
    /// `reliable.latency_ms` is queued -> delivered per message, without head-of-line waiting.
    pub ordered: bool,
    /// Latency as an application that needs order would see it: a message counts until it and
    /// every reliable message its sender queued before it were delivered. Equals
    /// `reliable.latency_ms` for an ordered strategy.
    pub in_order_latency_ms: LatencyMs,
    /// With several clients (`--set clients=N`): the largest of the clients' own reliable p99.
    /// The row's other figures are over every client (see [`CLIENTS_LEGEND`]) and `clients`
    /// lists each client's. Absent with one client.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_client_p99_ms: Option<f64>,
    #[serde(flatten)]
    pub run: RunReport,
}

/// The largest of the clients' own reliable p99 in `run`, when it has several clients.
fn worst_client_p99(run: &RunReport) -> Option<f64> {
    let clients = run.clients.as_ref().filter(|c| c.len() > 1)?;
    clients.iter().filter_map(|c| c.sections.reliable.as_ref()).map(|m| m.latency_ms.p99).reduce(f64::max)
}

/// Runs every variant at every (loss, one-way latency) pair for `seconds`, on `base` (every
/// client's link: with several clients, each row is over all of them and lists each).
pub fn compare(
    base: &Scenario,
    seconds: f64,
    losses: &[f64],
    latencies_ms: &[f64],
    variants: &[Variant],
) -> anyhow::Result<Vec<CompareRow>> {
    let mut rows = Vec::new();
    for &latency_ms in latencies_ms {
        for &loss_percent in losses {
            let mut s = base.clone();
            for l in [&mut s.link.a_to_b, &mut s.link.b_to_a] {
                l.loss_percent = loss_percent;
                l.latency_ms = latency_ms;
            }
            for &v in variants {
                // Folded as the events come (none kept): a grid of long runs of many clients
                // holds one run's figures at a time.
                let scenario = v.apply(&s);
                let fold = RunFold::new(&scenario).with_in_order_latency();
                let (run, fold, _) = report::run_folded(&scenario, seconds, &[], None, fold)?;
                rows.push(CompareRow {
                    variant: v.label(),
                    loss_percent,
                    latency_ms,
                    ordered: v.ordered(),
                    in_order_latency_ms: fold.in_order_latency().unwrap_or_default(),
                    worst_client_p99_ms: worst_client_p99(&run),
                    run,
                });
            }
        }
    }
    Ok(rows)
}

/// What the table's columns mean where a reader could guess wrong; printed under it.
pub const TABLE_LEGEND: &str = "\
order: \"in order\" = reliable messages are handed over in send order (glenn, ue4): p50/p95/p99 include \
head-of-line waiting. \"any order\" = each is handed over when it first arrives (dnm, rellikt): p50/p95/p99 \
are queued -> delivered per message, without head-of-line waiting.
in-order p99: the p99 an application needing order would see (a message counts until it and every earlier \
one arrived); the same as p99 for in-order strategies, the figure to compare across kinds.
bytes/msg: wire bytes both ways / messages delivered, reliable and snapshot alike (the snapshots count too).
backlog: most reliable messages one side held waiting for room in its send window (backlog_peak).\n";

/// Printed under the table when the runs have several clients.
pub const CLIENTS_LEGEND: &str = "\
clients: each run has N clients (--set clients=N), every variant on the same N per-client link traces; the \
latency percentiles, bytes/msg and sends/msg are over every client's messages together, spurious, backlog and \
lost summed over clients; worst client p99 = the largest of the clients' own p99 (--json lists each client's \
figures under `clients`). --loss and --latency set the scenario's link, which a client's own settings \
(client.K.*, a group's preset or link) override.\n";

/// The table README quotes, with its legend.
pub fn to_table(rows: &[CompareRow]) -> String {
    let many = rows.iter().any(|r| r.worst_client_p99_ms.is_some());
    let mut out = String::from(
        "| latency | loss | variant | order | p50 ms | p95 ms | p99 ms | in-order p99 ms | bytes/msg | sends/msg | spurious | max HoL | backlog | lost |",
    );
    out.push_str(if many { " worst client p99 ms |\n" } else { "\n" });
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    out.push_str(if many { "---|\n" } else { "\n" });
    for r in rows {
        let Some(m) = &r.run.sections.reliable else { continue };
        let hol = r.run.sections.ue4.as_ref().map_or("-".to_string(), |u| u.max_inrec_depth.to_string());
        let order = if r.ordered { "in order" } else { "any order" };
        out.push_str(&format!(
            "| {:.0} ms | {:.0} % | {} | {order} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {} | {} | {} | {} |\n",
            r.latency_ms,
            r.loss_percent,
            r.variant,
            m.latency_ms.p50,
            m.latency_ms.p95,
            m.latency_ms.p99,
            r.in_order_latency_ms.p99,
            m.wire_bytes_per_delivered,
            m.sends_per_message,
            m.spurious_resends,
            hol,
            m.backlog_peak,
            m.lost
        ));
        if many {
            out.pop();
            out.push_str(&format!(" {} |\n", r.worst_client_p99_ms.map_or("-".into(), |v| format!("{v:.1}"))));
        }
    }
    out.push('\n');
    out.push_str(TABLE_LEGEND);
    if many {
        out.push_str(CLIENTS_LEGEND);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_say_which_strategies_deliver_in_order_and_give_the_in_order_latency_of_each() {
        let base = Scenario { seed: 3, ..Scenario::default() };
        let rows = compare(&base, 15.0, &[20.0], &[50.0], &Variant::ALL).unwrap();
        assert_eq!(rows.len(), Variant::ALL.len());
        for (r, v) in rows.iter().zip(Variant::ALL) {
            let m = r.run.sections.reliable.as_ref().expect("message strategy");
            let ordered = !matches!(v.strategy(), Strategy::Dnm | Strategy::Rellikt);
            assert_eq!(r.ordered, ordered, "{}", r.variant);
            assert_eq!(m.lost, 0, "{}", r.variant);
            if ordered {
                assert_eq!(m.out_of_order, 0, "{}", r.variant);
                assert_eq!(r.in_order_latency_ms, m.latency_ms, "{}", r.variant);
            } else {
                // Out-of-order arrivals at 20 % loss: an application needing order waits longer.
                assert!(m.out_of_order > 0, "{}", r.variant);
                let (o, l) = (&r.in_order_latency_ms, &m.latency_ms);
                let pairs = [(o.p50, l.p50), (o.p95, l.p95), (o.p99, l.p99), (o.max, l.max)];
                assert!(pairs.iter().all(|(o, l)| o >= l), "{}: {o:?} vs {l:?}", r.variant);
                assert!(pairs.iter().any(|(o, l)| o > l), "{}: {o:?} vs {l:?}", r.variant);
            }
        }
        let table = to_table(&rows);
        assert!(table.contains("| dnm | any order |") && table.contains("| ue4 nak | in order |"), "{table}");
        assert!(table.ends_with(TABLE_LEGEND), "{table}");
        let json = serde_json::to_value(&rows[4]).unwrap();
        assert_eq!(json["ordered"], false);
        assert!(json["in_order_latency_ms"]["p99"].is_number() && json["reliable"]["backlog_peak"].is_number());
    }
}
