//! Fit accuracy over seeds: links with known settings (Gilbert-Elliott bursty loss at two
//! settings, a rate cap), each run as a Glenn session over several seeds, exported as pcapng
//! captures, and fitted back (`ackscope fit`'s code: `capture::records::load`, `fit::fit`). The
//! settings sit between the values a grid would try (p 0.37 %, r 6.3 %...), so nothing is fitted
//! by landing on a grid point.
//!
//! Prints, per link and parameter, the true value, the fitted values' mean and standard deviation
//! over the seeds and directions, the worst error, and the KS distances of the check (delay
//! distribution and burst lengths against the model's own seeds). `tests/app/fit.rs`
//! (`fit_accuracy_short_form`) runs one seed of the first link with tolerances from this spread.
//!
//! Run: `cargo run --release --example fit_accuracy [-- SEEDS [SECONDS [NAME]]]` (default 5
//! seeds of 120 s each; NAME keeps the links whose name contains it).
//!
//! **Fit speed**: `cargo run --release --example fit_accuracy -- --speed [SECONDS [PPS]]` runs
//! one Glenn session (default 600 s at 250 packets/s each way over the GE bursty link with
//! jitter), exports it, and times reading the capture's records and fitting them with 10 check
//! seeds, as `ackscope fit` does, printing packets per second for each step.

use std::time::Instant;

use ackscope::capture::{records, write_capture};
use ackscope::fit::{self, DirFit};
use ackscope::session::{run_lane, Session};
use ackscope_protocol::{BurstLoss, Dir, LinkConfig, Scenario, SimTime, Strategy};

/// One known link: its name, how it is set, the Glenn send rate it is run at.
struct Known {
    name: &'static str,
    link: LinkConfig,
    send_rate_pps: f64,
}

fn links() -> Vec<Known> {
    vec![
        Known {
            name: "GE bursty, jitter 12 ms",
            link: LinkConfig {
                latency_ms: 45.0,
                jitter_ms: 12.0,
                loss_percent: 0.7,
                burst: BurstLoss { p_percent: 0.37, r_percent: 6.3, loss_in_bad_percent: 83.0 },
                ..LinkConfig::default()
            },
            send_rate_pps: 120.0,
        },
        Known {
            name: "GE bursty, no jitter",
            link: LinkConfig {
                latency_ms: 80.0,
                loss_percent: 0.3,
                burst: BurstLoss { p_percent: 0.61, r_percent: 9.3, loss_in_bad_percent: 57.0 },
                ..LinkConfig::default()
            },
            send_rate_pps: 120.0,
        },
        Known {
            name: "rate cap 93 kbps",
            link: LinkConfig {
                latency_ms: 35.0,
                loss_percent: 1.3,
                bandwidth_kbps: 93.0,
                queue_bytes: 12_000,
                ..LinkConfig::default()
            },
            send_rate_pps: 250.0,
        },
    ]
}

/// The parameters compared: name, the true value, the fitted one.
fn params(k: &LinkConfig, f: &DirFit) -> Vec<(&'static str, f64, f64)> {
    let l = &f.link;
    let mut v = vec![("latency_ms", k.latency_ms, l.latency_ms), ("jitter_ms", k.jitter_ms, l.jitter_ms)];
    v.push(("loss_percent", k.loss_percent, l.loss_percent));
    if k.burst.p_percent > 0.0 {
        v.push(("burst.p_percent", k.burst.p_percent, l.burst.p_percent));
        v.push(("burst.r_percent", k.burst.r_percent, l.burst.r_percent));
        v.push(("burst.loss_in_bad_percent", k.burst.loss_in_bad_percent, l.burst.loss_in_bad_percent));
    }
    v.push(("reorder_percent", k.reorder_percent, l.reorder_percent));
    if k.bandwidth_kbps > 0.0 {
        v.push(("bandwidth_kbps", k.bandwidth_kbps, l.bandwidth_kbps));
        v.push(("queue_bytes", f64::from(k.queue_bytes), f64::from(l.queue_bytes)));
    }
    v
}

/// The fit of `known` run with `seed` for `secs`: both directions.
fn fit_once(known: &Known, seed: u64, secs: f64) -> Vec<DirFit> {
    let mut s = Scenario { strategy: Strategy::Glenn, seed, send_rate_pps: known.send_rate_pps, ..Scenario::default() };
    for d in Dir::BOTH {
        *s.link.get_mut(d) = known.link;
    }
    let until = SimTime::from_secs_f64(secs);
    let (_, events, actions) = run_lane(&s, &[], until).expect("run");
    let session = Session { events, actions, duration_us: until.0, ..Session::scenario_only(s) };
    let path = std::env::temp_dir().join(format!("ackscope-fit-accuracy-{}-{seed}.pcapng", std::process::id()));
    write_capture(&session, std::fs::File::create(&path).expect("create")).expect("export");
    let recs = records::load(&path).expect("records");
    std::fs::remove_file(&path).ok();
    fit::fit(&recs, fit::CHECK_SEEDS).dirs.into_iter().flatten().collect()
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (m, (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)).sqrt())
}

