//! Strict input everywhere: a typo, a value out of its range, NaN, an edited recording or an
//! unknown script field stops the command before it runs, with one line naming the file, the
//! setting and what is valid; no value makes a command panic.

use std::path::{Path, PathBuf};
use std::process::Output;

fn ackscope(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ackscope")).args(args).output().unwrap()
}

/// The one line a refused command prints (and that it was refused, without a panic).
fn refused(args: &[&str]) -> String {
    let out = ackscope(args);
    let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?} should be refused: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    err
}

fn file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-strict-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_typo_in_a_scenario_is_refused_with_its_place_and_the_nearest_name() {
    let path = file(
        "typo.ron",
        "(\n    format_version: 2,\n    app_version: \"hand\",\n    scenario: (\n        link: (\n            a_to_b: (\n            loss_precent: 50,\n            ),\n        ),\n    ),\n)\n",
    );
    let err = refused(&["run", s(&path), "--seconds", "1"]);
    assert!(err.contains(s(&path)), "the file is not named: {err}");
    assert!(
        err.ends_with("unknown field `loss_precent` in link.a_to_b at line 7, column 13: did you mean `loss_percent`?"),
        "{err}"
    );
}

#[test]
fn nan_infinite_and_out_of_range_values_are_refused_naming_file_name_and_range() {
    let nan =
        file("nan.ron", "(format_version: 2, app_version: \"hand\", scenario: (workload: (snapshot_rate_hz: NaN)))");
    let err = refused(&["run", s(&nan), "--seconds", "1"]);
    assert!(err.contains(s(&nan)) && err.contains("'workload.snapshot_rate_hz'"), "{err}");
    assert!(err.contains("finite number from 0 to"), "{err}");
    let inf =
        file("inf.ron", "(format_version: 2, app_version: \"hand\", scenario: (link: (b_to_a: (latency_ms: inf))))");
    let err = refused(&["summary", s(&inf)]);
    assert!(err.contains("'link.b_to_a.latency_ms'") && err.contains("from 0 to 1000 ms"), "{err}");
    let big = file("big.ron", "(format_version: 2, app_version: \"hand\", scenario: (send_rate_pps: 1e9))");
    let err = refused(&["run", s(&big)]);
    assert!(err.contains("'send_rate_pps'") && err.contains("from 1 to 1000"), "{err}");
}

#[test]
fn set_values_that_used_to_panic_or_allocate_without_bound_are_refused() {
    for (set, name) in [
        ("ack.received_packets_buffer_size=0", "'ack.received_packets_buffer_size'"),
        ("ack.sent_packets_buffer_size=40000", "'ack.sent_packets_buffer_size'"),
        ("send_rate_pps=1e9", "'send_rate_pps'"),
        ("glenn.send_queue_size=32768", "'glenn.send_queue_size'"),
        ("workload.snapshot_rate_hz=NaN", "'workload.snapshot_rate_hz'"),
    ] {
        for cmd in ["run", "peer"] {
            let mut args = vec![cmd, "--set", set];
            if cmd == "peer" {
                args.extend(["--bind", "127.0.0.1:0", "--connect", "127.0.0.1:9", "--seconds", "1"]);
            } else {
                args.extend(["--seconds", "1"]);
            }
            let err = refused(&args);
            assert!(err.contains(name) && err.contains(" to "), "{cmd} --set {set}: {err}");
        }
    }
}

#[test]
fn a_recording_without_a_valid_checksum_is_refused_unless_no_verify() {
    let rec = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/recorded-acks.ron");
    let text = std::fs::read_to_string(&rec).unwrap();
    let cut: String = text.lines().filter(|l| !l.trim_start().starts_with("checksum")).collect::<Vec<_>>().join("\n");
    assert!(cut.len() < text.len(), "the shipped recording has no checksum line");
    let path = file("cut.ron", &cut);
    let err = refused(&["summary", s(&path)]);
    assert!(err.contains("no checksum") && err.contains("--no-verify"), "{err}");
    let edited_text = text.replacen("latency_ms:50.0", "latency_ms:51.0", 1);
    assert_ne!(edited_text, text, "nothing edited");
    let edited = file("edited.ron", &edited_text);
    let err = refused(&["summary", s(&edited)]);
    assert!(err.contains("checksum mismatch") && err.contains("--no-verify"), "{err}");
    for p in [&path, &edited] {
        let out = ackscope(&["summary", s(p), "--no-verify", "--json"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn scenarios_without_implicit_some_load_and_script_actions_run() {
    // No `#![enable(implicit_some)]`: an optional value is written bare.
    let path = file(
        "plain.ron",
        "(\n    format_version: 2,\n    app_version: \"hand\",\n    scenario: (\n        a: (tick_phase_ms: 4.0),\n        script: [\n            (at_s: 1, action: burst),\n            (at_s: 2, action: send_chunk(kib: 256)),\n            (at_s: 3, action: set(name: \"link.loss_percent\", value: 20)),\n        ],\n    ),\n)\n",
    );
    let out = ackscope(&["run", s(&path), "--seconds", "4", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let path = file(
        "unknown-step.ron",
        "(format_version: 2, app_version: \"hand\", scenario: (script: [(at_s: 1, acton: burst)]))",
    );
    let err = refused(&["run", s(&path), "--seconds", "1"]);
    assert!(err.contains("acton") && err.contains("did you mean `action`"), "{err}");
    let path = file(
        "unknown-action.ron",
        "(format_version: 2, app_version: \"hand\", scenario: (script: [(at_s: 1, action: brust)]))",
    );
    let err = refused(&["run", s(&path), "--seconds", "1"]);
    assert!(err.contains("did you mean `burst`"), "{err}");
}
