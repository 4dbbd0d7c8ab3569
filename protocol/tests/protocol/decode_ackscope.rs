//! The passive decoder against ackscope's own endpoints: two endpoints of each strategy exchange
//! datagrams on virtual time through a seeded relay (20 % loss, 50 ms each way) that feeds the
//! decoder every datagram and its fate. What the decoder derives from the bytes alone must be what
//! the endpoints themselves report: the same packets acked on each side at the same instants,
//! the same RTT samples, the same resends; and `auto` must name the strategy's format.

use ackscope_protocol::decode::{DecodeChoice, Decoder, Fate, FormatKind};
use ackscope_protocol::*;

/// What the endpoints and the decoder said, per side (index 0 = A, the client).
#[derive(Default)]
struct Run {
    /// (time, seq) of every PacketAcked, endpoints' and decoded.
    acked: [Vec<(u64, u32)>; 2],
    decoded_acked: [Vec<(u64, u32)>; 2],
    /// (time, seq) of every PacketNakked, endpoints' and decoded.
    nakked: [Vec<(u64, u32)>; 2],
    decoded_nakked: [Vec<(u64, u32)>; 2],
    /// (time, seq) of every packet discarded as late, by the endpoints and by the decoder.
    late: [Vec<(u64, u32)>; 2],
    decoded_late: [Vec<(u64, u32)>; 2],
    /// RTT samples in microseconds, rounded.
    rtt: [Vec<i64>; 2],
    decoded_rtt: [Vec<i64>; 2],
    /// Endpoints' resends: `MessageSent` other than first sends, and resent slices.
    resends: [u64; 2],
    decoder: Option<Decoder>,
}

/// A 64-bit xorshift: the relay's seeded drop decisions.
struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// What the relay does to each datagram: drop a share, delay the rest by `latency_us` plus a
/// uniform `0..jitter_us` (so later datagrams can overtake earlier ones), and deliver a share of
/// them twice. The decoder learns the fate of a datagram's first copy to arrive, as a capture
/// import tells it (a second copy changes no endpoint's acks: every strategy either ignores it or
/// processes acks it already took).
#[derive(Debug, Clone, Copy)]
struct RelayLink {
    loss: f64,
    latency_us: u64,
    jitter_us: u64,
    duplicate: f64,
}

/// 20 % loss, 50 ms each way, in order.
const PLAIN: RelayLink = RelayLink { loss: 0.2, latency_us: 50_000, jitter_us: 0, duplicate: 0.0 };

/// Runs `scenario`'s two endpoints for `secs` through the relay, decoding with `choice`.
fn run(scenario: &Scenario, secs: u64, choice: DecodeChoice, seed: u64) -> Run {
    run_on(scenario, secs, choice, seed, PLAIN)
}

