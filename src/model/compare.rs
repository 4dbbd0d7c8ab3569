//! The Compare tab's figures for one recording: delivery latencies (for the CDF and over time),
//! wire bytes per delivered message, resends per second by cause, and head-of-line waiting.
//!
//! Everything is read from the indexes and the ledger (the same ground truth the Summary tab
//! folds), up to an instant, so two lanes compared at the cursor describe the same stretch of
//! time. Series are binned or decimated here to what a plot can show, so drawing stays cheap
//! however long the recording; the UI keeps one result per lane and recomputes it only when the
//! events up to the cursor changed.

use ackscope_protocol::{EventKind, LatencyMs, PacketFate, Percentiles, SendKind, SimTime};

use super::{LaneColor, Shown};

/// Most points a latency-over-time series keeps (the highest latency per time bucket).
const MAX_POINTS: usize = 2000;
/// Most bins a per-second series has; longer runs get wider bins.
const MAX_BINS: f64 = 400.0;

/// Resend causes in the order the figures list them.
pub const CAUSES: [(SendKind, &str); 4] = [
    (SendKind::DelayResend, "delay"),
    (SendKind::NakResend, "Nak"),
    (SendKind::Redundant, "redundant"),
    (SendKind::TimeoutResend, "timeout"),
];

/// The run-wide figures the verdict compares.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CompareTotals {
    /// Reliable messages delivered (their latency counts).
    pub delivered: u64,
    /// Messages delivered, reliable or not (what bytes per message divides by, as Summary does).
    pub delivered_all: u64,
    pub wire_bytes: u64,
    pub latency_ms: LatencyMs,
    /// Resends per cause, in [`CAUSES`] order.
    pub resends: [u64; 4],
    pub spurious: u64,
    /// Summed and largest wait of delivered messages between their first arrival and delivery.
    pub hol_total_ms: f64,
    pub hol_max_ms: f64,
    /// Message bytes carried again by copies that brought the receiver nothing: every copy of a
    /// message except the first to arrive that either arrived too or was sent after that first
    /// arrival (ground truth from the ledger; the sender cannot know it).
    pub redundant_copy_bytes: u64,
    /// Copies counted in [`Self::redundant_copy_bytes`].
    pub redundant_copies: u64,
    /// What every lane has, messages or not (a capture's, a proxy's): the verdict's ground when
    /// a lane delivered no message.
    pub packets: PacketTotals,
}

/// Packet-level figures of a lane: what a capture or a proxy has when it decodes no messages.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PacketTotals {
    /// Datagrams put on the link, per direction (`[A->B, B->A]`).
    pub sent: [u64; 2],
    /// Of them, dropped by the link, per direction.
    pub dropped: [u64; 2],
    /// Their bytes, both directions.
    pub link_bytes: u64,
    /// Packets the endpoints reported acked (decoded acks for a capture).
    pub acked: u64,
    /// Messages sent again (any cause), as decoded.
    pub resent: u64,
    pub rtt_samples: u64,
    pub rtt_sum_ms: f64,
}

impl PacketTotals {
    pub fn sent_total(&self) -> u64 {
        self.sent[0] + self.sent[1]
    }

    /// Share of `dir`'s datagrams the link dropped (`None`: all of both directions), percent;
    /// 0 before any was sent.
    pub fn loss_percent(&self, dir: Option<usize>) -> f64 {
        let (d, s) = match dir {
            Some(i) => (self.dropped[i], self.sent[i]),
            None => (self.dropped[0] + self.dropped[1], self.sent_total()),
        };
        if s == 0 {
            0.0
        } else {
            d as f64 * 100.0 / s as f64
        }
    }

    /// Mean of the RTT samples, ms (`None` without samples).
    pub fn rtt_mean_ms(&self) -> Option<f64> {
        (self.rtt_samples > 0).then(|| self.rtt_sum_ms / self.rtt_samples as f64)
    }
}

impl CompareTotals {
    /// Resends of every cause.
    pub fn resends_total(&self) -> u64 {
        self.resends.iter().sum()
    }

    /// Wire bytes (both directions) per delivered message; 0 before any delivery.
    pub fn bytes_per_message(&self) -> f64 {
        if self.delivered_all == 0 {
            0.0
        } else {
            self.wire_bytes as f64 / self.delivered_all as f64
        }
    }
}

