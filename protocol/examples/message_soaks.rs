//! Long soaks of the message strategies against ground truth, printed as the tables README quotes:
//! `cargo run -p ackscope-protocol --release --example message_soaks [jitter] [capacity] [outage]`
//! (no argument: all three; about a minute of CPU in all).
//!
//! - `jitter`: 1,000,000 reliable messages (500 per second from each side) over 20 % loss, 50 ms
//!   jitter, 5 % duplicates and 5 % reordering, for glenn, rellikt, dnm with `accept_late` and dnm
//!   with the book's rule; then a drain until every message is acked.
//! - `capacity`: the highest reliable message rate per side (in steps of 10) at which dnm never
//!   fills its send window over 300 s of that link, with the book's rule and with `accept_late`.
//! - `outage`: the default workload across a 700 s one-way outage (A->B at 100 % loss from 10 s
//!   to 710 s, by a scripted link step), then recovery and a drain. UE4 is left out here: it
//!   closes the connection on reliable buffer overflow, as UE4 does (reported by its own figures).
//!
//! Everything runs on virtual time, so the figures are exact for the seed. Lost = queued but never
//! delivered; duplicated = delivered again; false acks = acks of sends the link never delivered
//! (`PacketLedger`, the same ground truth the tests and the app use).

use std::time::Instant;

use ackscope_protocol::measure::InOrderLatency;
use ackscope_protocol::*;

const SEED: u64 = 1;
/// Reliable messages per second from each side in the jitter soak.
const SOAK_RATE_HZ: f64 = 500.0;
const SOAK_MESSAGES: u64 = 1_000_000;
/// Longest drain after a soak: dnm with the book's rule has a large backlog to work off.
const DRAIN_SECS: f64 = 1200.0;

/// What one soak measured.
struct Soak {
    metrics: ReliableMetrics,
    in_order: LatencyMs,
    false_acks: u64,
    simulated_secs: f64,
    drain: DrainOutcome,
    wall_secs: f64,
    /// Packets an endpoint accepted although it had accepted a newer one before.
    late_accepted: u64,
}

/// Every figure from the events, fed as they are drained so memory stays flat.
#[derive(Default)]
struct Folds {
    ledger: PacketLedger,
    metrics: MetricsAccumulator,
    in_order: InOrderLatency,
    queued_reliable: u64,
    newest_received: [Option<(u16, SimTime)>; 2],
    late_accepted: u64,
}

impl Folds {
    fn take(&mut self, sim: &mut Simulation) {
        for e in sim.drain_events() {
            match e.kind {
                EventKind::MessageQueued { reliable: true, .. } => self.queued_reliable += 1,
                EventKind::PacketReceived { side, seq, .. } => {
                    // After a second without packets (an outage) sequences may have moved on by
                    // more than half their space: start afresh rather than call them late.
                    let newest = &mut self.newest_received[side.index()];
                    match *newest {
                        Some((n, t)) if e.time.saturating_since(t).as_secs_f64() < 1.0 => {
                            if sequence_less_than(seq as u16, n) {
                                self.late_accepted += 1;
                            } else {
                                *newest = Some((seq as u16, e.time));
                            }
                        }
                        _ => *newest = Some((seq as u16, e.time)),
                    }
                }
                _ => {}
            }
            self.ledger.observe_event(&e);
            self.metrics.observe(&e);
            self.in_order.observe(&e);
        }
    }
}

/// Runs `s` for at least `secs` and until `messages` reliable messages were queued, then drains.
fn soak(s: Scenario, secs: f64, messages: u64, drain_secs: f64) -> Soak {
    let wall = Instant::now();
    let mut sim = Simulation::new(s);
    let mut f = Folds::default();
    while sim.now().as_secs_f64() < secs || f.queued_reliable < messages {
        let next = sim.now().plus_micros(1_000_000);
        sim.run_until(next);
        f.take(&mut sim);
    }
    let simulated_secs = sim.now().as_secs_f64();
    let drain = drain(&mut sim, drain_secs);
    f.take(&mut sim);
    Soak {
        metrics: f.metrics.finish(),
        in_order: f.in_order.finish(),
        false_acks: f.ledger.false_acks() - f.ledger.unnamed_acks(),
        simulated_secs,
        drain,
        wall_secs: wall.elapsed().as_secs_f64(),
        late_accepted: f.late_accepted,
    }
}

fn rough(s: &mut Scenario) {
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.loss_percent = 20.0;
        l.jitter_ms = 50.0;
        l.duplicate_percent = 5.0;
        l.reorder_percent = 5.0;
    }
}

/// The strategies soaked, by label.
fn variants() -> Vec<(&'static str, Scenario)> {
    let base = Scenario { seed: SEED, ..Scenario::default() };
    let with = |strategy, accept_late| {
        let mut s = Scenario { strategy, ..base.clone() };
        s.dnm.accept_late = accept_late;
        s
    };
    vec![
        ("glenn", with(Strategy::Glenn, false)),
        ("rellikt", with(Strategy::Rellikt, false)),
        ("dnm accept_late", with(Strategy::Dnm, true)),
        ("dnm (book)", with(Strategy::Dnm, false)),
    ]
}

