//! The hybrid strategy against ground truth: every reliable message delivered exactly once in
//! order under a terrible link, Naks read from the acks only for packets not acked, timers that
//! stay quiet on a steady path and learn a reordering one, blind copies only where a resend would
//! be slow and within their limits, a copy of a resend where a second loss would reach the tail,
//! quiet ticks, and (short form of `cargo run --release --example frontier`) its defaults never
//! dominated by glenn's or ue4's, and dominating both where the grid says they do.

use std::collections::HashMap;

use crate::support::{glenn_scenario, run_drained, Ledger};
use ackscope_protocol::*;

fn hybrid_scenario(seed: u64) -> Scenario {
    Scenario { strategy: Strategy::Hybrid, ..glenn_scenario(seed) }
}

/// Loss in bursts, reordering jitter, duplicates and held-back packets, both ways.
fn rough(s: &mut Scenario, jitter_reorders: bool) {
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.latency_ms = 40.0;
        l.jitter_ms = 15.0;
        l.jitter_reorders = jitter_reorders;
        l.loss_percent = 15.0;
        l.burst = BurstLoss { p_percent: 1.0, r_percent: 25.0, loss_in_bad_percent: 100.0 };
        l.duplicate_percent = 5.0;
        l.reorder_percent = if jitter_reorders { 5.0 } else { 0.0 };
        l.reorder_delay_ms = 40.0;
    }
}

fn busy(s: &mut Scenario) {
    s.send_rate_pps = 120.0;
    s.workload.reliable_rate_hz = 150.0;
    s.workload.reliable_max_bytes = 120;
    s.workload.snapshot_rate_hz = 20.0;
}

fn plain_link(s: &mut Scenario, latency_ms: f64, loss_percent: f64, jitter_ms: f64) {
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        (l.latency_ms, l.loss_percent, l.jitter_ms) = (latency_ms, loss_percent, jitter_ms);
    }
}

/// Hybrid at `seed` with a light workload (10 reliable messages and 20 snapshots a second) over
/// [`plain_link`].
fn plain_hybrid(seed: u64, latency_ms: f64, loss_percent: f64, jitter_ms: f64) -> Scenario {
    let mut s = hybrid_scenario(seed);
    s.workload.reliable_rate_hz = 10.0;
    s.workload.snapshot_rate_hz = 20.0;
    plain_link(&mut s, latency_ms, loss_percent, jitter_ms);
    s
}

#[test]
fn every_message_arrives_once_in_order_under_loss_jitter_duplicates_and_reorder() {
    // Up to three copies, a long recovery target (always copies) or none, a tail share no plan
    // can meet: every path of the policy under the same abuse.
    for (seed, copies, target_ms, share) in [(0x4B1D, 1, 100.0, 1.0), (0x4B1E, 0, 100.0, 1.0), (0x4B1F, 3, 1.0, 0.01)] {
        let mut s = hybrid_scenario(seed);
        busy(&mut s);
        rough(&mut s, true);
        s.hybrid.redundant_copies = copies;
        s.hybrid.redundancy_budget_bytes = 300;
        s.hybrid.recovery_target_ms = target_ms;
        s.hybrid.tail_share_percent = share;
        let mut naks = 0;
        let r = run_drained(s, 40.0, 60.0, |e| naks += matches!(e.kind, EventKind::PacketNakked { .. }) as u64);
        eprintln!("hybrid soak (seed {seed}, copies {copies}): {:?}\n{:?}", r.metrics, r.totals);
        assert!(r.metrics.sent > 10_000, "seed {seed}: only {} messages", r.metrics.sent);
        r.assert_exactly_once_in_order("hybrid soak");
        assert!(naks > 100, "seed {seed}: only {naks} naks inferred under 15 % loss");
    }
}

