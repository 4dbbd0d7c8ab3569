//! The verdict when a lane delivered no message: by what every lane has, its packets.
//!
//! A capture or a proxy's lane of a protocol whose messages it cannot decode has packets,
//! decoded acks and resends, RTT samples and the link's drops per direction, but no message to
//! measure latency or bytes per message by. Compared with a simulated lane (or another capture),
//! the verdict said "No reliable message delivered": here it compares the loss and the mean RTT
//! both lanes have, says which is better on each and overall, and the reasons name each lane's
//! packets, drops per direction, acks, resends and bytes.

use super::{human_bytes, thousands, CompareTotals};

/// Loss differences smaller than this (percentage points) read as "the same".
const SAME_LOSS_POINTS: f64 = 0.1;
/// Mean RTT differences smaller than this (ms) read as "the same".
const SAME_RTT_MS: f64 = 0.5;

/// One sentence: who lost fewer packets, who had the lower mean RTT, and which is better.
pub fn verdict(a: (&str, &CompareTotals), b: (&str, &CompareTotals)) -> String {
    for (name, t) in [a, b] {
        if t.packets.sent_total() == 0 {
            return format!("No packets from {name} yet: nothing to compare.");
        }
    }
    let (la, lb) = (a.1.packets.loss_percent(None), b.1.packets.loss_percent(None));
    // Which lane wins each figure: Some(0) a, Some(1) b, None the same.
    let (loss, loss_win) = if (la - lb).abs() < SAME_LOSS_POINTS {
        (format!("{} and {} lost the same share of packets ({la:.1} %)", a.0, b.0), None)
    } else if la < lb {
        (format!("{} lost fewer packets than {} ({la:.1} % vs {lb:.1} %)", a.0, b.0), Some(0))
    } else {
        (format!("{} lost fewer packets than {} ({lb:.1} % vs {la:.1} %)", b.0, a.0), Some(1))
    };
    let (rtt, rtt_win) = match (a.1.packets.rtt_mean_ms(), b.1.packets.rtt_mean_ms()) {
        (Some(ra), Some(rb)) if (ra - rb).abs() < SAME_RTT_MS => (format!("the same mean RTT ({ra:.0} ms)"), None),
        (Some(ra), Some(rb)) if ra < rb => (format!("{} had the lower mean RTT ({ra:.0} vs {rb:.0} ms)", a.0), Some(0)),
        (Some(ra), Some(rb)) => (format!("{} had the lower mean RTT ({rb:.0} vs {ra:.0} ms)", b.0), Some(1)),
        (None, None) => ("neither has RTT samples".to_string(), None),
        (None, _) => (format!("{} has no RTT samples", a.0), None),
        (_, None) => (format!("{} has no RTT samples", b.0), None),
    };
    let name = |i: usize| if i == 0 { a.0 } else { b.0 };
    let overall = match (loss_win, rtt_win) {
        (Some(x), Some(y)) if x == y => format!("{} is better on both", name(x)),
        (Some(x), Some(_)) => format!("a trade-off ({} loses less, the other answers sooner)", name(x)),
        (Some(x), None) | (None, Some(x)) => format!("{} is better", name(x)),
        (None, None) => "neither is better".to_string(),
    };
    format!("{loss}, {rtt}: {overall}.")
}

/// Each lane's packets in figures (sent per direction, dropped, acked, resent, bytes); `None`
/// before both sent a packet.
pub fn why(a: (&str, &CompareTotals), b: (&str, &CompareTotals)) -> Option<String> {
    if a.1.packets.sent_total() == 0 || b.1.packets.sent_total() == 0 {
        return None;
    }
    let clause = |(name, t): (&str, &CompareTotals)| {
        let p = &t.packets;
        let mut out = format!(
            "{name} sent {} packets (A->B {}, B->A {}), the link dropped {:.1} % A->B and {:.1} % B->A",
            thousands(p.sent_total()),
            thousands(p.sent[0]),
            thousands(p.sent[1]),
            p.loss_percent(Some(0)),
            p.loss_percent(Some(1)),
        );
        match (p.acked, p.resent) {
            (0, 0) => out.push_str(", no acks or resends decoded"),
            (acked, resent) => out.push_str(&format!(", {} acked, {} resent", thousands(acked), thousands(resent))),
        }
        out.push_str(&format!(", {} on the wire", human_bytes(p.link_bytes)));
        if t.delivered == 0 {
            out.push_str(", no message delivered");
        }
        out
    };
    Some(format!("Why: {}; {}.", clause(a), clause(b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::compare::PacketTotals;

    fn lane(sent: [u64; 2], dropped: [u64; 2], rtt: Option<f64>, delivered: u64) -> CompareTotals {
        let packets = PacketTotals {
            sent,
            dropped,
            link_bytes: (sent[0] + sent[1]) * 100,
            acked: sent[0] - dropped[0],
            resent: dropped[0],
            rtt_samples: rtt.map_or(0, |_| 10),
            rtt_sum_ms: rtt.map_or(0.0, |r| r * 10.0),
        };
        CompareTotals { delivered, delivered_all: delivered, packets, ..CompareTotals::default() }
    }

    #[test]
    fn a_capture_without_messages_is_compared_by_loss_and_rtt() {
        let capture = lane([1000, 1000], [50, 10], Some(82.0), 0);
        let sim = lane([900, 900], [9, 9], Some(61.0), 300);
        let v = crate::model::verdict::verdict(("capture", &capture), ("glenn", &sim));
        assert_eq!(v, "glenn lost fewer packets than capture (1.0 % vs 3.0 %), glenn had the lower mean RTT (61 vs 82 ms): glenn is better on both.");
        let w = crate::model::verdict::why(("capture", &capture), ("glenn", &sim)).unwrap();
        assert_eq!(
            w,
            "Why: capture sent 2,000 packets (A->B 1,000, B->A 1,000), the link dropped 5.0 % A->B and 1.0 % B->A, \
             950 acked, 50 resent, 195.3 KiB on the wire, no message delivered; glenn sent 1,800 packets (A->B 900, \
             B->A 900), the link dropped 1.0 % A->B and 1.0 % B->A, 891 acked, 9 resent, 175.8 KiB on the wire."
        );
    }

    #[test]
    fn mixed_figures_read_as_a_trade_off_and_missing_ones_are_named() {
        let slow = lane([1000, 1000], [0, 0], Some(120.0), 0);
        let lossy = lane([1000, 1000], [40, 40], Some(60.0), 0);
        assert_eq!(
            verdict(("a", &slow), ("b", &lossy)),
            "a lost fewer packets than b (0.0 % vs 4.0 %), b had the lower mean RTT (60 vs 120 ms): a trade-off (a loses \
             less, the other answers sooner)."
        );
        let no_rtt = lane([1000, 1000], [40, 40], None, 0);
        assert_eq!(
            verdict(("a", &no_rtt), ("b", &slow)),
            "b lost fewer packets than a (0.0 % vs 4.0 %), a has no RTT samples: b is better."
        );
        assert_eq!(
            verdict(("a", &slow), ("b", &slow)),
            "a and b lost the same share of packets (0.0 %), the same mean RTT (120 ms): neither is better."
        );
        let empty = CompareTotals::default();
        assert_eq!(verdict(("a", &slow), ("b", &empty)), "No packets from b yet: nothing to compare.");
        assert_eq!(why(("a", &slow), ("b", &empty)), None);
    }
}
