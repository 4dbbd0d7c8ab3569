//! Export speed of `ackscope export --pcapng`: a recorded session re-run with its endpoints
//! tapped and written as pcapng (to memory, so the disk is not measured), in packets per second
//! (sent and delivered packets written), beside the re-run alone.
//!
//! Run: `cargo run --release --example pcapng_export [-- --secs 120 --strategy glenn --pps 60]`

use std::time::Instant;

use ackscope::capture::write_capture;
use ackscope::session::{run_lane, Session};
use ackscope_protocol::SimTime;

#[path = "support/lane_args.rs"]
mod lane_args;
use lane_args::LaneArgs;

fn main() {
    let args = LaneArgs::from_env(120.0);
    let s = args.scenario();
    let LaneArgs { secs, pps, strategy } = args;
    let until = SimTime::from_secs_f64(secs);
    let t = Instant::now();
    let (_, events, actions) = run_lane(&s, &[], until).expect("a run");
    let run_s = t.elapsed().as_secs_f64();
    let session = Session { events, actions, duration_us: until.0, ..Session::scenario_only(s) };

    let t = Instant::now();
    let mut out = Vec::new();
    let summary = write_capture(&session, &mut out).expect("an export");
    let export_s = t.elapsed().as_secs_f64();
    let packets = (summary.sent + summary.delivered) as f64;
    println!("{} {secs} s at {pps} pps: {} events, run alone {run_s:.2} s", strategy.name(), session.events.len());
    println!(
        "export: {} packets ({} sent, {} delivered), {:.1} MB in {export_s:.2} s: {:.0} packets/s, {:.1} MB/s",
        packets,
        summary.sent,
        summary.delivered,
        out.len() as f64 / 1e6,
        packets / export_s,
        out.len() as f64 / 1e6 / export_s
    );
}
