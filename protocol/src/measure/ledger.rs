//! Ground truth: what the link really did, checked against what the endpoints reported.
//!
//! The link tags every send with a run-unique id (sequences wrap); an ack an endpoint reports is
//! looked up against the latest send of that sequence, so a false or duplicate ack is counted the
//! moment it happens, live or when a recorded log is summarised.

use serde::{Deserialize, Serialize};

use crate::event::{Dir, Event, EventKind, SimTime};

/// Ground-truth counters, totals over both directions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PacketTotals {
    /// Packets the endpoints sent.
    pub sent: u64,
    /// Packets the link dropped.
    pub link_dropped: u64,
    /// Copies the link delivered (duplicates count twice).
    pub delivered: u64,
    /// Extra copies the link made.
    pub duplicated: u64,
    /// Distinct sends the endpoints reported acked.
    pub acked: u64,
    /// Acks reported for sends the link never delivered.
    pub false_acks: u64,
    /// Acks reported more than once for the same send.
    pub duplicate_acks: u64,
    /// Packets the endpoints rejected as malformed.
    pub malformed: u64,
}

/// Per-direction ground truth.
#[derive(Debug, Clone)]
pub(crate) struct Truth {
    /// The link send id that last carried each 16-bit sequence, per direction.
    last_uid: [Vec<u64>; 2],
    delivered: Vec<bool>,
    acked: Vec<bool>,
    delay_sum_us: [f64; 2],
    delay_n: [u64; 2],
    sent_per_dir: [u64; 2],
    dropped_per_dir: [u64; 2],
    totals: PacketTotals,
}

impl Truth {
    pub(crate) fn new() -> Self {
        Self {
            last_uid: [vec![u64::MAX; 65536], vec![u64::MAX; 65536]],
            delivered: Vec::new(),
            acked: Vec::new(),
            delay_sum_us: [0.0; 2],
            delay_n: [0; 2],
            sent_per_dir: [0; 2],
            dropped_per_dir: [0; 2],
            totals: PacketTotals::default(),
        }
    }

    /// Updates counters from events just emitted.
    pub(crate) fn observe(&mut self, events: &[Event]) {
        for e in events {
            match e.kind {
                EventKind::PacketSent { side, seq, uid, .. } => {
                    self.last_uid[side.outgoing().index()][(seq & 0xFFFF) as usize] = uid;
                    self.totals.sent += 1;
                }
                EventKind::LinkSent { dir, uid, .. } => {
                    let need = uid as usize + 1;
                    if self.delivered.len() < need {
                        self.delivered.resize(need, false);
                        self.acked.resize(need, false);
                    }
                    self.sent_per_dir[dir.index()] += 1;
                }
                EventKind::LinkDropped { dir, .. } => {
                    self.totals.link_dropped += 1;
                    self.dropped_per_dir[dir.index()] += 1;
                }
                EventKind::LinkDuplicated { .. } => self.totals.duplicated += 1,
                EventKind::LinkDelivered { dir, uid, delay_us } => {
                    self.totals.delivered += 1;
                    if let Some(d) = self.delivered.get_mut(uid as usize) {
                        *d = true;
                    }
                    self.delay_sum_us[dir.index()] += delay_us as f64;
                    self.delay_n[dir.index()] += 1;
                }
                EventKind::PacketAcked { side, seq } => {
                    let uid = self.last_uid[side.outgoing().index()][(seq & 0xFFFF) as usize];
                    let delivered = self.delivered.get(uid as usize).copied().unwrap_or(false);
                    if !delivered {
                        self.totals.false_acks += 1;
                    }
                    match self.acked.get_mut(uid as usize) {
                        Some(a) if *a => self.totals.duplicate_acks += 1,
                        Some(a) => {
                            *a = true;
                            self.totals.acked += 1;
                        }
                        None => self.totals.acked += 1,
                    }
                }
                EventKind::Malformed { .. } => self.totals.malformed += 1,
                _ => {}
            }
        }
    }

    pub(crate) fn totals(&self) -> PacketTotals {
        self.totals
    }

    /// Packets the link dropped / packets it was given, both directions, in percent.
    pub(crate) fn true_loss_percent(&self) -> f64 {
        let sent = self.sent_per_dir[0] + self.sent_per_dir[1];
        let dropped = self.dropped_per_dir[0] + self.dropped_per_dir[1];
        if sent == 0 {
            0.0
        } else {
            dropped as f64 * 100.0 / sent as f64
        }
    }

    /// Mean one-way delay A->B plus B->A over delivered packets.
    pub(crate) fn true_rtt_ms(&self) -> f64 {
        self.mean_delay_ms(Dir::AtoB) + self.mean_delay_ms(Dir::BtoA)
    }

    fn mean_delay_ms(&self, dir: Dir) -> f64 {
        let i = dir.index();
        if self.delay_n[i] == 0 {
            0.0
        } else {
            self.delay_sum_us[i] / self.delay_n[i] as f64 / 1000.0
        }
    }
}

/// Estimates beside the truth they estimate, for a whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct EstimateSummary {
    /// Final smoothed RTT, mean of both sides.
    pub rtt_ms: f64,
    /// Mean one-way link delay A->B plus B->A over delivered packets.
    pub true_rtt_ms: f64,
    /// Mean of both sides' loss estimates over the stats samples after the first 2 s.
    pub loss_percent: f64,
    /// Packets dropped by the link / packets sent, both directions.
    pub true_loss_percent: f64,
}

/// Ground truth and estimates recomputed from a recorded event log (e.g. a loaded session).
///
/// Totals are exactly what the live run counted; `rtt_ms` comes from each side's last `Stats`
/// event (the live run uses the endpoints' state at the very end, at most one stats interval later).
pub fn summarize(events: &[Event]) -> (PacketTotals, EstimateSummary) {
    let mut a = SummaryAccumulator::default();
    a.observe(events);
    a.finish()
}

/// [`summarize`] fed in pieces, for views that extend it as time moves forward.
#[derive(Debug, Clone)]
pub struct SummaryAccumulator {
    truth: Truth,
    last_rtt: [f64; 2],
    loss_sum: f64,
    loss_n: u64,
}

impl Default for SummaryAccumulator {
    fn default() -> Self {
        Self { truth: Truth::new(), last_rtt: [0.0; 2], loss_sum: 0.0, loss_n: 0 }
    }
}

impl SummaryAccumulator {
    pub fn observe(&mut self, events: &[Event]) {
        self.truth.observe(events);
        for e in events {
            if let EventKind::Stats { side, stats } = e.kind {
                self.last_rtt[side.index()] = stats.rtt_ms as f64;
                if e.time >= SimTime(2_000_000) {
                    self.loss_sum += stats.loss_percent as f64;
                    self.loss_n += 1;
                }
            }
        }
    }

    pub fn finish(&self) -> (PacketTotals, EstimateSummary) {
        let est = EstimateSummary {
            rtt_ms: (self.last_rtt[0] + self.last_rtt[1]) / 2.0,
            true_rtt_ms: self.truth.true_rtt_ms(),
            loss_percent: if self.loss_n == 0 { 0.0 } else { self.loss_sum / self.loss_n as f64 },
            true_loss_percent: self.truth.true_loss_percent(),
        };
        (self.truth.totals(), est)
    }
}
