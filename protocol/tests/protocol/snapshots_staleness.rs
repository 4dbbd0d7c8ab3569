//! Newest-state replication (MGP 7.6) against plain unreliable snapshots and reliable resend of
//! every snapshot: staleness at the receiver and what each costs in sends.
//!
//! Figures: `cargo test -p ackscope-protocol --release --test protocol snapshots_staleness:: -- --nocapture`.

use crate::support::*;
use ackscope_protocol::*;

fn run(strategy: Strategy, seed: u64, hz: f64, mode: SnapshotMode) -> (SnapshotSummary, Vec<Event>) {
    let mut s = scenario(strategy, seed, 20.0);
    s.workload.snapshot_rate_hz = hz;
    s.workload.snapshot_mode = mode;
    let mut sim = Simulation::new(s);
    sim.run_for_secs(120.0);
    let sum = snapshot_summary(sim.events());
    println!("{} {hz} Hz {mode:?} (seed {seed}): {sum:?}", strategy.name());
    (sum, sim.drain_events().collect())
}

const MODES: [SnapshotMode; 3] = [SnapshotMode::Unreliable, SnapshotMode::Newest, SnapshotMode::Reliable];

#[test]
fn newest_state_cuts_staleness_at_a_fraction_of_reliable_resends() {
    let seed = 21;
    let [u, n, r] = MODES.map(|m| run(Strategy::Dnm, seed, 5.0, m).0);
    assert_eq!((u.sent, u.resent), (u.queued, 0), "seed {seed}: unreliable never resends: {u:?}");
    assert!(u.received < u.queued * 9 / 10, "seed {seed}: {u:?}");
    assert!(n.resent > 0 && n.resent < r.resent, "seed {seed}: newest {n:?} vs reliable {r:?}");
    assert!(n.staleness_ms.p99 < u.staleness_ms.p99 * 0.8, "seed {seed}: newest {n:?} vs unreliable {u:?}");
    // Reliable gets every snapshot through but the last few in flight.
    assert!(r.received + 20 >= r.queued, "seed {seed}: {r:?}");
    for s in [u, n, r] {
        // Never fresher than the one-way link latency (50 ms -20 ms jitter).
        assert!(s.staleness_ms.p50 >= 30.0 && s.staleness_ms.samples > 40_000, "seed {seed}: {s:?}");
    }
}

#[test]
fn newest_mode_resends_only_the_newest_state_of_the_sender() {
    let seed = 22;
    for strategy in [Strategy::Dnm, Strategy::Rellikt] {
        let (_, events) = run(strategy, seed, 5.0, SnapshotMode::Newest);
        let mut newest: [Option<u64>; 2] = [None, None];
        let mut snapshots = [std::collections::HashSet::new(), std::collections::HashSet::new()];
        for e in &events {
            match e.kind {
                EventKind::MessageQueued { side, msg, reliable: false, .. } => {
                    newest[side.index()] = Some(msg);
                    snapshots[side.index()].insert(msg);
                }
                EventKind::MessageSent { side, msg, kind, .. }
                    if kind != SendKind::First && snapshots[side.index()].contains(&msg) =>
                {
                    assert_eq!(Some(msg), newest[side.index()], "{strategy:?} (seed {seed}): stale state resent");
                }
                _ => {}
            }
        }
    }
}

#[test]
fn rellikts_one_second_loss_rule_is_too_slow_for_newest_state_to_resend() {
    // By the time a snapshot is declared lost, newer ones (every 200 ms) are already out.
    let seed = 23;
    let (n, _) = run(Strategy::Rellikt, seed, 5.0, SnapshotMode::Newest);
    let (u, _) = run(Strategy::Rellikt, seed, 5.0, SnapshotMode::Unreliable);
    assert_eq!(n.resent, 0, "seed {seed}: {n:?}");
    assert_eq!(n, u, "seed {seed}: newest behaves as unreliable");
}

#[test]
fn figures_for_both_strategies_and_snapshot_rates() {
    for strategy in [Strategy::Dnm, Strategy::Rellikt] {
        for hz in [20.0, 5.0] {
            for mode in MODES {
                let (s, _) = run(strategy, 1, hz, mode);
                assert!(s.queued > 0 && s.received > 0 && s.staleness_ms.p99 >= s.staleness_ms.p50);
            }
        }
    }
}
