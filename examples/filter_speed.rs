//! Display filter evaluation speed over a recording of about a million events: each filter run
//! over every row of its kind from scratch, as `export --filter` and a new filter in the window
//! do (the window spreads it over frames, `filter::budget::FRAME_BUDGET` of each).
//!
//! Run: `cargo run --release --example filter_speed` (`-- SECONDS` to simulate another length;
//! 600 s gives about 1M events).

use std::time::Instant;

use ackscope::filter::{matching_rows, PacketFacts, SharedFilter, Source};
use ackscope::model::anomaly::Anomaly;
use ackscope::model::index::MessageRecord;
use ackscope::model::{Recording, Shown};
use ackscope::report;
use ackscope::session::Progress;
use ackscope_protocol::Scenario;

/// Runs `text` over every row of kind `R` `reps` times; prints the best time and the rates.
fn measure<R: Source>(rec: &Recording, events: usize, text: &str) {
    let f = SharedFilter::<R>::compile(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let rows = R::len(rec.primary());
    let (mut best, mut hits) = (f64::MAX, 0);
    for _ in 0..5 {
        let t = Instant::now();
        hits = matching_rows(Shown::from(rec), &f).len();
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{:<10} {:<58} {:>9} rows {:>8} match  {:>8.2} ms  {:>7.1} M rows/s  {:>7.1} M events/s",
        R::KIND.plural(),
        format!("`{text}`"),
        rows,
        hits,
        best * 1000.0,
        rows as f64 / best / 1e6,
        events as f64 / best / 1e6
    );
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(600.0);
    let mut s = Scenario::default();
    s.workload.reliable_rate_hz = 100.0;
    s.link.a_to_b.loss_percent = 10.0;
    s.link.b_to_a.loss_percent = 10.0;
    let t = Instant::now();
    let run = report::run(&s, secs);
    let rec = Recording::from_session(run.session, &Progress::new()).expect("index the run");
    let events = rec.primary().store.events().len();
    println!(
        "recording: {events} events ({} strategy, 10 % loss each way, {secs} s simulated), built in {:.1} s",
        s.strategy.name(),
        t.elapsed().as_secs_f64()
    );
    println!("best of 5 runs each; events/s = the recording's events over the time to filter every row of the kind");
    for text in [
        "dropped",
        "seq > 900 && dropped",
        "fate == dropped_loss || (dir == b_to_a && delay_ms > 60)",
        "seq in 100..2000 && bytes >= 50 && !acked",
        "ack in {5, 100..200} || nakked",
    ] {
        measure::<PacketFacts>(&rec, events, text);
    }
    for text in ["resend.cause in {delay, redundant} && !spurious", "latency_ms > 150 || msg.sends >= 3"] {
        measure::<MessageRecord>(&rec, events, text);
    }
    for text in ["kind == drop && side == a", "kind == stall && wait_ms > 200"] {
        measure::<Anomaly>(&rec, events, text);
    }
}
