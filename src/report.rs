//! The headless run: a scenario on virtual time, summarised as one JSON object or as text.
//!
//! Field names in [`RunReport`] are an interface people script against: keep them.

use std::time::Instant;

use ackscope_protocol::{ChunkSummary, Dir, EstimateSummary, Event, PacketTotals, Scenario, Simulation, Strategy};
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
    /// `"chunks"` and `"chunk_acks"`, for chunk and fragment transfers.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<ChunkSummary>,
}

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
    let events: Vec<Event> = sim.drain_events().collect();
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
            self.chunk.as_ref().map(chunk_text).unwrap_or_default()
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
