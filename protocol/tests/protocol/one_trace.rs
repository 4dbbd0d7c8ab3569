//! One trace per seed: two strategies on the same seed meet the same link at every instant at
//! which both send, whatever each sent before.
//!
//! Glenn sends on every tick; UE4 flushes only when it has something to say, so the two make very
//! different numbers of packets. Before the burst chain moved to its own time grid it advanced
//! once per packet sent, and one in ten packets sent at the same instant by the two met a
//! different fate under bursts. Now each decision is keyed by (seed, direction, send time):
//! bursts (on a 1 ms grid), random loss, jitter and duplicates.

use std::collections::BTreeMap;

use crate::support::{run, Ledger};
use ackscope_protocol::*;

const SECONDS: f64 = 120.0;

/// What the link did with a send: dropped (and why), or delivered after a delay, and duplicated.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fate {
    Dropped(DropReason),
    Delivered { delay_us: u32, duplicated: bool },
}

/// Per direction and send instant, the fate of the first packet sent at that instant.
fn first_fates(strategy: Strategy, seed: u64) -> BTreeMap<(usize, SimTime), Fate> {
    let mut s = Scenario { seed, strategy, ..Scenario::default() };
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.burst = BurstLoss { p_percent: 2.0, r_percent: 10.0, loss_in_bad_percent: 100.0 };
        l.jitter_ms = 10.0;
        l.duplicate_percent = 2.0;
    }
    let mut sim = Simulation::new(s);
    sim.set_keep_events(true);
    let mut ledger = Ledger::default();
    run(&mut sim, SECONDS, &mut ledger);
    let settled = SimTime::from_secs_f64(SECONDS - 1.0);
    let mut out = BTreeMap::new();
    // Records come in uid order, which is send order: the first at an instant is seen first.
    for p in ledger.packets.packets() {
        let (Some(dir), Some(at)) = (p.dir, p.sent_at) else { continue };
        if at > settled {
            continue;
        }
        let fate = match (p.dropped, p.delivered_at) {
            (Some(reason), _) => Fate::Dropped(reason),
            (None, Some(_)) => Fate::Delivered { delay_us: p.delay_us, duplicated: p.duplicates > 0 },
            (None, None) => panic!("seed {seed} {strategy:?}: send {} at {at:?} neither dropped nor delivered", p.uid),
        };
        out.entry((dir.index(), at)).or_insert(fate);
    }
    out
}

#[test]
fn glenn_and_ue4_meet_the_same_fate_at_every_instant_both_send() {
    let seed = 1;
    let glenn = first_fates(Strategy::Glenn, seed);
    let ue4 = first_fates(Strategy::Ue4, seed);
    let (mut compared, mut differ) = (0, Vec::new());
    let (mut bursts, mut randoms, mut duplicated, mut delays) = (0, 0, 0, std::collections::BTreeSet::new());
    for (key, g) in &glenn {
        let Some(u) = ue4.get(key) else { continue };
        compared += 1;
        if g != u {
            differ.push((key, *g, *u));
        }
        match g {
            Fate::Dropped(DropReason::Burst) => bursts += 1,
            Fate::Dropped(DropReason::Random) => randoms += 1,
            Fate::Delivered { delay_us, duplicated: d } => {
                duplicated += usize::from(*d);
                delays.insert(*delay_us);
            }
            _ => {}
        }
    }
    eprintln!(
        "seed {seed}: glenn {} and ue4 {} send instants, {compared} shared: {bursts} burst drops, {randoms} random, \
         {duplicated} duplicated, {} distinct delays, {} differ",
        glenn.len(),
        ue4.len(),
        delays.len(),
        differ.len()
    );
    assert!(
        differ.is_empty(),
        "seed {seed}: {} of {compared} shared instants differ, first {:?}",
        differ.len(),
        &differ[..differ.len().min(3)]
    );
    // The comparison covered every kind of fate, over most of the run.
    assert!(compared > 5_000, "seed {seed}: only {compared} shared instants");
    assert!(
        bursts > 100 && randoms > 100 && duplicated > 20 && delays.len() > 1_000,
        "seed {seed}: too few of some fate"
    );
}
