//! One endpoint in this process, on real time and a real UDP socket, against an endpoint in
//! another process (another `ackscope peer`, or any reliable.io-format implementation in raw
//! mode), summarised as [`PeerReport`].

use std::time::Instant;

use ackscope_protocol::{Discards, Event, EventKind, Step};
#[cfg(doc)]
use ackscope_protocol::{ReliableMetrics, SnapshotSummary};
use anyhow::Result;
use serde::Serialize;

use super::bandwidth::Bandwidth;
use super::{RunEnd, RunFold, Sections};
use crate::lane::Origin;
use crate::runtime::udp::{EndpointOptions, UdpEndpoint};
use crate::runtime::udp_truth::EventTally;
use crate::session::{Session, Transport};

/// Packet counters of one endpoint (`packets` in `ackscope peer --json`).
///
/// Same names as [`ackscope_protocol::PacketTotals`], but one process only knows one end, so:
/// `sent`, `acked`, `duplicate_acks` are about this endpoint's own sends (it records which send
/// carried each sequence, so an ack repeated for the same send is detected locally);
/// `link_dropped`, `delivered`, `duplicated` are about the link it runs on its receive side (the
/// direction into it; summing both processes' reports gives the two-way totals of `run`);
/// `malformed` and `received` are datagrams it rejected or accepted. `false_acks` is always null:
/// whether an acked send was delivered is known only to the other process's link.
#[derive(Debug, Clone, Serialize)]
pub struct PeerPackets {
    pub sent: u64,
    pub link_dropped: u64,
    pub delivered: u64,
    pub duplicated: u64,
    pub acked: u64,
    pub false_acks: Option<u64>,
    pub duplicate_acks: Option<u64>,
    pub malformed: u64,
    pub received: u64,
}

/// Estimates of one endpoint (`estimates` in `ackscope peer --json`).
///
/// `rtt_ms` and `loss_percent` are this endpoint's own estimates (final smoothed RTT; mean loss
/// estimate after the first 2 s), null when it has none (no RTT sample, no packet judged). Their
/// truths, `true_rtt_ms` (both directions' link delay), `true_loss_percent` (drops on this
/// endpoint's outgoing direction) and `effective_loss_percent` (those drops plus the packets the
/// other endpoint discarded unacked), live partly or wholly in the other process: null. What this
/// process does know is its incoming link's mean delay and drop share, and what it discarded
/// itself, reported as `incoming_link_delay_ms`, `incoming_link_loss_percent`,
/// `incoming_effective_loss_percent` (null before any datagram arrived) and `discarded` (copies
/// of incoming packets by reason): the other process's estimate is to be read against these.
#[derive(Debug, Clone, Serialize)]
pub struct PeerEstimates {
    pub rtt_ms: Option<f64>,
    /// The smallest RTT sample this endpoint measured over the run (the path's floor, what its
    /// smoothed `rtt_ms` is to be read against); null without a sample.
    pub rtt_min_ms: Option<f64>,
    pub true_rtt_ms: Option<f64>,
    pub loss_percent: Option<f64>,
    pub true_loss_percent: Option<f64>,
    pub effective_loss_percent: Option<f64>,
    pub discarded: Discards,
    pub incoming_link_delay_ms: Option<f64>,
    pub incoming_link_loss_percent: Option<f64>,
    pub incoming_effective_loss_percent: Option<f64>,
}

