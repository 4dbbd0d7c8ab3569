//! Short forms of the message soaks (`examples/message_soaks.rs` runs the long ones): every
//! message strategy takes every message the workload produces and delivers it once, intact, with
//! no false ack, through heavy jitter and through a 700 s one-way outage.

use crate::support::*;
use ackscope_protocol::*;

/// Reliable messages per second from each side: above what dnm with the book's rule carries on
/// this link (about 350), below what the others carry.
const RATE_HZ: f64 = 500.0;

/// 20 % loss, 50 ms jitter, 5 % duplicates, 5 % reorder both ways, `RATE_HZ` from each side.
fn jittery(strategy: Strategy, seed: u64) -> Scenario {
    let mut s = Scenario { seed, strategy, ..Scenario::default() };
    s.workload.reliable_rate_hz = RATE_HZ;
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.loss_percent = 20.0;
        l.jitter_ms = 50.0;
        l.duplicate_percent = 5.0;
        l.reorder_percent = 5.0;
    }
    s
}

/// Runs `secs`, drains for at most `drain_secs`, and checks the ground truth every run must meet:
/// every reliable message delivered exactly once and intact, no false ack of a packet (nor, for
/// the strategies that hand messages over on arrival, of a message).
fn soak(what: &str, s: Scenario, secs: f64, drain_secs: f64) -> (Ledger, ReliableMetrics) {
    let (seed, unordered) = (s.seed, matches!(s.strategy, Strategy::Dnm | Strategy::Rellikt));
    let mut sim = Simulation::new(s);
    let mut ledger = Ledger::default();
    run(&mut sim, secs, &mut ledger);
    let d = drain(&mut sim, drain_secs);
    ledger.observe(&sim.drain_events().collect::<Vec<_>>());
    let m = ledger.metrics.finish();
    eprintln!("{what} (seed {seed}): {m:?}\n  drain {d:?}, {}", ledger.brief());
    assert!(d.drained, "{what} (seed {seed}): did not drain: {d:?}");
    assert_eq!((m.lost, m.duplicated, m.corrupted), (0, 0, 0), "{what} (seed {seed}): {m:?}");
    assert_eq!(m.delivered, m.sent, "{what} (seed {seed})");
    assert_eq!(ledger.false_acks(), 0, "{what} (seed {seed}): {}", ledger.brief());
    if unordered {
        // Ordered strategies ack a message when it arrives, possibly before the ones ahead of it.
        assert_eq!(ledger.false_msg_acks, 0, "{what} (seed {seed}): a message acked before it was delivered");
    }
    assert_eq!(ledger.double_deliveries(), 0, "{what} (seed {seed})");
    assert_eq!(ledger.double_outcomes(), 0, "{what} (seed {seed}): a send got two outcomes");
    assert_eq!(ledger.malformed(), 0, "{what} (seed {seed})");
    (ledger, m)
}

#[test]
fn heavy_jitter_loses_and_duplicates_nothing_for_glenn_rellikt_and_dnm_accepting_late_packets() {
    let seed = 0x1015;
    let (glenn, m) = soak("glenn", jittery(Strategy::Glenn, seed), 60.0, 60.0);
    assert!(m.sent > 55_000, "seed {seed}: {m:?}");
    assert_eq!(m.out_of_order, 0, "seed {seed}: glenn delivers in order");
    for side in Side::BOTH {
        glenn.check_reliable_exactly_once_in_order(side, SimTime::from_secs_f64(1e9), seed);
    }
    soak("rellikt", jittery(Strategy::Rellikt, seed), 60.0, 60.0);
    let mut s = jittery(Strategy::Dnm, seed);
    s.dnm.accept_late = true;
    let (_, m) = soak("dnm accept_late", s, 60.0, 60.0);
    assert_eq!(m.backlog_peak, 0, "seed {seed}: within capacity the window never fills: {m:?}");
}

#[test]
fn dnm_with_the_books_rule_pays_for_jitter_in_sends_and_backlogs_what_it_cannot_carry() {
    let seed = 0x1016;
    let (book_ledger, book) = soak("dnm (book)", jittery(Strategy::Dnm, seed), 60.0, 300.0);
    let mut s = jittery(Strategy::Dnm, seed);
    s.dnm.accept_late = true;
    let (_, late) = soak("dnm accept_late", s, 60.0, 60.0);
    // Late packets are dropped unacked with their acks: messages go out far more often.
    assert!(
        book.sends_per_message > 1.4 * late.sends_per_message,
        "seed {seed}: book {} vs accept_late {} sends per message",
        book.sends_per_message,
        late.sends_per_message
    );
    // Beyond its capacity every message still arrives, after waiting in the backlog.
    assert!(book.backlog_peak > 1000, "seed {seed}: {book:?}");
    let kept = book_ledger.refused.iter().flatten().filter(|(_, r)| *r == RefuseReason::SendQueueFull).count();
    assert!(kept as u64 >= book.backlog_peak, "seed {seed}: {kept} backlog entries");
}

#[test]
fn a_700_s_one_way_outage_loses_nothing_and_acks_nothing_falsely() {
    let seed = 0x700;
    for strategy in [Strategy::Glenn, Strategy::Dnm, Strategy::Rellikt] {
        let mut s = Scenario { seed, strategy, ..Scenario::default() };
        let normal = s.link.a_to_b.loss_percent;
        let step = |at_s, loss| LinkStep {
            at_s,
            dir: StepDirection::AToB,
            set: LinkPatch { loss_percent: Some(loss), ..LinkPatch::default() },
        };
        s.script = vec![step(10.0, 100.0).into(), step(710.0, normal).into()];
        let (_, m) = soak(strategy.name(), s, 760.0, 120.0);
        // About 10 messages a second from A for 700 s, less the 1024 its send window holds.
        assert!(m.backlog_peak > 5000, "{} (seed {seed}): {m:?}", strategy.name());
    }
}
