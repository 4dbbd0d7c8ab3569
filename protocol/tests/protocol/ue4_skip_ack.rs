//! bSkipAck: a packet the receiver cannot fully process is reported lost (`NakSeq`) although it
//! arrived, so the sender resends every reliable bunch it carried; the receiver drops those
//! copies by `ChSequence` and delivers each message once.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use crate::support::*;
use ackscope_protocol::strategies::ue4::bunch::{decode_packet, encode_packet};
use ackscope_protocol::strategies::ue4::SNAPSHOT_CHANNEL;
use ackscope_protocol::*;

fn clean_scenario(seed: u64) -> Scenario {
    let mut s = ue4_scenario(seed);
    s.workload.reliable_rate_hz = 60.0;
    s.ue4.net_speed_bytes_per_sec = 0.0;
    for d in Dir::BOTH {
        *s.link.get_mut(d) = LinkConfig { latency_ms: 40.0, loss_percent: 0.0, ..Default::default() };
    }
    s
}

/// What A sent, from its events: reliable messages per packet, Naks, resends.
struct SenderView {
    packets: Vec<(SimTime, u32)>,
    reliable_in: BTreeMap<u32, Vec<u64>>,
    naks: BTreeMap<u32, SimTime>,
    resends: Vec<(SimTime, u64, u32)>,
}

impl SenderView {
    fn new(events: &[Event]) -> Self {
        let reliable: BTreeSet<u64> = events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::MessageQueued { side: Side::A, msg, reliable: true, .. } => Some(msg),
                _ => None,
            })
            .collect();
        let mut v = SenderView {
            packets: Vec::new(),
            reliable_in: BTreeMap::new(),
            naks: BTreeMap::new(),
            resends: Vec::new(),
        };
        for e in events {
            match e.kind {
                EventKind::PacketSent { side: Side::A, seq, .. } => v.packets.push((e.time, seq)),
                EventKind::MessageSent { side: Side::A, msg, seq, kind } if reliable.contains(&msg) => {
                    if kind == SendKind::NakResend {
                        v.resends.push((e.time, msg, seq));
                    } else {
                        v.reliable_in.entry(seq).or_default().push(msg);
                    }
                }
                EventKind::PacketNakked { side: Side::A, seq } => {
                    v.naks.insert(seq, e.time);
                }
                _ => {}
            }
        }
        v
    }
}

/// B moves the snapshot bunch of one packet of A that also carries reliable bunches onto a
/// channel index nobody opened: "Received unreliable bunch before open", so B must not ack it.
#[test]
fn an_unprocessable_bunch_naks_its_packet_and_resends_its_reliable_bunches() {
    let seed = 81;
    let s = clean_scenario(seed);
    let chosen: Arc<Mutex<Option<u16>>> = Arc::new(Mutex::new(None));
    let (mut b, b_counters) = Observed::new(ue4_peer(&s, Side::B));
    let pick = chosen.clone();
    b.rewrite = Some(Box::new(move |now, packet| {
        let mut chosen = pick.lock().unwrap();
        if chosen.is_some() || now < SimTime::from_secs_f64(1.0) {
            return None;
        }
        let mut d = decode_packet(packet).ok()?;
        let has_reliable = d.bunches.iter().any(|b| b.reliable);
        let snap = d.bunches.iter_mut().find(|b| !b.reliable && b.ch_index == SNAPSHOT_CHANNEL)?;
        if !has_reliable {
            return None;
        }
        snap.ch_index = 40;
        *chosen = Some(d.header.seq.get());
        encode_packet(&d.header, &d.bunches, 2048).ok()
    }));
    let a = ue4_peer(&s, Side::A);
    let mut sim = Simulation::with_peers(s, [Box::new(a), Box::new(b)]);
    sim.run_for_secs(4.0);
    let events: Vec<Event> = sim.drain_events().collect();
    let p = chosen.lock().unwrap().expect("a packet with a snapshot and reliable bunches") as u32;

    let skips: Vec<(Side, u32)> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Ue4SkipAck { side, seq } => Some((side, seq)),
            _ => None,
        })
        .collect();
    assert_eq!(skips, vec![(Side::B, p)], "seed {seed}: exactly the rewritten packet is skip-acked");
    let view = SenderView::new(&events);
    assert_eq!(view.naks.keys().copied().collect::<Vec<_>>(), vec![p], "seed {seed}: the only Nak on a clean link");
    // Predicted resends: every reliable bunch of packet p, in the first packet after the Nak.
    let nak_at = view.naks[&p];
    let (flush_at, next_seq) = *view.packets.iter().find(|(t, _)| *t >= nak_at).expect("a packet after the Nak");
    let lost: BTreeSet<u64> = view.reliable_in[&p].iter().copied().collect();
    let resent: BTreeSet<u64> = view.resends.iter().map(|(_, m, _)| *m).collect();
    assert!(!lost.is_empty(), "seed {seed}");
    assert_eq!(resent, lost, "seed {seed}: resends are exactly packet {p}'s reliable messages");
    assert!(view.resends.iter().all(|(t, _, s)| (*t, *s) == (flush_at, next_seq)), "seed {seed}: {:?}", view.resends);
    // They had arrived: B drops every copy by ChSequence and delivers each message once.
    let c = *b_counters.lock().unwrap();
    assert_eq!((c.skip_acks, c.skipped_bunches), (1, 1), "seed {seed}: {c:?}");
    assert!(c.duplicate_bunches >= 1, "seed {seed}: resent bunches were not dropped as duplicates: {c:?}");
    let mut ledger = Ledger::default();
    ledger.observe(&events);
    ledger.check_reliable_exactly_once_in_order(Side::A, SimTime::from_secs_f64(3.5), seed);
    assert_eq!(ledger.packets.false_naks(), 1, "seed {seed}: the Nak names a packet the link delivered");
    let summary = Ue4Summary::from_events(&events);
    assert_eq!((summary.skip_acks, summary.bunches_resent as usize), (1, view.resends.len()), "seed {seed}");
}

