//! The simulation of one client as before clients existed: send ids, the summary and filter at
//! the end of each instant, script order.

use super::*;
use crate::action::Step;
use crate::event::EventKind;
use crate::link::{LinkPatch, LinkStep, StepDirection};

fn step(at_s: f64, dir: StepDirection, set: LinkPatch) -> Step {
    LinkStep { at_s, dir, set }.into()
}

#[test]
fn send_ids_count_up_over_both_sides_in_send_order() {
    let mut sim = Simulation::new(Scenario::default());
    sim.run_until(SimTime::from_secs_f64(2.0));
    let sent: Vec<(Side, u64)> = sim
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::PacketSent { side, uid, .. } => Some((side, uid)),
            _ => None,
        })
        .collect();
    assert!(sent.iter().any(|s| s.0 == Side::A) && sent.iter().any(|s| s.0 == Side::B));
    assert!(sent.iter().map(|s| s.1).eq(0..sent.len() as u64), "{sent:?}");
}

#[test]
fn without_the_summary_each_instant_still_drops_or_filters_its_events() {
    let mut sim = Simulation::new(Scenario::default());
    sim.set_summary(false);
    sim.set_keep_events(false);
    sim.run_until(SimTime::from_secs_f64(1.0));
    assert!(sim.events().is_empty());
    sim.set_keep_events(true);
    // RTT samples are built (flow control's filter is fed) but not recorded: the filter's pass.
    sim.set_event_filter(EventFilter::MESSAGE_METRICS);
    sim.run_until(SimTime::from_secs_f64(3.0));
    let kept = |e: &&Event| EventFilter::MESSAGE_METRICS.keeps(&e.kind);
    assert!(sim.events().len() > 100 && sim.events().iter().all(|e| kept(&e)));
    sim.set_event_filter(EventFilter::ALL);
    sim.run_until(SimTime::from_secs_f64(4.0));
    assert!(sim.events().iter().any(|e| matches!(e.kind, EventKind::RttSample { .. })));
}

#[test]
fn script_steps_at_one_instant_apply_in_script_order_each_a_to_b_first() {
    let script = vec![
        step(2.0, StepDirection::AToB, LinkPatch { loss_percent: Some(9.0), ..LinkPatch::default() }),
        step(1.0, StepDirection::Both, LinkPatch { latency_ms: Some(80.0), ..LinkPatch::default() }),
        step(1.0, StepDirection::BToA, LinkPatch { loss_percent: Some(3.0), ..LinkPatch::default() }),
        step(1.0, StepDirection::AToB, LinkPatch { jitter_ms: Some(2.0), ..LinkPatch::default() }),
    ];
    let mut sim = Simulation::new(Scenario { script, ..Scenario::default() });
    sim.run_until(SimTime::from_secs_f64(2.5));
    let changed: Vec<(u64, String)> = sim
        .events()
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ParamChanged { name, .. } => Some((e.time.0 / 1000, name.clone())),
            _ => None,
        })
        .collect();
    let expect = [
        (1000, "link.a_to_b.latency_ms"),
        (1000, "link.b_to_a.latency_ms"),
        (1000, "link.b_to_a.loss_percent"),
        (1000, "link.a_to_b.jitter_ms"),
        (2000, "link.a_to_b.loss_percent"),
    ];
    assert_eq!(changed, expect.map(|(t, n)| (t, n.to_string())));
    let l = &sim.scenario().link;
    assert_eq!((l.a_to_b.latency_ms, l.a_to_b.jitter_ms, l.a_to_b.loss_percent), (80.0, 2.0, 9.0));
    assert_eq!((l.b_to_a.latency_ms, l.b_to_a.loss_percent), (80.0, 3.0));
}