#[test]
fn a_nak_never_names_a_packet_already_acked_and_only_nakked_copies_are_resent() {
    for (seed, reorders) in [(0x7A1, true), (0x7A2, false)] {
        let mut s = hybrid_scenario(seed);
        busy(&mut s);
        rough(&mut s, reorders);
        s.hybrid.reorder_tolerance_packets = 1;
        let mut sim = Simulation::new(s);
        let mut ledger = Ledger::default();
        // Per sender: each message's latest carrier (sequence) and the carrier before a resend.
        let mut carrier: [HashMap<u64, u32>; 2] = [HashMap::new(), HashMap::new()];
        let (mut nak_resends, mut checked) = (0u64, 0u64);
        for _ in 0..300 {
            sim.run_for_secs(0.1);
            let events: Vec<Event> = sim.drain_events().collect();
            ledger.observe(&events);
            for e in &events {
                let EventKind::MessageSent { side, msg, seq, kind } = e.kind else { continue };
                let previous = carrier[side.index()].insert(msg, seq);
                if kind != SendKind::NakResend {
                    continue;
                }
                nak_resends += 1;
                // The copy before this one rode in a packet the sender nakked, at or before now,
                // and that packet had not been acked when it was nakked.
                let p = previous.expect("a resend follows a send");
                let uid = ledger.packets.uid_of(side, p as u16).expect("the carrier was sent");
                let rec = ledger.packets.packet(uid).expect("a record");
                let nakked = rec.nakked_at.unwrap_or_else(|| panic!("seed {seed}: resent {msg} but {p} not nakked"));
                assert!(nakked <= e.time, "seed {seed}: resend before the nak");
                assert!(
                    rec.acked_at.is_none_or(|a| a > nakked),
                    "seed {seed}: packet {p} nakked after its ack: {rec:?}"
                );
                checked += 1;
            }
        }
        let p = &ledger.packets;
        eprintln!(
            "seed {seed}, reorders {reorders}: {nak_resends} nak resends, naks {} (false {}), acks {}",
            p.naks_reported(),
            p.false_naks(),
            p.acks_reported()
        );
        assert!(checked > 100, "seed {seed}: only {checked} nak resends to check");
        // No send is both acked and then nakked, nor nakked twice.
        for r in p.packets().filter(|r| r.naks > 0) {
            assert_eq!(r.naks, 1, "seed {seed}: nakked twice: {r:?}");
            assert!(r.acked_at.is_none_or(|a| a > r.nakked_at.unwrap()), "seed {seed}: {r:?}");
        }
        if !reorders {
            // Nothing overtakes: a clear ack bit behind a newer ack is a lost packet, always.
            assert_eq!(p.false_naks(), 0, "seed {seed}: a nak named a delivered packet");
        }
        assert_eq!(p.false_acks(), 0, "seed {seed}");
    }
}

/// Sends of each kind over a run of `s` (drained).
fn sends_by_kind(s: Scenario, secs: f64) -> (HashMap<SendKind, u64>, ReliableMetrics) {
    let mut kinds = HashMap::new();
    let r = run_drained(s, secs, 30.0, |e| {
        if let EventKind::MessageSent { kind, .. } = e.kind {
            *kinds.entry(kind).or_insert(0) += 1;
        }
    });
    r.assert_exactly_once_in_order("sends by kind");
    (kinds, r.metrics)
}

#[test]
fn a_steady_path_gets_no_resend_and_a_reordering_one_learns_to_wait() {
    // 100 ms each way, no loss, no jitter: the timer (srtt + 4 x rttvar) never fires early, and
    // nothing is lost, so nothing goes twice.
    let mut s = plain_hybrid(0x57EA, 100.0, 0.0, 0.0);
    let (kinds, m) = sends_by_kind(s.clone(), 30.0);
    assert_eq!(m.sends_per_message, 1.0, "{kinds:?}");
    // 30 ms of jitter that reorders packets 17 ms apart, still no loss: the first late packets
    // read as lost teach the reorder window, and the rest wait for it. Resends stay rare: the
    // window is set just under the lateness seen (0.9 of it), so a packet as late as the latest
    // late one is still resent (1.6 % of messages at this seed; a Nak a tick sooner on every
    // real loss pays for it).
    plain_link(&mut s, 100.0, 0.0, 30.0);
    let (kinds, m) = sends_by_kind(s, 60.0);
    eprintln!("reordering, no loss: {kinds:?}, {m:?}");
    let resends = sent_as(&kinds, SendKind::NakResend) + sent_as(&kinds, SendKind::DelayResend);
    assert!(resends * 40 < m.sent, "{resends} resends of {} messages on a lossless path", m.sent);
}

