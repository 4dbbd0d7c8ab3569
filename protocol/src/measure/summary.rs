//! The run summary: ground-truth totals and the endpoints' estimates beside the truth they
//! estimate, folded from events on top of the [`PacketLedger`].

use serde::{Deserialize, Serialize};

use super::clients::{mean, ClientFold, PerClient};
use super::ledger::{Discards, PacketLedger, PacketTotals};
use crate::event::{ClientId, Dir, Event, EventKind, Side, SimTime, StatsSample};

/// Stats samples before this time are left out of the mean loss estimate: for its first seconds an
/// estimator has judged too few packets to say anything (the loss window needs a full RTT of
/// history), and averaging its zeros would flatter every strategy alike.
pub const LOSS_WARMUP: SimTime = SimTime(2_000_000);

/// Estimates beside the truth they estimate, for a whole run (with several clients, each the mean
/// over the clients of each client's figure: see [`SummaryAccumulator`]).
///
/// Only sides that estimate count: one-way transfers (chunks, fragments) have a receiving side
/// that judges nothing and measures no RTT, and averaging its zeros in would halve the figures. A
/// side has an RTT estimate once it reported an `RttSample` or a non-zero RTT in a `Stats` event
/// (a `Stats` RTT of 0 with no sample ever is "none", not "0 ms"); it has a loss estimate when it
/// has an RTT estimate or ever reported a non-zero loss (a dead link: nothing acked, 100 % lost).
///
/// Two truths stand beside the loss estimate. `true_loss_percent` is what the link dropped;
/// `effective_loss_percent` adds the packets the link delivered and the receiver discarded unacked
/// (late, duplicate, stale, malformed, ...: [`Discards`]), which the sender cannot tell from
/// drops and which its estimate therefore counts. Both are taken over the packets of the sides
/// that estimate loss (a chunk sender's data packets, not the receiver's acks), or over every
/// packet when no side does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct EstimateSummary {
    /// Final smoothed RTT, mean over the sides that have an RTT estimate; `None` (JSON `null`)
    /// when no side measured one (100 % loss, a receive-only endpoint).
    pub rtt_ms: Option<f64>,
    /// Mean one-way link delay A->B plus B->A over delivered packets; `None` (JSON `null`)
    /// unless both directions delivered some.
    pub true_rtt_ms: Option<f64>,
    /// Mean loss estimate over the stats samples after [`LOSS_WARMUP`] that had judged at least
    /// one packet, of the sides that estimate loss; `None` when there is no such sample.
    pub loss_percent: Option<f64>,
    /// Packets dropped by the link / packets sent (see the type's doc for which packets).
    pub true_loss_percent: f64,
    /// (Packets dropped by the link + packets the receiver discarded) / packets sent.
    pub effective_loss_percent: f64,
    /// Delivered copies the receivers discarded, by reason (same packets).
    pub discarded: Discards,
}

/// Ground truth and estimates recomputed from a recorded event log (e.g. a loaded session).
///
/// The simulation folds its own events with the same [`SummaryAccumulator`], so `ackscope summary`
/// of a recording prints bit for bit what the `run` that wrote it printed; `rtt_ms` comes from each
/// side's last `Stats` event.
pub fn summarize(events: &[Event]) -> (PacketTotals, EstimateSummary) {
    let mut a = SummaryAccumulator::default();
    a.observe(events);
    a.finish()
}

/// [`summarize`] fed in pieces, for views that extend it as time moves forward.
///
/// Keyed by client: each client's connection has its own ledger and estimates
/// ([`Self::client`]); the totals are over every client and each estimate the mean over the
/// clients that have one (with one client, exactly that client's figures). Its ledgers only
/// count ([`PacketLedger::counting`]): a simulation feeds it every event of a run however long,
/// and the totals need no per-send record once the send is settled.
#[derive(Debug, Clone)]
pub struct SummaryAccumulator {
    clients: PerClient<ClientSummary>,
}

impl Default for SummaryAccumulator {
    /// Client 1's ledger reserves its table's largest size up front (see
    /// [`PacketLedger::counting`]); the other clients' grow as they need.
    fn default() -> Self {
        Self { clients: PerClient::with_first(ClientSummary::with_ledger(PacketLedger::counting())) }
    }
}

