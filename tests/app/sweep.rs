//! `ackscope sweep` and its library: rows equal separate runs of the same points, the frontier
//! matches its definition, and bad specs are refused with one line.

use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

use ackscope::report::{self, sweep};
use ackscope_protocol::{Scenario, Strategy};
use proptest::prelude::*;

fn ackscope(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ackscope")).args(args).output().expect("run ackscope")
}

fn spec(seconds: f64, vary: &[&str], strategies: &[Strategy], seeds: u32) -> sweep::SweepSpec {
    let base = Scenario { seed: 11, ..Scenario::default() };
    let vary = vary.iter().map(|v| sweep::parse_vary(v).unwrap()).collect();
    sweep::SweepSpec { base, changes: Vec::new(), seconds, vary, strategies: strategies.to_vec(), seeds }
}

#[test]
fn each_row_is_the_figures_of_separate_runs_of_its_point() {
    let spec = spec(
        8.0,
        &["glenn.resend_delay_ms=0,100", "hybrid.redundant_copies=0:1:1", "link.loss_percent=10"],
        &[Strategy::Glenn, Strategy::Ue4, Strategy::Hybrid],
        2,
    );
    let points = sweep::check(&spec).unwrap();
    // glenn x 2 delays, ue4 once, hybrid x 2 copies: a strategy's own knobs vary only it.
    assert_eq!(points.len(), 5);
    let seen = Mutex::new(Vec::new());
    let rows = sweep::run(&spec, 2, &AtomicBool::new(false), &|i, r| seen.lock().unwrap().push((i, r.clone())))
        .unwrap()
        .expect("not cancelled");
    let mut seen = seen.into_inner().unwrap();
    seen.sort_by_key(|(i, _)| *i);
    assert_eq!(seen.len(), rows.len(), "one callback per point");
    for ((i, early), (point, row)) in seen.iter().zip(points.iter().zip(&rows)) {
        assert_eq!(early.runs, row.runs, "point {i}: the callback saw the final figures");
        assert_eq!(row.strategy, point.strategy.name());
        assert_eq!(row.values.len(), point.values.len());
        assert_eq!(row.runs.len(), 2);
        for (k, fig) in row.runs.iter().enumerate() {
            let scenario = sweep::scenario_of(&spec.base, point, k as u32).unwrap();
            assert_eq!(fig.seed, 11 + k as u64, "seed k of every point is base + k");
            let m = report::run(&scenario, spec.seconds).report.sections.reliable.expect("message strategy");
            let want = (m.latency_ms.p50, m.latency_ms.p95, m.latency_ms.p99, m.wire_bytes_per_delivered);
            assert_eq!((fig.p50_ms, fig.p95_ms, fig.p99_ms, fig.bytes_per_message), want, "{point:?} seed {k}");
            assert_eq!(
                (fig.sends_per_message, fig.spurious_resends, fig.lost),
                (m.sends_per_message, m.spurious_resends, m.lost)
            );
        }
        let mean = (row.runs[0].p99_ms + row.runs[1].p99_ms) / 2.0;
        assert!(
            (row.p99_ms - mean).abs() < 1e-9 && row.p99_ms_spread == (row.runs[0].p99_ms - row.runs[1].p99_ms).abs()
        );
    }
    let flags = sweep::pareto_flags(&rows);
    assert_eq!(rows.iter().map(|r| r.pareto).collect::<Vec<_>>(), flags);
    assert!(flags.iter().any(|f| *f));
}