/// [`run`] through a relay that does `link`.
fn run_on(scenario: &Scenario, secs: u64, choice: DecodeChoice, seed: u64, link: RelayLink) -> Run {
    let mut peers = [make_peer(scenario, Side::A), make_peer(scenario, Side::B)];
    let mut decoder = Decoder::new(choice);
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    // (deliver at us, uid, to, bytes, the first copy to arrive: the decoder is told of it)
    let mut in_flight: Vec<(u64, u64, Side, Vec<u8>, bool)> = Vec::new();
    let mut out = Run::default();
    let mut events = Vec::new();
    let tick_us = 1_000_000 / scenario.send_rate_pps as u64;
    let mut next_tick = 0u64;
    let mut uid = 0u64;
    for step in 0..secs * 1000 {
        let now = SimTime(step * 1000);
        // Deliveries due, in send order.
        let mut due: Vec<_> = Vec::new();
        in_flight.retain(|d| {
            if d.0 <= now.0 {
                due.push(d.clone());
                false
            } else {
                true
            }
        });
        due.sort_by_key(|d| (d.0, d.1));
        for (_, id, to, bytes, first) in due {
            if first {
                decoder.fate(id, Fate::Delivered { at: now });
            }
            peers[to.index()].receive(now, &bytes, &mut events);
        }
        if now.0 >= next_tick {
            next_tick += tick_us;
            for side in Side::BOTH {
                let p = &mut peers[side.index()];
                p.on_tick(now, &mut events);
                loop {
                    let mut buf = Vec::new();
                    if p.poll_send(now, &mut buf, &mut events).is_none() {
                        break;
                    }
                    uid += 1;
                    let dir = side.outgoing();
                    decoder.datagram(ackscope_protocol::decode::Datagram {
                        uid,
                        time: now,
                        dir,
                        client: 1,
                        bytes: &buf,
                    });
                    if rng.chance(link.loss) {
                        decoder.fate(uid, Fate::Dropped);
                        continue;
                    }
                    // No draw for what the link does not do: a plain link's drops stay those
                    // of the seed.
                    let delay = |rng: &mut Rng| match link.jitter_us {
                        0 => link.latency_us,
                        j => link.latency_us + (rng.unit() * j as f64) as u64,
                    };
                    let at = now.0 + delay(&mut rng);
                    if link.duplicate > 0.0 && rng.chance(link.duplicate) {
                        // Due deliveries go in (at, uid) order, a tie in push order: the
                        // copy pushed first wins one.
                        let again = now.0 + delay(&mut rng);
                        in_flight.push((again, uid, side.other(), buf.clone(), again <= at));
                        in_flight.push((at, uid, side.other(), buf, again > at));
                    } else {
                        in_flight.push((at, uid, side.other(), buf, true));
                    }
                }
            }
        }
        if step % 100 == 0 {
            for p in &mut peers {
                p.update(now, &mut events);
            }
        }
        for e in events.drain(..) {
            match e.kind {
                EventKind::PacketAcked { side, seq } => out.acked[side.index()].push((e.time.0, seq)),
                EventKind::PacketNakked { side, seq } => out.nakked[side.index()].push((e.time.0, seq)),
                EventKind::PacketDiscarded { side, seq, reason: DiscardReason::Late } => {
                    out.late[side.index()].push((e.time.0, seq))
                }
                EventKind::RttSample { side, rtt_ms } => {
                    out.rtt[side.index()].push((rtt_ms as f64 * 1000.0).round() as i64)
                }
                EventKind::MessageSent { side, kind, .. } if kind != SendKind::First => out.resends[side.index()] += 1,
                EventKind::SliceSent { side, resend: true, .. } => out.resends[side.index()] += 1,
                _ => {}
            }
        }
        for e in decoder.take_events() {
            match e.kind {
                EventKind::PacketAcked { side, seq } => out.decoded_acked[side.index()].push((e.time.0, seq)),
                EventKind::PacketNakked { side, seq } => out.decoded_nakked[side.index()].push((e.time.0, seq)),
                EventKind::PacketDiscarded { side, seq, reason: DiscardReason::Late } => {
                    out.decoded_late[side.index()].push((e.time.0, seq))
                }
                EventKind::RttSample { side, rtt_ms } => {
                    out.decoded_rtt[side.index()].push((rtt_ms as f64 * 1000.0).round() as i64)
                }
                _ => {}
            }
        }
    }
    decoder.finish_probe();
    out.decoder = Some(decoder);
    // Within one instant the endpoints and the decoder may list acks in different orders.
    let lists = [&mut out.acked, &mut out.decoded_acked, &mut out.nakked, &mut out.decoded_nakked];
    for v in lists.into_iter().chain([&mut out.late, &mut out.decoded_late]).flatten() {
        v.sort_unstable();
    }
    for v in out.rtt.iter_mut().chain(&mut out.decoded_rtt) {
        v.sort_unstable();
    }
    out
}

fn scenario(strategy: Strategy) -> Scenario {
    let mut s = Scenario { strategy, send_rate_pps: 50.0, ..Scenario::default() };
    s.workload.chunk_kib = 48;
    s
}

/// Packet acks, RTT samples and resends decoded from the bytes equal the endpoints' own.
fn assert_beliefs_match(strategy: Strategy, format: FormatKind, secs: u64) {
    let r = run(&scenario(strategy), secs, DecodeChoice::Format(format.clone()), 7);
    let d = r.decoder.as_ref().unwrap();
    let stats = d.client_stats(1).unwrap();
    assert_eq!(stats.malformed, 0, "{strategy:?}: no datagram of its own format is malformed");
    for side in Side::BOTH {
        let i = side.index();
        let dir = side.outgoing().index();
        assert!(!r.acked[i].is_empty(), "{strategy:?} side {side:?} acked nothing");
        assert_eq!(r.decoded_acked[i], r.acked[i], "{strategy:?} side {side:?}: decoded acks");
        assert_eq!(r.decoded_rtt[i], r.rtt[i], "{strategy:?} side {side:?}: decoded RTT samples");
        assert_eq!(stats.dirs[dir].resends, r.resends[i], "{strategy:?} side {side:?}: decoded resends");
        assert!(stats.dirs[dir].spurious_resends <= stats.dirs[dir].resends);
        let loss = stats.dirs[dir].loss_percent;
        assert!((10.0..32.0).contains(&loss), "{strategy:?} side {side:?}: decoded loss {loss} at 20 % drops");
    }
}

