//! An RTT figure with no sample is `null` in JSON and "no sample" in text, in every output that
//! prints one (issue 27): a sender that never heard an ack has no RTT, and `0.0` reads as a
//! perfect link. Each test makes a run where no ack can arrive (100 % loss, or a partner that
//! never answers) and reads every field whose name holds `rtt`.

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

fn ackscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ackscope")).args(args).output().expect("run ackscope")
}

fn ok(args: &[&str]) -> String {
    let out = ackscope(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Every (path, value) of `v` whose key names an RTT estimate: holds `rtt`, but not the count
/// of samples, and not a `true_` figure (the link's truth, not what an endpoint measured).
fn rtt_figures(v: &Value, path: &str, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{path}.{k}");
                if k.contains("rtt") && k != "rtt_samples" && !k.starts_with("true_") && !x.is_object() {
                    out.push((p.clone(), x.clone()));
                }
                rtt_figures(x, &p, out);
            }
        }
        Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| rtt_figures(x, &format!("{path}[{i}]"), out)),
        _ => {}
    }
}

/// Asserts `v` has at least `expected` RTT figures, every one null.
fn all_null(what: &str, v: &Value, expected: usize) {
    let mut figs = Vec::new();
    rtt_figures(v, "", &mut figs);
    println!("{what}: {figs:?}");
    assert!(figs.len() >= expected, "{what}: {} RTT figures, expected {expected}: {v}", figs.len());
    for (p, x) in &figs {
        assert!(x.is_null(), "{what}: {p} = {x}, not null (no sample): {v}");
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-rtt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A 2 s run of `strategy` where the link drops everything, recorded in `dir`: its JSON and file.
fn lost_run(dir: &Path, strategy: &str) -> (Value, PathBuf) {
    let out = dir.join(format!("{strategy}.ron"));
    let set = format!("strategy={strategy}");
    let text =
        ok(&["run", "--seconds", "2", "--json", "--set", "link.loss_percent=100", "--set", &set, "--out", s(&out)]);
    (serde_json::from_str(&text).unwrap(), out)
}

#[test]
fn run_summary_and_compare_print_no_rtt_without_a_sample() {
    let dir = temp_dir("sessions");
    let (run, glenn) = lost_run(&dir, "glenn");
    all_null("run --json", &run, 1);
    // Nothing delivered either way: the link's own RTT has no sample either (it printed 0.0, and
    // half an RTT with one direction lost).
    assert!(run["estimates"]["true_rtt_ms"].is_null(), "{run}");
    let (_, ue4) = lost_run(&dir, "ue4");
    let summary: Value = serde_json::from_str(&ok(&["summary", s(&glenn), "--json"])).unwrap();
    all_null("summary SESSION --json", &summary, 1);
    let text = ok(&["summary", s(&glenn)]);
    assert!(text.contains("RTT: estimated no sample, true no sample"), "{text}");
    let compare: Value = serde_json::from_str(&ok(&["compare", s(&glenn), s(&ue4), "--json"])).unwrap();
    all_null("compare A B --json", &compare, 2);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_capture_where_nothing_was_acked_has_no_rtt() {
    let dir = temp_dir("capture");
    let (_, glenn) = lost_run(&dir, "glenn");
    let pcap = dir.join("glenn.pcapng");
    ok(&["export", s(&glenn), "--pcapng", s(&pcap)]);
    let j: Value = serde_json::from_str(&ok(&["summary", s(&pcap), "--json"])).unwrap();
    // Both directions of the one client: rtt_ms, mean, min and max.
    all_null("summary CAPTURE --json", &j, 8);
    assert_eq!(j["clients"][0]["client_to_server"]["rtt_samples"], 0, "{j}");
    // Every datagram was dropped (the export's comments say so, though no copy was captured):
    // the resends are not spurious (they were all counted spurious, as if delivered).
    for dir in ["client_to_server", "server_to_client"] {
        let d = &j["clients"][0][dir];
        assert!(d["resends"].as_u64().unwrap() > 0, "{dir}: {d}");
        assert_eq!(d["spurious_resends"], 0, "{dir}: {d}");
    }
    let text = ok(&["summary", s(&pcap)]);
    assert_eq!(text.matches("RTT no sample").count(), 2, "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

fn free_port() -> SocketAddr {
    UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

#[test]
fn a_proxy_whose_server_never_answers_decodes_no_rtt_and_the_peer_has_none() {
    // The client's datagrams reach the server's address, where nothing answers; the link
    // towards the client drops everything besides. Neither side can take an RTT sample.
    let (server, listen, client) = (free_port(), free_port(), free_port());
    let proxy = Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(["proxy", "--listen", &listen.to_string(), "--forward", &server.to_string()])
        .args(["--decode", "reliable", "--seconds", "4", "--json", "--set", "link.a_to_b.loss_percent=100"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(crate::common::wait_until_udp_bound(listen, Duration::from_secs(10)), "the proxy took its port");
    let peer = ackscope(&[
        "peer",
        "--raw",
        "--side",
        "b",
        "--json",
        "--seconds",
        "2",
        "--bind",
        &client.to_string(),
        "--connect",
        &listen.to_string(),
    ]);
    assert_eq!(peer.status.code(), Some(1), "nothing heard: {peer:?}");
    let p: Value = serde_json::from_slice(&peer.stdout).unwrap();
    all_null("peer --json", &p, 2);
    let out = proxy.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let decoded = &j["clients"][0]["decoded"];
    assert!(decoded["client_to_server"]["datagrams"].as_u64().unwrap() > 0, "the client sent: {j}");
    // Per direction rtt_ms, mean, min, max and last: the figures of issue 27's report.
    all_null("proxy --json decoded", decoded, 10);
    all_null("proxy --json", &j, 10);
}