/// Sends of `kind` in a count by kind.
fn sent_as(kinds: &HashMap<SendKind, u64>, kind: SendKind) -> u64 {
    kinds.get(&kind).copied().unwrap_or(0)
}

/// Timer resends of a drained run of `s` (its kinds of sends and metrics).
fn timer_resends(s: Scenario, secs: f64) -> (u64, ReliableMetrics) {
    let (kinds, m) = sends_by_kind(s, secs);
    (sent_as(&kinds, SendKind::DelayResend), m)
}

#[test]
fn the_timer_backs_off_where_its_resends_prove_spurious_and_stays_tight_where_needed() {
    // 100 ms each way with 30 ms of jitter and no loss: every timer resend is spurious. A timer
    // fixed at the tight srtt + 1 x rttvar fires before one ack in six or so; the learnt one
    // backs off toward TCP's 4 after its first spurious resends, the losses being under the tail
    // share (none).
    let mut s = plain_hybrid(0x71E, 100.0, 0.0, 30.0);
    let (learnt, m) = timer_resends(s.clone(), 60.0);
    let mut fixed = s.clone();
    fixed.hybrid.rttvar_factor = fixed.hybrid.tight_rttvar_factor;
    let (fixed_resends, fm) = timer_resends(fixed, 60.0);
    eprintln!("lossless, jitter: {learnt} timer resends learnt, {fixed_resends} fixed tight ({m:?}, {fm:?})");
    assert!(learnt * 100 < m.sent, "{learnt} timer resends of {} messages on a lossless path", m.sent);
    assert!(fixed_resends * 20 > fm.sent, "a fixed tight timer resends often: {fixed_resends} of {}", fm.sent);
    // 50 ms each way, 30 ms jitter, 10 % loss: the lost messages and those queued behind them
    // are over the tail share, so the timer stays tight and beats the Nak (which waits for the
    // reorder window) far more often than TCP's does.
    plain_link(&mut s, 50.0, 10.0, 30.0);
    let (learnt, m) = timer_resends(s.clone(), 60.0);
    let mut tcp = s;
    tcp.hybrid.tight_rttvar_factor = 4.0;
    let (tcp_resends, tm) = timer_resends(tcp, 60.0);
    eprintln!("10 % loss, jitter: {learnt} timer resends learnt, {tcp_resends} at TCP's 4 ({m:?}, {tm:?})");
    assert!(learnt > 2 * tcp_resends.max(10), "{learnt} timer resends, {tcp_resends} at TCP's 4");
}

/// What a drained run of `s` sent as blind copies.
#[derive(Debug, Default)]
struct CopyCount {
    /// Copies in rounds begun by a first send, by a resend, and by a message's first resend.
    of_firsts: u64,
    of_resends: u64,
    of_first_resends: u64,
    /// First sends, resends, and first resends of a message.
    firsts: u64,
    resends: u64,
    first_resends: u64,
    /// The most copies of one message in one round (between two of its other sends).
    most_per_round: u32,
    /// The most payload bytes of copies in one packet (sizes from `MessageQueued`).
    most_bytes: u32,
}