/// One client's part of a [`SummaryAccumulator`]: its connection's ledger and both ends'
/// estimates.
#[derive(Debug, Clone)]
pub struct ClientSummary {
    ledger: PacketLedger,
    /// Each side's last estimates (None until it reports).
    last_stats: [Option<StatsSample>; 2],
    /// Per side: has an RTT estimate / a loss estimate (see [`EstimateSummary`]).
    has_rtt: [bool; 2],
    has_loss: [bool; 2],
    /// Per side: sum and count of loss estimates after the warm-up.
    loss_sum: [f64; 2],
    loss_n: [u64; 2],
}

impl ClientFold for ClientSummary {
    fn for_client(client: ClientId) -> Self {
        Self::with_ledger(PacketLedger::counting_growing_for(client))
    }
}

impl ClientSummary {
    /// A new summary around `ledger` (empty).
    fn with_ledger(ledger: PacketLedger) -> Self {
        Self {
            ledger,
            last_stats: [None; 2],
            has_rtt: [false; 2],
            has_loss: [false; 2],
            loss_sum: [0.0; 2],
            loss_n: [0; 2],
        }
    }

    #[inline(always)]
    fn observe(&mut self, e: &Event) {
        self.ledger.observe_event(e);
        match e.kind {
            EventKind::Stats { side, stats } => {
                let i = side.index();
                self.last_stats[i] = Some(stats);
                self.has_rtt[i] |= stats.rtt_ms != 0.0;
                self.has_loss[i] |= stats.loss_percent != 0.0;
                // A sample before the first verdict is no estimate, not 0 %.
                if e.time >= LOSS_WARMUP && !stats.no_loss_verdict {
                    self.loss_sum[i] += stats.loss_percent as f64;
                    self.loss_n[i] += 1;
                }
            }
            EventKind::RttSample { side, .. } => self.has_rtt[side.index()] = true,
            _ => {}
        }
    }

    /// The client's packet ledger (counting).
    pub fn ledger(&self) -> &PacketLedger {
        &self.ledger
    }

    /// The last estimates `side` of this client's connection reported.
    pub fn last_stats(&self, side: Side) -> Option<StatsSample> {
        self.last_stats[side.index()]
    }

    /// The final smoothed RTT, mean over the sides with an RTT estimate (None when none has
    /// one).
    pub fn rtt_estimate_ms(&self) -> Option<f64> {
        let rtts: Vec<f64> = Side::BOTH
            .iter()
            .filter(|s| self.has_rtt[s.index()])
            .filter_map(|s| self.last_stats[s.index()])
            .map(|s| s.rtt_ms as f64)
            .collect();
        (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64)
    }

    /// Whether `side` estimates loss (see [`EstimateSummary`]).
    pub fn estimates_loss(&self, side: Side) -> bool {
        self.has_rtt[side.index()] || self.has_loss[side.index()]
    }

    /// Mean loss estimate over the stats samples after [`LOSS_WARMUP`] with a verdict, of the
    /// sides that estimate loss, pooled; `None` without such a sample.
    pub fn loss_estimate_percent(&self) -> Option<f64> {
        let sides = || Side::BOTH.into_iter().filter(|&s| self.estimates_loss(s)).map(Side::index);
        let n: u64 = sides().map(|i| self.loss_n[i]).sum();
        (n > 0).then(|| sides().map(|i| self.loss_sum[i]).sum::<f64>() / n as f64)
    }

    /// The directions the loss truths are taken over: those of the sides that estimate loss, or
    /// both when neither does (see [`EstimateSummary`]).
    pub fn truth_dirs(&self) -> Vec<Dir> {
        let dirs: Vec<Dir> = Side::BOTH.into_iter().filter(|&s| self.estimates_loss(s)).map(Side::outgoing).collect();
        if dirs.is_empty() {
            Dir::BOTH.to_vec()
        } else {
            dirs
        }
    }