#[test]
fn the_command_prints_a_row_per_point_matching_run() {
    let base = ["--seconds", "6", "--seed", "5", "--set", "link.loss_percent=8"];
    let mut args = vec!["sweep", "--json", "--seeds", "1", "--strategies", "hybrid,glenn"];
    args.extend(base);
    args.extend(["--vary", "hybrid.rtt_factor=1.5,3", "--vary", "glenn.resend_delay_ms=50"]);
    let out = ackscope(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for k in ["strategy", "values", "seeds", "p50_ms", "p95_ms", "p99_ms", "p99_ms_spread", "bytes_per_message"] {
        assert!(rows.iter().all(|r| r.get(k).is_some()), "{k} missing");
    }
    for k in ["sends_per_message", "spurious_resends", "lost", "pareto"] {
        assert!(rows.iter().all(|r| r.get(k).is_some()), "{k} missing");
    }
    let row = &rows[1];
    assert_eq!((row["strategy"].as_str(), row["values"]["hybrid.rtt_factor"].as_f64()), (Some("hybrid"), Some(3.0)));
    let mut run = vec!["run", "--json", "--set", "strategy=hybrid", "--set", "hybrid.rtt_factor=3"];
    run.extend(base);
    let out = ackscope(&run);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(row["p99_ms"], r["reliable"]["latency_ms"]["p99"]);
    assert_eq!(row["bytes_per_message"], r["reliable"]["wire_bytes_per_delivered"]);
    assert_eq!(row["spurious_resends"].as_f64(), r["reliable"]["spurious_resends"].as_f64());
}

#[test]
fn bad_specs_are_refused_with_one_line_and_status_2() {
    let cases: [(&[&str], &str); 8] = [
        (&["--vary", "glenn.nope=1,2"], "unknown parameter 'glenn.nope'"),
        (&["--vary", "glenn.resend_delay_ms=200:100:10"], "empty range"),
        (&["--vary", "glenn.resend_delay_ms=0:100:0"], "step must be greater than 0"),
        (&["--vary", "link.loss_percent=1,101"], "out of range"),
        (&["--vary", "link.loss_percent=0:100:0.2", "--vary", "glenn.resend_delay_ms=0:990:10"], "runs"),
        (&["--strategies", "chunks"], "carries no messages"),
        (&["--strategies", "tcp"], "unknown strategy 'tcp'"),
        (&["--vary", "link.loss_percent=1", "--vary", "link.loss_percent=2"], "twice"),
    ];
    for (extra, want) in cases {
        let mut args = vec!["sweep", "--seconds", "1"];
        args.extend(extra);
        let out = ackscope(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{extra:?}: {err}");
        assert!(err.starts_with("ackscope: ") && err.contains(want), "{extra:?}: {err}");
        assert!(out.stdout.is_empty(), "{extra:?}");
    }
}

#[test]
fn bad_vary_specs_name_the_spec_and_the_valid_range_from_the_table() {
    let cases = [
        ("glenn.nope=1,2", "--vary 'glenn.nope=1,2': unknown parameter 'glenn.nope'"),
        (
            "glenn.resend_delay_ms=200:100:10",
            "--vary 'glenn.resend_delay_ms=200:100:10': empty range, END 100 is below START 200 (glenn.resend_delay_ms takes 0 - 1000 ms)",
        ),
        ("link.loss_percent=1,101", "--vary 'link.loss_percent=1,101': 'link.loss_percent' = 101 is out of range: valid from 0 to 100 %"),
        ("hybrid.rtt_factor=0.1:1:0.1", "is out of range: valid from 0.5 to 10"),
        ("hybrid.redundant_copies=0:20:1", "valid from 0 to 16 copies"),
    ];
    for (spec, want) in cases {
        let e = sweep::parse_vary(spec).unwrap_err();
        assert!(e.contains(want), "{spec}: {e}");
    }
}

#[test]
fn a_cancelled_sweep_stops_and_says_so() {
    let spec = spec(5.0, &["glenn.resend_delay_ms=0:100:10"], &[Strategy::Glenn], 1);
    let cancel = AtomicBool::new(false);
    let got = sweep::run(&spec, 1, &cancel, &|i, _| {
        if i >= 1 {
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    });
    assert!(got.unwrap().is_none());
}

fn row(p99_ms: f64, bytes_per_message: f64, lost: u64) -> sweep::SweepRow {
    sweep::SweepRow {
        strategy: "glenn".into(),
        values: Default::default(),
        seeds: 1,
        p50_ms: 0.0,
        p95_ms: 0.0,
        p99_ms,
        p99_ms_spread: 0.0,
        bytes_per_message,
        bytes_per_message_spread: 0.0,
        sends_per_message: 1.0,
        spurious_resends: 0.0,
        lost,
        pareto: false,
        runs: Vec::new(),
        clients: 1,
        worst_client_p99_ms: None,
    }
}

proptest! {
    /// The flags are the definition, brute force: no other point that lost nothing is at least as
    /// good on both figures and better on one; a point that lost messages is never on it.
    #[test]
    fn pareto_flags_match_the_brute_force_definition(
        points in prop::collection::vec((0u8..12, 0u8..12, prop::bool::weighted(0.1)), 0..40)
    ) {
        let rows: Vec<_> = points.iter().map(|&(p, b, lost)| row(p as f64 * 10.0, 60.0 + b as f64, lost as u64)).collect();
        let flags = sweep::pareto_flags(&rows);
        for (i, r) in rows.iter().enumerate() {
            let dominated = rows.iter().any(|o| {
                o.lost == 0
                    && o.p99_ms <= r.p99_ms
                    && o.bytes_per_message <= r.bytes_per_message
                    && (o.p99_ms < r.p99_ms || o.bytes_per_message < r.bytes_per_message)
            });
            prop_assert_eq!(flags[i], r.lost == 0 && !dominated, "row {} of {:?}", i, points);
        }
    }
}
