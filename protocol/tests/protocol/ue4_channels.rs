//! Channels per actor: each actor's reliable messages travel on their own channel, opened by a
//! bunch with bOpen, closed by a reliable bunch with bClose after `channel_close_s` of idleness
//! and reopened on demand — so head-of-line blocking stays within one actor. Also the 4.25
//! bunch header, bit for bit.

use std::sync::{Arc, Mutex};

use crate::support::*;
use ackscope_protocol::strategies::ue4::bunch::{decode_packet, Bunch, ChName, CloseReason};
use ackscope_protocol::wire::bits::{BitReader, BitWriter};
use ackscope_protocol::workload::Senders;
use ackscope_protocol::*;

/// (bunch, `MaxPacket`, expected header bits), each worked out by hand from the 4.25 layout:
/// one open-or-close bit, then bOpen and bClose if it is set, then the close reason
/// (SerializeInt, max 15) if closing; bIsReplicationPaused and bReliable; ChIndex packed (8 bits
/// per 7); three flags; ChSequence (10) if reliable; two partial flags if partial; the name if
/// reliable or opening (1 + 9 for Actor = 102, 1 + 8 for Control = 255); BunchDataBits
/// (SerializeInt, max MaxPacket * 8).
fn header_cases() -> Vec<(&'static str, Bunch, u32, usize)> {
    let actor = |ch_index, ch_sequence| Bunch {
        reliable: true,
        ch_index,
        ch_sequence,
        ch_name: ChName::Actor,
        payload: vec![1; 20],
        ..Default::default()
    };
    vec![
        (
            "unreliable snapshot",
            Bunch { ch_index: 2, payload: vec![1; 64], ..Default::default() },
            1024,
            1 + 2 + 8 + 3 + 13,
        ),
        ("reliable, channel 3", actor(3, 5), 1024, 1 + 2 + 8 + 3 + 10 + 10 + 13),
        ("reliable, ChSequence wraps at 1024", actor(3, 1500), 1024, 1 + 2 + 8 + 3 + 10 + 10 + 13),
        ("reliable, channel 127", actor(127, 1), 1024, 1 + 2 + 8 + 3 + 10 + 10 + 13),
        ("reliable, channel 128: two packed bytes", actor(128, 1), 1024, 1 + 2 + 16 + 3 + 10 + 10 + 13),
        ("reliable, channel 20000: three packed bytes", actor(20_000, 1), 1024, 1 + 2 + 24 + 3 + 10 + 10 + 13),
        ("open", Bunch { open: true, ..actor(3, 1) }, 1024, 1 + 2 + 2 + 8 + 3 + 10 + 10 + 13),
        (
            "close (Relevancy = 3: 4 bits)",
            Bunch { close: true, close_reason: CloseReason::Relevancy, payload: vec![], ..actor(3, 9) },
            1024,
            1 + 2 + 4 + 2 + 8 + 3 + 10 + 10 + 13,
        ),
        (
            "open and close, unreliable (a temporary channel)",
            Bunch { open: true, close: true, ch_index: 9, ch_name: ChName::Actor, ..Default::default() },
            1024,
            1 + 2 + 4 + 2 + 8 + 3 + 10 + 13,
        ),
        (
            "control channel: NAME_Control takes 8 bits",
            Bunch { ch_name: ChName::Control, ..actor(0, 1) },
            1024,
            1 + 2 + 8 + 3 + 10 + 9 + 13,
        ),
        (
            "reliable partial",
            Bunch { partial: true, partial_initial: true, payload: vec![1; 953], ..actor(3, 2) },
            1024,
            1 + 2 + 8 + 3 + 10 + 2 + 10 + 13,
        ),
        (
            "unreliable partial",
            Bunch { partial: true, partial_final: true, ch_index: 2, payload: vec![1; 100], ..Default::default() },
            1024,
            1 + 2 + 8 + 3 + 2 + 13,
        ),
        // MaxPacket 1400: max 11200 is not a power of two, so the data length's width depends
        // on the value: 160 bits + 8192 < 11200 takes 14 bits, 7624 + 8192 >= 11200 only 13.
        ("small data, MaxPacket 1400", actor(3, 1), 1400, 1 + 2 + 8 + 3 + 10 + 10 + 14),
        (
            "953 bytes, MaxPacket 1400",
            Bunch { payload: vec![1; 953], ..actor(3, 1) },
            1400,
            1 + 2 + 8 + 3 + 10 + 10 + 13,
        ),
    ]
}

