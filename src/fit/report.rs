//! What `ackscope fit` prints: per direction the fitted link under the link's own parameter
//! names, and how the capture compares with the model's seeds (text, or one JSON object).

use ackscope_protocol::{Dir, JitterDistribution, LinkConfig};
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::check::{Check, BUCKETS, QUANTILES};
use super::{DirFit, Fit};
use crate::capture::records::RecordsInfo;

/// The fitted values under the link's parameter names, in the parameter table's order.
pub fn link_values(c: &LinkConfig) -> Map<String, Value> {
    let dist = match c.jitter_distribution {
        JitterDistribution::Uniform => "uniform",
        JitterDistribution::Normal => "normal",
    };
    let mut m = Map::new();
    m.insert("latency_ms".into(), json!(c.latency_ms));
    m.insert("jitter_ms".into(), json!(c.jitter_ms));
    m.insert("jitter_distribution".into(), json!(dist));
    m.insert("jitter_reorders".into(), json!(c.jitter_reorders));
    m.insert("loss_percent".into(), json!(c.loss_percent));
    m.insert("burst.p_percent".into(), json!(c.burst.p_percent));
    m.insert("burst.r_percent".into(), json!(c.burst.r_percent));
    m.insert("burst.loss_in_bad_percent".into(), json!(c.burst.loss_in_bad_percent));
    m.insert("duplicate_percent".into(), json!(c.duplicate_percent));
    m.insert("reorder_percent".into(), json!(c.reorder_percent));
    m.insert("reorder_delay_ms".into(), json!(c.reorder_delay_ms));
    m.insert("bandwidth_kbps".into(), json!(c.bandwidth_kbps));
    m.insert("queue_bytes".into(), json!(c.queue_bytes));
    m.insert("mtu_bytes".into(), json!(c.mtu_bytes));
    m
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}

/// The KS distances of one direction.
#[derive(Debug, Clone, Serialize)]
pub struct Distances {
    /// Mean and largest over the seeds, capture against model.
    pub delay_ks: f64,
    pub delay_ks_max: f64,
    /// Between two seeds of the model itself: what sampling alone gives.
    pub delay_ks_model: f64,
    pub burst_length_ks: f64,
    pub burst_length_ks_max: f64,
    pub burst_length_ks_model: f64,
}

impl Distances {
    pub fn of(c: &Check) -> Self {
        Distances {
            delay_ks: mean(&c.delay_ks),
            delay_ks_max: max(&c.delay_ks),
            delay_ks_model: c.delay_ks_model,
            burst_length_ks: mean(&c.burst_ks),
            burst_length_ks_max: max(&c.burst_ks),
            burst_length_ks_model: c.burst_ks_model,
        }
    }

    /// Whether the capture sits as close to the model as the model's own seeds sit to each
    /// other (with 0.02 of slack for the short samples).
    pub fn trusted(&self) -> bool {
        self.delay_ks <= 2.0 * self.delay_ks_model + 0.02
            && self.burst_length_ks <= 2.0 * self.burst_length_ks_model + 0.02
    }
}

/// Why a direction's queue size is unknown, `None` when the capture measured it.
pub fn queue_unknown_reason(d: &DirFit) -> Option<&'static str> {
    if d.queue_measured {
        None
    } else if d.link.bandwidth_kbps > 0.0 {
        Some("the queue never overflowed in the capture: any queue holding the largest backlog seen fits it as well")
    } else {
        Some("no rate cap shows in the capture")
    }
}

/// A direction's fitted values for `--json`: the link's, with `queue_bytes` null and
/// `queue_bytes_reason` saying why when the capture cannot give the queue's size (the link
/// file `--out` writes keeps a size that fits, so the link runs).
fn dir_link_json(d: &DirFit) -> Map<String, Value> {
    let mut m = link_values(&d.link);
    if let Some(reason) = queue_unknown_reason(d) {
        m.insert("queue_bytes".into(), Value::Null);
        m.insert("queue_bytes_reason".into(), json!(reason));
    }
    m
}