#[test]
fn decoded_acks_rtt_and_resends_equal_the_acks_endpoints() {
    assert_beliefs_match(Strategy::Acks, FormatKind::Reliable, 20);
}

#[test]
fn decoded_acks_rtt_and_resends_equal_glenns_endpoints() {
    assert_beliefs_match(Strategy::Glenn, FormatKind::Glenn, 20);
    assert_beliefs_match(Strategy::Hybrid, FormatKind::Glenn, 20);
}

#[test]
fn decoded_acks_rtt_and_resends_equal_rellikts_endpoints() {
    assert_beliefs_match(Strategy::Rellikt, FormatKind::Rellikt, 20);
}

#[test]
fn fragmented_reliable_io_packets_are_acked_only_once_whole() {
    let mut s = scenario(Strategy::Acks);
    s.payload_bytes = 3000;
    let r = run(&s, 20, DecodeChoice::Format(FormatKind::Reliable), 11);
    assert!(!r.acked[0].is_empty());
    for i in 0..2 {
        assert_eq!(r.decoded_acked[i], r.acked[i], "side {i}: decoded acks of fragmented packets");
        assert_eq!(r.decoded_rtt[i], r.rtt[i], "side {i}");
    }
    // Three fragments each: a packet survives 20 % loss per fragment about half the time.
    let stats = r.decoder.unwrap().client_stats(1).unwrap();
    let loss = stats.dirs[0].loss_percent;
    assert!((35.0..65.0).contains(&loss), "packet loss {loss} with 3 fragments at 20 %");
}

/// Decoded traffic of `strategy` has no malformed datagram and side A's resends equal the
/// endpoint's own.
fn assert_resends_match(strategy: Strategy, format: FormatKind) -> Run {
    let r = run(&scenario(strategy), 15, DecodeChoice::Format(format), 3);
    let stats = r.decoder.as_ref().unwrap().client_stats(1).unwrap();
    assert_eq!(stats.malformed, 0, "{strategy:?}");
    assert_eq!(stats.dirs[0].resends, r.resends[0], "{strategy:?}: side A's resends");
    assert!(stats.dirs[0].resends > 0, "{strategy:?}: 20 % loss makes resends");
    r
}

#[test]
fn decoded_ue4_acks_are_the_endpoints_learned_no_later() {
    // UE4's packet order cache holds a packet that arrives after a gap until the gap is filled or
    // given up (`ue4::order_cache`): the endpoint takes its acks then, the wire had them earlier.
    let r = assert_resends_match(Strategy::Ue4, FormatKind::Ue4);
    for i in 0..2 {
        let by_seq = |v: &[(u64, u32)]| {
            let mut v: Vec<(u32, u64)> = v.iter().map(|&(t, s)| (s, t)).collect();
            v.sort_unstable();
            v
        };
        let (wire, endpoint) = (by_seq(&r.decoded_acked[i]), by_seq(&r.acked[i]));
        let seqs = |v: &[(u32, u64)]| v.iter().map(|x| x.0).collect::<Vec<_>>();
        assert_eq!(seqs(&wire), seqs(&endpoint), "side {i}: the same packets acked");
        for (w, e) in wire.iter().zip(&endpoint) {
            assert!(
                e.1 >= w.1 && e.1 - w.1 <= 100_000,
                "side {i} packet {}: acked on the wire at {} us, by UE4 at {} us",
                w.0,
                w.1,
                e.1
            );
        }
    }
}

#[test]
fn decoded_dnm_acks_rtt_and_resends_equal_the_endpoints() {
    let r = assert_resends_match(Strategy::Dnm, FormatKind::Dnm);
    assert_eq!(r.decoded_acked, r.acked, "dnm: decoded acks");
    assert_eq!(r.decoded_rtt, r.rtt, "dnm: decoded RTT samples");
}