    /// This client's totals and estimates beside the truth.
    pub fn finish(&self) -> (PacketTotals, EstimateSummary) {
        let dirs = self.truth_dirs();
        let est = EstimateSummary {
            rtt_ms: self.rtt_estimate_ms(),
            true_rtt_ms: self.ledger.true_rtt_ms(),
            loss_percent: self.loss_estimate_percent(),
            true_loss_percent: self.ledger.loss_percent_of(&dirs),
            effective_loss_percent: self.ledger.effective_loss_percent(&dirs),
            discarded: self.ledger.discards(&dirs),
        };
        (self.ledger.totals(), est)
    }

    /// Whether any packet of this client's connection entered a link.
    fn has_link_sends(&self) -> bool {
        Dir::BOTH.iter().any(|&d| self.ledger.link_sent(d) > 0)
    }
}

impl SummaryAccumulator {
    /// Back to the state of a new accumulator, keeping client 1's ledger table allocation: a
    /// view that folds again from the start (the cursor moved back) neither frees nor regrows it,
    /// which was a spike of several ms (a realloc copying the table, page faults) in a frame.
    pub fn reset(&mut self) {
        self.clients.keep_first();
        // Client 1's ledger is kept, with its table.
        let c = self.clients.first_mut();
        let mut ledger = std::mem::replace(&mut c.ledger, PacketLedger::new());
        ledger.reset();
        *c = ClientSummary::with_ledger(ledger);
    }

    pub fn observe(&mut self, events: &[Event]) {
        for e in events {
            self.clients.observe(e, ClientSummary::observe);
        }
    }

    /// Client 1's packet ledger (every client's: [`Self::client`]).
    pub fn ledger(&self) -> &PacketLedger {
        &self.first().ledger
    }

    fn first(&self) -> &ClientSummary {
        self.clients.get(1).expect("client 1's summary always exists")
    }

    /// The last estimates client 1's end `side` reported.
    pub fn last_stats(&self, side: Side) -> Option<StatsSample> {
        self.first().last_stats[side.index()]
    }

    /// Client `k`'s summary, once any event of it was folded.
    pub fn client(&self, k: ClientId) -> Option<&ClientSummary> {
        self.clients.get(k)
    }

    /// The highest client number folded (at least 1).
    pub fn client_count(&self) -> u32 {
        self.clients.count()
    }

    /// The final smoothed RTT: the mean over the clients with an RTT estimate of each one's
    /// (the mean over its sides with one); `None` when none has one.
    pub fn rtt_ms(&self) -> Option<f64> {
        mean_of_some(self.clients.iter().filter_map(ClientSummary::rtt_estimate_ms))
    }

    /// The mean loss estimate: over the clients with one, of each one's (its estimating sides'
    /// samples after [`LOSS_WARMUP`] with a verdict, pooled); `None` when none has one.
    pub fn loss_percent(&self) -> Option<f64> {
        mean_of_some(self.clients.iter().filter_map(ClientSummary::loss_estimate_percent))
    }

    /// Totals over every client; each estimate the mean over the clients that have it.
    pub fn finish(&self) -> (PacketTotals, EstimateSummary) {
        let mut totals = PacketTotals::default();
        for c in self.clients.iter() {
            totals.add(&c.ledger.totals());
        }
        let est = EstimateSummary {
            rtt_ms: self.rtt_ms(),
            true_rtt_ms: mean_of_some(self.clients.iter().filter_map(|c| c.ledger.true_rtt_ms())),
            loss_percent: self.loss_percent(),
            true_loss_percent: mean(
                self.clients.iter().filter(|c| c.has_link_sends()).map(|c| c.ledger.loss_percent_of(&c.truth_dirs())),
            ),
            effective_loss_percent: mean(
                self.clients
                    .iter()
                    .filter(|c| c.has_link_sends())
                    .map(|c| c.ledger.effective_loss_percent(&c.truth_dirs())),
            ),
            discarded: self
                .clients
                .iter()
                .map(|c| c.ledger.discards(&c.truth_dirs()))
                .fold(Discards::default(), |a, b| a + b),
        };
        (totals, est)
    }
}

/// The mean of `values`, `None` when there are none.
fn mean_of_some(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = values.into_iter().collect();
    (!v.is_empty()).then(|| mean(v))
}
