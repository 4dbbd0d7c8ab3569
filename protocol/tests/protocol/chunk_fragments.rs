//! The fragmentation baseline: one lost fragment loses the whole packet, so a 256-fragment block
//! at 1 % loss is lost 1 - 0.99^256 = 92.4 % of the time (the seed's figure), measured here on
//! the simulated link rather than computed.

use std::collections::BTreeSet;

use ackscope_protocol::measure::ChunkSummary;
use ackscope_protocol::{EventKind, LinkConfig, Scenario, Side, Simulation, Strategy};

fn scenario(seed: u64, strategy: Strategy, kbps: f64) -> Scenario {
    let mut s = Scenario { seed, strategy, ..Scenario::default() };
    s.workload.chunk_kib = 256;
    s.chunk.bandwidth_kbps = kbps;
    s.chunk.resend_delay_ms = 10.0;
    s.link.a_to_b = LinkConfig { latency_ms: 5.0, loss_percent: 1.0, ..LinkConfig::default() };
    s.link.b_to_a = LinkConfig { latency_ms: 5.0, loss_percent: 0.0, ..LinkConfig::default() };
    s
}

#[test]
fn a_256_fragment_block_at_1_percent_loss_is_lost_92_4_percent_of_the_time() {
    // A fast sender (1 Gbit/s) sends one whole attempt per tick, so attempts are many and cheap.
    let seed = 7;
    let mut sim = Simulation::new(scenario(seed, Strategy::Fragments, 1_000_000.0));
    let (mut attempts, mut reassembled) = (BTreeSet::new(), BTreeSet::new());
    let end_s = 60.0;
    let mut t = 0.0;
    while t < end_s {
        sim.run_for_secs(2.0);
        t += 2.0;
        for e in sim.drain_events() {
            match e.kind {
                // Only attempts with time to arrive before the end count as trials.
                EventKind::FragmentBlockSent { side: Side::A, seq, fragments, .. }
                    if e.time.as_secs_f64() < end_s - 1.0 =>
                {
                    assert_eq!(fragments, 256);
                    assert!(attempts.insert(seq), "sequence {seq} reused within the run");
                }
                EventKind::FragmentReassembled { side: Side::B, seq } => {
                    reassembled.insert(seq);
                }
                _ => {}
            }
        }
    }
    let n = attempts.len() as f64;
    let ok = attempts.intersection(&reassembled).count() as f64;
    let lost = 1.0 - ok / n;
    let expected = 1.0 - 0.99f64.powi(256);
    println!(
        "seed {seed}: {n} attempts, {ok} reassembled, lost {:.2} % (expected {:.2} %)",
        lost * 100.0,
        expected * 100.0
    );
    assert!(n >= 2500.0, "seed {seed}: only {n} attempts");
    assert!((lost - expected).abs() < 0.02, "seed {seed}: lost {lost:.4} vs {expected:.4}");
    // Ground truth: every reassembly is one of the attempts counted or one sent at the very end.
    assert!(reassembled.len() as f64 >= ok);
}

#[test]
fn chunks_beat_fragments_on_the_same_lossy_link() {
    // Same 256 KiB block, same 1 % loss, same target bandwidth: chunks resend only lost slices.
    let kbps = 1000.0;
    let run = |strategy| {
        let s = scenario(3, strategy, kbps);
        let chunk = s.chunk;
        let mut sim = Simulation::new(s);
        sim.run_for_secs(60.0);
        ChunkSummary::from_events(sim.events(), chunk.cost(), 0.0, 10.0)
    };
    let chunks = run(Strategy::Chunks);
    let frags = run(Strategy::Fragments);
    let mean =
        |s: &ChunkSummary| s.chunks.iter().map(|c| c.completion_seconds).sum::<f64>() / s.chunks.len().max(1) as f64;
    println!(
        "chunks: {} done, mean {:.2} s; fragments: {} done, mean {:.2} s",
        chunks.chunks.len(),
        mean(&chunks),
        frags.chunks.len(),
        mean(&frags)
    );
    assert!(chunks.chunks.len() >= 20, "{}", chunks.chunks.len());
    assert!(chunks.chunks.len() > 3 * frags.chunks.len().max(1), "{} vs {}", chunks.chunks.len(), frags.chunks.len());
    for c in &chunks.chunks {
        assert!(c.slices_resent * 10 < c.slices_sent, "{c:?}");
    }
    // Whole-block resends: a block costs several times its fragments, a chunk barely more than its slices.
    let per_block =
        |s: &ChunkSummary| s.chunks.iter().map(|c| c.slices_sent as f64).sum::<f64>() / s.chunks.len() as f64;
    println!("pieces sent per block: chunks {:.1}, fragments {:.1}", per_block(&chunks), per_block(&frags));
    assert!(!frags.chunks.is_empty());
    assert!(per_block(&frags) > 3.0 * per_block(&chunks));
}

#[test]
fn fragment_blocks_arrive_intact_and_in_order_without_loss() {
    let mut s = scenario(4, Strategy::Fragments, 2000.0);
    s.link.a_to_b.loss_percent = 0.0;
    s.link.a_to_b.duplicate_percent = 20.0;
    s.link.a_to_b.jitter_ms = 3.0;
    let mut sim = Simulation::new(s);
    sim.run_for_secs(20.0);
    let ids: Vec<_> = sim
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::ChunkDelivered { payload_id, .. } => Some(payload_id),
            _ => None,
        })
        .collect();
    assert!(ids.len() >= 15, "{}", ids.len());
    for (k, id) in ids.iter().enumerate() {
        assert_eq!(*id, Some(k as u64));
    }
}
