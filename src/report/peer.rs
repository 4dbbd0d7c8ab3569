//! One endpoint in this process, on real time and a real UDP socket, against an endpoint in
//! another process (another `ackscope peer`, or any reliable.io-format implementation in raw
//! mode), summarised as [`PeerReport`].

use std::time::Instant;

use ackscope_protocol::Discards;
use anyhow::Result;
use serde::Serialize;

use crate::runtime::udp::{EndpointOptions, UdpEndpoint};
use crate::runtime::udp_truth::EventTally;

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
    /// virtual time it spent draining reliable messages). The optional per-strategy sections of
    /// `run` (`reliable`, `snapshots`, `ue4`, chunk figures) are left out: each pairs one side's
    /// sends with the other side's deliveries, which one process cannot see.
    pub drain_seconds: Option<f64>,
    /// Datagrams the socket refused to send (typically while the other process was not up).
    pub send_errors: u64,
}

/// Runs the endpoint `opts` describes until its `seconds` end (or its socket fails) and returns
/// its report.
pub fn run(opts: EndpointOptions) -> Result<PeerReport> {
    let (side, scenario, connect, seconds) = (opts.side, opts.scenario.clone(), opts.connect, opts.seconds);
    let start = Instant::now();
    let mut ep = UdpEndpoint::spawn(opts, || {})?;
    let mut tally = EventTally::new();
    for batch in ep.batches_until_end() {
        tally.observe(&batch.events);
    }
    let exit = ep.stop();
    let ran_s = match seconds {
        Some(s) if exit.ran_to_end => s,
        _ => ep.now().as_secs_f64(),
    };
    let dir_in = side.other().outgoing();
    Ok(PeerReport {
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
    })
}

impl PeerReport {
    /// A short human summary.
    pub fn to_text(&self) -> String {
        let p = &self.packets;
        let e = &self.estimates;
        let opt = |v: Option<f64>, unit: &str| v.map(|v| format!("{v:.2} {unit}")).unwrap_or_else(|| "-".into());
        format!(
            "ackscope peer {} ({} -> {}): strategy {}, seed {}, {:.1} s\n\
             sent {} packets, {} acked ({} duplicate acks); received {} ({} malformed)\n\
             incoming link: {} delivered, {} dropped ({}), {} duplicated, mean delay {}; \
             {} discarded here{} (effectively lost {})\n\
             estimates: RTT {}, loss {}\n\
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
            super::opt_figure(e.loss_percent, 2, "%", "no verdict yet"),
            self.events,
            self.send_errors
        )
    }
}
