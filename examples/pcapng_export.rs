//! Export speed of `ackscope export --pcapng`: a recorded session re-run with its endpoints
//! tapped and written as pcapng (to memory, so the disk is not measured), in packets per second
//! (sent and delivered packets written), beside the re-run alone.
//!
//! Run: `cargo run --release --example pcapng_export [-- --secs 120 --strategy glenn --pps 60]`

use std::time::Instant;

use ackscope::capture::write_capture;
use ackscope::session::{run_lane, Session};
use ackscope_protocol::{Dir, Scenario, SimTime, Strategy};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let secs: f64 = arg("--secs").map_or(120.0, |s| s.parse().expect("--secs SECONDS"));
    let pps: f64 = arg("--pps").map_or(60.0, |s| s.parse().expect("--pps PACKETS_PER_SECOND"));
    let strategy = arg("--strategy").map_or(Strategy::Glenn, |n| {
        Strategy::all().find(|s| s.name() == n).unwrap_or_else(|| panic!("unknown strategy {n}"))
    });

    let mut s = Scenario { strategy, send_rate_pps: pps, seed: 3, ..Scenario::default() };
    for d in Dir::BOTH {
        s.link.get_mut(d).loss_percent = 5.0;
        s.link.get_mut(d).jitter_ms = 10.0;
    }
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
