//! Packet notify: each packet a side sends is reported delivered or lost exactly once, in send
//! order, and never "delivered" when the link lost it.

use crate::support::*;
use ackscope_protocol::strategies::ue4::bunch::decode_packet;
use ackscope_protocol::*;

/// Checks that `side`'s notify reports are exactly its sent sequences in order, and returns
/// (reported, acked, nakked).
fn check_reports(events: &[Event], side: Side, seed: u64) -> (usize, usize, usize) {
    let sent: Vec<u32> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::PacketSent { side: s, seq, .. } if s == side => Some(seq),
            _ => None,
        })
        .collect();
    let (mut acked, mut nakked) = (0, 0);
    let reports: Vec<u32> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::PacketAcked { side: s, seq } if s == side => {
                acked += 1;
                Some(seq)
            }
            EventKind::PacketNakked { side: s, seq } if s == side => {
                nakked += 1;
                Some(seq)
            }
            _ => None,
        })
        .collect();
    assert!(reports.len() <= sent.len(), "seed {seed}: more reports than packets");
    if let Some(i) = reports.iter().zip(&sent).position(|(r, s)| r != s) {
        panic!("seed {seed}: {side:?} report #{i} is {} but packet #{i} was {}", reports[i], sent[i]);
    }
    let unreported = sent.len() - reports.len();
    assert!(unreported < 40, "seed {seed}: {unreported} packets never reported");
    (reports.len(), acked, nakked)
}

#[test]
fn every_packet_is_reported_once_in_order_and_never_falsely_acked() {
    for seed in 1..=8u64 {
        let mut s = ue4_scenario(seed);
        s.link.a_to_b = rough_link(10.0);
        s.link.b_to_a = rough_link(10.0);
        let mut sim = Simulation::new(s);
        sim.run_for_secs(40.0);
        let events: Vec<Event> = sim.drain_events().collect();
        let totals = sim.totals();
        assert_eq!(totals.false_acks, 0, "seed {seed}: {totals:?}");
        assert_eq!(totals.duplicate_acks, 0, "seed {seed}: {totals:?}");
        for side in Side::BOTH {
            let (reported, acked, nakked) = check_reports(&events, side, seed);
            assert!(reported > 1000 && acked > 0 && nakked > 0, "seed {seed}: {reported} {acked} {nakked}");
        }
    }
}

#[test]
fn reports_stay_exact_across_the_fourteen_bit_wrap() {
    let seed = 9;
    let mut s = ue4_scenario(seed);
    s.send_rate_pps = 250.0;
    s.ue4.initial_packet_seq = 16_200;
    s.ue4.net_speed_bytes_per_sec = 0.0;
    s.workload.snapshot_rate_hz = 250.0;
    s.link.a_to_b = rough_link(5.0);
    s.link.b_to_a = rough_link(5.0);
    let mut sim = Simulation::new(s);
    sim.run_for_secs(80.0);
    let events: Vec<Event> = sim.drain_events().collect();
    assert_eq!(sim.totals().false_acks, 0, "seed {seed}");
    for side in Side::BOTH {
        let (reported, _, _) = check_reports(&events, side, seed);
        assert!(reported > 16_384 + 400, "seed {seed}: only {reported} reports");
    }
}

/// 256 dirty acks force a flush inside receive, before the next tick.
#[test]
fn a_full_history_forces_an_immediate_flush() {
    let mut s = ue4_scenario(51);
    s.ue4.net_speed_bytes_per_sec = 0.0;
    s.workload.snapshot_rate_hz = 1000.0;
    s.workload.reliable_rate_hz = 0.0;
    let mut a = ue4_peer(&s, Side::A);
    let mut b = ue4_peer(&s, Side::B);
    let mut ev = Vec::new();
    let mut packets = Vec::new();
    for ms in 0..300u64 {
        a.on_tick(SimTime(ms * 1000), &mut ev);
        let mut p = Vec::new();
        while a.poll_send(SimTime(ms * 1000), &mut p, &mut ev).is_some() {
            packets.push(std::mem::take(&mut p));
        }
    }
    assert_eq!(packets.len(), 300);
    for (i, p) in packets.iter().enumerate() {
        b.receive(SimTime(400_000), p, &mut ev);
        assert_eq!(b.counters().history_full_flushes, (i + 1 >= 256) as u64, "after packet {i}");
    }
    let mut reply = Vec::new();
    b.poll_send(SimTime(400_000), &mut reply, &mut ev).expect("flushed without a tick");
    let h = decode_packet(&reply).unwrap().header;
    assert_eq!(h.history_word_count, 8);
    ev.clear();
    a.receive(SimTime(450_000), &reply, &mut ev);
    let acked = ev.iter().filter(|e| matches!(e.kind, EventKind::PacketAcked { .. })).count();
    assert_eq!(acked, 256, "the full history acks 256 packets at once");
}
