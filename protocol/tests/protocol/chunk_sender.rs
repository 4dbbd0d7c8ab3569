//! The sender's budget, resend delay and initial burst, read back from its events.

use ackscope_protocol::measure::ChunkSummary;
use ackscope_protocol::{
    ChunkConfig, Event, EventKind, LinkConfig, Scenario, Side, SimTime, Simulation, Strategy, TickPhase,
};

fn run(config: ChunkConfig, link: LinkConfig, seconds: f64) -> Vec<Event> {
    // Lock-step: the chunk starts on the first tick, at time zero.
    let mut s =
        Scenario { seed: 9, strategy: Strategy::Chunks, tick_phase: TickPhase::Lockstep, ..Scenario::default() };
    s.workload.chunk_kib = 256;
    s.chunk = config;
    s.link.a_to_b = link;
    s.link.b_to_a = link;
    let mut sim = Simulation::new(s);
    sim.run_for_secs(seconds);
    sim.drain_events().collect()
}

fn clean(latency_ms: f64) -> LinkConfig {
    LinkConfig { latency_ms, loss_percent: 0.0, ..LinkConfig::default() }
}

#[test]
fn budget_events_spend_the_target_rate_and_never_more_than_available() {
    let events = run(ChunkConfig { bandwidth_kbps: 512.0, ..ChunkConfig::default() }, clean(50.0), 4.0);
    let budget: Vec<(SimTime, f32, f32)> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Budget { side: Side::A, available_bytes, spent_bytes } => {
                Some((e.time, available_bytes, spent_bytes))
            }
            _ => None,
        })
        .collect();
    assert!(budget.len() > 200, "{} budget samples", budget.len());
    for &(t, avail, spent) in &budget {
        assert!(spent <= avail + 0.01, "at {t:?}: spent {spent} of {avail}");
        // Left over from a tick: less than one slice packet on the wire.
        assert!(avail - spent < 1061.0 + 0.01, "at {t:?}: {avail} available, {spent} spent");
    }
    // Over 1..3 s (mid-chunk) the spend matches 512 kbit/s = 64000 B/s within one packet.
    let spent: f32 = budget.iter().filter(|b| b.0 >= SimTime(1_000_000) && b.0 < SimTime(3_000_000)).map(|b| b.2).sum();
    assert!((spent - 128_000.0).abs() < 1100.0, "{spent} bytes in 2 s");
    // And it matches the wire: slices sent over the same window x 1059 bytes.
    let slices = events
        .iter()
        .filter(|e| e.time >= SimTime(1_000_000) && e.time < SimTime(3_000_000))
        .filter(|e| matches!(e.kind, EventKind::SliceSent { .. }))
        .count();
    assert!((slices as f32 * 1059.0 - spent).abs() < 1.0, "{slices} slices vs {spent} bytes");
}

#[test]
fn slices_go_round_robin_and_are_not_resent_before_the_delay() {
    let config = ChunkConfig { bandwidth_kbps: 1000.0, ..ChunkConfig::default() };
    let events = run(config, LinkConfig { latency_ms: 50.0, loss_percent: 20.0, ..LinkConfig::default() }, 3.0);
    let mut last_sent = vec![None::<SimTime>; 256];
    let mut first_pass = Vec::new();
    for e in &events {
        if let EventKind::SliceSent { side: Side::A, chunk: 0, slice, resend } = e.kind {
            let i = slice as usize;
            if let Some(t) = last_sent[i] {
                assert!(resend);
                assert!(
                    e.time.saturating_since(t) >= SimTime(100_000),
                    "slice {i} resent after {:?}",
                    e.time.saturating_since(t)
                );
            } else {
                assert!(!resend);
                first_pass.push(i);
            }
            last_sent[i] = Some(e.time);
        }
    }
    assert_eq!(first_pass, (0..256).collect::<Vec<_>>(), "the first pass walks the slices in order");
}

#[test]
fn initial_burst_sends_every_slice_at_once_then_waits_100_ms() {
    let config = ChunkConfig { initial_burst: true, ..ChunkConfig::default() };
    // A fat pipe (10 Mbit/s, queue large enough): the burst gets the chunk across in ~0.35 s.
    let link = LinkConfig {
        latency_ms: 50.0,
        loss_percent: 0.0,
        bandwidth_kbps: 10_000.0,
        queue_bytes: 1 << 20,
        ..LinkConfig::default()
    };
    let events = run(config, link, 3.0);
    let sends: Vec<(SimTime, bool)> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::SliceSent { side: Side::A, chunk: 0, resend, .. } => Some((e.time, resend)),
            _ => None,
        })
        .collect();
    assert!(sends.len() >= 256);
    assert!(sends[..256].iter().all(|s| s.0 == SimTime::ZERO && !s.1), "all 256 slices at t = 0");
    if let Some(next) = sends.get(256) {
        assert!(next.0 >= SimTime(100_000), "next send at {:?}, before the 100 ms wait ended", next.0);
    }
    let sum = ChunkSummary::from_events(&events, config.cost(), 10_000.0, 100.0);
    let first = sum.chunks.first().expect("done");
    println!("burst: {:.3} s (budgeted ideal {:.3} s)", first.completion_seconds, first.ideal_seconds);
    assert!(first.completion_seconds < 0.5, "{first:?}");

    // Without the burst the same chunk takes the budgeted 8.6 s.
    let events = run(ChunkConfig::default(), link, 10.0);
    let sum = ChunkSummary::from_events(&events, ChunkConfig::default().cost(), 10_000.0, 100.0);
    assert!(sum.chunks.first().expect("done").completion_seconds > 8.0);
}

#[test]
fn rtt_based_resend_delay_cuts_spurious_resends_when_acks_are_slower_than_100_ms() {
    // RTT 200 ms: a fixed 100 ms delay resends the tail of every chunk before its ack can arrive.
    let fixed = run(ChunkConfig { bandwidth_kbps: 1000.0, ..ChunkConfig::default() }, clean(100.0), 12.0);
    let rtt =
        run(ChunkConfig { bandwidth_kbps: 1000.0, rtt_resend: true, ..ChunkConfig::default() }, clean(100.0), 12.0);
    let resent =
        |ev: &[Event]| ev.iter().filter(|e| matches!(e.kind, EventKind::SliceSent { resend: true, .. })).count();
    let rtt_ms: Vec<f32> = rtt
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::RttSample { side: Side::A, rtt_ms } => Some(rtt_ms),
            _ => None,
        })
        .collect();
    println!(
        "resent: fixed {} vs rtt {}; RTT samples {:?}..",
        resent(&fixed),
        resent(&rtt),
        &rtt_ms[..rtt_ms.len().min(5)]
    );
    // Send-to-ack time: 200 ms RTT plus the ack rate limit and tick wait (at most ~70 ms).
    assert!(rtt_ms.iter().all(|&r| (199.0..=275.0).contains(&r)), "{rtt_ms:?}");
    assert!(resent(&fixed) > 20, "fixed delay resends the tail: {}", resent(&fixed));
    assert!(resent(&rtt) * 4 < resent(&fixed), "{} vs {}", resent(&rtt), resent(&fixed));
}
