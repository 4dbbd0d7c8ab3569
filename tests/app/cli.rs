//! The headless command line, run as a user scripts it.

use std::process::Command;

fn ackscope(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ackscope")).args(args).output().expect("run ackscope")
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = ackscope(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.trim().lines().count(), 1, "--json prints one object on one line");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn run_json_has_the_documented_fields() {
    // Lock-step ticks from 0: the tick at exactly 20 s is counted.
    let args =
        ["run", "--seconds", "20", "--seed", "7", "--json", "--set", "strategy=acks", "--set", "tick_phase=lockstep"];
    let v = json(&args);
    assert_eq!(v["seed"], 7);
    assert_eq!(v["strategy"], "acks");
    assert!(v.get("reliable").is_none(), "no messages, no reliable section");
    assert_eq!(v["simulated_seconds"].as_f64(), Some(20.0));
    assert!(v["wall_seconds"].as_f64().unwrap() >= 0.0);
    for k in ["sent", "link_dropped", "delivered", "acked", "false_acks", "duplicate_acks"] {
        assert!(v["packets"][k].is_u64(), "packets.{k} missing in {v}");
    }
    for k in ["rtt_ms", "true_rtt_ms", "loss_percent", "true_loss_percent"] {
        assert!(v["estimates"][k].is_f64(), "estimates.{k} missing in {v}");
    }
    assert_eq!(v["packets"]["false_acks"], 0);
    // 60 pps each way for 20 s.
    assert_eq!(v["packets"]["sent"].as_u64(), Some(2 * (20 * 60 + 1)));
}

#[test]
fn set_overrides_reach_the_link() {
    let v = json(&[
        "run",
        "--seconds",
        "60",
        "--json",
        "--set",
        "link.loss_percent=0",
        "--set",
        "link.a_to_b.latency_ms=80",
        "--set",
        "link.b_to_a.latency_ms=20",
        "--set",
        "send_rate_pps=100",
        "--set",
        "strategy=acks",
        "--set",
        "link.duplicate_percent=0",
        "--set",
        "link.bandwidth_kbps=0",
        "--set",
        "link.jitter_ms=0",
        "--set",
        "tick_phase=lockstep",
    ]);
    assert_eq!(v["packets"]["link_dropped"], 0);
    assert_eq!(v["estimates"]["true_rtt_ms"].as_f64(), Some(100.0));
    assert_eq!(v["packets"]["sent"].as_u64(), Some(2 * (60 * 100 + 1)));
    let lossy = json(&["run", "--seconds", "60", "--json", "--set", "link.loss_percent=30"]);
    let t = lossy["estimates"]["true_loss_percent"].as_f64().unwrap();
    assert!((25.0..35.0).contains(&t), "{t}");
}

#[test]
fn same_seed_same_result() {
    let a = json(&["run", "--seconds", "30", "--seed", "3", "--json"]);
    let b = json(&["run", "--seconds", "30", "--seed", "3", "--json"]);
    assert_eq!(a["packets"], b["packets"]);
    assert_eq!(a["estimates"], b["estimates"]);
}

#[test]
fn bad_input_exits_non_zero_with_one_line() {
    for args in [
        &["run", "--set", "link.nope=1"][..],
        &["run", "--set", "send_rate_pps=fast"],
        &["run", "--seconds", "-3"],
        &["run", "--seconds", "abc"],
        &["run", "--bogus"],
        &["run", "--set", "novalue"],
    ] {
        let out = ackscope(args);
        assert!(!out.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("ackscope: "), "{err}");
    }
}

#[test]
fn glenn_is_the_default_and_reports_reliable_messages() {
    let v = json(&["run", "--seconds", "30", "--json", "--set", "link.loss_percent=20"]);
    assert_eq!(v["strategy"], "glenn");
    let r = &v["reliable"];
    for k in ["sent", "delivered", "lost", "duplicated", "out_of_order", "corrupted", "spurious_resends"] {
        assert!(r[k].is_u64(), "reliable.{k} missing in {r}");
    }
    for k in ["p50", "p95", "p99", "max"] {
        assert!(r["latency_ms"][k].is_f64(), "reliable.latency_ms.{k} missing in {r}");
    }
    assert!(r["wire_bytes_per_delivered"].is_f64() && r["sends_per_message"].is_f64());
    // The run drains: at 20 % loss every reliable message still arrives, exactly once, in order.
    assert!(r["sent"].as_u64().unwrap() > 200, "{r}");
    assert_eq!(r["delivered"], r["sent"]);
    assert_eq!(r["lost"], 0);
    assert_eq!(r["duplicated"], 0);
    assert_eq!(r["out_of_order"], 0);
    assert!(r["sends_per_message"].as_f64().unwrap() > 1.0, "20 % loss forces resends: {r}");
    let slow = json(&[
        "run",
        "--seconds",
        "30",
        "--json",
        "--set",
        "link.loss_percent=20",
        "--set",
        "glenn.resend_delay_ms=400",
    ]);
    assert!(
        slow["reliable"]["latency_ms"]["p99"].as_f64() > r["latency_ms"]["p99"].as_f64(),
        "a longer resend delay must raise tail latency: {} vs {}",
        slow["reliable"]["latency_ms"],
        r["latency_ms"]
    );
}

#[test]
fn compare_runs_every_variant_on_the_same_trace() {
    let out = ackscope(&["compare", "--seconds", "20", "--loss", "5", "--latency", "50", "--json", "--set", "seed=4"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let strategies: Vec<&str> = rows.iter().map(|r| r["strategy"].as_str().unwrap()).collect();
    assert_eq!(strategies, ["glenn", "glenn", "glenn", "ue4"]);
    for r in rows {
        assert_eq!(r["seed"], 4);
        assert_eq!(r["loss_percent"].as_f64(), Some(5.0));
        assert_eq!(r["reliable"]["lost"], 0, "{r}");
        assert_eq!(r["packets"]["false_acks"], 0);
    }
    // Every variant carried the same workload.
    let sent: Vec<u64> = rows.iter().map(|r| r["reliable"]["sent"].as_u64().unwrap()).collect();
    assert!(sent.windows(2).all(|w| w[0] == w[1]), "{sent:?}");
    // Redundancy on every packet costs sends; UE4 reports its own section.
    assert!(rows[2]["reliable"]["sends_per_message"].as_f64() > rows[0]["reliable"]["sends_per_message"].as_f64());
    assert!(rows[3]["ue4"]["naks_received"].as_u64().unwrap() > 0);
    let table = ackscope(&["compare", "--seconds", "10", "--loss", "1", "--latency", "25"]);
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains("| 25 ms | 1 % | ue4 nak |"), "{text}");
}

/// Runs ackscope expecting bad input: exit status 2 and one `ackscope: ` line, returned.
fn one_line_failure(args: &[&str]) -> String {
    let out = ackscope(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("ackscope: "), "{err}");
    err
}

#[test]
fn unknown_ab_strategy_fails_listing_the_valid_ones() {
    let err = one_line_failure(&["--ab", "nonsense"]);
    assert!(err.contains("nonsense"), "{err}");
    for s in ackscope_protocol::Strategy::all() {
        assert!(err.contains(s.name()), "error lacks {}: {err}", s.name());
    }
}

#[test]
fn unknown_tab_fails_listing_the_valid_ones() {
    let err = one_line_failure(&["--tab", "nonsense"]);
    for tab in ["overview", "messages", "slices", "packets", "summary"] {
        assert!(err.contains(tab), "error lacks {tab}: {err}");
    }
}

#[test]
fn help_lists_every_strategy_from_the_registry() {
    for args in [&["--help"][..], &["-h"], &["run", "--help"], &["run", "-h"]] {
        let out = ackscope(args);
        assert!(out.status.success(), "{args:?}");
        let help = String::from_utf8(out.stdout).unwrap();
        for s in ackscope_protocol::Strategy::all() {
            assert!(help.contains(s.name()), "{args:?} lacks {}: {help}", s.name());
        }
    }
    // compare names the strategy of each variant it runs, with its registry label.
    let help = String::from_utf8(ackscope(&["compare", "--help"]).stdout).unwrap();
    for v in ackscope::report::compare::Variant::ALL {
        let row = ackscope_protocol::registry::info(v.strategy());
        assert!(help.contains(&format!("{} ({})", row.strategy.name(), row.label)), "compare lacks {v:?}: {help}");
    }
}

/// The `"estimates":{...}` object of a `--json` line, as printed.
fn estimates_text(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text.find("\"estimates\":").expect("an estimates object");
    let end = start + text[start..].find('}').expect("its end");
    text[start..=end].to_string()
}

#[test]
fn the_summary_of_a_recorded_run_prints_the_runs_estimates_bit_for_bit() {
    let dir = std::env::temp_dir().join(format!("ackscope-cli-summary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.ron");
    let file = path.to_str().unwrap();
    for (strategy, extra) in
        [("glenn", "link.jitter_ms=10"), ("ue4", "flow.enabled=true"), ("acks", "link.burst.p_percent=2")]
    {
        let strategy = format!("strategy={strategy}");
        let run_args = ["run", "--seconds", "20", "--seed", "1", "--json", "--set", &strategy, "--set", extra];
        let run = ackscope(&[&run_args[..], &["--set", "link.loss_percent=10", "--out", file, "--force"]].concat());
        let summary = ackscope(&["summary", file, "--json"]);
        assert_eq!(estimates_text(&run), estimates_text(&summary), "{strategy} {extra}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_closed_stdout_ends_the_output_quietly_without_a_panic() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(["run", "--seconds", "5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ackscope");
    // The reader goes away before the report is written (`ackscope run | head -0`).
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.status.success(), "{:?}: {err}", out.status);
}

#[test]
fn acks_are_matched_once_the_sent_buffer_holds_half_the_sequence_space() {
    // At 1000 packets/s a long loss margin holds every send for a minute: the sent buffer grows
    // to 32,768 slots, which used to refuse every sequence below 32,768 (their acks ignored:
    // 134,130 of 227,753 delivered packets acked, 59 sends per message). Every documented
    // margin, both strategies that run on the packet-ack endpoint.
    for strategy in ["glenn", "acks"] {
        for margin in ["0", "100", "7000", "30000", "60000"] {
            let v = json(&[
                "run",
                "--seconds",
                "120",
                "--json",
                "--set",
                &format!("strategy={strategy}"),
                "--set",
                "send_rate_pps=1000",
                "--set",
                &format!("ack.stats.loss_margin_ms={margin}"),
            ]);
            let p = &v["packets"];
            let (delivered, acked) = (p["delivered"].as_f64().unwrap(), p["acked"].as_f64().unwrap());
            assert!(acked >= 0.99 * delivered, "{strategy} margin {margin}: {acked} of {delivered} acked");
            assert_eq!(p["false_acks"], 0, "{strategy} margin {margin}");
            if strategy == "glenn" {
                let sends = v["reliable"]["sends_per_message"].as_f64().unwrap();
                assert!(sends < 2.0, "margin {margin}: {sends} sends per message");
            }
        }
    }
}

#[test]
fn run_out_refuses_an_existing_file_unless_forced() {
    let dir = std::env::temp_dir().join(format!("ackscope-cli-force-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("kept.ron");
    std::fs::write(&path, "a recording the user keeps").unwrap();
    let file = path.to_str().unwrap();
    let msg = one_line_failure(&["run", "--seconds", "1", "--out", file]);
    assert!(msg.contains("kept.ron") && msg.contains("--force"), "{msg}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "a recording the user keeps");
    let forced = ackscope(&["run", "--seconds", "1", "--out", file, "--force"]);
    assert!(forced.status.success(), "{}", String::from_utf8_lossy(&forced.stderr));
    assert!(ackscope::session::load(&path).is_ok_and(|s| s.has_events()));
    let _ = std::fs::remove_dir_all(&dir);
}
