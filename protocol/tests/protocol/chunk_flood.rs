//! The seed's DDoS note: acks are rate limited, never one-for-one, so a flood of small slice
//! packets cannot be amplified into a larger flood of acks.

use ackscope_protocol::measure::ChunkSummary;
use ackscope_protocol::strategies::chunks::{ack_packet_bytes, write_slice, SlicePacket};
use ackscope_protocol::{
    ChunkConfig, ChunkPeer, Event, LinkConfig, Peer, Scenario, Side, SimTime, Simulation, Strategy,
};

/// Floods a receiving endpoint with `per_second` copies of `packet` for `seconds`, ticking it at
/// 60 Hz; returns (ack packets, bytes out, bytes in).
fn flood(config: ChunkConfig, packets: &[Vec<u8>], per_second: u64, seconds: u64) -> (u64, u64, u64) {
    let mut peer = ChunkPeer::new(Side::B, config, 0);
    let mut events: Vec<Event> = Vec::new();
    let (mut acks, mut out_bytes, mut in_bytes) = (0u64, 0u64, 0u64);
    let gap_us = 1_000_000 / per_second;
    let tick_us = 1_000_000 / 60;
    let mut next_tick = 0u64;
    for k in 0..per_second * seconds {
        let now = SimTime(k * gap_us);
        let p = &packets[(k as usize) % packets.len()];
        peer.receive(now, p, &mut events);
        in_bytes += p.len() as u64;
        while next_tick <= now.0 {
            let t = SimTime(next_tick);
            peer.on_tick(t, &mut events);
            let mut out = Vec::new();
            while peer.poll_send(t, &mut out, &mut events).is_some() {
                acks += 1;
                out_bytes += out.len() as u64;
                out.clear();
            }
            next_tick += tick_us;
        }
        events.clear();
    }
    (acks, out_bytes, in_bytes)
}

fn slice(config: &ChunkConfig, chunk_id: u16, slice_id: u32, num_slices: u32, len: usize) -> Vec<u8> {
    let p = SlicePacket { seq: 0, chunk_id, slice_id, num_slices, data: vec![0x5A; len] };
    let mut out = Vec::new();
    write_slice(&p, config, &mut out).expect("valid slice");
    out
}

#[test]
fn a_flood_of_tiny_slices_gets_at_most_one_ack_per_50_ms() {
    let config = ChunkConfig::default();
    // The smallest slice that makes the receiver owe a full 256-bit ack: the 1-byte last slice.
    let tiny = slice(&config, 0, 255, 256, 1);
    let ack_bytes = ack_packet_bytes(&config, 256);
    println!(
        "slice {} bytes, ack {} bytes: one-for-one would amplify {:.1}x",
        tiny.len(),
        ack_bytes,
        ack_bytes as f64 / tiny.len() as f64
    );
    assert!(ack_bytes > tiny.len(), "the flood is only a threat if acks are larger than slices");

    let seconds = 10;
    let (acks, out, inb) = flood(config, &[tiny], 10_000, seconds);
    let ratio = out as f64 / inb as f64;
    println!("{acks} acks, {out} bytes out for {inb} bytes in: ratio {ratio:.4}");
    assert!(acks <= seconds * 20 + 1, "{acks} acks in {seconds} s");
    // Acks leave on 60 Hz send ticks, so the 50 ms limit becomes one per 4 ticks (66.7 ms).
    assert!(acks >= seconds * 15 - 2, "the receiver still acks, at the limit: {acks}");
    assert!(ratio < 0.01, "bytes out / bytes in = {ratio}");
}

#[test]
fn slices_of_other_chunks_and_bad_ids_are_never_acked() {
    let config = ChunkConfig::default();
    // Wrong chunk ids, and an out-of-range slice id of the right chunk: ignored, counted, no ack.
    let mut packets: Vec<Vec<u8>> = (1..50u16).map(|c| slice(&config, c * 997, 3, 256, 1024)).collect();
    packets.push(slice(&config, 0, 200, 100, 1024));
    let (acks, out, _) = flood(config, &packets, 5_000, 2);
    assert_eq!((acks, out), (0, 0));
}

#[test]
fn a_configured_ack_interval_is_honoured() {
    let config = ChunkConfig { ack_interval_ms: 100.0, ..ChunkConfig::default() };
    let tiny = slice(&config, 0, 255, 256, 1);
    let (acks, ..) = flood(config, &[tiny], 2_000, 5);
    // At most one per 100 ms; on 60 Hz ticks that is one per 7 ticks (116.7 ms).
    assert!((41..=51).contains(&acks), "{acks} acks in 5 s at one per 100 ms");
}

#[test]
fn a_real_transfer_spends_little_on_acks() {
    let mut s = Scenario { seed: 2, strategy: Strategy::Chunks, ..Scenario::default() };
    s.workload.chunk_kib = 256;
    s.chunk.bandwidth_kbps = 1000.0;
    s.link.a_to_b = LinkConfig { latency_ms: 50.0, loss_percent: 1.0, ..LinkConfig::default() };
    s.link.b_to_a = s.link.a_to_b;
    let chunk = s.chunk;
    let mut sim = Simulation::new(s);
    sim.run_for_secs(20.0);
    let a = ChunkSummary::from_events(sim.events(), chunk.cost(), 0.0, 100.0).chunk_acks;
    let ratio = a.bytes_out as f64 / a.bytes_in as f64;
    println!("{a:?}: ratio {ratio:.4}");
    // At most 20 acks per second against ~118 slices per second.
    assert!(a.packets <= 20 * 20 + 1, "{a:?}");
    assert!(ratio < 0.01, "{ratio}");
}
