//! The human form of a run report (`ackscope run` without `--json`).

use ackscope_protocol::{ChunkSummary, Discards, ReliableMetrics, ServerSummary, SnapshotSummary, Ue4Summary};

use super::{ClientReport, FlowSummary, RunReport};

/// Clients listed one per line in the text report; the rest are counted (`--json` lists all).
const CLIENT_LINES: usize = 32;

impl RunReport {
    /// A short human summary.
    pub fn to_text(&self) -> String {
        let p = &self.packets;
        let e = &self.estimates;
        format!(
            "ackscope: {} {}, seed {}, {:.1} s simulated in {:.3} s\n\
             packets: {} sent, {} dropped by the link, {} delivered ({} duplicated), {} acked\n\
             ground truth: {} false acks, {} duplicate acks, {} malformed\n\
             RTT: estimated {}, true {}\n\
             loss: estimated {}, true {:.2} % (link drops), effective {:.2} % (with {} discarded by the receiver{})\n\
             events: {}{}",
            // A decoded lane (a proxy's, a capture's) runs a protocol, not one of the strategies.
            if self.decoded.is_some() { "protocol" } else { "strategy" },
            self.strategy,
            self.seed,
            self.simulated_seconds,
            self.wall_seconds,
            p.sent,
            p.link_dropped,
            p.delivered,
            p.duplicated,
            p.acked,
            p.false_acks,
            p.duplicate_acks,
            p.malformed,
            opt_figure(e.rtt_ms, 1, "ms", "no sample"),
            opt_figure(e.true_rtt_ms, 1, "ms", "no sample"),
            opt_figure(e.loss_percent, 2, "%", "no verdict yet"),
            e.true_loss_percent,
            e.effective_loss_percent,
            e.discarded.total(),
            discards_text(&e.discarded),
            self.events,
            self.decoded.as_ref().map(super::decoded::DecodedSummary::to_text).unwrap_or_default()
                + &self.sections.reliable.as_ref().map(reliable_text).unwrap_or_default()
                + &self.sections.snapshots.as_ref().map(snapshot_text).unwrap_or_default()
                + &self.sections.ue4.as_ref().map(ue4_text).unwrap_or_default()
                + &self.sections.chunk.as_ref().map(chunk_text).unwrap_or_default()
                + &self.sections.flow.as_ref().map(FlowSummary::to_text).unwrap_or_default()
                + &self.server.as_ref().map(server_text).unwrap_or_default()
                + &self.clients.as_deref().map(clients_text).unwrap_or_default()
                + &self.ab.as_ref().map(|b| format!("\n\nsecond lane (A/B):\n{}", b.to_text())).unwrap_or_default()
        )
    }
}

fn chunk_text(c: &ChunkSummary) -> String {
    let mut out = String::new();
    for (i, k) in c.chunks.iter().enumerate() {
        out.push_str(&format!(
            "\nchunk {i}: {} bytes in {:.2} s (ideal {:.2} s), {} slices sent, {} resent",
            k.size_bytes, k.completion_seconds, k.ideal_seconds, k.slices_sent, k.slices_resent
        ));
    }
    let a = &c.chunk_acks;
    out.push_str(&format!(
        "\nchunk acks: {} packets ({} dropped by the link), {} bytes out for {} bytes in",
        a.packets, a.dropped, a.bytes_out, a.bytes_in
    ));
    out
}

fn reliable_text(r: &ReliableMetrics) -> String {
    format!(
        "\nreliable messages: {} sent, {} delivered, {} lost ({} dropped, {} still queued at end), {} duplicated, \
         {} out of order, {} corrupted\n\
         latency ms: p50 {:.1}, p95 {:.1}, p99 {:.1}, max {:.1}\n\
         {:.1} wire bytes per delivered message, {:.2} sends per message, {} spurious resends",
        r.sent,
        r.delivered,
        r.lost,
        r.lost_dropped,
        r.still_queued_at_end,
        r.duplicated,
        r.out_of_order,
        r.corrupted,
        r.latency_ms.p50,
        r.latency_ms.p95,
        r.latency_ms.p99,
        r.latency_ms.max,
        r.wire_bytes_per_delivered,
        r.sends_per_message,
        r.spurious_resends
    )
}