fn copy_limits(s: Scenario, secs: f64) -> (CopyCount, ReliableMetrics) {
    let mut bytes: [HashMap<u64, u32>; 2] = Default::default();
    // Per message: copies in its current round, and its round (0: the first send's).
    let mut round: [HashMap<u64, (u32, u32)>; 2] = Default::default();
    let mut per_packet: HashMap<(usize, u32), u32> = HashMap::new();
    let mut c = CopyCount::default();
    let r = run_drained(s, secs, 30.0, |e| match e.kind {
        EventKind::MessageQueued { side, msg, bytes: b, reliable: true } => {
            bytes[side.index()].insert(msg, b);
        }
        EventKind::MessageSent { side, msg, seq, kind } => {
            let Some(&b) = bytes[side.index()].get(&msg) else { return };
            let (n, k) = round[side.index()].entry(msg).or_insert((0, 0));
            match kind {
                SendKind::Redundant => {
                    *if *k > 0 { &mut c.of_resends } else { &mut c.of_firsts } += 1;
                    c.of_first_resends += (*k == 1) as u64;
                    *n += 1;
                    c.most_per_round = c.most_per_round.max(*n);
                    *per_packet.entry((side.index(), seq)).or_insert(0) += b;
                }
                SendKind::First => {
                    c.firsts += 1;
                    (*n, *k) = (0, 0);
                }
                _ => {
                    c.resends += 1;
                    c.first_resends += (*k == 0) as u64;
                    (*n, *k) = (0, *k + 1);
                }
            }
        }
        _ => {}
    });
    r.assert_exactly_once_in_order("copy limits");
    c.most_bytes = per_packet.values().copied().max().unwrap_or(0);
    (c, r.metrics)
}

#[test]
fn copies_go_only_where_a_resend_would_be_slow_and_within_their_limits() {
    let run = |latency_ms: f64, loss_percent: f64, copies: u32, budget: u32| {
        let mut s = plain_hybrid(0xC0, latency_ms, loss_percent, 0.0);
        s.hybrid.redundant_copies = copies;
        s.hybrid.redundancy_budget_bytes = budget;
        copy_limits(s, 60.0)
    };
    // No loss: nothing to copy against, even on a slow path.
    let (c, _) = run(100.0, 0.0, 1, 256);
    assert_eq!(c.of_firsts + c.of_resends, 0, "copies on a lossless path");
    // 10 ms each way at 5 %: a resend comes within the 110 ms recovery target, so Naks do the
    // work, and a message lost twice is rarer than the tail share: no copies at all.
    let (c, _) = run(10.0, 5.0, 1, 256);
    assert_eq!(c.of_firsts + c.of_resends, 0, "copies where a resend is quick: {c:?}");
    // 100 ms each way at 3 % loss: a resend would take an RTT and more; one copy of nearly every
    // message (the largest may go without, within the tail share), never two in a round.
    let (c, m) = run(100.0, 3.0, 1, 256);
    eprintln!("100 ms, 3 %: {c:?}, {m:?}");
    assert!(c.of_firsts * 10 > c.firsts * 7 && c.of_firsts <= c.firsts, "{c:?}");
    assert_eq!(c.most_per_round, 1, "one copy per round at most");
    // Two copies allowed, a 40-byte budget: copies never fill more than it in one packet.
    let (c, _) = run(100.0, 3.0, 2, 40);
    assert!(c.most_per_round <= 2 && c.most_bytes <= 40, "{c:?}");
    // No budget, no copies.
    let (c, _) = run(100.0, 3.0, 2, 0);
    assert_eq!(c.of_firsts + c.of_resends, 0);
    // 30 % loss: one copy of every message cannot bring the tail within its share, so first
    // sends get none; a resend (only lost messages pay) gets one where two copied rounds bring
    // the tail within the share. At 10 ms each way a round is quick (within the recovery target)
    // and the second resend, copied, leaves few enough waiting: the first resend's copies are put
    // off to it, paid by the 30 % of resent messages lost again (`copies::tests` has where they
    // are not).
    let (c, m) = run(10.0, 30.0, 1, 256);
    eprintln!("10 ms, 30 %: {c:?}, {m:?}");
    assert_eq!(c.of_firsts, 0, "{c:?}");
    assert_eq!(c.of_first_resends, 0, "a first resend's copies are put off: {c:?}");
    let later_resends = c.resends - c.first_resends;
    assert!(c.of_resends * 3 > later_resends && c.of_resends <= later_resends, "{c:?}");
    assert_eq!(c.most_per_round, 1, "one copy per round at most");
}

