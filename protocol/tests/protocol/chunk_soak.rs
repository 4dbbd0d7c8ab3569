//! Soak: chunks of mixed sizes over a hostile link arrive intact, in order, and the sender never
//! hangs (the seed warns that every chunk system it wrote hung at least once before its soak).

use ackscope_protocol::measure::ChunkSummary;
use ackscope_protocol::{
    ChunkConfig, ChunkPeer, Event, EventKind, LinkConfig, Peer, Scenario, Side, Simulation, Strategy,
};

fn hostile_link() -> LinkConfig {
    LinkConfig {
        latency_ms: 40.0,
        jitter_ms: 25.0,
        loss_percent: 30.0,
        duplicate_percent: 10.0,
        reorder_percent: 10.0,
        reorder_delay_ms: 60.0,
        ..LinkConfig::default()
    }
}

/// Sizes around the slice boundaries and the maximum, in a fixed but irregular cycle.
const SIZES: [usize; 9] = [8, 1023, 1024, 1025, 5000, 256 * 1024, 2048, 77_777, 100];

fn run(seed: u64, config: ChunkConfig, seconds: f64) -> Vec<Event> {
    let mut s = Scenario { seed, strategy: Strategy::Chunks, ..Scenario::default() };
    s.chunk = config;
    s.link.a_to_b = hostile_link();
    s.link.b_to_a = hostile_link();
    let peers: [Box<dyn Peer>; 2] = [
        Box::new(ChunkPeer::with_chunk_sizes(Side::A, config, SIZES.to_vec())),
        Box::new(ChunkPeer::new(Side::B, config, 0)),
    ];
    let mut sim = Simulation::with_peers(s, peers);
    sim.run_for_secs(seconds);
    let totals = sim.totals();
    assert_eq!(totals.malformed, 0, "seed {seed}: well-formed traffic rejected");
    sim.drain_events().collect()
}

fn check(seed: u64, events: &[Event], seconds: f64, min_chunks: usize) {
    let delivered: Vec<_> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::ChunkDelivered { side: Side::B, chunk, bytes, payload_id, .. } => {
                Some((e.time, chunk, bytes, payload_id))
            }
            _ => None,
        })
        .collect();
    assert!(delivered.len() >= min_chunks, "seed {seed}: only {} chunks in {seconds} s", delivered.len());
    for (k, &(_, chunk, bytes, payload_id)) in delivered.iter().enumerate() {
        assert_eq!(payload_id, Some(k as u64), "seed {seed}: chunk {k} corrupt or out of order");
        assert_eq!(chunk, (k as u32) & 0xFFFF, "seed {seed}: wire id of chunk {k}");
        assert_eq!(bytes as usize, SIZES[k % SIZES.len()], "seed {seed}: size of chunk {k}");
    }
    // The sender learns of every delivered chunk (except possibly the one delivered last).
    let completed = events.iter().filter(|e| matches!(e.kind, EventKind::ChunkCompleted { side: Side::A, .. })).count();
    assert!(completed + 1 >= delivered.len(), "seed {seed}: {completed} completed for {} delivered", delivered.len());
    // No hang: the sender is still completing chunks near the end of the run.
    let last = events.iter().rev().find(|e| matches!(e.kind, EventKind::ChunkCompleted { .. })).expect("completions");
    assert!(seconds - last.time.as_secs_f64() < 15.0, "seed {seed}: last completion at {:?}", last.time);
}

#[test]
fn every_chunk_arrives_intact_and_in_order_under_30_percent_loss_duplicates_and_reordering() {
    let config = ChunkConfig { bandwidth_kbps: 2000.0, ..ChunkConfig::default() };
    for seed in 1..=4 {
        let seconds = 60.0;
        let events = run(seed, config, seconds);
        check(seed, &events, seconds, 30);
    }
}

#[test]
fn rtt_resend_and_initial_burst_also_survive_the_soak() {
    let config =
        ChunkConfig { bandwidth_kbps: 2000.0, rtt_resend: true, initial_burst: true, ..ChunkConfig::default() };
    for seed in 11..=13 {
        let seconds = 60.0;
        let events = run(seed, config, seconds);
        check(seed, &events, seconds, 30);
        let rtt_samples =
            events.iter().filter(|e| matches!(e.kind, EventKind::RttSample { side: Side::A, .. })).count();
        assert!(rtt_samples > 10, "seed {seed}: {rtt_samples} RTT samples");
    }
}

#[test]
fn slow_acks_and_small_slices_still_finish() {
    // Ack interval far above the resend delay, tiny slices: many slices in flight, many resends.
    let config = ChunkConfig {
        bandwidth_kbps: 500.0,
        slice_bytes: 100,
        max_slices: 4000,
        ack_interval_ms: 300.0,
        ..ChunkConfig::default()
    };
    let seconds = 120.0;
    let events = run(21, config, seconds);
    check(21, &events, seconds, 9);
}

#[test]
fn slice_events_tell_the_whole_story_of_a_chunk() {
    let config = ChunkConfig { bandwidth_kbps: 2000.0, ..ChunkConfig::default() };
    let events = run(5, config, 20.0);
    // Each completed chunk: every slice acked once; summary counts match the slice events.
    let summary = ChunkSummary::from_events(&events, config.cost(), 0.0, 80.0);
    assert!(!summary.chunks.is_empty());
    let acked = events.iter().filter(|e| matches!(e.kind, EventKind::SliceAcked { .. })).count() as u64;
    let slices: u64 = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::ChunkCompleted { bytes, .. } => Some((bytes as usize).div_ceil(1024) as u64),
            _ => None,
        })
        .sum();
    assert!(acked >= slices, "{acked} slice acks for {slices} slices of completed chunks");
    for c in &summary.chunks {
        assert!(c.slices_sent >= (c.size_bytes as u64).div_ceil(1024), "{c:?}");
        assert!(c.slices_resent < c.slices_sent, "{c:?}");
    }
    // Under 30 % loss both ways, acks are a small part of the traffic.
    let a = summary.chunk_acks;
    println!("acks: {a:?}");
    assert!(a.packets > 0 && a.bytes_out * 10 < a.bytes_in, "{a:?}");
}

#[test]
fn the_same_seed_gives_the_same_chunk_events() {
    let config =
        ChunkConfig { bandwidth_kbps: 2000.0, initial_burst: true, rtt_resend: true, ..ChunkConfig::default() };
    let a = run(31, config, 15.0);
    let b = run(31, config, 15.0);
    assert_eq!(a, b, "seed 31: runs differ");
    let c = run(32, config, 15.0);
    assert_ne!(a, c, "seeds 31 and 32 gave identical runs");
}
