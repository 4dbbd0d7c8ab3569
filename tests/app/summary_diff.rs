//! The Summary's B - A column (issue 25): with two lanes shown (an A/B run, or a recording with
//! a second one beside), every figure of B minus A's, signed, in its unit, with the percent change;
//! one lane alone has none.

use crate::common::{lossy_recording, replay_window};
use ackscope::app::Tab;
use ackscope::model::index::SummaryFold;
use ackscope::model::{Recording, Shown};
use ackscope_protocol::Strategy;
use egui_kittest::kittest::Queryable;

const SEED: u64 = 2527;

/// Packets sent by `rec` over its whole run, as the Summary folds them.
fn sent(rec: &Recording) -> u64 {
    let mut fold = SummaryFold::default();
    let shown = Shown::from(rec);
    assert!(fold.advance(shown, rec.store.len(), usize::MAX));
    fold.figures().unwrap().packets.sent
}

#[test]
fn an_ab_summary_has_a_b_minus_a_column_with_signed_differences() {
    let a = lossy_recording(SEED, Strategy::Glenn, 10.0, 3.0);
    let b = lossy_recording(SEED, Strategy::Ue4, 10.0, 3.0);
    let (sa, sb) = (sent(&a), sent(&b));
    assert_ne!(sa, sb, "the two strategies send differently");
    let mut h = replay_window(vec![a, b], Tab::Summary);
    h.run_steps(6);
    h.get_by_label("B - A");
    let d = sb as i64 - sa as i64;
    let pct = d as f64 / sa as f64 * 100.0;
    let want = if pct.abs() < 0.5 { format!("{d:+} (<1 %)") } else { format!("{d:+} ({pct:+.0} %)") };
    // The sent figure comes first in its cell ("sent / acked").
    h.get_by_label_contains(&format!("{want} / "));
    // Percentages differ in points, not percent.
    assert!(h.query_by_label_contains(" pp").is_some(), "the loss row's difference is in points");
}

#[test]
fn one_lane_alone_has_no_difference_column() {
    let mut h = replay_window(vec![lossy_recording(SEED, Strategy::Glenn, 10.0, 2.0)], Tab::Summary);
    h.run_steps(6);
    assert!(h.query_by_label("B - A").is_none());
}
