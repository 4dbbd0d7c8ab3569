//! What the bytes pane costs: the first click on a packet of a recorded session re-runs the
//! lane to its end with its endpoints tapped (`capture::reencode`); every later click is a
//! lookup. Prints both, the packets kept and their bytes.
//!
//! Run: `cargo run --release --example reencode_bench [-- --secs 600 --strategy glenn --pps 60]`

use std::time::Instant;

use ackscope::capture::reencode::Reencoder;
use ackscope::model::Recording;
use ackscope::session::run_lane;
use ackscope_protocol::{EventKind, SimTime};

#[path = "support/lane_args.rs"]
mod lane_args;
use lane_args::LaneArgs;

fn main() {
    let args = LaneArgs::from_env(600.0);
    let s = args.scenario();
    let LaneArgs { secs, pps, strategy } = args;
    let (_, events, actions) = run_lane(&s, &[], SimTime::from_secs_f64(secs)).expect("a run");
    let mut rec = Recording::new(s);
    rec.actions = actions;
    rec.ingest(events);
    let uids: Vec<u64> = rec
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::PacketSent { uid, .. } => Some(uid),
            _ => None,
        })
        .collect();
    let mut r = Reencoder::default();
    let t = Instant::now();
    let last = r.bytes_of(&rec, 1, *uids.last().expect("packets")).expect("re-encoded").len();
    let first_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let mut bytes = 0;
    for &uid in &uids {
        bytes += r.bytes_of(&rec, 1, uid).expect("re-encoded").len();
    }
    let lookup_us = t.elapsed().as_secs_f64() * 1e6 / uids.len() as f64;
    println!(
        "{} {secs} s at {pps} pps: {} events, {} packets ({bytes} bytes, the last {last})",
        strategy.name(),
        rec.len(),
        uids.len()
    );
    println!("first click (re-run to the end): {first_ms:.0} ms; every later click: {lookup_us:.2} us");
}