/// One lane's figures up to an instant, ready to plot (x in seconds unless named otherwise).
#[derive(Debug, Clone, Default)]
pub struct LaneFigures {
    /// The lane's name (its strategy's, or every protocol it ran) and colour.
    pub label: String,
    pub color: Option<LaneColor>,
    pub totals: CompareTotals,
    /// Latencies of delivered reliable messages, sorted (the CDF).
    pub latencies_sorted_ms: Vec<f64>,
    /// (queued at, latency) of messages none of whose carrying packets the link dropped.
    pub latency_clean: Vec<[f64; 2]>,
    /// (queued at, latency) of messages at least one carrying packet of which was dropped.
    pub latency_dropped: Vec<[f64; 2]>,
    /// Bin width of the binned series, seconds.
    pub bin_s: f64,
    /// (bin start, wire bytes / delivered message) for bins with a delivery.
    pub bytes_per_message: Vec<[f64; 2]>,
    /// Resends per second per cause ([`CAUSES`] order), and spurious resends per second.
    pub resends_per_s: [Vec<[f64; 2]>; 4],
    pub spurious_per_s: Vec<[f64; 2]>,
    /// (bin start, head-of-line wait summed over messages delivered in the bin, ms per second).
    pub hol_ms_per_s: Vec<[f64; 2]>,
}

/// Width of the bins for a run of `until_s` seconds: 1 s, or wider so at most [`MAX_BINS`].
pub fn bin_width_s(until_s: f64) -> f64 {
    (until_s / MAX_BINS).ceil().max(1.0)
}

/// Keeps at most `max` points of `points` (sorted by x): the highest y in each x bucket, so
/// latency tails survive the decimation.
fn decimate_max(points: Vec<[f64; 2]>, until_s: f64, max: usize) -> Vec<[f64; 2]> {
    if points.len() <= max || until_s <= 0.0 {
        return points;
    }
    let mut out: Vec<[f64; 2]> = Vec::with_capacity(max);
    let mut bucket = usize::MAX;
    for p in points {
        let b = ((p[0] / until_s) * max as f64) as usize;
        match out.last_mut() {
            Some(last) if b == bucket => {
                if p[1] > last[1] {
                    *last = p;
                }
            }
            _ => {
                out.push(p);
                bucket = b;
            }
        }
    }
    out
}

/// Bins as (bin start, value / scale) for non-empty bins.
fn binned(bins: &[f64], bin_s: f64, scale: f64) -> Vec<[f64; 2]> {
    bins.iter().enumerate().map(|(i, v)| [i as f64 * bin_s, v / scale]).collect()
}

