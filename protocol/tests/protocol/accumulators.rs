//! The metric folds give the same answer fed in pieces as over the whole log, so views can extend
//! them as the cursor moves forward.

use ackscope_protocol::*;

#[test]
fn folds_fed_in_pieces_equal_folds_over_the_whole_log() {
    for strategy in [Strategy::Glenn, Strategy::Ue4, Strategy::Dnm] {
        let mut s = Scenario { strategy, seed: 8, ..Scenario::default() };
        s.link.a_to_b.loss_percent = 12.0;
        s.link.b_to_a.jitter_ms = 15.0;
        let mut sim = Simulation::new(s);
        sim.run_for_secs(30.0);
        let events: Vec<Event> = sim.drain_events().collect();
        let (mut p, mut m, mut sn, mut u) = (
            SummaryAccumulator::default(),
            MetricsAccumulator::new(),
            SnapshotAccumulator::default(),
            Ue4SummaryAccumulator::default(),
        );
        for piece in events.chunks(997) {
            p.observe(piece);
            m.observe_all(piece);
            for e in piece {
                sn.observe(e);
            }
            u.observe_all(piece);
        }
        assert_eq!(p.finish(), summarize(&events), "{strategy:?}");
        assert_eq!(m.finish(), reliable_metrics(&events), "{strategy:?}");
        assert_eq!(sn.finish(), snapshot_summary(&events), "{strategy:?}");
        assert_eq!(u.finish(), Ue4Summary::from_events(&events), "{strategy:?}");
        assert!(m.finish().delivered > 100, "{strategy:?}");
    }
}
