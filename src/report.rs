//! The headless run: a scenario on virtual time, summarised as one JSON object or as text.
//!
//! Field names in [`RunReport`] are an interface people script against: keep them.

use std::time::Instant;

use ackscope_protocol::{EstimateSummary, PacketTotals, Scenario, Simulation};
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
}

/// Runs `scenario` for `seconds` of virtual time as fast as the CPU allows.
pub fn run(scenario: &Scenario, seconds: f64) -> (RunReport, Simulation) {
    let start = Instant::now();
    let mut sim = Simulation::new(scenario.clone());
    let mut events = 0u64;
    // Drain as we go so a long run does not hold every event in memory.
    let step: f64 = 10.0;
    let mut t = 0.0;
    while t < seconds {
        let dt = step.min(seconds - t);
        sim.run_for_secs(dt);
        events += sim.drain_events().count() as u64;
        t += dt;
    }
    let report = RunReport {
        seed: scenario.seed,
        strategy: scenario.strategy.name().to_string(),
        simulated_seconds: sim.now().as_secs_f64(),
        wall_seconds: start.elapsed().as_secs_f64(),
        packets: sim.totals(),
        estimates: sim.estimates(),
        events,
    };
    (report, sim)
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
             events: {}",
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
            self.events
        )
    }
}
