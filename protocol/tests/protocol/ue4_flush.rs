//! When packets go out: on a tick when something is time-sensitive (new bunches, dirty acks),
//! otherwise only after `KeepAliveTime` of silence; and never with more than half the 14-bit
//! sequence space unacknowledged.

use crate::support::*;
use ackscope_protocol::workload::Senders;
use ackscope_protocol::*;

fn sent_times(events: &[Event], side: Side) -> Vec<SimTime> {
    events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::PacketSent { side: s, .. } if s == side))
        .map(|e| e.time)
        .collect()
}

#[test]
fn an_idle_unheard_endpoint_sends_only_keepalives() {
    let seed = 71;
    let mut s = ue4_scenario(seed);
    s.workload.reliable_rate_hz = 0.0;
    s.workload.snapshot_rate_hz = 0.0;
    s.link.a_to_b = LinkConfig { loss_percent: 0.0, ..Default::default() };
    s.link.b_to_a = LinkConfig { loss_percent: 100.0, ..Default::default() };
    let mut sim = Simulation::new(s);
    sim.run_for_secs(10.0);
    let events: Vec<Event> = sim.drain_events().collect();
    let a = sent_times(&events, Side::A);
    // A hears nothing and has nothing to say: one packet per KeepAliveTime (0.2 s, rounded up to
    // the next 60 Hz tick: 13 ticks = 216.7 ms).
    let gaps: Vec<f64> = a.windows(2).map(|w| w[1].saturating_since(w[0]).as_millis_f64()).collect();
    assert!(gaps.iter().all(|g| (200.0..=220.0).contains(g)), "seed {seed}: gaps {gaps:?}");
    assert!((44..=48).contains(&a.len()), "seed {seed}: {} keep-alives", a.len());
    // B hears every one of them 50 ms later and answers at its next tick (dirty acks are
    // time-sensitive), not a keep-alive later.
    let b = sent_times(&events, Side::B);
    for ta in a.iter().filter(|t| t.as_secs_f64() < 9.9) {
        let arrival = ta.plus_micros(50_000);
        let answer = b.iter().find(|tb| **tb >= arrival).map(|tb| tb.saturating_since(arrival).as_millis_f64());
        assert!(answer.is_some_and(|d| d <= 1000.0 / 60.0 + 0.01), "seed {seed}: B answered after {answer:?} ms");
    }
}

/// With no acks coming back, a sender stops at 8191 unacknowledged packets rather than let the
/// 14-bit comparison go wrong. The receiver, which answers every packet, stalls the same way, so
/// both wait on each other until the connection timeout closes the connection explicitly.
#[test]
fn a_silent_return_path_stalls_at_half_the_sequence_space_until_the_timeout() {
    let seed = 72;
    let mut s = ue4_scenario(seed);
    s.send_rate_pps = 250.0;
    s.ue4.net_speed_bytes_per_sec = 0.0;
    s.workload.senders = Senders::AOnly;
    s.workload.reliable_rate_hz = 0.0;
    s.workload.snapshot_rate_hz = 250.0;
    s.link.a_to_b = LinkConfig { loss_percent: 0.0, ..Default::default() };
    s.link.b_to_a = LinkConfig { loss_percent: 100.0, ..Default::default() };
    let mut sim = Simulation::new(s);
    // 40 s at 250 pps would be 10,000 packets; A must stop at 8191 unacknowledged.
    sim.run_for_secs(40.0);
    let events: Vec<Event> = sim.drain_events().collect();
    let stalled = sent_times(&events, Side::A).len();
    assert!((8100..8192).contains(&stalled), "seed {seed}: A sent {stalled} packets without any ack");
    sim.set_link(Dir::BtoA, LinkConfig { loss_percent: 0.0, ..Default::default() });
    sim.run_for_secs(30.0);
    let events: Vec<Event> = sim.drain_events().collect();
    assert!(sent_times(&events, Side::A).is_empty(), "seed {seed}: A sent past a full window");
    assert_eq!(sim.totals().false_acks, 0, "seed {seed}");
    let closed: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ConnectionClosed { side, reason } => Some((e.time, *side, reason.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(closed.len(), 1, "seed {seed}: {closed:?}");
    assert_eq!((closed[0].1, closed[0].2.as_str()), (Side::A, strategies::ue4::TIMEOUT_REASON), "seed {seed}");
    // A heard nothing from the start: it gives up just after 60 s.
    assert!((60.0..60.1).contains(&closed[0].0.as_secs_f64()), "seed {seed}: {closed:?}");
}