/// Times `ackscope fit`'s two steps (records, fit) on one large exported capture.
fn speed(secs: f64, pps: f64) {
    let known = &links()[0];
    let mut s = Scenario { strategy: Strategy::Glenn, seed: 1, send_rate_pps: pps, ..Scenario::default() };
    for d in Dir::BOTH {
        *s.link.get_mut(d) = known.link;
    }
    let until = SimTime::from_secs_f64(secs);
    let (_, events, actions) = run_lane(&s, &[], until).expect("run");
    let session = Session { events, actions, duration_us: until.0, ..Session::scenario_only(s) };
    let path = std::env::temp_dir().join(format!("ackscope-fit-speed-{}.pcapng", std::process::id()));
    write_capture(&session, std::fs::File::create(&path).expect("create")).expect("export");
    let mib = std::fs::metadata(&path).map_or(0.0, |m| m.len() as f64 / (1 << 20) as f64);
    let t = Instant::now();
    let recs = records::load(&path).expect("records");
    let read_s = t.elapsed().as_secs_f64();
    std::fs::remove_file(&path).ok();
    let packets = recs.info.packets as f64;
    let sends: usize = Dir::BOTH.iter().map(|d| recs.trace.dir(*d).len()).sum();
    let t = Instant::now();
    let fit = fit::fit(&recs, fit::CHECK_SEEDS);
    let fit_s = t.elapsed().as_secs_f64();
    println!(
        "{} ({pps} pps each way, {secs} s): capture {mib:.1} MiB, {packets} packets, {sends} datagrams sent",
        known.name
    );
    println!("  records: {read_s:.2} s ({:.0} packets/s)", packets / read_s);
    println!(
        "  fit, both directions, {} check seeds: {fit_s:.2} s ({:.0} datagrams/s)",
        fit::CHECK_SEEDS,
        sends as f64 / fit_s
    );
    println!("  total: {:.2} s; fitted {} directions", read_s + fit_s, fit.dirs.iter().flatten().count());
}

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().is_some_and(|a| a == "--speed") {
        args.next();
        let secs: f64 = args.next().map_or(600.0, |a| a.parse().expect("SECONDS"));
        let pps: f64 = args.next().map_or(250.0, |a| a.parse().expect("PPS"));
        return speed(secs, pps);
    }
    let seeds: u64 = args.next().map_or(5, |a| a.parse().expect("SEEDS"));
    let secs: f64 = args.next().map_or(120.0, |a| a.parse().expect("SECONDS"));
    let only = args.next().unwrap_or_default();
    let t = Instant::now();
    for known in links().into_iter().filter(|k| k.name.contains(only.as_str())) {
        let fits: Vec<DirFit> = (1..=seeds).flat_map(|seed| fit_once(&known, seed, secs)).collect();
        println!(
            "\n{} ({} pps, {secs} s, seeds 1-{seeds}, both directions: {} fits)",
            known.name,
            known.send_rate_pps,
            fits.len()
        );
        println!("  {:27} {:>9} {:>9} {:>8} {:>10}", "parameter", "true", "fit mean", "fit sd", "worst err");
        let names: Vec<_> = params(&known.link, &fits[0]).into_iter().map(|p| (p.0, p.1)).collect();
        for (i, (name, truth)) in names.into_iter().enumerate() {
            let got: Vec<f64> = fits.iter().map(|f| params(&known.link, f)[i].2).collect();
            let (m, sd) = mean_sd(&got);
            let worst = got.iter().map(|g| (g - truth).abs()).fold(0.0, f64::max);
            println!("  {name:27} {truth:9.2} {m:9.2} {sd:8.2} {worst:10.2}");
        }
        // The statistical limit: the likelihood's own standard deviation of each burst
        // parameter at these captures (mean over the fits), and the capture length at which
        // three of them fit in 1 point (the sd falls as one over the root of the length).
        let sds: Vec<[f64; 4]> = fits.iter().filter_map(|f| f.loss.sd_percent).collect();
        if known.link.burst.p_percent > 0.0 && !sds.is_empty() {
            let names = ["burst.p_percent", "burst.r_percent", "burst.loss_in_bad_percent", "loss_percent"];
            for (i, name) in names.iter().enumerate() {
                // A value fitted on its bound (sd 0: no curvature to read) is left out.
                let read: Vec<f64> = sds.iter().map(|s| s[i]).filter(|v| *v > 0.0).collect();
                let sd = read.iter().sum::<f64>() / read.len().max(1) as f64;
                println!(
                    "  likelihood sd of {name}: {sd:.3} ({} of {} fits); 3 sd within 1 point needs {:.0} s",
                    read.len(),
                    fits.len(),
                    secs * (3.0 * sd).powi(2)
                );
            }
        }
        let delay_ks: Vec<f64> = fits.iter().map(|f| mean_sd(&f.check.delay_ks).0).collect();
        let burst_ks: Vec<f64> = fits.iter().map(|f| mean_sd(&f.check.burst_ks).0).collect();
        let model_ks: Vec<f64> = fits.iter().map(|f| f.check.delay_ks_model).collect();
        println!(
            "  KS distance, capture to model: delay {:.3} (two seeds of the model: {:.3}), burst lengths {:.3}",
            mean_sd(&delay_ks).0,
            mean_sd(&model_ks).0,
            mean_sd(&burst_ks).0
        );
    }
    println!("\n{:.1} s", t.elapsed().as_secs_f64());
}
