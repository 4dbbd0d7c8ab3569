//! Prints Glenn reliable-message figures for several resend delays on the identical link and
//! workload: `cargo run -p ackscope-protocol --release --example glenn_redundancy [seconds]`.
//!
//! README quotes [`report`]`(60.0)`; a test checks the quote against it.

use std::fmt::Write;

use ackscope_protocol::*;

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(60.0);
    print!("{}", report(secs));
}

/// The table for runs of `secs` virtual seconds.
pub fn report(secs: f64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>11} {:>6} {:>9} {:>4} {:>7} {:>7} {:>7} {:>7} {:>9} {:>9} {:>8} {:>8}",
        "resend",
        "sent",
        "delivered",
        "lost",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "bytes/msg",
        "sends/msg",
        "spurious",
        "max pkt"
    );
    let mut modes: Vec<(String, f64, bool)> =
        [0.0, 50.0, 100.0, 250.0].iter().map(|d| (format!("{d} ms"), *d, false)).collect();
    modes.push(("rtt x 1.25".into(), 100.0, true));
    for (name, delay, rtt) in modes {
        let mut s = Scenario { seed: 7, strategy: Strategy::Glenn, ..Scenario::default() };
        s.glenn.resend_delay_ms = delay;
        s.glenn.rtt_resend = rtt;
        for d in Dir::BOTH {
            let l = s.link.get_mut(d);
            l.latency_ms = 50.0;
            l.jitter_ms = 10.0;
            l.loss_percent = 5.0;
            l.burst = BurstLoss { p_percent: 1.0, r_percent: 25.0, loss_in_bad_percent: 100.0 };
        }
        let mut sim = Simulation::new(s);
        sim.run_for_secs(secs);
        let d = drain(&mut sim, 30.0);
        let events: Vec<Event> = sim.drain_events().collect();
        let m = reliable_metrics(&events);
        let l = m.latency_ms;
        let _ = writeln!(
            out,
            "{name:>11} {:>6} {:>9} {:>4} {:>7.1} {:>7.1} {:>7.1} {:>7.1} {:>9.1} {:>9.2} {:>8} {:>8}{}",
            m.sent,
            m.delivered,
            m.lost,
            l.p50,
            l.p95,
            l.p99,
            l.max,
            m.wire_bytes_per_delivered,
            m.sends_per_message,
            m.spurious_resends,
            m.max_packet_bytes,
            if d.drained { "" } else { "  (not drained)" }
        );
    }
    out
}
