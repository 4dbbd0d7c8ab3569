//! The conditions under which the link's drops and the protocol's loss part ways (packets the link
//! delivers and the receiver discards), and one run's loss estimate beside both truths. Shared by
//! `loss_truths::` and `examples/loss_truths.rs`.
#![allow(dead_code)]

use ackscope_protocol::*;

/// Every strategy that estimates loss.
pub const STRATEGIES: [Strategy; 8] = [
    Strategy::Acks,
    Strategy::Glenn,
    Strategy::Ue4,
    Strategy::Dnm,
    Strategy::Rellikt,
    Strategy::Hybrid,
    Strategy::Chunks,
    Strategy::Fragments,
];

/// A link condition, on top of 5 % random loss and 50 ms each way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// 20 ms of uniform jitter that may reorder packets.
    JitterReorder,
    /// 5 % of packets held back 30 ms, so later ones overtake them.
    Reorder,
    /// 5 % of packets delivered twice.
    Duplicates,
    /// A bandwidth cap at half the rate the sender puts on the wire uncapped, with a queue of
    /// [`QUEUE_MS`] at the capped rate.
    RateCap,
}

impl Condition {
    pub const ALL: [Condition; 4] =
        [Condition::JitterReorder, Condition::Reorder, Condition::Duplicates, Condition::RateCap];

    pub fn label(self) -> &'static str {
        match self {
            Condition::JitterReorder => "20 ms jitter, reordering",
            Condition::Reorder => "5 % reorder",
            Condition::Duplicates => "5 % duplicates",
            Condition::RateCap => "cap at half the send rate",
        }
    }
}

/// The rate cap's queue holds this long at the capped rate (a router's buffer; the default 64 KiB
/// would hold 20 s of a 25 kbit/s game stream, longer than any loss verdict waits).
pub const QUEUE_MS: f64 = 250.0;

/// The base scenario: `strategy` at its defaults, 5 % loss and 50 ms each way; the block
/// strategies send 256 KiB chunks (16 KiB blocks for fragments) back to back.
pub fn base(strategy: Strategy, seed: u64) -> Scenario {
    let mut s = Scenario { seed, strategy, ..Scenario::default() };
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.loss_percent = 5.0;
        l.latency_ms = 50.0;
    }
    s.workload.chunk_kib = match strategy {
        Strategy::Chunks => 256,
        Strategy::Fragments => 16,
        _ => 0,
    };
    s
}

/// Kilobits per second (IP+UDP counted, as the link's cap) the sender of `dir` put on the wire
/// over a run of `seconds` of `s`.
pub fn wire_kbps(s: &Scenario, dir: Dir, seconds: f64) -> f64 {
    let mut sim = Simulation::new(s.clone());
    sim.run_for_secs(seconds);
    let bytes: u64 = sim
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::LinkSent { dir: d, bytes, .. } if d == dir => Some((bytes + IP_UDP_OVERHEAD_BYTES) as u64),
            _ => None,
        })
        .sum();
    bytes as f64 * 8.0 / 1000.0 / seconds
}

/// `strategy`'s scenario under `condition`.
pub fn scenario(strategy: Strategy, condition: Condition, seed: u64) -> Scenario {
    let mut s = base(strategy, seed);
    let cap = (condition == Condition::RateCap).then(|| wire_kbps(&s, Dir::AtoB, 10.0) / 2.0);
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        match condition {
            Condition::JitterReorder => {
                l.jitter_ms = 20.0;
                l.jitter_reorders = true;
            }
            Condition::Reorder => l.reorder_percent = 5.0,
            Condition::Duplicates => l.duplicate_percent = 5.0,
            Condition::RateCap => {
                let kbps = cap.unwrap_or(0.0);
                l.bandwidth_kbps = kbps;
                l.queue_bytes = (kbps * QUEUE_MS / 8.0) as u32;
            }
        }
    }
    s
}

/// One run's estimate and truths.
#[derive(Debug, Clone)]
pub struct Truths {
    /// The run's mean loss estimate (`estimates.loss_percent`).
    pub estimate: Option<f64>,
    pub true_loss: f64,
    pub effective: f64,
    /// The discards by reason, as text (`late 251, duplicate 3`).
    pub discards: String,
    pub scenario: Scenario,
}

/// Runs `strategy` under `condition` for `seconds` and returns its estimate beside the truths.
pub fn measure(strategy: Strategy, condition: Condition, seconds: f64, seed: u64) -> Truths {
    let s = scenario(strategy, condition, seed);
    let mut sim = Simulation::new(s.clone());
    sim.set_keep_events(false);
    sim.run_for_secs(seconds);
    let e = sim.estimates();
    let discards: Vec<String> =
        e.discarded.by_reason().iter().filter(|(_, n)| *n > 0).map(|(name, n)| format!("{name} {n}")).collect();
    Truths {
        estimate: e.loss_percent,
        true_loss: e.true_loss_percent,
        effective: e.effective_loss_percent,
        discards: discards.join(", "),
        scenario: s,
    }
}
