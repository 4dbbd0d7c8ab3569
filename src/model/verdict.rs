//! The Compare tab's one-line verdict: which strategy used fewer bytes per delivered message, and
//! how its latency tail (p99) compared, in plain words computed from the two lanes' totals.
//!
//! The sentence leads with the cheaper strategy because bytes per message is the figure both
//! kinds of strategy trade against latency; the p99 clause then says what that cost or saved.

use super::compare::CompareTotals;

/// Differences smaller than this (percent of bytes per message) read as "the same".
const SAME_BYTES_PERCENT: f64 = 0.5;
/// p99 differences smaller than this (ms) read as "the same".
const SAME_P99_MS: f64 = 0.5;

/// One plain sentence comparing lane `a` with lane `b`.
pub fn verdict(a: (&str, &CompareTotals), b: (&str, &CompareTotals)) -> String {
    for (s, t) in [a, b] {
        if t.delivered == 0 {
            return format!("No reliable message delivered by {} yet: nothing to compare.", s);
        }
    }
    let (cheap, dear) = if a.1.bytes_per_message() <= b.1.bytes_per_message() { (a, b) } else { (b, a) };
    let (cb, db) = (cheap.1.bytes_per_message(), dear.1.bytes_per_message());
    let percent = (1.0 - cb / db) * 100.0;
    let bytes = if percent < SAME_BYTES_PERCENT {
        format!("{} and {} used the same bytes per message ({cb:.1})", a.0, b.0)
    } else {
        format!("{} used {percent:.0} % fewer bytes per message than {} ({cb:.1} vs {db:.1})", cheap.0, dear.0)
    };
    // The clause's subject: the cheaper lane, or lane A when both cost the same.
    let same = percent < SAME_BYTES_PERCENT;
    let (lead, other) = if same && cheap.0 != a.0 { (dear, cheap) } else { (cheap, dear) };
    let subject = if same { format!("{}'s", lead.0) } else { "its".to_string() };
    let (cp, dp) = (lead.1.latency_ms.p99, other.1.latency_ms.p99);
    let diff = cp - dp;
    let tail = if diff.abs() < SAME_P99_MS {
        format!("{subject} p99 was the same ({cp:.0} ms)")
    } else {
        let word = if diff > 0.0 { "higher" } else { "lower" };
        format!("{subject} p99 was {:.0} ms {word} ({cp:.0} vs {dp:.0} ms)", diff.abs())
    };
    format!("{bytes}; {tail}.")
}

#[cfg(test)]
mod tests {
    use ackscope_protocol::LatencyMs;

    use super::*;

    fn totals(wire_bytes: u64, delivered: u64, p99: f64) -> CompareTotals {
        CompareTotals {
            delivered,
            delivered_all: delivered,
            wire_bytes,
            latency_ms: LatencyMs { p99, ..LatencyMs::default() },
            ..CompareTotals::default()
        }
    }

    #[test]
    fn verdict_leads_with_the_cheaper_strategy_and_its_p99() {
        let glenn = totals(91_500, 1000, 150.0);
        let ue4 = totals(82_800, 1000, 250.0);
        let v = verdict(("glenn", &glenn), ("ue4", &ue4));
        assert_eq!(
            v,
            "ue4 used 10 % fewer bytes per message than glenn (82.8 vs 91.5); its p99 was 100 ms higher (250 vs 150 ms)."
        );
        // The lanes' order does not change who leads.
        assert_eq!(verdict(("ue4", &ue4), ("glenn", &glenn)), v);
    }

    #[test]
    fn verdict_says_lower_when_the_cheaper_one_is_also_faster() {
        let v = verdict(("glenn", &totals(80_000, 1000, 90.0)), ("dnm", &totals(100_000, 1000, 140.0)));
        assert_eq!(
            v,
            "glenn used 20 % fewer bytes per message than dnm (80.0 vs 100.0); its p99 was 50 ms lower (90 vs 140 ms)."
        );
    }

    #[test]
    fn verdict_names_equal_figures_as_the_same() {
        let v = verdict(("glenn", &totals(90_000, 1000, 120.0)), ("ue4", &totals(90_100, 1000, 120.2)));
        assert_eq!(v, "glenn and ue4 used the same bytes per message (90.0); glenn's p99 was the same (120 ms).");
        let v = verdict(("ue4", &totals(90_100, 1000, 180.0)), ("glenn", &totals(90_000, 1000, 120.0)));
        assert_eq!(
            v,
            "ue4 and glenn used the same bytes per message (90.0); ue4's p99 was 60 ms higher (180 vs 120 ms)."
        );
    }

    #[test]
    fn verdict_waits_for_deliveries() {
        let v = verdict(("glenn", &totals(500, 0, 0.0)), ("ue4", &totals(400, 10, 50.0)));
        assert_eq!(v, "No reliable message delivered by glenn yet: nothing to compare.");
    }
}
