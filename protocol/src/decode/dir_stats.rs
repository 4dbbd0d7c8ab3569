//! One direction's decoded figures ([`DirStats`]) and their JSON form.
//!
//! A figure with no sample is no figure: before the sender took its first RTT sample (a peer
//! that never answers, a capture seen from one side, a receiver that sends no reliable items)
//! every RTT figure is `null` in JSON, never `0.0`, which reads as a perfect link (issue 27).
//! In memory they stay plain `f64`s beside `rtt_samples`, which says whether they mean anything.

use serde::{Deserialize, Serialize};

/// What one endpoint believes about its sends, plus what the relay saw of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(into = "DirStatsJson", from = "DirStatsJson")]
pub struct DirStats {
    /// Datagrams sent in this direction and their bytes.
    pub datagrams: u64,
    pub bytes: u64,
    /// Fates the relay reported.
    pub delivered: u64,
    pub dropped: u64,
    /// Datagrams no decoder could read (malformed or foreign).
    pub malformed: u64,
    /// Packets the sender learned were acked / reported lost (Nak; for an
    /// [`AckRule`](super::AckRule) with an order or a timeout, also the packets that rule failed).
    pub packets_acked: u64,
    pub packets_nakked: u64,
    /// Packets judged by the `Unacked` rule, and those never acked.
    pub judged: u64,
    pub judged_lost: u64,
    /// Reliable item copies sent (first sends and resends), resends alone, resends of an item
    /// one of whose earlier copies the relay delivered, distinct items acked.
    pub items_sent: u64,
    pub resends: u64,
    pub spurious_resends: u64,
    pub items_acked: u64,
    /// RTT samples the sender took, smoothed by its protocol's rule, and their mean, range and
    /// last value: meaningless (0) while `rtt_samples` is 0 ([`Self::rtt`] says so).
    pub rtt_samples: u64,
    pub rtt_ms: f64,
    pub rtt_mean_ms: f64,
    pub rtt_min_ms: f64,
    pub rtt_max_ms: f64,
    pub rtt_last_ms: f64,
    /// The sender's loss estimate by its protocol's rule.
    pub loss_percent: f64,
}

impl DirStats {
    /// `figure` (one of the RTT fields) when the sender took an RTT sample, else none.
    pub fn rtt(&self, figure: f64) -> Option<f64> {
        (self.rtt_samples > 0).then_some(figure)
    }
}

/// [`DirStats`] as JSON and RON spell it: the same fields, the RTT figures `null` without a sample.
#[derive(Serialize, Deserialize)]
struct DirStatsJson {
    datagrams: u64,
    bytes: u64,
    delivered: u64,
    dropped: u64,
    malformed: u64,
    packets_acked: u64,
    packets_nakked: u64,
    judged: u64,
    judged_lost: u64,
    items_sent: u64,
    resends: u64,
    spurious_resends: u64,
    items_acked: u64,
    rtt_samples: u64,
    rtt_ms: Option<f64>,
    rtt_mean_ms: Option<f64>,
    rtt_min_ms: Option<f64>,
    rtt_max_ms: Option<f64>,
    rtt_last_ms: Option<f64>,
    loss_percent: f64,
}

impl From<DirStats> for DirStatsJson {
    fn from(s: DirStats) -> Self {
        // Taken apart whole, so a field added to DirStats cannot be left out of its JSON.
        let DirStats {
            datagrams,
            bytes,
            delivered,
            dropped,
            malformed,
            packets_acked,
            packets_nakked,
            judged,
            judged_lost,
            items_sent,
            resends,
            spurious_resends,
            items_acked,
            rtt_samples,
            rtt_ms,
            rtt_mean_ms,
            rtt_min_ms,
            rtt_max_ms,
            rtt_last_ms,
            loss_percent,
        } = s;
        let rtt = |v: f64| s.rtt(v);
        Self {
            datagrams,
            bytes,
            delivered,
            dropped,
            malformed,
            packets_acked,
            packets_nakked,
            judged,
            judged_lost,
            items_sent,
            resends,
            spurious_resends,
            items_acked,
            rtt_samples,
            rtt_ms: rtt(rtt_ms),
            rtt_mean_ms: rtt(rtt_mean_ms),
            rtt_min_ms: rtt(rtt_min_ms),
            rtt_max_ms: rtt(rtt_max_ms),
            rtt_last_ms: rtt(rtt_last_ms),
            loss_percent,
        }
    }
}

impl From<DirStatsJson> for DirStats {
    fn from(j: DirStatsJson) -> Self {
        let DirStatsJson {
            datagrams,
            bytes,
            delivered,
            dropped,
            malformed,
            packets_acked,
            packets_nakked,
            judged,
            judged_lost,
            items_sent,
            resends,
            spurious_resends,
            items_acked,
            rtt_samples,
            rtt_ms,
            rtt_mean_ms,
            rtt_min_ms,
            rtt_max_ms,
            rtt_last_ms,
            loss_percent,
        } = j;
        let rtt = |v: Option<f64>| v.unwrap_or(0.0);
        Self {
            datagrams,
            bytes,
            delivered,
            dropped,
            malformed,
            packets_acked,
            packets_nakked,
            judged,
            judged_lost,
            items_sent,
            resends,
            spurious_resends,
            items_acked,
            rtt_samples,
            rtt_ms: rtt(rtt_ms),
            rtt_mean_ms: rtt(rtt_mean_ms),
            rtt_min_ms: rtt(rtt_min_ms),
            rtt_max_ms: rtt(rtt_max_ms),
            rtt_last_ms: rtt(rtt_last_ms),
            loss_percent,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rtt_figures_without_a_sample_are_null_and_read_back() {
        let none = DirStats { datagrams: 40, dropped: 40, loss_percent: 100.0, ..DirStats::default() };
        let j = serde_json::to_value(none).unwrap();
        for k in ["rtt_ms", "rtt_mean_ms", "rtt_min_ms", "rtt_max_ms", "rtt_last_ms"] {
            assert!(j[k].is_null(), "{k}: {j}");
        }
        assert_eq!((j["rtt_samples"].as_u64(), j["datagrams"].as_u64()), (Some(0), Some(40)));
        let some = DirStats { rtt_samples: 1, rtt_ms: 0.25, rtt_min_ms: 0.25, ..none };
        let j = serde_json::to_value(some).unwrap();
        assert_eq!((j["rtt_ms"].as_f64(), j["rtt_min_ms"].as_f64()), (Some(0.25), Some(0.25)));
        for s in [none, some] {
            assert_eq!(serde_json::from_value::<DirStats>(serde_json::to_value(s).unwrap()).unwrap(), s);
        }
    }
}
