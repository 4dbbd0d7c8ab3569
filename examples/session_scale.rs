//! Session scale figures for README: a 10-minute session at 60 packets/s each way with reliable
//! messages, saved and loaded; prints event count, bytes per event and save/load times.
//!
//! Run: `cargo run --release --example session_scale`

use std::time::Instant;

use ackscope::{report, session};
use ackscope_protocol::Scenario;

fn main() -> anyhow::Result<()> {
    let mut s = Scenario::default();
    // Busier than the default workload so reliable traffic dominates: 30 events/s each way.
    s.workload.reliable_rate_hz = 100.0;
    s.link.a_to_b.loss_percent = 10.0;
    s.link.b_to_a.loss_percent = 10.0;
    let t = Instant::now();
    let run = report::run(&s, 600.0);
    let sim_s = t.elapsed().as_secs_f64();
    let n = run.session.events.len();
    let path = std::env::temp_dir().join(format!("ackscope-scale-{}.ron", std::process::id()));
    let t = Instant::now();
    let bytes = session::save(&run.session, &path)?;
    let save_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let back = session::load(&path)?;
    let load_s = t.elapsed().as_secs_f64();
    assert_eq!(back.events.len(), n);
    let _ = std::fs::remove_file(&path);
    println!("10-minute session, 60 pps each way, glenn, 100 reliable + 20 snapshot messages/s each way, 10 % loss");
    println!("  simulated in {sim_s:.2} s; {n} events");
    println!("  file {bytes} bytes = {:.1} bytes/event", bytes as f64 / n as f64);
    println!("  save {save_s:.2} s, load {load_s:.2} s");
    Ok(())
}
