//! What `ackscope summary CAPTURE` prints: per client (UDP flow) and direction, what the
//! decoders derive of each endpoint's beliefs and, where the capture saw both sides, the link's
//! truth; and what was skipped, never silently.

use std::path::{Path, PathBuf};

use ackscope_protocol::decode::DirStats;
use ackscope_protocol::Dir;
use serde::Serialize;

use ackscope_protocol::decode::Decoder;

use super::flows::Flow;
use super::read::Skipped;

/// The link's truth in one direction of one flow, from sends matched with their delivered
/// copies (two-sided captures only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DirTruth {
    /// A delivered copy of this direction's datagrams was seen: fates are known.
    pub two_sided: bool,
    /// Datagrams sent (seen on the sender side).
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    /// Sent too close to the capture's end to know (or marked `in_flight` by ackscope's export).
    pub in_flight: u64,
    /// Extra copies delivered.
    pub duplicates: u64,
    #[serde(skip)]
    pub delay_sum_us: u64,
    #[serde(skip)]
    pub delay_min_us: u32,
    #[serde(skip)]
    pub delay_max_us: u32,
}

impl DirTruth {
    /// Counts a delivered copy. Its delay counts whether it is the first copy or a duplicate:
    /// the one-way delay is the mean over every copy the link delivered, as a session's ledger
    /// takes it (`true_rtt_ms` is the two directions' sum), so a session and its capture give
    /// the same figure.
    pub(super) fn copy(&mut self, first: bool, delay_us: u32) {
        let before = self.delivered + self.duplicates;
        if first {
            self.delivered += 1;
        } else {
            self.duplicates += 1;
        }
        self.delay_sum_us += u64::from(delay_us);
        self.delay_min_us = if before == 0 { delay_us } else { self.delay_min_us.min(delay_us) };
        self.delay_max_us = self.delay_max_us.max(delay_us);
    }

    /// Dropped over sent, percent (as a session's true loss: in-flight sends count as sent).
    pub fn loss_percent(&self) -> Option<f64> {
        (self.two_sided && self.sent > 0).then(|| self.dropped as f64 * 100.0 / self.sent as f64)
    }

    /// Mean one-way delay of every delivered copy (duplicates too: [`Self::copy`]), ms.
    pub fn delay_mean_ms(&self) -> Option<f64> {
        let copies = self.delivered + self.duplicates;
        (copies > 0).then(|| self.delay_sum_us as f64 / copies as f64 / 1000.0)
    }
}

/// One direction of one client.
#[derive(Debug, Clone, Serialize)]
pub struct DirSummary {
    /// Datagrams and bytes sent in this direction.
    pub packets: u64,
    pub bytes: u64,
    /// Datagrams no decoder could read.
    pub malformed: u64,
    /// The sender's packets it learned were acked, from the acks the other side's datagrams
    /// carried (when they reached it).
    pub acks: u64,
    /// RTT from a send to the first ack naming it: samples, the sender's smoothed value (its
    /// protocol's rule), mean, min and max.
    pub rtt_samples: u64,
    pub rtt_ms: Option<f64>,
    pub rtt_mean_ms: Option<f64>,
    pub rtt_min_ms: Option<f64>,
    pub rtt_max_ms: Option<f64>,
    /// The loss the sender would estimate by its protocol's rule.
    pub loss_estimated_percent: f64,
    pub resends: u64,
    pub spurious_resends: u64,
    /// The link's truth (needs both sides: `two_sided`).
    pub truth: DirTruth,
    pub loss_true_percent: Option<f64>,
    pub delay_mean_ms: Option<f64>,
    pub delay_min_ms: Option<f64>,
    pub delay_max_ms: Option<f64>,
}

impl DirSummary {
    fn new(s: DirStats, truth: DirTruth) -> Self {
        let rtt = |v: f64| s.rtt(v);
        let delivered = truth.delivered > 0;
        Self {
            packets: s.datagrams,
            bytes: s.bytes,
            malformed: s.malformed,
            acks: s.packets_acked,
            rtt_samples: s.rtt_samples,
            rtt_ms: rtt(s.rtt_ms),
            rtt_mean_ms: rtt(s.rtt_mean_ms),
            rtt_min_ms: rtt(s.rtt_min_ms),
            rtt_max_ms: rtt(s.rtt_max_ms),
            loss_estimated_percent: s.loss_percent,
            resends: s.resends,
            spurious_resends: s.spurious_resends,
            loss_true_percent: truth.loss_percent(),
            delay_mean_ms: truth.delay_mean_ms(),
            delay_min_ms: delivered.then(|| f64::from(truth.delay_min_us) / 1000.0),
            delay_max_ms: delivered.then(|| f64::from(truth.delay_max_us) / 1000.0),
            truth,
        }
    }
}

/// One client: a UDP flow.
#[derive(Debug, Clone, Serialize)]
pub struct ClientSummary {
    pub client: u32,
    /// The server end (side A) and the client end (side B), `addr:port`.
    pub server: String,
    pub client_end: String,
    /// Which rule named the server end (`port`, `ackscope`, `shared_end`, `first_sender`:
    /// [`crate::capture::server_end`]).
    pub server_by: crate::capture::server_end::ServerBy,
    /// Server to client (A->B) and client to server (B->A).
    pub server_to_client: DirSummary,
    pub client_to_server: DirSummary,
}