#[test]
fn a_resend_gets_a_copy_where_a_second_loss_would_reach_the_tail() {
    // 100 ms each way at 10 %: one copy of every message cannot keep 99 % of them clear of a
    // resend (first sends go alone), but a message lost once is in the tail if its resend is
    // lost too, and copying resends costs a tenth of what copying every message would.
    let mut s = plain_hybrid(0xC1, 100.0, 10.0, 0.0);
    let (c, m) = copy_limits(s.clone(), 60.0);
    eprintln!("100 ms, 10 %: {c:?}, {m:?}");
    // First sends go alone once the loss is learned (a few are copied in the first seconds).
    assert!(c.of_firsts * 5 < c.firsts, "{c:?}");
    assert!(c.of_resends * 2 > c.resends && c.of_resends <= c.resends, "{c:?}");
    // Without the resends' copies (no budget) the p99 waits for a second recovery.
    s.hybrid.redundancy_budget_bytes = 0;
    let (_, uncopied) = copy_limits(s, 60.0);
    eprintln!("without copies: {uncopied:?}");
    assert!(
        m.latency_ms.p99 + 100.0 < uncopied.latency_ms.p99,
        "p99 {} with copies of resends, {} without",
        m.latency_ms.p99,
        uncopied.latency_ms.p99
    );
}

#[test]
fn quiet_ticks_send_only_messages_and_owed_acks() {
    let packets = |every_tick: bool| {
        let mut s = hybrid_scenario(0x71C);
        s.workload.reliable_rate_hz = 5.0;
        s.hybrid.every_tick = every_tick;
        let (ledger, _) = crate::support::run_audited(s, 10.0);
        (ledger.packets.sent(Side::A), ledger.packets.sent(Side::B))
    };
    let (a, b) = packets(true);
    assert!(a >= 599 && b >= 599, "60 packets a second each: {a} {b}");
    let (qa, qb) = packets(false);
    // 5 messages a second each way: a packet for each, an ack for each of the peer's.
    assert!(qa < 150 && qb < 150 && qa > 50 && qb > 50, "quiet ticks sent {qa} and {qb}");
}

// ----- The grid, short form (the full grid: `cargo run --release --example frontier`) -----

/// One grid cell: both directions `latency_ms` one way with `jitter_ms`, `loss_percent` lost
/// independently or, with `bursts`, in Gilbert-Elliott bursts of 30 ms on average at the same
/// mean (as `examples/frontier.rs` sets them).
#[derive(Debug, Clone, Copy)]
struct Cell {
    latency_ms: f64,
    loss_percent: f64,
    jitter_ms: f64,
    bursts: bool,
}

fn cell_scenario(c: Cell, strategy: Strategy, seed: u64) -> Scenario {
    let mut s = Scenario { seed, strategy, ..Scenario::default() };
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        (l.latency_ms, l.jitter_ms) = (c.latency_ms, c.jitter_ms);
        if c.bursts {
            let r_percent = 100.0 / 30.0;
            let p_percent = r_percent * c.loss_percent / (100.0 - c.loss_percent);
            l.loss_percent = 0.0;
            l.burst = BurstLoss { p_percent, r_percent, loss_in_bad_percent: 100.0 };
        } else {
            l.loss_percent = c.loss_percent;
        }
    }
    s
}