const HEADER: &str = "| strategy | messages | lost | duplicated | corrupted | out of order | false acks | sends/msg | \
     spurious | backlog peak | p50 ms | p99 ms | in-order p99 ms | drain s |\n\
     |---|---|---|---|---|---|---|---|---|---|---|---|---|---|";

fn row(label: &str, r: &Soak) {
    let m = &r.metrics;
    println!(
        "| {label} | {} | {} | {} | {} | {} | {} | {:.2} | {} | {} | {:.0} | {:.0} | {:.0} | {:.1} |",
        m.sent,
        m.lost,
        m.duplicated,
        m.corrupted,
        m.out_of_order,
        r.false_acks,
        m.sends_per_message,
        m.spurious_resends,
        m.backlog_peak,
        m.latency_ms.p50,
        m.latency_ms.p99,
        r.in_order.p99,
        r.drain.elapsed_secs,
    );
}

fn note(label: &str, r: &Soak) {
    let drained = if r.drain.drained { "drained" } else { "NOT drained" };
    println!(
        "  {label}: {:.0} s simulated + {:.1} s drain ({drained}), {:.1} s wall, max send queue {}, \
         {} refused for a full queue (reliable ones kept), {} late packets processed",
        r.simulated_secs,
        r.drain.elapsed_secs,
        r.wall_secs,
        r.metrics.max_send_queue_depth,
        r.metrics.refused_queue_full,
        r.late_accepted
    );
}

fn jitter() {
    println!(
        "\n== {SOAK_MESSAGES} reliable messages ({SOAK_RATE_HZ} per second per side, default snapshots) over 20 % loss, \
         50 ms jitter, 5 % duplicates, 5 % reorder (seed {SEED})\n"
    );
    println!("{HEADER}");
    let mut notes = Vec::new();
    for (label, mut s) in variants() {
        rough(&mut s);
        s.workload.reliable_rate_hz = SOAK_RATE_HZ;
        let r = soak(s, 0.0, SOAK_MESSAGES, DRAIN_SECS);
        row(label, &r);
        notes.push((label, r));
    }
    println!("| ue4 | reported by the UE4 figures (needs `ue4.net_speed_bytes_per_sec` high enough) |");
    println!();
    for (label, r) in &notes {
        note(label, r);
    }
}

/// True when dnm at `rate_hz` reliable messages per side never fills its send window in 300 s.
fn holds(accept_late: bool, rate_hz: f64) -> bool {
    let mut s = Scenario { seed: SEED, strategy: Strategy::Dnm, ..Scenario::default() };
    s.dnm.accept_late = accept_late;
    rough(&mut s);
    s.workload.reliable_rate_hz = rate_hz;
    soak(s, 300.0, 0, 0.0).metrics.backlog_peak == 0
}

/// The highest rate in steps of 10 within `[lo, hi]` that holds (`lo` is assumed to).
fn capacity(accept_late: bool, mut lo: u32, mut hi: u32) -> u32 {
    while hi - lo > 10 {
        let mid = (lo + hi) / 20 * 10;
        if holds(accept_late, mid as f64) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

fn capacity_search() {
    println!(
        "\n== dnm capacity on the soak's link: the highest reliable rate per side (steps of 10 msg/s) that never \
         fills the 1024-message send window in 300 s (seed {SEED})\n"
    );
    for (label, accept_late, hi) in [("dnm (book)", false, 1000), ("dnm accept_late", true, 3000)] {
        let cap = capacity(accept_late, 50, hi);
        println!("  {label}: {cap} msg/s per side holds, {} msg/s fills the window", cap + 10);
    }
}

fn outage() {
    println!(
        "\n== default workload across a 700 s one-way outage (A->B 100 % loss from 10 s to 710 s, then the default \
         5 % loss), 800 s then a drain (seed {SEED})\n"
    );
    println!("{HEADER}");
    let mut notes = Vec::new();
    for (label, mut s) in variants() {
        if label == "dnm accept_late" {
            continue;
        }
        let normal = s.link.a_to_b.loss_percent;
        let step = |at_s, loss| LinkStep {
            at_s,
            dir: StepDirection::AToB,
            set: LinkPatch { loss_percent: Some(loss), ..LinkPatch::default() },
        };
        s.script = vec![step(10.0, 100.0).into(), step(710.0, normal).into()];
        let r = soak(s, 800.0, 0, DRAIN_SECS);
        row(label, &r);
        notes.push((label, r));
    }
    println!("| ue4 | reported by the UE4 figures: closes the connection on reliable buffer overflow |");
    println!();
    for (label, r) in &notes {
        note(label, r);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let want = |name: &str| args.is_empty() || args.iter().any(|a| a == name);
    if want("jitter") {
        jitter();
    }
    if want("capacity") {
        capacity_search();
    }
    if want("outage") {
        outage();
    }
}