#[test]
fn bunch_headers_take_the_4_25_sizes() {
    for (what, bunch, max_packet, expected) in header_cases() {
        assert_eq!(bunch.header_bits_for(max_packet), expected, "{what}");
        let mut w = BitWriter::with_capacity(2048);
        bunch.write(&mut w, max_packet).unwrap();
        assert_eq!(w.bits_processed(), expected + bunch.payload.len() * 8, "{what}: written");
        let bytes = w.finish();
        let back = Bunch::read(&mut BitReader::new(&bytes), max_packet).unwrap();
        let name = if bunch.reliable || bunch.open { bunch.ch_name } else { ChName::None };
        assert_eq!(back, Bunch { ch_sequence: bunch.ch_sequence % 1024, ch_name: name, ..bunch }, "{what}: read back");
    }
}

/// One bunch spelled out bit by bit (the stream is least significant bit first, as UE4's
/// `FBitWriter`): a reliable opening bunch on channel 3, `ChSequence` 1, one byte 0xA5.
#[test]
fn an_opening_bunch_is_written_bit_for_bit() {
    let b = Bunch {
        open: true,
        reliable: true,
        ch_index: 3,
        ch_sequence: 1,
        ch_name: ChName::Actor,
        payload: vec![0xA5],
        ..Default::default()
    };
    let lsb = |v: u32, n: usize| (0..n).map(move |i| (v >> i) & 1 == 1);
    let mut expected: Vec<bool> = vec![true, true, false]; // open-or-close, bOpen, bClose
    expected.extend([false, true]); // bIsReplicationPaused, bReliable
    expected.extend(lsb(3 << 1, 8)); // ChIndex 3, packed: value << 1, no "more" bit
    expected.extend([false, false, false]); // exports, must-be-mapped GUIDs, bPartial
    expected.extend(lsb(1, 10)); // ChSequence
    expected.push(true); // hard-coded name
    expected.extend(lsb(102, 9)); // NAME_Actor
    expected.extend(lsb(8, 13)); // BunchDataBits
    expected.extend(lsb(0xA5, 8));
    let mut w = BitWriter::with_capacity(64);
    b.write(&mut w, 1024).unwrap();
    let n = w.bits_processed();
    let bytes = w.finish();
    let got: Vec<bool> = (0..n).map(|i| bytes[i / 8] >> (i % 8) & 1 == 1).collect();
    assert_eq!(got, expected);
}

/// Bunches B saw on actor channels: (time, channel, open, close, reliable, ChSequence low bits).
type Seen = Arc<Mutex<Vec<(SimTime, u32, bool, bool, u32)>>>;

fn watch(b: &mut Observed) -> Seen {
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    b.rewrite = Some(Box::new(move |now, packet| {
        if let Ok(d) = decode_packet(packet) {
            for x in d.bunches.iter().filter(|x| x.ch_index >= 3 && x.reliable) {
                log.lock().unwrap().push((now, x.ch_index, x.open, x.close, x.ch_sequence));
            }
        }
        None
    }));
    seen
}