impl LaneFigures {
    /// The figures of `rec` over its events at or before `until`.
    pub fn compute(rec: Shown<'_>, until: SimTime) -> Self {
        let until_s = until.as_secs_f64();
        let bin_s = bin_width_s(until_s);
        let n_bins = (until_s / bin_s) as usize + 1;
        let bin = |t: SimTime| ((t.as_secs_f64() / bin_s) as usize).min(n_bins - 1);
        let mut totals = CompareTotals::default();
        let (mut bytes, mut delivered) = (vec![0.0; n_bins], vec![0.0; n_bins]);
        let mut resends: [Vec<f64>; 4] = std::array::from_fn(|_| vec![0.0; n_bins]);
        let (mut spurious, mut hol) = (vec![0.0; n_bins], vec![0.0; n_bins]);
        let p = &mut totals.packets;
        for e in rec.store.events_until(until) {
            match e.kind {
                EventKind::PacketSent { bytes: b, .. } => {
                    totals.wire_bytes += b as u64;
                    bytes[bin(e.time)] += b as f64;
                }
                EventKind::LinkSent { dir, bytes: b, .. } => {
                    p.sent[dir.index()] += 1;
                    p.link_bytes += b as u64;
                }
                EventKind::LinkDropped { dir, .. } => p.dropped[dir.index()] += 1,
                EventKind::PacketAcked { .. } => p.acked += 1,
                EventKind::MessageSent { kind, .. } if kind != SendKind::First => p.resent += 1,
                EventKind::RttSample { rtt_ms, .. } if rtt_ms.is_finite() => {
                    p.rtt_samples += 1;
                    p.rtt_sum_ms += f64::from(rtt_ms);
                }
                _ => {}
            }
        }
        let (mut clean, mut dropped, mut latencies) = (Vec::new(), Vec::new(), Vec::new());
        let mut copies: Vec<(SimTime, Option<SimTime>)> = Vec::new();
        for m in rec.messages.messages().iter().filter(|m| m.queued_at <= until) {
            let mut lost_copy = false;
            // Each copy's send time and arrival; the first to arrive (its arrival, its index).
            copies.clear();
            let mut first: Option<(SimTime, usize)> = None;
            for s in m.sends_by(until) {
                if let Some(i) = CAUSES.iter().position(|(k, _)| *k == s.kind) {
                    totals.resends[i] += 1;
                    resends[i][bin(s.time)] += 1.0;
                }
                if s.spurious {
                    totals.spurious += 1;
                    spurious[bin(s.time)] += 1.0;
                }
                let Some(uid) = s.uid else { continue };
                let arrived = match rec.ledger.fate_at(uid, until) {
                    PacketFate::Dropped(_) => {
                        lost_copy = true;
                        None
                    }
                    PacketFate::Delivered { at, .. } => Some(at),
                    _ => None,
                };
                if let Some(at) = arrived {
                    if first.is_none_or(|(f, _)| at < f) {
                        first = Some((at, copies.len()));
                    }
                }
                copies.push((s.time, arrived));
            }
            let first_arrival = first.map(|(at, _)| at);
            if let Some((first_at, first_copy)) = first {
                let redundant = copies
                    .iter()
                    .enumerate()
                    .filter(|(i, (sent, arrived))| *i != first_copy && (arrived.is_some() || *sent >= first_at))
                    .count() as u64;
                totals.redundant_copies += redundant;
                totals.redundant_copy_bytes += redundant * u64::from(m.bytes);
            }
            let Some(at) = m.delivered_at.filter(|t| *t <= until) else { continue };
            totals.delivered_all += 1;
            delivered[bin(at)] += 1.0;
            if !m.reliable {
                continue;
            }
            totals.delivered += 1;
            let latency_ms = at.saturating_since(m.queued_at).as_millis_f64();
            latencies.push(latency_ms);
            let point = [m.queued_at.as_secs_f64(), latency_ms];
            if lost_copy {
                dropped.push(point);
            } else {
                clean.push(point);
            }
            if let Some(first) = first_arrival {
                let wait_ms = at.saturating_since(first).as_millis_f64();
                totals.hol_total_ms += wait_ms;
                totals.hol_max_ms = totals.hol_max_ms.max(wait_ms);
                hol[bin(at)] += wait_ms;
            }
        }
        let sorted = Percentiles::of(latencies);
        totals.latency_ms = LatencyMs::from(&sorted);
        let latencies_sorted_ms = (0..sorted.count()).map(|i| sorted.at((i + 1) as f64 / sorted.count() as f64));
        let bytes_per_message =
            (0..n_bins).filter(|&i| delivered[i] > 0.0).map(|i| [i as f64 * bin_s, bytes[i] / delivered[i]]).collect();
        clean.sort_by(|a, b| a[0].total_cmp(&b[0]));
        dropped.sort_by(|a, b| a[0].total_cmp(&b[0]));
        LaneFigures {
            label: rec.label(),
            color: Some(rec.color_at(until)),
            totals,
            latencies_sorted_ms: latencies_sorted_ms.collect(),
            latency_clean: decimate_max(clean, until_s, MAX_POINTS),
            latency_dropped: decimate_max(dropped, until_s, MAX_POINTS),
            bin_s,
            bytes_per_message,
            resends_per_s: resends.map(|r| binned(&r, bin_s, bin_s)),
            spurious_per_s: binned(&spurious, bin_s, bin_s),
            hol_ms_per_s: binned(&hol, bin_s, bin_s),
        }
    }

    /// The latency CDF as (latency ms, tail height) with at most `max` points: the height is
    /// `-log10(1 - q)`, so 90 %, 99 % and 99.9 % sit at 1, 2 and 3 and the tail gets the room.
    pub fn cdf_points(&self, max: usize) -> Vec<[f64; 2]> {
        let v = &self.latencies_sorted_ms;
        let n = v.len();
        if n == 0 {
            return Vec::new();
        }
        let step = (n / max.max(1)).max(1);
        let mut idx: Vec<usize> = (0..n).step_by(step).collect();
        // The tail is what matters: keep every one of the last 1 % and the maximum.
        idx.extend((n - (n / 100).min(max)..n).filter(|i| i % step != 0));
        idx.sort_unstable();
        idx.into_iter().map(|i| [v[i], tail_height((i + 1) as f64 / (n + 1) as f64)]).collect()
    }
}

/// The head-of-line wait over the reliable messages delivered by `until`, total and longest, ms:
/// for each, from its first copy's arrival to its delivery to the application (what
/// [`LaneFigures::compute`] sums, without the rest of its work: the Summary tab shows it for every
/// strategy, where it showed UE4's own figure only and "-" for the others).
pub fn head_of_line_ms(rec: Shown<'_>, until: SimTime) -> (f64, f64) {
    let (mut total, mut max) = (0.0f64, 0.0f64);
    for m in rec.messages.messages().iter().filter(|m| m.reliable && m.queued_at <= until) {
        let Some(at) = m.delivered_at.filter(|t| *t <= until) else { continue };
        let first = m
            .sends_by(until)
            .filter_map(|s| match rec.ledger.fate_at(s.uid?, until) {
                PacketFate::Delivered { at, .. } => Some(at),
                _ => None,
            })
            .min();
        if let Some(first) = first {
            let wait_ms = at.saturating_since(first).as_millis_f64();
            total += wait_ms;
            max = max.max(wait_ms);
        }
    }
    (total, max)
}