/// What `ackscope peer --json` prints: [`crate::report::RunReport`]'s shape for one endpoint.
#[derive(Debug, Clone, Serialize)]
pub struct PeerReport {
    pub seed: u64,
    pub strategy: String,
    /// `"a"` or `"b"`.
    pub side: String,
    /// The bound local address and the other endpoint's.
    pub bind: String,
    pub connect: String,
    /// Seconds of run time (real time since the endpoint started).
    pub simulated_seconds: f64,
    pub wall_seconds: f64,
    pub packets: PeerPackets,
    pub estimates: PeerEstimates,
    /// Events this endpoint produced.
    pub events: u64,
    /// Always null: a real-time peer stops at `--seconds` and does not drain (`run` reports the
    /// virtual time it spent draining reliable messages).
    pub drain_seconds: Option<f64>,
    /// Datagrams the socket refused to send (typically while the other process was not up).
    pub send_errors: u64,
    /// Datagrams read from the partner (before the link; 0: the partner was never heard).
    pub datagrams_received: u64,
    /// This endpoint's sent / received / acked kbps, mean and p95 over its `Stats` samples (null
    /// when it reported none).
    pub bandwidth: Option<Bandwidth>,
    /// The sections `run --json` has for the strategy, folded from this process's events, with
    /// the same fields: what this endpoint sent (`sent`, `sends_per_message`, queue and backlog
    /// figures, `wire_bytes`, refusals; snapshots `queued`, `sent`, `resent`) is exact. A figure
    /// that pairs a message sent in one process with its delivery in the other (`delivered`,
    /// `lost`, `duplicated`, `out_of_order`, `latency_ms`, `spurious_resends`, ...; snapshots
    /// `received`, `staleness_ms`) is null: record each side with `--out` and join them with
    /// `ackscope summary A.ron B.ron`, which has them all.
    #[serde(flatten)]
    pub sections: Sections<serde_json::Value, serde_json::Value>,
    /// Size of the recording written with `--out`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_bytes: Option<u64>,
}

/// A finished peer run: its report and, when asked for, its recording (this side's events, the
/// scenario it ran and the live changes it applied; `ackscope summary A.ron B.ron` joins two).
pub struct PeerRun {
    pub report: PeerReport,
    pub session: Option<Session>,
}

/// Fields of [`ReliableMetrics`] that pair a send in one process with a delivery in the other.
const RELIABLE_PAIRED: &[&str] = &[
    "delivered",
    "lost",
    "duplicated",
    "out_of_order",
    "latency_ms",
    "wire_bytes_per_delivered",
    "spurious_resends",
    "unreliable_delivered",
    "unreliable_duplicated",
];
/// Fields of [`SnapshotSummary`] that need the receiving process.
const SNAPSHOTS_PAIRED: &[&str] = &["received", "staleness_ms"];

/// `section` as JSON with the fields one process cannot know set to null.
fn partial<T: Serialize>(section: T, paired: &[&str]) -> Option<serde_json::Value> {
    let mut v = serde_json::to_value(section).ok()?;
    if let Some(m) = v.as_object_mut() {
        for k in paired {
            if let Some(x) = m.get_mut(*k) {
                *x = serde_json::Value::Null;
            }
        }
    }
    Some(v)
}

