//! Two truths beside the loss estimate: what the link dropped, and what the protocol lost
//! (`effective_loss_percent`: those drops plus the packets the receiver discarded unacked, from
//! `PacketDiscarded` and the other receiver verdicts). Every strategy's estimate is held to the
//! effective truth under the conditions that part them (`support::truths`; the long form with
//! every figure is `cargo run -p ackscope-protocol --release --example loss_truths`).

use ackscope_protocol::*;

use crate::support::truths::{self, Condition, STRATEGIES};

const SECONDS: f64 = 40.0;

/// Where an estimate cannot follow the effective truth, and why (README says so too).
fn known_limit(strategy: Strategy, condition: Condition) -> Option<&'static str> {
    match (strategy, condition) {
        // Only whole-block outcomes reach the sender: once no 16-fragment block gets through
        // (above about 25 % fragment loss) it can say only "at least that much".
        (Strategy::Fragments, Condition::RateCap) => Some("saturates at 100 %"),
        // The return-path correction takes the peer's average packet loss for the loss of the
        // packets carrying acks; a byte-limited queue drops those more often.
        (Strategy::Dnm, Condition::RateCap) => Some("reads 2.6-4.6 points high"),
        _ => None,
    }
}

#[test]
fn every_estimate_is_within_3_points_of_the_effective_truth_under_reorder_duplicates_and_a_rate_cap() {
    let mut failures = Vec::new();
    for condition in Condition::ALL {
        for strategy in STRATEGIES {
            let r = truths::measure(strategy, condition, SECONDS, 1);
            let Some(est) = r.estimate else {
                failures.push(format!("{strategy:?} {}: no estimate", condition.label()));
                continue;
            };
            let line = format!(
                "{strategy:?} {} (seed 1): estimate {est:.2}, effective {:.2}, link {:.2} ({})",
                condition.label(),
                r.effective,
                r.true_loss,
                r.discards
            );
            println!("{line}");
            match known_limit(strategy, condition) {
                None if (est - r.effective).abs() > 3.0 => failures.push(line),
                // A known limit is still measured: it must stay what README says.
                Some(_) if strategy == Strategy::Dnm && !(0.0..6.0).contains(&(est - r.effective)) => {
                    failures.push(line)
                }
                _ => {}
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn discards_are_named_after_what_each_receiver_does() {
    let discards = |strategy, condition| {
        let s = truths::scenario(strategy, condition, 2);
        let mut sim = Simulation::new(s);
        sim.set_keep_events(false);
        sim.run_for_secs(20.0);
        sim.estimates().discarded
    };
    // UE4 ignores a packet not newer than the last it processed; dnm's book rule drops an older one.
    for strategy in [Strategy::Ue4, Strategy::Dnm] {
        assert!(discards(strategy, Condition::JitterReorder).late > 20, "{strategy:?}");
        assert!(discards(strategy, Condition::Duplicates).duplicate > 20, "{strategy:?}");
    }
    // reliable.io's rule processes a duplicate again (and acks it) and keeps 256 sequences of
    // history, so neither jitter nor duplicates make these discard anything.
    for strategy in [Strategy::Acks, Strategy::Glenn, Strategy::Hybrid, Strategy::Rellikt] {
        for condition in [Condition::JitterReorder, Condition::Duplicates] {
            assert_eq!(discards(strategy, condition).total(), 0, "{strategy:?} {condition:?}");
        }
    }
}

/// Per receiving side: copies the link delivered, and the verdicts the receiver reported.
fn copies_and_verdicts(events: &[Event]) -> [(u64, u64); 2] {
    let mut n = [(0u64, 0u64); 2];
    for e in events {
        match e.kind {
            EventKind::LinkDelivered { dir, .. } => n[dir.receiver().index()].0 += 1,
            EventKind::PacketReceived { side, .. }
            | EventKind::PacketDiscarded { side, .. }
            | EventKind::Malformed { side, .. } => n[side.index()].1 += 1,
            _ => {}
        }
    }
    n
}

#[test]
fn every_delivered_copy_gets_exactly_one_verdict_from_its_receiver() {
    for strategy in STRATEGIES {
        let mut s = truths::base(strategy, 4);
        for d in Dir::BOTH {
            let l = s.link.get_mut(d);
            l.jitter_ms = 20.0;
            l.duplicate_percent = 5.0;
            l.reorder_percent = 5.0;
        }
        let mut sim = Simulation::new(s);
        sim.run_for_secs(20.0);
        for (side, (copies, verdicts)) in Side::BOTH.into_iter().zip(copies_and_verdicts(sim.events())) {
            // UE4 holds packets ahead of a hole in its order cache (up to 32) and judges them when
            // the hole fills: some may still wait at the end.
            let waiting = if strategy == Strategy::Ue4 { 32 } else { 0 };
            assert!(
                verdicts <= copies && copies <= verdicts + waiting,
                "{strategy:?} side {side:?}: {copies} copies delivered, {verdicts} verdicts"
            );
        }
    }
}

#[test]
fn the_loss_estimate_holds_at_every_documented_loss_margin() {
    // A stats sample taken before any packet was judged is no estimate: at a 60 s margin that is
    // the first minute, and counting its samples as 0 % read 3.72 % against a true 5.08 %.
    for strategy in [Strategy::Acks, Strategy::Glenn, Strategy::Hybrid, Strategy::Dnm, Strategy::Rellikt] {
        for margin_ms in [0.0, 100.0, 1000.0, 10_000.0, 60_000.0] {
            let mut s = Scenario { seed: 1, strategy, send_rate_pps: 1000.0, ..Scenario::default() };
            s.ack.stats.loss_margin_ms = margin_ms;
            s.dnm.stats.loss_margin_ms = margin_ms;
            s.rellikt.stats.loss_margin_ms = margin_ms;
            let mut sim = Simulation::new(s);
            sim.set_keep_events(false);
            sim.run_for_secs(if margin_ms >= 10_000.0 { 90.0 } else { 20.0 });
            let e = sim.estimates();
            let est = e.loss_percent.expect("packets were judged");
            assert!(
                (est - e.effective_loss_percent).abs() <= 1.0,
                "{strategy:?} margin {margin_ms} ms (seed 1): estimate {est:.2} vs {:.2}",
                e.effective_loss_percent
            );
        }
    }
}

#[test]
fn samples_before_the_first_verdict_are_no_estimate() {
    let mut s = Scenario { seed: 1, ..Scenario::default() };
    s.ack.stats.loss_margin_ms = 60_000.0;
    let mut sim = Simulation::new(s);
    sim.run_for_secs(30.0);
    let stats: Vec<StatsSample> = sim
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Stats { stats, .. } => Some(stats),
            _ => None,
        })
        .collect();
    assert!(stats.len() > 100 && stats.iter().all(|s| s.no_loss_verdict && s.loss_percent == 0.0));
    assert_eq!(sim.estimates().loss_percent, None, "30 s into a 61 s judging window nothing was judged");
}

/// The case: chunks at 512 kbps into a 256 kbit/s cap (`queue_bytes` as given).
fn capped_chunks(queue_bytes: u32) -> (EstimateSummary, ChunkSummary) {
    let mut s = truths::base(Strategy::Chunks, 1);
    s.chunk.bandwidth_kbps = 512.0;
    s.link.a_to_b.bandwidth_kbps = 256.0;
    s.link.a_to_b.queue_bytes = queue_bytes;
    let mut sim = Simulation::new(s.clone());
    sim.run_for_secs(60.0);
    let chunk = ChunkSummary::from_events(sim.events(), s.chunk.cost(), 256.0, 100.0);
    (sim.estimates(), chunk)
}

#[test]
fn a_chunk_sender_reads_a_rate_cap_as_the_drops_of_its_data_packets() {
    for queue_bytes in [64 * 1024, 100_000] {
        let (e, chunk) = capped_chunks(queue_bytes);
        let est = e.loss_percent.unwrap();
        // The truth counts the slices' direction only; the receiver's acks are reported apart.
        assert!(e.true_loss_percent > 40.0, "queue {queue_bytes}: {e:?}");
        assert!((est - e.true_loss_percent).abs() <= 3.0, "queue {queue_bytes}: estimate {est:.2} vs {e:?}");
        assert!(chunk.chunk_acks.packets > 0 && chunk.chunk_acks.loss_percent < 10.0, "{:?}", chunk.chunk_acks);
    }
}