fn ue4_text(u: &Ue4Summary) -> String {
    format!(
        "\nue4: {} naks received, {} bunches resent, {} skip-acks, {} actor channels opened / {} closed, \
         InRec depth up to {} (actor {}, blocked up to {:.0} ms){}",
        u.naks_received,
        u.bunches_resent,
        u.skip_acks,
        u.channels_opened,
        u.channels_closed,
        u.max_inrec_depth,
        u.max_inrec_depth_by_kind.actor,
        u.max_inrec_blocked_ms,
        if u.connection_closed {
            format!(
                ", connection closed at {:.1} s: {} ({} messages abandoned)",
                u.closed_at_s.unwrap_or(0.0),
                u.close_reason.as_deref().unwrap_or("?"),
                u.abandoned_messages
            )
        } else {
            String::new()
        }
    )
}

fn snapshot_text(s: &SnapshotSummary) -> String {
    format!(
        "\nsnapshots: {} sent ({} resent), {} received; staleness ms p50 {:.1}, p99 {:.1}",
        s.sent, s.resent, s.received, s.staleness_ms.p50, s.staleness_ms.p99
    )
}

fn server_text(s: &ServerSummary) -> String {
    let mut out = format!(
        "\nserver: {:.1} kbps out ({} packets), {:.1} kbps in ({} packets)",
        s.kbps_out, s.packets_out, s.kbps_in, s.packets_in
    );
    if let Some(u) = &s.uplink {
        out.push_str(&format!(
            "\nuplink {:.0} kbps, {} bytes queue: {} packets, {} dropped; queue delay ms p50 {:.1}, p95 {:.1}, p99 {:.1}, max {:.1}",
            u.kbps, u.queue_bytes, u.packets, u.dropped, u.queue_delay_ms.p50, u.queue_delay_ms.p95, u.queue_delay_ms.p99,
            u.queue_delay_ms.max
        ));
    }
    out
}

fn clients_text(clients: &[ClientReport]) -> String {
    let mut out =
        String::from("\nclients (RTT est/true ms, loss est/true %, sent, acked, false acks, reliable p99 ms, lost):");
    for c in clients.iter().take(CLIENT_LINES) {
        let (e, p) = (&c.estimates, &c.packets);
        let reliable = c
            .sections
            .reliable
            .as_ref()
            .map_or(String::new(), |r| format!(", p99 {:.1}, lost {}", r.latency_ms.p99, r.lost));
        out.push_str(&format!(
            "\n  client {}{}: RTT {}/{}, loss {}/{:.2}, {} sent, {} acked, {} false{reliable}",
            c.client,
            c.group.map_or(String::new(), |g| format!(" (group {g})")),
            e.rtt_ms.map_or("-".into(), |v| format!("{v:.1}")),
            e.true_rtt_ms.map_or("-".into(), |v| format!("{v:.1}")),
            e.loss_percent.map_or("-".into(), |v| format!("{v:.2}")),
            e.true_loss_percent,
            p.sent,
            p.acked,
            p.false_acks,
        ));
    }
    if clients.len() > CLIENT_LINES {
        out.push_str(&format!("\n  ... {} more (--json lists every client)", clients.len() - CLIENT_LINES));
    }
    out
}

/// `v` with `decimals` and `unit`, or `none` when there is no such figure.
pub fn opt_figure(v: Option<f64>, decimals: usize, unit: &str, none: &str) -> String {
    v.map_or_else(|| none.to_string(), |v| format!("{v:.decimals$} {unit}"))
}

/// `": 12 late, 3 duplicate"`: the non-zero reasons of `d` (nothing when there are none).
pub fn discards_text(d: &Discards) -> String {
    let parts: Vec<String> = d
        .by_reason()
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{n} {}", name.replace('_', " ")))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(": {}", parts.join(", "))
    }
}
