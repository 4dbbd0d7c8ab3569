//! The headless run: a scenario on virtual time, summarised as one JSON object or as text.
//!
//! Field names in [`RunReport`] are an interface people script against: keep them.

use std::time::Instant;

use ackscope_protocol::{
    drain, reliable_metrics, ChunkSummary, Dir, EstimateSummary, Event, PacketTotals, ReliableMetrics, Scenario,
    Simulation, Strategy,
};
use serde::Serialize;

/// What `ackscope run --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub seed: u64,
    pub strategy: String,
    pub simulated_seconds: f64,
    pub wall_seconds: f64,
    /// Totals over both directions, from the link's ground truth and the endpoints' reports.
    pub packets: PacketTotals,
    pub estimates: EstimateSummary,
    /// Number of events the run produced.
    pub events: u64,
    /// Virtual seconds spent after `--seconds` letting reliable messages drain (workload stopped).
    pub drain_seconds: f64,
    /// Reliable-message metrics, for message strategies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reliable: Option<ReliableMetrics>,
    /// `"chunks"` and `"chunk_acks"`, for chunk and fragment transfers.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<ChunkSummary>,
}

/// Longest the run keeps going after `--seconds` for unacked reliable messages to drain; messages
/// still unacked then count as lost.
pub const MAX_DRAIN_SECONDS: f64 = 30.0;

/// A finished headless run: the report, the simulation in its final state and every event.
pub struct FinishedRun {
    pub report: RunReport,
    pub sim: Simulation,
    pub events: Vec<Event>,
}

/// Runs `scenario` for `seconds` of virtual time as fast as the CPU allows.
pub fn run(scenario: &Scenario, seconds: f64) -> FinishedRun {
    let start = Instant::now();
    let mut sim = Simulation::new(scenario.clone());
    sim.run_for_secs(seconds);
    let is_messages = scenario.strategy.has_messages();
    let drain_seconds = if is_messages { drain(&mut sim, MAX_DRAIN_SECONDS).elapsed_secs } else { 0.0 };
    let events: Vec<Event> = sim.drain_events().collect();
    let reliable = is_messages.then(|| reliable_metrics(&events));
    let chunk = matches!(scenario.strategy, Strategy::Chunks | Strategy::Fragments).then(|| {
        // The ideal adds the link's base round trip, as in the large-blocks seed.
        let l = &scenario.link;
        let rtt_ms = l.a_to_b.latency_ms + l.b_to_a.latency_ms;
        ChunkSummary::from_events(&events, &scenario.chunk, l.get(Dir::AtoB).bandwidth_kbps, rtt_ms)
    });
    let report = RunReport {
        seed: scenario.seed,
        strategy: scenario.strategy.name().to_string(),
        simulated_seconds: sim.now().as_secs_f64(),
        wall_seconds: start.elapsed().as_secs_f64(),
        packets: sim.totals(),
        estimates: sim.estimates(),
        events: events.len() as u64,
        drain_seconds,
        reliable,
        chunk,
    };
    FinishedRun { report, sim, events }
}

impl RunReport {
    /// A short human summary.
    pub fn to_text(&self) -> String {
        let p = &self.packets;
        let e = &self.estimates;
        format!(
            "ackscope run: strategy {}, seed {}, {:.1} s simulated in {:.3} s\n\
             packets: {} sent, {} dropped by the link, {} delivered ({} duplicated), {} acked\n\
             ground truth: {} false acks, {} duplicate acks, {} malformed\n\
             RTT: estimated {:.1} ms, true {:.1} ms\n\
             loss: estimated {:.2} %, true {:.2} %\n\
             events: {}{}",
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
            e.rtt_ms,
            e.true_rtt_ms,
            e.loss_percent,
            e.true_loss_percent,
            self.events,
            self.reliable.as_ref().map(reliable_text).unwrap_or_default()
                + &self.chunk.as_ref().map(chunk_text).unwrap_or_default()
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
        "\nchunk acks: {} packets, {} bytes out for {} bytes in",
        a.packets, a.bytes_out, a.bytes_in
    ));
    out
}

fn reliable_text(r: &ReliableMetrics) -> String {
    format!(
        "\nreliable messages: {} sent, {} delivered, {} lost, {} duplicated, {} out of order, {} corrupted\n\
         latency ms: p50 {:.1}, p95 {:.1}, p99 {:.1}, max {:.1}\n\
         {:.1} wire bytes per delivered message, {:.2} sends per message, {} spurious resends",
        r.sent,
        r.delivered,
        r.lost,
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