/// (p99 ms, wire bytes per delivered message) of one drained run, as `ackscope sweep` measures.
fn figures(s: Scenario, secs: f64) -> (f64, f64) {
    let mut sim = Simulation::new(s);
    sim.set_summary(false);
    sim.set_event_filter(EventFilter::MESSAGE_METRICS);
    sim.fix_flow_off();
    let mut acc = MetricsAccumulator::new();
    sim.run_for_secs(secs);
    acc.observe_all(&sim.drain_events().collect::<Vec<_>>());
    assert!(drain(&mut sim, 30.0).drained);
    acc.observe_all(&sim.drain_events().collect::<Vec<_>>());
    let m = acc.finish();
    assert_eq!(m.lost, 0);
    (m.latency_ms.p99, m.wire_bytes_per_delivered)
}

/// The smallest and largest of a figure across seeds.
#[derive(Debug, Clone, Copy)]
struct Range(f64, f64);

impl Range {
    fn of(xs: impl Iterator<Item = f64>) -> Self {
        xs.fold(Range(f64::INFINITY, f64::NEG_INFINITY), |r, x| Range(r.0.min(x), r.1.max(x)))
    }
    /// Lower beyond the seed spread: every seed of `self` below every seed of `other`.
    fn below(self, other: Range) -> bool {
        self.1 < other.0
    }
}

/// `a` dominates `b` (p99 and bytes ranges): better beyond the seed spread on one figure, not
/// worse beyond it on the other (the rule `examples/frontier.rs` applies).
fn dominates(a: (Range, Range), b: (Range, Range)) -> bool {
    (a.0.below(b.0) && !b.1.below(a.1)) || (a.1.below(b.1) && !b.0.below(a.0))
}

#[test]
fn defaults_are_never_dominated_by_glenn_or_ue4_on_a_short_grid() {
    let cells = [
        (Cell { latency_ms: 10.0, loss_percent: 5.0, jitter_ms: 0.0, bursts: false }, true),
        (Cell { latency_ms: 50.0, loss_percent: 1.0, jitter_ms: 0.0, bursts: false }, true),
        // Won by copying resends: a message lost twice no longer sets the p99.
        (Cell { latency_ms: 10.0, loss_percent: 30.0, jitter_ms: 0.0, bursts: false }, true),
        (Cell { latency_ms: 50.0, loss_percent: 10.0, jitter_ms: 30.0, bursts: false }, true),
        (Cell { latency_ms: 20.0, loss_percent: 30.0, jitter_ms: 30.0, bursts: true }, false),
        (Cell { latency_ms: 100.0, loss_percent: 10.0, jitter_ms: 30.0, bursts: false }, false),
        (Cell { latency_ms: 200.0, loss_percent: 3.0, jitter_ms: 0.0, bursts: true }, false),
        (Cell { latency_ms: 100.0, loss_percent: 30.0, jitter_ms: 0.0, bursts: false }, false),
    ];
    let seeds = [1u64, 2, 3];
    for (cell, must_dominate) in cells {
        let ranges = |strategy: Strategy| {
            let runs: Vec<(f64, f64)> =
                seeds.iter().map(|&k| figures(cell_scenario(cell, strategy, k), 60.0)).collect();
            (Range::of(runs.iter().map(|r| r.0)), Range::of(runs.iter().map(|r| r.1)))
        };
        let hybrid = ranges(Strategy::Hybrid);
        for seed_strategy in [Strategy::Glenn, Strategy::Ue4] {
            let other = ranges(seed_strategy);
            eprintln!("{cell:?}: hybrid {hybrid:?}, {} {other:?}", seed_strategy.name());
            assert!(!dominates(other, hybrid), "{cell:?} (seeds {seeds:?}): {} dominates hybrid", seed_strategy.name());
            if must_dominate {
                assert!(
                    dominates(hybrid, other),
                    "{cell:?} (seeds {seeds:?}): hybrid does not dominate {}",
                    seed_strategy.name()
                );
            }
        }
    }
}