#[test]
fn actor_channels_open_close_when_idle_and_reopen_on_demand() {
    let seed = 91;
    let mut s = ue4_scenario(seed);
    s.workload = WorkloadConfig {
        senders: Senders::AOnly,
        reliable_rate_hz: 0.0,
        snapshot_rate_hz: 0.0,
        burst_messages: 12,
        actors: 2,
        ..Default::default()
    };
    s.ue4.channel_close_s = 1.0;
    s.link.a_to_b = LinkConfig { latency_ms: 30.0, loss_percent: 0.0, ..Default::default() };
    s.link.b_to_a = s.link.a_to_b;
    let (mut b, b_counters) = Observed::new(ue4_peer(&s, Side::B));
    let seen = watch(&mut b);
    let workload = Workload::new(Side::A, s.workload, seed);
    let mut sim = Simulation::with_peers(s.clone(), [Box::new(ue4_peer(&s, Side::A)), Box::new(b)]);
    let mut ledger = Ledger::default();
    let mut changes: Vec<(f64, u32, bool)> = Vec::new();
    let mut step = |sim: &mut Simulation, secs: f64| {
        sim.run_for_secs(secs);
        for e in sim.drain_events() {
            ledger.observe_event(&e);
            match e.kind {
                EventKind::Ue4ChannelOpened { side: Side::A, channel, .. } => {
                    changes.push((e.time.as_secs_f64(), channel, true))
                }
                EventKind::Ue4ChannelClosed { side: Side::A, channel, .. } => {
                    changes.push((e.time.as_secs_f64(), channel, false))
                }
                _ => {}
            }
        }
    };
    // Phase 1: open both, idle, close; phase 2: reopen on the freed indices.
    sim.burst(Side::A);
    step(&mut sim, 3.0);
    sim.burst(Side::A);
    step(&mut sim, 3.0);
    // Phase 3: a slow link, and messages again while the close is still unacked: the closing
    // indices are busy, so new channels take the next free ones.
    let slow = LinkConfig { latency_ms: 400.0, loss_percent: 0.0, ..Default::default() };
    sim.set_link(Dir::AtoB, slow);
    sim.set_link(Dir::BtoA, slow);
    sim.burst(Side::A);
    step(&mut sim, 1.05);
    sim.burst(Side::A);
    step(&mut sim, 4.0);

    let opened: Vec<(f64, u32)> = changes.iter().filter(|c| c.2).map(|c| (c.0, c.1)).collect();
    let closed: Vec<(f64, u32)> = changes.iter().filter(|c| !c.2).map(|c| (c.0, c.1)).collect();
    let chans = |v: &[(f64, u32)], from: f64, to: f64| -> Vec<u32> {
        let mut c: Vec<u32> = v.iter().filter(|(t, _)| (from..to).contains(t)).map(|(_, c)| *c).collect();
        c.sort();
        c
    };
    assert_eq!(chans(&opened, 0.0, 0.1), vec![3, 4], "seed {seed}: {opened:?}");
    assert_eq!(chans(&closed, 1.0, 1.1), vec![3, 4], "seed {seed}: {closed:?}");
    assert_eq!(chans(&opened, 3.0, 3.1), vec![3, 4], "seed {seed}: freed indices are reused: {opened:?}");
    assert_eq!(chans(&closed, 4.0, 4.1), vec![3, 4], "seed {seed}: {closed:?}");
    assert_eq!(chans(&opened, 6.0, 6.1), vec![3, 4], "seed {seed}: {opened:?}");
    assert_eq!(chans(&closed, 7.0, 7.04), vec![3, 4], "seed {seed}: {closed:?}");
    assert_eq!(chans(&opened, 7.04, 7.1), vec![5, 6], "seed {seed}: closing indices are still busy: {opened:?}");
    assert_eq!(chans(&closed, 8.0, 8.1), vec![5, 6], "seed {seed}: {closed:?}");
    assert_eq!((opened.len(), closed.len()), (8, 8), "seed {seed}");

    // On the wire: each channel's first bunch opens it, its last closes it with an empty
    // reliable bunch, and a reopened index continues its ChSequence.
    let seen = seen.lock().unwrap().clone();
    for ch in [3u32, 4] {
        let on: Vec<_> = seen.iter().filter(|x| x.1 == ch).collect();
        assert!(on[0].2, "seed {seed}: channel {ch} used before its open: {on:?}");
        let opens: Vec<_> = on.iter().filter(|x| x.2).collect();
        let closes: Vec<_> = on.iter().filter(|x| x.3).collect();
        assert_eq!((opens.len(), closes.len()), (3, 3), "seed {seed}: channel {ch}: {on:?}");
        for (close, reopen) in closes.iter().zip(&opens[1..]) {
            assert!(close.0 < reopen.0, "seed {seed}: channel {ch} reopened before its close arrived");
            assert_eq!(reopen.4, close.4 + 1, "seed {seed}: channel {ch} continues its ChSequence");
        }
    }
    check_reliable_exactly_once_per_actor(&ledger, Side::A, SimTime::from_secs_f64(11.0), &workload, seed);
    let c = *b_counters.lock().unwrap();
    assert_eq!((c.skip_acks, c.bunch_errors, c.duplicate_bunches), (0, 0, 0), "seed {seed}: {c:?}");
}

/// Per-actor channels bound head-of-line blocking: at 20 % loss, 16 actors keep every
/// channel's InRec shallower than one channel carrying everything (same seed, same messages).
#[test]
fn sixteen_actors_block_less_than_one() {
    for seed in 1..=3u64 {
        let depth = |actors: u32| {
            let mut s = ue4_scenario(seed);
            s.workload.reliable_rate_hz = 30.0;
            s.workload.actors = actors;
            for d in Dir::BOTH {
                s.link.get_mut(d).loss_percent = 20.0;
            }
            let mut sim = Simulation::new(s);
            sim.run_for_secs(60.0);
            let events: Vec<Event> = sim.drain_events().collect();
            Ue4Summary::from_events(&events)
        };
        let (one, sixteen) = (depth(1), depth(16));
        let (d1, d16) = (one.max_inrec_depth_by_kind.actor, sixteen.max_inrec_depth_by_kind.actor);
        assert!(d16 < d1, "seed {seed}: InRec depth {d16} with 16 actors, {d1} with one");
        assert!(
            sixteen.max_inrec_blocked_ms <= one.max_inrec_blocked_ms,
            "seed {seed}: blocked {} ms with 16 actors, {} with one",
            sixteen.max_inrec_blocked_ms,
            one.max_inrec_blocked_ms
        );
        assert!(sixteen.channels_opened > 16 && one.channels_opened == 2, "seed {seed}: {sixteen:?}");
    }
}