/// The whole import.
#[derive(Debug, Clone, Serialize)]
pub struct ImportSummary {
    pub file: PathBuf,
    /// `pcapng` or `pcap`.
    pub format: String,
    /// The format the decoder used (`none` when none read the traffic), and why.
    pub decoder: String,
    pub decoder_reason: String,
    /// Seconds from the capture's time 0 to its last packet, and where time 0 is from the
    /// epoch (0 for ackscope's exports, which run on virtual time).
    pub seconds: f64,
    pub origin_s: f64,
    /// UDP datagrams in flows left out by `--port` or `--client-filter`.
    pub filtered: u64,
    /// Datagrams on a delivered side that matched no send (the capture started late there, or
    /// the copy came after the matching window), and copies matched among identical twins.
    pub unmatched_copies: u64,
    pub ambiguous_copies: u64,
    pub skipped: Skipped,
    pub clients: Vec<ClientSummary>,
}

/// What a summary is made of: the importer's state at the end (the importer hands it over, so
/// this module needs nothing of the importer's own).
pub(super) struct SummaryParts<'a> {
    pub format: &'static str,
    pub skipped: &'a Skipped,
    pub flows: &'a [Flow],
    pub decoder: &'a Decoder,
    /// Per flow and direction: the link's truth.
    pub truth: &'a [[DirTruth; 2]],
    pub filtered: u64,
    pub unmatched_copies: u64,
    pub ambiguous_copies: u64,
    pub seconds: f64,
    pub origin_s: f64,
}

impl ImportSummary {
    pub(super) fn new(p: SummaryParts<'_>, file: &Path) -> Self {
        let (decoder, decoder_reason) = match (p.decoder.format(), p.decoder.probe()) {
            (Some(f), Some(probe)) => (f.name().to_string(), probe.reason.clone()),
            (Some(f), None) => (f.name().to_string(), "asked for with --decode".to_string()),
            (None, Some(probe)) => ("none".to_string(), probe.reason.clone()),
            (None, None) => ("none".to_string(), "packet level only (--decode none, or no traffic)".to_string()),
        };
        let clients = p
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let stats = p.decoder.client_stats(f.client).unwrap_or_default();
                let truth = p.truth.get(i).copied().unwrap_or_default();
                let dir = |d: Dir| DirSummary::new(stats.dirs[d.index()], truth[d.index()]);
                ClientSummary {
                    client: f.client,
                    server: f.server.to_string(),
                    client_end: f.client_end.to_string(),
                    server_by: f.server_by,
                    server_to_client: dir(Dir::AtoB),
                    client_to_server: dir(Dir::BtoA),
                }
            })
            .collect();
        Self {
            file: file.to_path_buf(),
            format: p.format.to_string(),
            decoder,
            decoder_reason,
            seconds: p.seconds,
            origin_s: p.origin_s,
            filtered: p.filtered,
            unmatched_copies: p.unmatched_copies,
            ambiguous_copies: p.ambiguous_copies,
            skipped: p.skipped.clone(),
            clients,
        }
    }

    /// The human summary: the file, then two lines per client and direction.
    pub fn to_text(&self) -> String {
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
        let mut out = format!(
            "ackscope: capture {} ({}, {} packets over {:.3} s), decoder {} ({}), {} client{}",
            self.file.display(),
            self.format,
            self.skipped.packets,
            self.seconds,
            self.decoder,
            self.decoder_reason,
            self.clients.len(),
            if self.clients.len() == 1 { "" } else { "s" }
        );
        let skipped = self.skipped.describe();
        if !skipped.is_empty() {
            out.push_str(&format!("\n{skipped}"));
        }
        if self.filtered > 0 {
            out.push_str(&format!("\n{} datagrams in flows left out by --port / --client-filter", self.filtered));
        }
        if self.unmatched_copies + self.ambiguous_copies > 0 {
            out.push_str(&format!(
                "\n{} delivered copies matched no send, {} matched among identical twins",
                self.unmatched_copies, self.ambiguous_copies
            ));
        }
        for c in &self.clients {
            out.push_str(&format!(
                "\nclient {}: {} (client) <-> {} (server: {})",
                c.client,
                c.client_end,
                c.server,
                c.server_by.describe()
            ));
            for (name, d) in [("server -> client", &c.server_to_client), ("client -> server", &c.client_to_server)] {
                out.push_str(&format!(
                    "\n  {name}: {} packets, {} bytes, {} malformed; acks {}, RTT {}, \
                     estimated loss {:.1} %, {} resends ({} spurious)",
                    d.packets,
                    d.bytes,
                    d.malformed,
                    d.acks,
                    match d.rtt_ms {
                        Some(_) => format!("{} ms (mean {}, {} samples)", f(d.rtt_ms), f(d.rtt_mean_ms), d.rtt_samples),
                        None => "no sample".to_string(),
                    },
                    d.loss_estimated_percent,
                    d.resends,
                    d.spurious_resends
                ));
                if d.truth.two_sided {
                    out.push_str(&format!(
                        "\n    true: {} delivered, {} dropped, {} in flight, {} duplicates; loss {} %, one-way delay \
                         {} ms (min {}, max {})",
                        d.truth.delivered,
                        d.truth.dropped,
                        d.truth.in_flight,
                        d.truth.duplicates,
                        f(d.loss_true_percent),
                        f(d.delay_mean_ms),
                        f(d.delay_min_ms),
                        f(d.delay_max_ms)
                    ));
                } else {
                    out.push_str(
                        "\n    true loss and delay: unknown (the capture saw this direction on one side only)",
                    );
                }
            }
        }
        out
    }
}