/// The same from the link itself: with snapshots larger than one bunch, losing the packet with a
/// snapshot's initial partial bunch makes the next piece "a partial bunch before its initial
/// one" — skip-acked, and the reliable bunches sharing its packet are resent.
#[test]
fn a_partial_bunch_without_its_initial_piece_is_skip_acked() {
    let seed = 82;
    let mut s = clean_scenario(seed);
    s.workload.snapshot_bytes = 1500;
    let dropped: Arc<Mutex<Option<u16>>> = Arc::new(Mutex::new(None));
    let log = dropped.clone();
    let (mut b, _) = Observed::new(ue4_peer(&s, Side::B));
    b.rewrite = Some(Box::new(move |now, packet| {
        let mut dropped = log.lock().unwrap();
        if dropped.is_some() || now < SimTime::from_secs_f64(1.0) {
            return None;
        }
        let d = decode_packet(packet).ok()?;
        d.bunches.iter().any(|b| b.partial_initial && !b.reliable).then(|| {
            *dropped = Some(d.header.seq.get());
            Vec::new()
        })
    }));
    let a = ue4_peer(&s, Side::A);
    let mut sim = Simulation::with_peers(s, [Box::new(a), Box::new(b)]);
    sim.run_for_secs(4.0);
    let events: Vec<Event> = sim.drain_events().collect();
    let lost = dropped.lock().unwrap().expect("a packet with an initial partial snapshot") as u32;
    let skips: Vec<u32> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Ue4SkipAck { side: Side::B, seq } => Some(seq),
            _ => None,
        })
        .collect();
    assert_eq!(skips, vec![lost + 1], "seed {seed}: the packet after the lost initial piece");
    let view = SenderView::new(&events);
    let naked: Vec<u32> = view.naks.keys().copied().collect();
    assert_eq!(naked, vec![lost, lost + 1], "seed {seed}: one real loss, one skip-ack");
    let resent: BTreeSet<u64> = view.resends.iter().map(|(_, m, _)| *m).collect();
    let expected: BTreeSet<u64> =
        [lost, lost + 1].iter().flat_map(|p| view.reliable_in.get(p).into_iter().flatten().copied()).collect();
    assert_eq!(resent, expected, "seed {seed}");
    let mut ledger = Ledger::default();
    ledger.observe(&events);
    ledger.check_reliable_exactly_once_in_order(Side::A, SimTime::from_secs_f64(3.5), seed);
}