/// Runs the endpoint `opts` describes until its `seconds` end (or its socket fails) and returns
/// its report, with its recording when `record`.
pub fn run(opts: EndpointOptions, record: bool) -> Result<PeerRun> {
    let (side, scenario, connect, seconds) = (opts.side, opts.scenario.clone(), opts.connect, opts.seconds);
    let start = Instant::now();
    let mut ep = UdpEndpoint::spawn_keeping(opts, record, || {})?;
    let mut tally = EventTally::new();
    let mut fold = RunFold::new(&scenario);
    let (mut kept, mut actions): (Vec<Event>, Vec<Step>) = (Vec::new(), Vec::new());
    let mut rtt_min_ms: Option<f32> = None;
    for batch in ep.batches_until_end() {
        tally.observe(&batch.events);
        fold.observe(&batch.events);
        for e in &batch.events {
            if let EventKind::RttSample { side: s, rtt_ms } = e.kind {
                if s == side && rtt_ms.is_finite() {
                    rtt_min_ms = Some(rtt_min_ms.map_or(rtt_ms, |m| m.min(rtt_ms)));
                }
            }
        }
        if record {
            kept.extend_from_slice(&batch.events);
            actions.extend(batch.actions);
        }
    }
    let exit = ep.stop();
    let ran_s = match seconds {
        Some(s) if exit.ran_to_end => s,
        _ => ep.now().as_secs_f64(),
    };
    let dir_in = side.other().outgoing();
    let sections = fold
        .report(&RunEnd {
            truth: tally.summary(),
            simulated_seconds: ran_s,
            drain_seconds: 0.0,
            wall_seconds: start.elapsed().as_secs_f64(),
        })
        .sections;
    let report = PeerReport {
        seed: scenario.seed,
        strategy: scenario.strategy.name().to_string(),
        side: format!("{side:?}").to_lowercase(),
        bind: ep.local_addr().to_string(),
        connect: connect.to_string(),
        simulated_seconds: ran_s,
        wall_seconds: start.elapsed().as_secs_f64(),
        packets: PeerPackets {
            sent: tally.sent(side),
            link_dropped: tally.link_dropped(dir_in),
            delivered: tally.link_delivered(dir_in),
            duplicated: tally.duplicated(dir_in),
            acked: tally.acked(side),
            false_acks: None,
            duplicate_acks: Some(tally.duplicate_acks()),
            malformed: tally.malformed(),
            received: tally.received(side),
        },
        estimates: PeerEstimates {
            rtt_ms: tally.rtt_ms(),
            rtt_min_ms: rtt_min_ms.map(f64::from),
            true_rtt_ms: None,
            loss_percent: tally.loss_percent(),
            true_loss_percent: None,
            effective_loss_percent: None,
            discarded: tally.discards(dir_in),
            incoming_link_delay_ms: tally.mean_link_delay_ms(dir_in),
            incoming_link_loss_percent: tally.link_loss_percent(dir_in),
            incoming_effective_loss_percent: tally.effective_loss_percent(dir_in),
        },
        events: tally.events(),
        drain_seconds: None,
        send_errors: exit.send_errors,
        datagrams_received: tally.link_sent(dir_in),
        bandwidth: fold.bandwidth().side(side),
        sections: Sections {
            reliable: sections.reliable.and_then(|r| partial(r, RELIABLE_PAIRED)),
            snapshots: sections.snapshots.and_then(|r| partial(r, SNAPSHOTS_PAIRED)),
            ue4: sections.ue4,
            chunk: sections.chunk,
            flow: sections.flow,
        },
        session_bytes: None,
    };
    let session = record.then(|| {
        let mut s = Session::scenario_only(scenario.clone());
        s.transport = Transport::Udp;
        s.origin = Some(Origin::UdpPeer { local: report.bind.clone(), remote: report.connect.clone() });
        s.actions = actions;
        s.duration_us = kept.iter().map(|e| e.time.0).max().unwrap_or(0).max((ran_s * 1e6) as u64);
        s.events = kept;
        // The datagrams' exact bytes, so the file shows them (and exports them to pcapng).
        s.payloads = ep.payloads().map(|p| crate::model::payloads::saved(&p)).unwrap_or_default();
        s
    });
    Ok(PeerRun { report, session })
}

impl PeerReport {
    /// A short human summary.
    pub fn to_text(&self) -> String {
        let p = &self.packets;
        let e = &self.estimates;
        let opt = |v: Option<f64>, unit: &str| v.map(|v| format!("{v:.2} {unit}")).unwrap_or_else(|| "-".into());
        let bw = |f: fn(&Bandwidth) -> (f64, f64)| {
            self.bandwidth.as_ref().map(f).map_or_else(|| "-".to_string(), |(m, p)| format!("{m:.1} / {p:.1}"))
        };
        format!(
            "ackscope peer {} ({} -> {}): strategy {}, seed {}, {:.1} s\n\
             sent {} packets, {} acked ({} duplicate acks); received {} ({} malformed)\n\
             incoming link: {} delivered, {} dropped ({}), {} duplicated, mean delay {}; \
             {} discarded here{} (effectively lost {})\n\
             estimates: RTT {} (min {}), loss {}\n\
             bandwidth kbps (mean / p95): sent {}, received {}, acked {}\n\
             events: {}, send errors: {}",
            self.side,
            self.bind,
            self.connect,
            self.strategy,
            self.seed,
            self.simulated_seconds,
            p.sent,
            p.acked,
            p.duplicate_acks.unwrap_or(0),
            p.received,
            p.malformed,
            p.delivered,
            p.link_dropped,
            opt(e.incoming_link_loss_percent, "%"),
            p.duplicated,
            opt(e.incoming_link_delay_ms, "ms"),
            e.discarded.total(),
            super::discards_text(&e.discarded),
            opt(e.incoming_effective_loss_percent, "%"),
            super::opt_figure(e.rtt_ms, 1, "ms", "no sample"),
            super::opt_figure(e.rtt_min_ms, 1, "ms", "no sample"),
            super::opt_figure(e.loss_percent, 2, "%", "no verdict yet"),
            bw(|b| (b.sent_kbps_mean, b.sent_kbps_p95)),
            bw(|b| (b.received_kbps_mean, b.received_kbps_p95)),
            bw(|b| (b.acked_kbps_mean, b.acked_kbps_p95)),
            self.events,
            self.send_errors
        )
    }
}
