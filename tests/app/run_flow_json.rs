//! `ackscope run --json` reports flow-control switches under `flow.switches`, and one-way
//! transfers report the sender's RTT and loss estimates undiluted by the receiver.

use std::process::Command;

fn run_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope")).arg("run").args(args).output().expect("run ackscope");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn flow_switches_appear_with_their_exact_field_names() {
    // 150 ms each way (RTT 300 ms > 250): both sides switch to bad once.
    let v = run_json(&[
        "--seconds",
        "5",
        "--set",
        "flow.enabled=true",
        "--set",
        "link.latency_ms=150",
        "--set",
        "link.loss_percent=0",
        "--json",
    ]);
    let switches = v["flow"]["switches"].as_array().expect("flow.switches");
    assert_eq!(switches.len(), 2, "{switches:?}");
    let mut sides = Vec::new();
    for s in switches {
        let mut keys: Vec<&str> = s.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["mode", "penalty_s", "side", "time_s"]);
        assert_eq!(s["mode"], "bad");
        assert_eq!(s["penalty_s"], 1.0);
        let t = s["time_s"].as_f64().unwrap();
        assert!((0.3..1.0).contains(&t), "the first 300 ms samples arrive after 0.3 s: {t}");
        sides.push(s["side"].as_str().unwrap().to_string());
    }
    sides.sort();
    assert_eq!(sides, ["a", "b"]);
    // Without flow control there is no `flow` section at all.
    let v = run_json(&["--seconds", "2", "--json"]);
    assert!(v.get("flow").is_none(), "{v}");
}

#[test]
fn a_chunk_run_reports_the_senders_rtt_not_half_of_it() {
    let v = run_json(&["--seconds", "10", "--set", "strategy=chunks", "--set", "workload.chunk_kib=256", "--json"]);
    let rtt = v["estimates"]["rtt_ms"].as_f64().unwrap();
    assert!((95.0..=160.0).contains(&rtt), "100 ms of link RTT plus the ack wait: {rtt}");
    let loss = v["estimates"]["loss_percent"].as_f64().unwrap();
    assert!(loss > 0.0, "the sender judges its slices at 5 % loss: {loss}");
}