fn dir_json(d: &DirFit) -> Value {
    let quantiles = |v: &[f64; 5]| -> Map<String, Value> {
        QUANTILES.iter().zip(v).map(|(q, x)| (format!("p{}", (q * 100.0).round()), json!(x))).collect()
    };
    let c = &d.counts;
    let distances = Distances::of(&d.check);
    json!({
        "packets": c.packets,
        "delivered": c.delivered,
        "dropped": c.dropped,
        "duplicated": c.duplicated,
        "unknown": c.unknown,
        "mtu_dropped": c.mtu_dropped,
        "queue_dropped": c.queue_dropped,
        "span_s": c.span_s,
        "link": dir_link_json(d),
        "burst_evidence": d.loss.evidence,
        // The standard deviation each burst value has at this capture's length (the
        // likelihood's curvature): null without bursts.
        "burst_sd": d.loss.sd_percent.map(|sd| json!({
            "burst.p_percent": sd[0],
            "burst.r_percent": sd[1],
            "burst.loss_in_bad_percent": sd[2],
            "loss_percent": sd[3],
        })),
        "swaps": d.delay.swaps,
        "expected_swaps_if_jitter_reorders": d.delay.expected_swaps,
        "trusted": distances.trusted(),
        "distances": distances,
        "delay_ms": {"capture": quantiles(&d.check.capture_delay_ms), "model": quantiles(&d.check.model_delay_ms)},
        "burst_lengths": {
            "buckets": BUCKETS,
            "capture": d.check.capture_bursts,
            "model": d.check.model_bursts,
        },
        "lost": {"capture": d.check.capture_lost, "model": d.check.model_lost},
    })
}

/// The JSON object `fit --json` prints.
pub fn to_json(fit: &Fit, seeds: u32, seconds: f64, out: Option<&str>) -> Value {
    let dir = |d: Dir| fit.dirs[d.index()].as_ref().map_or(Value::Null, dir_json);
    json!({
        "capture": fit.source,
        "records": fit.info,
        "seeds": seeds,
        "fit_seconds": seconds,
        "out": out,
        "a_to_b": dir(Dir::AtoB),
        "b_to_a": dir(Dir::BtoA),
    })
}

fn records_line(source: &str, i: &RecordsInfo) -> String {
    let mut s = format!("{source}: {} ({} packets", i.format, i.packets);
    if i.skipped_not_udp + i.skipped_malformed > 0 {
        s += &format!(
            ", {} skipped: {} not IPv4/UDP, {} unreadable",
            i.skipped_not_udp + i.skipped_malformed,
            i.skipped_not_udp,
            i.skipped_malformed
        );
    }
    s += &format!("), {} paired flow{}", i.paired_flows, if i.paired_flows == 1 { "" } else { "s" });
    if let Some(a) = &i.side_a {
        s += &format!(", side A = {a}");
    }
    if i.one_sided_flows > 0 {
        s += &format!("; {} one-sided flows ({} packets) give no fates", i.one_sided_flows, i.one_sided_packets);
    }
    if i.unmatched_copies + i.ambiguous_copies > 0 {
        s += &format!(
            "; {} copies matched nothing, {} among identical datagrams",
            i.unmatched_copies, i.ambiguous_copies
        );
    }
    if let Some(d) = &i.damaged {
        s += &format!("\n  damaged: {d}");
    }
    s
}

fn row(label: &str, cells: impl IntoIterator<Item = String>) -> String {
    let mut s = format!("    {label:<13}");
    for c in cells {
        s += &format!("{c:>8}");
    }
    s
}