/// The CDF plot's height for quantile `q`: `-log10(1 - q)`.
pub fn tail_height(q: f64) -> f64 {
    -(1.0 - q.clamp(0.0, 0.9999)).log10()
}

/// The quantile a CDF height stands for (the inverse of [`tail_height`]).
pub fn height_quantile(h: f64) -> f64 {
    1.0 - 10f64.powf(-h)
}

#[cfg(test)]
mod tests {
    use ackscope_protocol::{Dir, Scenario, Simulation, Strategy};

    use super::*;
    use crate::model::Recording;

    fn recording(strategy: Strategy, loss: f64, secs: f64) -> Recording {
        let mut s = Scenario { seed: 11, strategy, ..Scenario::default() };
        for d in Dir::BOTH {
            s.link.get_mut(d).loss_percent = loss;
        }
        let mut sim = Simulation::new(s.clone());
        sim.run_for_secs(secs);
        let mut rec = Recording::new(s);
        rec.ingest(sim.drain_events().collect());
        rec
    }

    #[test]
    fn figures_agree_with_the_summary_metrics() {
        for strategy in [Strategy::Glenn, Strategy::Ue4] {
            let rec = recording(strategy, 15.0, 20.0);
            let end = rec.store.end_time();
            let f = LaneFigures::compute((&rec).into(), end);
            let m = ackscope_protocol::reliable_metrics(rec.store.events());
            assert_eq!(f.totals.delivered, m.delivered, "{strategy:?}");
            assert_eq!(f.totals.latency_ms, m.latency_ms, "{strategy:?}");
            assert_eq!(f.totals.spurious, m.spurious_resends, "{strategy:?}");
            assert!((f.totals.bytes_per_message() - m.wire_bytes_per_delivered).abs() < 1e-9, "{strategy:?}");
            assert!(!f.latency_dropped.is_empty(), "{strategy:?}: 15 % loss drops some carrying packets");
            let resends: u64 = f.totals.resends.iter().sum();
            assert!(resends > 0, "{strategy:?}");
            // A redundant copy is never a message's first to arrive: at most one per resend.
            assert!(f.totals.redundant_copies <= resends, "{strategy:?}");
            if strategy == Strategy::Glenn {
                assert!(f.totals.redundant_copies > 0, "glenn resends on a delay: some copies come too late");
            }
            let binned: f64 = f.resends_per_s.iter().flatten().map(|p| p[1] * f.bin_s).sum();
            assert!((binned - resends as f64).abs() < 1e-6, "{strategy:?}: bins hold every resend");
        }
    }

    #[test]
    fn head_of_line_alone_equals_the_figures() {
        for strategy in [Strategy::Glenn, Strategy::Ue4] {
            let rec = recording(strategy, 15.0, 20.0);
            for until in [SimTime::from_secs_f64(7.5), rec.store.end_time()] {
                let f = LaneFigures::compute((&rec).into(), until);
                let (total, max) = head_of_line_ms((&rec).into(), until);
                assert!(
                    (total - f.totals.hol_total_ms).abs() < 1e-6,
                    "{strategy:?}: {total} vs {}",
                    f.totals.hol_total_ms
                );
                assert_eq!(max, f.totals.hol_max_ms, "{strategy:?}");
            }
        }
    }

    #[test]
    fn figures_up_to_an_instant_leave_later_events_out() {
        let rec = recording(Strategy::Glenn, 5.0, 10.0);
        let half = LaneFigures::compute((&rec).into(), SimTime::from_secs_f64(5.0));
        let all = LaneFigures::compute((&rec).into(), rec.store.end_time());
        assert!(half.totals.delivered > 0 && half.totals.delivered < all.totals.delivered);
        assert!(half.latency_clean.iter().all(|p| p[0] <= 5.0));
    }

    #[test]
    fn cdf_keeps_the_tail_and_rises_monotonically() {
        let f = LaneFigures { latencies_sorted_ms: (1..=10_000).map(f64::from).collect(), ..LaneFigures::default() };
        let pts = f.cdf_points(500);
        assert!(pts.len() < 700, "{}", pts.len());
        assert_eq!(pts.last().unwrap()[0], 10_000.0);
        assert!(pts.windows(2).all(|w| w[0][0] <= w[1][0] && w[0][1] <= w[1][1]));
        assert!((height_quantile(tail_height(0.99)) - 0.99).abs() < 1e-12);
    }
}
