//! Throughput of the packet-ack path and of the whole simulation; prints figures for README.
//!
//! Run: `cargo bench -p ackscope-protocol --bench throughput`

use std::hint::black_box;
use std::time::Instant;

use ackscope_protocol::*;

/// Two endpoints exchange packets with no loss: each iteration A sends to B and B sends to A, and
/// each packet acks the other side's. Returns packets per second (both directions counted).
fn ack_path(packets: u64, stats: bool) -> f64 {
    let mut a = AckEndpoint::new(AckConfig::default());
    let mut b = AckEndpoint::new(AckConfig::default());
    a.set_stats_enabled(stats);
    b.set_stats_enabled(stats);
    let mut buf = Vec::with_capacity(64);
    let mut acked = Vec::with_capacity(64);
    let mut total_acked = 0u64;
    let start = Instant::now();
    for i in 0..packets / 2 {
        let now = SimTime(i * 100);
        for dir in 0..2 {
            let (from, to) = if dir == 0 { (&mut a, &mut b) } else { (&mut b, &mut a) };
            buf.clear();
            let h = from.begin_packet(now, &mut buf);
            buf.extend_from_slice(&[0u8; 16]);
            from.finish_packet(h.sequence, buf.len());
            if let Ok((h, _, HeaderVerdict::Fresh)) = to.read_header(now, black_box(&buf)) {
                to.accept_packet(now, &h, buf.len(), &mut acked);
            }
            if stats {
                to.update(now);
            }
            total_acked += acked.len() as u64;
            acked.clear();
        }
    }
    let secs = start.elapsed().as_secs_f64();
    assert!(total_acked + 4 >= packets, "only {total_acked} of {packets} acked");
    packets as f64 / secs
}

fn sim_speed(seconds: f64) -> (f64, usize) {
    let s = Scenario::default();
    let mut sim = Simulation::new(s);
    let start = Instant::now();
    sim.run_for_secs(seconds);
    let wall = start.elapsed().as_secs_f64();
    (seconds / wall, sim.events().len())
}

fn main() {
    // Warm up, then take the best of three to keep a busy machine from understating the figure.
    let best = |f: &dyn Fn() -> f64| (0..3).map(|_| f()).fold(0.0, f64::max);
    ack_path(1_000_000, true);
    let n = 20_000_000;
    let bare = best(&|| ack_path(n, false));
    let with_stats = best(&|| ack_path(n, true));
    println!("ack path, no stats:       {:>12.0} packets/s ({:.1} ns/packet)", bare, 1e9 / bare);
    println!("ack path, stats/packet:   {:>12.0} packets/s ({:.1} ns/packet)", with_stats, 1e9 / with_stats);
    let (speed, events) = sim_speed(600.0);
    println!(
        "simulation 60 pps, 5% loss, 50 ms: {:>8.0} simulated s per wall s ({events} events in 600 s, kept)",
        speed
    );
}
