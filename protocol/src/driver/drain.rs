//! Ending a run cleanly: stop the workload, then run until every reliable message is acked.
//!
//! "Lost" only means something once the messages still in flight at the end have had their chance:
//! a run that simply stops counts every message of the last RTT as lost. So the CLI runs for its
//! `--seconds`, then drains: workload rates go to zero (snapshots and reliable events; bursts
//! already queued still go out) and the simulation keeps running — packets, acks, resends — until
//! both endpoints report no unacked reliable message ([`crate::Peer::unacked_reliable`]) or the
//! time limit passes. Strategy-independent: any endpoint that reports its unacked count drains.

use super::simulation::Simulation;
use crate::event::SimTime;

/// How a drain ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DrainOutcome {
    /// True when every reliable message was acked before the limit.
    pub drained: bool,
    /// Virtual seconds the drain ran.
    pub elapsed_secs: f64,
    /// Reliable messages still unacked at the end (0 when drained).
    pub unacked: usize,
}

/// Virtual time between checks of the unacked count.
const CHECK_INTERVAL_US: u64 = 10_000;

/// Stops the workload and runs until all reliable messages are acked or `max_secs` pass.
pub fn drain(sim: &mut Simulation, max_secs: f64) -> DrainOutcome {
    sim.reconfigure(|s| {
        s.workload.snapshot_rate_hz = 0.0;
        s.workload.reliable_rate_hz = 0.0;
    });
    let start = sim.now();
    let limit = start.plus_micros((max_secs.max(0.0) * 1e6).round() as u64);
    loop {
        let unacked = sim.unacked_reliable();
        let elapsed_secs = sim.now().saturating_since(start).as_secs_f64();
        if unacked == 0 || sim.now() >= limit {
            return DrainOutcome { drained: unacked == 0, elapsed_secs, unacked };
        }
        let next = SimTime(sim.now().plus_micros(CHECK_INTERVAL_US).0.min(limit.0));
        sim.run_until(next);
    }
}
