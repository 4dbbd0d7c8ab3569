//! A simulation that records only some events runs exactly as one that records them all: what it
//! keeps is the full run's events with the others taken out, in the same order, and a sweep's
//! message metrics come out the same.

use ackscope_protocol::*;

const SECONDS: u64 = 20;

/// Every event of a run of `scenario` with `filter`, drained each simulated second.
fn events(scenario: &Scenario, filter: EventFilter, summary: bool) -> Vec<Event> {
    let mut sim = Simulation::new(scenario.clone());
    sim.set_summary(summary);
    sim.set_event_filter(filter);
    let mut out = Vec::new();
    for s in 1..=SECONDS {
        sim.run_until(SimTime(s * 1_000_000));
        out.extend(sim.drain_events());
    }
    out
}

/// A lossy, jittery link at a latency off the 60 pps tick grid, flow control on (it reads the
/// RTT samples a filter may drop), a burst, a restart (new links, which must keep the filter)
/// and a change of strategy.
fn scenario(strategy: Strategy, seed: u64) -> Scenario {
    let mut s = Scenario { seed, strategy, ..Scenario::default() };
    crate::support::jittery_off_grid_link(&mut s);
    s.flow.enabled = seed.is_multiple_of(2);
    // A change of strategy brings endpoints that may build packet beliefs whatever they are told.
    let other = if strategy == Strategy::Ue4 { Strategy::Glenn } else { Strategy::Ue4 };
    s.script = vec![
        Step::new(SimTime::from_secs_f64(7.3), Action::Burst { side: Side::A }),
        Step::new(SimTime::from_secs_f64(11.0), Action::Restart),
        Step::new(SimTime::from_secs_f64(15.5), Action::Strategy(other)),
    ];
    s
}

#[test]
fn a_filtered_run_records_the_full_runs_events_minus_the_left_out_ones() {
    let none = EventFilter { link: false, packet_beliefs: false, rtt_samples: false, stats: false };
    for strategy in [Strategy::Glenn, Strategy::Ue4, Strategy::Hybrid, Strategy::Dnm, Strategy::Rellikt] {
        for seed in 1..=3 {
            let s = scenario(strategy, seed);
            let full = events(&s, EventFilter::ALL, false);
            for filter in [EventFilter::MESSAGE_METRICS, none] {
                let expect: Vec<&Event> = full.iter().filter(|e| filter.keeps(&e.kind)).collect();
                assert!(expect.len() < full.len(), "{strategy:?} seed {seed}: the filter left nothing out");
                let got = events(&s, filter, false);
                assert!(got.iter().eq(expect.iter().copied()), "{strategy:?} seed {seed} {filter:?}: events differ");
                // With the summary folded the sources build everything; the record is the same.
                let with_summary = events(&s, filter, true);
                assert!(with_summary == got, "{strategy:?} seed {seed} {filter:?}: differs with the summary on");
                assert_eq!(reliable_metrics(&got), reliable_metrics(&full), "{strategy:?} seed {seed} {filter:?}");
            }
        }
    }
}