/// Where the dnm decoder once read 841 acks for the endpoints' 650 (seed 1): 12 % loss, 4 %
/// duplicates and 25 ms jitter, which reorders datagrams 50 ms apart at 50 packets/s.
const REORDERING: RelayLink = RelayLink { loss: 0.12, latency_us: 50_000, jitter_us: 25_000, duplicate: 0.04 };

#[test]
fn decoded_acks_equal_the_endpoints_under_reordering_and_duplicates() {
    for (strategy, format) in [
        (Strategy::Acks, FormatKind::Reliable),
        (Strategy::Glenn, FormatKind::Glenn),
        (Strategy::Hybrid, FormatKind::Glenn),
        (Strategy::Dnm, FormatKind::Dnm),
        (Strategy::Rellikt, FormatKind::Rellikt),
    ] {
        let seed = 1;
        let r = run_on(&scenario(strategy), 20, DecodeChoice::Format(format), seed, REORDERING);
        let stats = r.decoder.as_ref().unwrap().client_stats(1).unwrap();
        assert_eq!(stats.malformed, 0, "{strategy:?}");
        for side in Side::BOTH {
            let i = side.index();
            let ctx = format!("{strategy:?} side {side:?} (seed {seed})");
            println!("{ctx}: endpoint acked {}, decoded {}", r.acked[i].len(), r.decoded_acked[i].len());
            assert!(r.acked[i].len() > 300, "{ctx}: the exchange ran");
            assert_eq!(r.decoded_acked[i], r.acked[i], "{ctx}: decoded acks");
            assert_eq!(r.decoded_rtt[i], r.rtt[i], "{ctx}: decoded RTT samples");
            // Packets an ack passed are reported lost at that ack, as the endpoint does (its
            // timeouts the decoder does not report).
            let missing: Vec<_> = r.decoded_nakked[i].iter().filter(|n| !r.nakked[i].contains(n)).collect();
            assert!(missing.is_empty(), "{ctx}: decoded losses the endpoint did not report: {missing:?}");
            // dnm's receiver drops late packets with their acks (the book's rule): the decoder
            // sees the same ones (the second copies of duplicates it is never shown).
            assert_eq!(r.decoded_late[i], r.late[i], "{ctx}: packets discarded as late");
            if strategy == Strategy::Dnm {
                assert!(r.late[i].len() >= 10, "{ctx}: the jitter reorders ({} late)", r.late[i].len());
            }
        }
    }
}

#[test]
fn decoded_ue4_acks_under_reordering_are_the_packets_the_endpoints_acked() {
    // UE4's packet order cache puts the reordered packets back in order (no late discard here);
    // the endpoint takes the acks of a held packet when the cache releases it, so the packets
    // are compared, not the instants.
    let seed = 1;
    let r = run_on(&scenario(Strategy::Ue4), 20, DecodeChoice::Format(FormatKind::Ue4), seed, REORDERING);
    for i in 0..2 {
        let seqs = |v: &[(u64, u32)]| {
            let mut s: Vec<u32> = v.iter().map(|x| x.1).collect();
            s.sort_unstable();
            s
        };
        assert!(r.acked[i].len() > 300, "side {i}: the exchange ran");
        assert_eq!(seqs(&r.decoded_acked[i]), seqs(&r.acked[i]), "side {i} (seed {seed}): the same packets acked");
        assert_eq!(r.decoded_late[i], r.late[i], "side {i} (seed {seed})");
    }
}

#[test]
fn decoded_chunk_slice_resends_equal_the_senders() {
    assert_resends_match(Strategy::Chunks, FormatKind::Chunks);
}

#[test]
fn auto_names_each_strategys_format() {
    for (strategy, want) in [
        (Strategy::Acks, "reliable"),
        (Strategy::Glenn, "glenn"),
        (Strategy::Hybrid, "glenn"),
        (Strategy::Ue4, "ue4"),
        (Strategy::Dnm, "dnm"),
        (Strategy::Rellikt, "rellikt"),
        (Strategy::Chunks, "chunks"),
        (Strategy::Fragments, "fragments"),
    ] {
        for choice in [DecodeChoice::Auto, DecodeChoice::Ackscope] {
            let r = run(&scenario(strategy), 2, choice, 5);
            let d = r.decoder.unwrap();
            let probe = d.probe().expect("probed");
            let got = probe.picked.as_ref().map(|k| k.name());
            assert_eq!(got, Some(want), "{strategy:?}: {}", probe.reason);
            assert!(probe.reason.starts_with(want), "{}", probe.reason);
        }
    }
}
