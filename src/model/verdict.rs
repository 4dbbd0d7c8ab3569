//! The Compare tab's verdict: which strategy used fewer bytes per delivered message, and how its
//! latency tail (p99) compared ([`verdict`]), then why ([`why`]): the causes the data shows, in
//! plain words computed from the two lanes' totals.
//!
//! The first sentence leads with the cheaper strategy because bytes per message is the figure
//! both kinds of strategy trade against latency; the p99 clause then says what that cost or
//! saved. The second names what a reader would otherwise piece together from the rows: each
//! lane's resends by cause and how many were spurious (the peer already had the message), the
//! bytes spent on copies that brought nothing, and the time messages waited for earlier ones.

#[path = "verdict_packets.rs"]
mod packets;

use super::compare::{CompareTotals, CAUSES};

/// Differences smaller than this (percent of bytes per message) read as "the same".
const SAME_BYTES_PERCENT: f64 = 0.5;
/// p99 differences smaller than this (ms) read as "the same".
const SAME_P99_MS: f64 = 0.5;

/// One plain sentence comparing lane `a` with lane `b`: by messages when both delivered
/// reliable ones, else by what both have, their packets ([`packets::verdict`]: a capture's or a
/// proxy's lane decodes no messages).
pub fn verdict(a: (&str, &CompareTotals), b: (&str, &CompareTotals)) -> String {
    if a.1.delivered == 0 || b.1.delivered == 0 {
        return packets::verdict(a, b);
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

/// What each cause reads as when it is a lane's only one ([`CAUSES`] order).
const ONLY_CAUSE: [&str; 4] = ["all on the resend delay", "all on a Nak", "all redundant copies", "all on a timeout"];

/// The second sentence: each lane's resends by cause, the spurious share, the bytes in
/// redundant copies, then the head-of-line waits; each lane's packet figures when one lane
/// delivered no message ([`packets::why`]); `None` before both lanes sent a packet.
pub fn why(a: (&str, &CompareTotals), b: (&str, &CompareTotals)) -> Option<String> {
    if a.1.delivered == 0 || b.1.delivered == 0 {
        return packets::why(a, b);
    }
    let mut clauses: Vec<String> = [a, b].iter().map(|(name, t)| resends_clause(name, t)).collect();
    let (ha, hb) = (a.1.hol_total_ms, b.1.hol_total_ms);
    if ha >= 0.5 || hb >= 0.5 {
        clauses.push(format!(
            "head-of-line waits totalled {} ms for {} vs {} ms for {}",
            thousands(ha.round() as u64),
            a.0,
            thousands(hb.round() as u64),
            b.0
        ));
    } else {
        clauses.push("no message waited for an earlier one".into());
    }
    Some(format!("Why: {}.", clauses.join("; ")))
}

/// `glenn resent 673 (232 delay, 441 redundant), 441 spurious (66 %), 30.1 KiB in redundant
/// copies (8 % of its wire bytes)`.
fn resends_clause(name: &str, t: &CompareTotals) -> String {
    let total = t.resends_total();
    if total == 0 {
        return format!("{name} resent nothing");
    }
    let causes: Vec<String> = CAUSES
        .iter()
        .zip(t.resends)
        .filter(|(_, n)| *n > 0)
        .map(|((_, cause), n)| format!("{} {cause}", thousands(n)))
        .collect();
    let by_cause = match t.resends.iter().position(|n| *n == total) {
        Some(only) => ONLY_CAUSE[only].to_string(),
        None => causes.join(", "),
    };
    let spurious = if t.spurious == 0 {
        "none spurious".to_string()
    } else {
        format!("{} spurious ({:.0} %)", thousands(t.spurious), t.spurious as f64 * 100.0 / total as f64)
    };
    let mut out = format!("{name} resent {} ({by_cause}), {spurious}", thousands(total));
    if t.redundant_copy_bytes > 0 && t.wire_bytes > 0 {
        let share = t.redundant_copy_bytes as f64 * 100.0 / t.wire_bytes as f64;
        out.push_str(&format!(
            ", {} in redundant copies ({share:.0} % of its wire bytes)",
            human_bytes(t.redundant_copy_bytes)
        ));
    }
    out
}

/// `n` with a comma every three digits.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes for people: `812 bytes`, `30.1 KiB`, `2.4 MiB`.
pub fn human_bytes(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} bytes"),
        b if b < 1024 * 1024 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)),
    }
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
    fn verdict_waits_for_packets_when_a_lane_delivered_no_message() {
        let v = verdict(("glenn", &totals(500, 0, 0.0)), ("ue4", &totals(400, 10, 50.0)));
        assert_eq!(v, "No packets from glenn yet: nothing to compare.");
    }

    #[test]
    fn why_names_each_lanes_resend_causes_spurious_share_redundant_bytes_and_head_of_line() {
        let glenn = CompareTotals {
            resends: [232, 0, 441, 0],
            spurious: 441,
            redundant_copy_bytes: 30_822,
            hol_total_ms: 120.4,
            ..totals(400_000, 1000, 150.0)
        };
        let ue4 = CompareTotals { resends: [0, 190, 0, 0], hol_total_ms: 2736.0, ..totals(380_000, 1000, 250.0) };
        assert_eq!(
            why(("glenn", &glenn), ("ue4", &ue4)).unwrap(),
            "Why: glenn resent 673 (232 delay, 441 redundant), 441 spurious (66 %), 30.1 KiB in redundant copies \
             (8 % of its wire bytes); ue4 resent 190 (all on a Nak), none spurious; head-of-line waits totalled 120 ms \
             for glenn vs 2,736 ms for ue4."
        );
        let quiet = totals(1000, 10, 5.0);
        assert_eq!(
            why(("a", &quiet), ("b", &quiet)).unwrap(),
            "Why: a resent nothing; b resent nothing; no message waited for an earlier one."
        );
        assert_eq!(why(("a", &quiet), ("b", &totals(0, 0, 0.0))), None, "b sent no packet");
    }
}
