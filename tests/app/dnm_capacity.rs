//! dnm above its capacity: the run's drain ends with reliable messages still held by their
//! senders, and the report says so (`still_queued_at_end`) instead of calling them lost with the
//! ones a protocol really dropped (`lost_dropped`); below capacity both are 0.

use ackscope::report;
use ackscope_protocol::{Scenario, Strategy};

/// dnm at `reliable_hz` reliable messages per second each way, 10 packets/s of at most 200
/// bytes: a capacity of a few dozen messages per second.
fn dnm(reliable_hz: f64) -> Scenario {
    let mut s = Scenario { seed: 4, strategy: Strategy::Dnm, send_rate_pps: 10.0, ..Scenario::default() };
    s.workload.reliable_rate_hz = reliable_hz;
    s.dnm.max_packet_bytes = 200;
    s
}

#[test]
fn dnm_above_capacity_reports_messages_still_queued_at_end_apart_from_dropped_ones() {
    let run = report::run(&dnm(200.0), 20.0);
    let r = &run.report;
    let m = r.sections.reliable.expect("dnm carries messages");
    println!(
        "sent {}, delivered {}, lost {} = {} dropped + {} still queued; drain {} s; held by the endpoints {}",
        m.sent,
        m.delivered,
        m.lost,
        m.lost_dropped,
        m.still_queued_at_end,
        r.drain_seconds,
        run.sim.unacked_reliable()
    );
    assert!(r.drain_seconds >= 29.9, "the drain ran out of time: {} s", r.drain_seconds);
    assert!(m.backlog_peak > 100, "above capacity the backlog grows: {}", m.backlog_peak);
    assert_eq!(m.lost, m.lost_dropped + m.still_queued_at_end);
    // dnm drops no reliable message and acks none falsely: every one not delivered is held.
    assert_eq!((m.refused_too_large, r.packets.false_acks), (0, 0));
    assert_eq!(m.lost_dropped, 0);
    assert!(m.still_queued_at_end > 1000, "{}", m.still_queued_at_end);
    // What the endpoints hold: those too, and the delivered ones whose ack is still on its way.
    let held = run.sim.unacked_reliable() as u64;
    assert!(m.still_queued_at_end <= held && held - m.still_queued_at_end < 200, "held {held}");

    let json = serde_json::to_value(r).unwrap();
    assert_eq!(json["reliable"]["still_queued_at_end"], m.still_queued_at_end);
    assert_eq!(json["reliable"]["lost_dropped"], 0);
    let text = r.to_text();
    let want = format!("{} lost (0 dropped, {} still queued at end)", m.lost, m.still_queued_at_end);
    assert!(text.contains(&want), "{text}");
}

#[test]
fn dnm_within_capacity_loses_nothing_and_holds_nothing_at_the_end() {
    let m = report::run(&dnm(5.0), 20.0).report.sections.reliable.expect("dnm carries messages");
    assert!(m.sent > 150);
    assert_eq!((m.lost, m.lost_dropped, m.still_queued_at_end), (0, 0, 0));
}
