//! Soak: every reliable message arrives exactly once, in order and intact under loss, burst
//! loss, duplicates, reordering and jitter, across the 14-bit packet sequence wrap.

use crate::support::*;
use ackscope_protocol::*;

/// Impairments for `secs`, then a clean link long enough for Nak-driven resends to finish.
/// Returns the ledger, totals and the instant the impairments ended (everything queued before
/// it must have arrived).
fn soak(seed: u64, mut scenario: Scenario, link: LinkConfig, secs: f64) -> (Ledger, PacketTotals, SimTime) {
    scenario.link.a_to_b = link;
    scenario.link.b_to_a = link;
    // Both sides also start with a burst of `burst_messages` reliable messages at once.
    let mut peers = [ue4_peer(&scenario, Side::A), ue4_peer(&scenario, Side::B)];
    for p in &mut peers {
        p.workload_mut().burst();
    }
    let [a, b] = peers;
    let mut sim = Simulation::with_peers(scenario, [Box::new(a), Box::new(b)]);
    let mut ledger = Ledger::default();
    run(&mut sim, secs, &mut ledger);
    let cutoff = sim.now();
    let clean = LinkConfig { latency_ms: 40.0, loss_percent: 0.0, ..Default::default() };
    sim.set_link(Dir::AtoB, clean);
    sim.set_link(Dir::BtoA, clean);
    run(&mut sim, 5.0, &mut ledger);
    let totals = sim.totals();
    assert_eq!(totals.false_acks, 0, "seed {seed}: false acks {totals:?}");
    assert_eq!(totals.duplicate_acks, 0, "seed {seed}: duplicate acks {totals:?}");
    assert_eq!(ledger.malformed(), 0, "seed {seed}: malformed or corrupt payloads");
    assert!(ledger.closed.is_empty(), "seed {seed}: closed {:?}", ledger.closed);
    (ledger, totals, cutoff)
}

#[test]
fn reliable_messages_arrive_exactly_once_in_order_under_rough_links() {
    for seed in 1..=20u64 {
        let mut s = ue4_scenario(seed);
        s.workload.reliable_rate_hz = 40.0;
        let (ledger, totals, cutoff) = soak(seed, s, rough_link(8.0), 60.0);
        for side in Side::BOTH {
            ledger.check_reliable_exactly_once_in_order(side, cutoff, seed);
            assert!(ledger.reliable_queued(side) > 2000, "seed {seed}: too little traffic");
        }
        assert!(ledger.nak_resends > 100, "seed {seed}: loss never exercised resends");
        assert!(totals.link_dropped > 500 && totals.duplicated > 50, "seed {seed}: {totals:?}");
        assert!(ledger.max_inrec_depth >= 1, "seed {seed}: no head-of-line blocking seen");
    }
}

#[test]
fn soak_crosses_the_fourteen_bit_sequence_wrap_twice() {
    let seed = 77;
    let mut s = ue4_scenario(seed);
    // Exact ticks: the packet count below has little room to spare.
    s.tick_jitter_ms = 0.0;
    s.send_rate_pps = 250.0;
    s.ue4.initial_packet_seq = 16_000;
    s.ue4.net_speed_bytes_per_sec = 0.0;
    s.workload.reliable_rate_hz = 60.0;
    // Starting at 16000, a direction crosses 16383 -> 0 after 384 packets and again after 16768.
    let (ledger, totals, cutoff) = soak(seed, s, rough_link(8.0), 140.0);
    assert!(totals.sent / 2 > 16_768 + 200, "seed {seed}: only {} packets", totals.sent);
    for side in Side::BOTH {
        ledger.check_reliable_exactly_once_in_order(side, cutoff, seed);
    }
}

#[test]
fn large_messages_travel_as_partial_bunches_and_arrive_intact() {
    let seed = 11;
    let mut s = ue4_scenario(seed);
    s.ue4.net_speed_bytes_per_sec = 0.0;
    s.workload.reliable_rate_hz = 5.0;
    s.workload.reliable_min_bytes = 500;
    s.workload.reliable_max_bytes = 6000;
    s.workload.snapshot_bytes = 2500;
    // Up to 7 partial bunches per message: a burst of 64 would overflow RELIABLE_BUFFER.
    s.workload.burst_messages = 8;
    let (ledger, _, cutoff) = soak(seed, s.clone(), rough_link(8.0), 40.0);
    for side in Side::BOTH {
        ledger.check_reliable_exactly_once_in_order(side, cutoff, seed);
    }
    // Unreliable 2500-byte snapshots need all three partial bunches; with 8% loss and no
    // reordering about 0.92^3 = 78% should arrive (whole, as the ledger saw no corruption).
    let lossy = LinkConfig { loss_percent: 8.0, ..Default::default() };
    let (ledger, _, cutoff) = soak(seed, s, lossy, 40.0);
    ledger.check_reliable_exactly_once_in_order(Side::A, cutoff, seed);
    let snaps = ledger.queued[0].values().filter(|r| !**r).count();
    let got = ledger.delivered[1].iter().filter(|id| !ledger.queued[0][id]).count();
    assert!(got * 100 > snaps * 70 && got < snaps, "seed {seed}: {got} of {snaps} partial snapshots");
}

#[test]
fn bunch_over_64_kib_is_refused_not_sent() {
    let seed = 5;
    let mut s = ue4_scenario(seed);
    s.ue4.net_speed_bytes_per_sec = 0.0;
    s.workload.reliable_rate_hz = 3.0;
    s.workload.snapshot_rate_hz = 0.0;
    s.workload.reliable_min_bytes = 60_000;
    s.workload.reliable_max_bytes = 70_000;
    s.link.a_to_b.loss_percent = 0.0;
    s.link.b_to_a.loss_percent = 0.0;
    let mut sim = Simulation::new(s);
    let mut ledger = Ledger::default();
    run(&mut sim, 20.0, &mut ledger);
    let too_large = ledger.refused[0].iter().filter(|(_, r)| *r == RefuseReason::TooLarge).count();
    assert!(too_large > 5, "seed {seed}: {too_large} refused");
    assert!(ledger.reliable_queued(Side::A) > 5, "seed {seed}: none small enough");
    sim.run_for_secs(5.0);
    let ev: Vec<Event> = sim.drain_events().collect();
    ledger.observe(&ev);
    // Only the ones at most 64 KiB were queued; all of them arrive.
    for (id, _) in &ledger.refused[0] {
        assert!(!ledger.delivered[1].contains(id), "seed {seed}: refused {id} delivered");
    }
    let delivered = ledger.delivered[1].len();
    assert!(delivered + 2 >= ledger.reliable_queued(Side::A), "seed {seed}: {delivered} delivered");
}
