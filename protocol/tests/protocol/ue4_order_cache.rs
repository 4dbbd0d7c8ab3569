//! The packet order cache: a packet overtaken within one tick is still processed in order; one
//! that arrives after the tick flushed the cache (or with the cache off) is dropped and counted,
//! and its sequence is reported lost to the sender.

use crate::support::*;
use ackscope_protocol::strategies::ue4::Ue4Peer;
use ackscope_protocol::*;

/// Ten packets from A, each carrying a snapshot.
fn packets(s: &Scenario) -> Vec<Vec<u8>> {
    let mut a = ue4_peer(s, Side::A);
    let mut ev = Vec::new();
    let mut out = Vec::new();
    for i in 0..10u64 {
        let t = SimTime(i * 50_000);
        a.on_tick(t, &mut ev);
        let mut p = Vec::new();
        while a.poll_send(t, &mut p, &mut ev).is_some() {
            out.push(std::mem::take(&mut p));
        }
    }
    assert_eq!(out.len(), 10);
    out
}

fn scenario(cache: bool, max_missing: u32) -> Scenario {
    let mut s = ue4_scenario(81);
    s.workload.snapshot_rate_hz = 20.0;
    s.workload.reliable_rate_hz = 0.0;
    s.ue4.order_cache_enabled = cache;
    s.ue4.order_cache_max_missing = max_missing;
    s
}

/// Feeds packets by index, with `None` meaning "B's tick happens here".
fn feed(s: &Scenario, order: &[Option<usize>]) -> (Ue4Peer, Vec<u32>) {
    let p = packets(s);
    let mut b = ue4_peer(s, Side::B);
    let mut ev = Vec::new();
    for (i, step) in order.iter().enumerate() {
        let t = SimTime(1_000_000 + i as u64);
        match step {
            Some(k) => b.receive(t, &p[*k], &mut ev),
            None => b.on_tick(t, &mut ev),
        }
    }
    b.on_tick(SimTime(2_000_000), &mut ev);
    let received = ev
        .iter()
        .filter_map(|e| if let EventKind::PacketReceived { seq, .. } = e.kind { Some(seq) } else { None })
        .collect();
    (b, received)
}

#[test]
fn packet_overtaken_within_a_tick_is_processed_in_order() {
    let s = scenario(true, 3);
    let (b, received) = feed(&s, &[Some(0), Some(2), Some(3), Some(1), Some(4)]);
    assert_eq!(received, [0, 1, 2, 3, 4]);
    // 2 and 3 wait for 1; while the cache is filling, 1 goes through it too.
    let c = b.counters();
    assert_eq!((c.packets_cached, c.packets_lost, c.packets_out_of_order_dropped), (3, 0, 0));
}

#[test]
fn without_the_cache_the_overtaken_packet_is_dropped_as_out_of_order() {
    let s = scenario(false, 3);
    let (b, received) = feed(&s, &[Some(0), Some(2), Some(3), Some(1), Some(4)]);
    assert_eq!(received, [0, 2, 3, 4]);
    let c = b.counters();
    assert_eq!((c.packets_cached, c.packets_lost, c.packets_out_of_order_dropped), (0, 1, 1));
}

#[test]
fn the_end_of_the_tick_flushes_the_cache_and_the_hole_becomes_a_loss() {
    let s = scenario(true, 3);
    let (b, received) = feed(&s, &[Some(0), Some(2), None, Some(1), Some(3)]);
    assert_eq!(received, [0, 2, 3]);
    let c = b.counters();
    assert_eq!((c.packets_cached, c.packets_lost, c.packets_out_of_order_dropped), (1, 1, 1));
}

#[test]
fn a_gap_wider_than_max_missing_is_not_cached() {
    let s = scenario(true, 3);
    // 4 missing (1..=4) > 3: packet 5 is processed at once; the late ones are dropped.
    let (b, received) = feed(&s, &[Some(0), Some(5), Some(1), Some(6)]);
    assert_eq!(received, [0, 5, 6]);
    let c = b.counters();
    assert_eq!((c.packets_cached, c.packets_lost, c.packets_out_of_order_dropped), (0, 4, 1));
    // 3 missing is within range: cached, then the hole is flushed at the tick.
    let (b, received) = feed(&s, &[Some(0), Some(4), Some(2), None]);
    assert_eq!(received, [0, 2, 4]);
    assert_eq!(b.counters().packets_lost, 2);
}

#[test]
fn duplicates_are_dropped_in_and_out_of_the_cache() {
    let s = scenario(true, 3);
    let (b, received) = feed(&s, &[Some(0), Some(0), Some(2), Some(2), Some(1)]);
    assert_eq!(received, [0, 1, 2]);
    assert_eq!(b.counters().packets_out_of_order_dropped, 2);
}