fn dir_text(d: &DirFit) -> String {
    let c = &d.counts;
    let l = &d.link;
    let name = match d.dir {
        Dir::AtoB => "a_to_b",
        Dir::BtoA => "b_to_a",
    };
    let mut s = format!(
        "{} (link.{name}): {} datagrams over {:.1} s: {} delivered, {} dropped ({} for their size, {} by the queue), {} duplicated",
        d.dir.label(),
        c.packets,
        c.span_s,
        c.delivered,
        c.dropped,
        c.mtu_dropped,
        c.queue_dropped,
        c.duplicated
    );
    if c.unknown > 0 {
        s += &format!(", {} of unknown fate left out", c.unknown);
    }
    let dist = match l.jitter_distribution {
        JitterDistribution::Uniform => "uniform",
        JitterDistribution::Normal => "normal",
    };
    s += &format!(
        "\n  latency_ms {:.2}  jitter_ms {:.2} ({dist}{})  loss_percent {:.2}",
        l.latency_ms,
        l.jitter_ms,
        if l.jitter_reorders { "" } else { ", never reorders" },
        l.loss_percent
    );
    if l.burst.p_percent > 0.0 {
        s += &format!(
            "\n  burst.p_percent {:.3}  burst.r_percent {:.2}  burst.loss_in_bad_percent {:.1}  (bursts of {:.1} ms on average, bad {:.1} % of the time; evidence {:.0})",
            l.burst.p_percent,
            l.burst.r_percent,
            l.burst.loss_in_bad_percent,
            100.0 / l.burst.r_percent,
            100.0 * l.burst.p_percent / (l.burst.p_percent + l.burst.r_percent),
            d.loss.evidence
        );
        if let Some(sd) = d.loss.sd_percent {
            s += &format!(
                "\n  this capture's own limit (the likelihood's sd): p +-{:.3}  r +-{:.2}  loss_in_bad +-{:.1}  loss +-{:.2}",
                sd[0], sd[1], sd[2], sd[3]
            );
        }
    } else {
        s += &format!("\n  no bursts (independent loss explains the losses; evidence {:.1} < 25)", d.loss.evidence);
    }
    s += &format!(
        "\n  duplicate_percent {:.2}  reorder_percent {:.2}  reorder_delay_ms {:.1}",
        l.duplicate_percent, l.reorder_percent, l.reorder_delay_ms
    );
    if l.bandwidth_kbps > 0.0 {
        s += &format!(
            "\n  bandwidth_kbps {:.1}  queue_bytes {}  (the queue takes the delays' spread from {:.2} to {:.2} ms)",
            l.bandwidth_kbps, l.queue_bytes, d.rate_spread_ms.0, d.rate_spread_ms.1
        );
        if !d.queue_measured {
            s += "\n  (the queue never overflowed: its size is unknown, the link file keeps one that fits)";
        }
    } else {
        s += "\n  no rate cap shows";
    }
    s += &format!("  mtu_bytes {}", l.mtu_bytes);
    let k = &d.check;
    let dist = Distances::of(k);
    s += &format!("\n  delay ms, capture against the model ({} seeds, median of each quantile):", k.seeds);
    s += &format!("\n{}", row("", QUANTILES.iter().map(|q| format!("p{}", (q * 100.0).round()))));
    s += &format!("\n{}", row("capture", k.capture_delay_ms.iter().map(|v| format!("{v:.1}"))));
    s += &format!("\n{}", row("model", k.model_delay_ms.iter().map(|v| format!("{v:.1}"))));
    s += &format!(
        "\n    KS distance {:.3} (worst seed {:.3}; two seeds of the model: {:.3})",
        dist.delay_ks, dist.delay_ks_max, dist.delay_ks_model
    );
    s += "\n  burst lengths (consecutive lost datagrams), capture against the model's mean:";
    s += &format!("\n{}", row("packets", BUCKETS.iter().map(|b| b.to_string())));
    s += &format!("\n{}", row("capture", k.capture_bursts.iter().map(|v| v.to_string())));
    s += &format!("\n{}", row("model", k.model_bursts.iter().map(|v| format!("{v:.1}"))));
    s += &format!(
        "\n    KS distance {:.3} (worst seed {:.3}; two seeds of the model: {:.3}); lost {} against {:.1}",
        dist.burst_length_ks, dist.burst_length_ks_max, dist.burst_length_ks_model, k.capture_lost, k.model_lost
    );
    s += if dist.trusted() {
        "\n  verdict: the capture is as close to the model as the model's own seeds are to each other"
    } else {
        "\n  verdict: the capture differs from the model more than sampling explains: conditions that change \
         over time, or a shape this link cannot make; use link.trace to replay it exactly"
    };
    s
}

/// The text `fit` prints.
pub fn to_text(fit: &Fit, seconds: f64, out: Option<(&str, u64)>) -> String {
    let mut s = records_line(&fit.source, &fit.info);
    for d in Dir::BOTH {
        match &fit.dirs[d.index()] {
            Some(f) => s += &format!("\n\n{}", dir_text(f)),
            None => {
                s += &format!(
                    "\n\n{}: too few datagrams with a known fate to fit (at least {})",
                    d.label(),
                    super::MIN_PACKETS
                )
            }
        }
    }
    s += &format!("\n\nfitted in {seconds:.2} s");
    if let Some((path, bytes)) = out {
        s += &format!("\nwrote {path} ({bytes} bytes): --set link.file={path} runs it");
    }
    s
}

/// The comment at the head of a link file: where it came from and how well it fits.
pub fn file_comment(fit: &Fit) -> String {
    let mut s = format!("ackscope fit of {} (ackscope {})", fit.source, env!("CARGO_PKG_VERSION"));
    for d in fit.dirs.iter().flatten() {
        let k = Distances::of(&d.check);
        s += &format!(
            "\n{}: {} datagrams; KS delay {:.3} (model {:.3}), burst lengths {:.3} (model {:.3})",
            d.dir.label(),
            d.counts.packets,
            k.delay_ks,
            k.delay_ks_model,
            k.burst_length_ks,
            k.burst_length_ks_model
        );
    }
    s
}
