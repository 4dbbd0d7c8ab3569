//! `ackscope peer` processes over loopback: two peers against each other, a raw peer against a
//! hand-written reliable.io sender, and bad input. Every test is bounded in time and binds
//! 127.0.0.1 ports chosen by the OS.

use std::net::{SocketAddr, UdpSocket};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use ackscope_protocol::{PacketHeader, Scenario};

fn any_port() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// A free loopback port for a child process: bound by the OS, then released.
fn free_port() -> SocketAddr {
    UdpSocket::bind(any_port()).unwrap().local_addr().unwrap()
}

fn spawn_peer(args: &[String]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .arg("peer")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ackscope peer")
}

fn json_of(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "peer failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(text.trim().lines().count(), 1, "--json prints one line: {text}");
    serde_json::from_str(&text).unwrap()
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn two_peer_processes_complete_a_short_run() {
    let (pa, pb) = (free_port().to_string(), free_port().to_string());
    let common = ["--seconds", "3", "--json", "--set", "link.loss_percent=10", "--set", "seed=4"];
    let mut a = s(&["--side", "a", "--bind", &pa, "--connect", &pb]);
    a.extend(s(&common));
    let mut b = s(&["--side", "b", "--bind", &pb, "--connect", &pa]);
    b.extend(s(&common));
    let ca = spawn_peer(&a);
    let cb = spawn_peer(&b);
    let (oa, ob) = (ca.wait_with_output().unwrap(), cb.wait_with_output().unwrap());
    let (ja, jb) = (json_of(&oa), json_of(&ob));
    for (name, j) in [("a", &ja), ("b", &jb)] {
        assert_eq!(j["side"], name);
        assert_eq!(j["strategy"], Scenario::default().strategy.name(), "the default strategy");
        assert_eq!(j["seed"], 4);
        assert_eq!(j["simulated_seconds"].as_f64(), Some(3.0));
        assert!(j["drain_seconds"].is_null() && j["events"].as_u64().unwrap() > 0, "{name}: {j}");
        let p = &j["packets"];
        let sent = p["sent"].as_u64().unwrap();
        let acked = p["acked"].as_u64().unwrap();
        // 60 pps for 3 s.
        assert!((170..=190).contains(&sent), "{name}: {j}");
        assert!(acked > 0 && acked < sent, "{name}: {j}");
        assert!(p["false_acks"].is_null(), "{name}: only the other process knows: {j}");
        assert_eq!(p["duplicate_acks"], 0, "{name}: {j}");
        assert_eq!(p["malformed"], 0, "{name}: {j}");
        assert!(j["estimates"]["true_loss_percent"].is_null() && j["estimates"]["true_rtt_ms"].is_null());
        assert!(j["estimates"]["rtt_ms"].as_f64().unwrap() > 0.0, "{name}: {j}");
        for k in ["link_dropped", "delivered", "duplicated", "received"] {
            assert!(p[k].is_u64(), "{name}: packets.{k} in {j}");
        }
        // The sections `run` has for the strategy (glenn: messages), bandwidth and the RTT floor.
        let e = &j["estimates"];
        let (rtt_min, rtt) = (e["rtt_min_ms"].as_f64().unwrap(), e["rtt_ms"].as_f64().unwrap());
        assert!(rtt_min > 0.0 && rtt_min <= rtt + 1e-9, "{name}: {j}");
        let bw = &j["bandwidth"];
        for k in ["sent", "received", "acked"] {
            let (mean, p95) =
                (bw[format!("{k}_kbps_mean")].as_f64().unwrap(), bw[format!("{k}_kbps_p95")].as_f64().unwrap());
            assert!(mean > 0.0 && p95 >= mean * 0.5, "{name}: bandwidth.{k} in {j}");
        }
        assert!(j["reliable"]["sent"].as_u64().unwrap() > 0, "{name}: its own reliable messages: {j}");
        assert!(j["reliable"]["delivered"].is_null(), "{name}: only the partner's process knows: {j}");
        assert!(j["snapshots"]["queued"].as_u64().unwrap() > 0 && j["snapshots"]["received"].is_null(), "{j}");
        assert!(j["snapshots"].is_object() && j["ue4"].is_null() && j["chunks"].is_null(), "{name}: {j}");
        assert!(j["datagrams_received"].as_u64().unwrap() > 0, "{name}: {j}");
    }
    // What one process sent and the other's link received are the same datagrams, give or take
    // the start-up gap and the last few in flight.
    for (snd, rcv) in [(&ja, &jb), (&jb, &ja)] {
        let sent = snd["packets"]["sent"].as_u64().unwrap();
        let arrived = rcv["packets"]["delivered"].as_u64().unwrap() + rcv["packets"]["link_dropped"].as_u64().unwrap();
        assert!(arrived <= sent && arrived + 20 >= sent, "sent {sent}, arrived {arrived}");
        // Acked sends were delivered by the other process's link.
        assert!(snd["packets"]["acked"].as_u64().unwrap() <= rcv["packets"]["delivered"].as_u64().unwrap());
    }
}

/// Decodes a packet from the raw peer and notes its sequence as received.
fn note(bytes: &[u8], from_peer: &mut std::collections::HashSet<u16>, latest: &mut Option<u16>) -> PacketHeader {
    let (h, _) = PacketHeader::decode(bytes).expect("the raw peer sends reliable.io headers");
    from_peer.insert(h.sequence);
    if latest.is_none_or(|l| ackscope_protocol::sequence_greater_than(h.sequence, l)) {
        *latest = Some(h.sequence);
    }
    h
}

/// Builds a canonical reliable.io header acking `received` (most recent first).
fn header_acking(sequence: u16, latest: Option<u16>, received: &std::collections::HashSet<u16>) -> PacketHeader {
    let Some(ack) = latest else { return PacketHeader { sequence, ack: u16::MAX, ack_bits: 0 } };
    let mut ack_bits = 0u32;
    for i in 0..32u16 {
        if received.contains(&ack.wrapping_sub(i)) {
            ack_bits |= 1 << i;
        }
    }
    PacketHeader { sequence, ack, ack_bits }
}

#[test]
fn raw_peer_acks_a_foreign_reliable_io_sender_and_counts_garbage() {
    let me = UdpSocket::bind(any_port()).unwrap();
    let my_addr = me.local_addr().unwrap().to_string();
    let peer_addr = free_port();
    let child = spawn_peer(&s(&[
        "--raw",
        "--bind",
        &peer_addr.to_string(),
        "--connect",
        &my_addr,
        "--seconds",
        "2.5",
        "--json",
        "--set",
        "link.loss_percent=0",
        "--set",
        "link.latency_ms=10",
    ]));
    me.connect(peer_addr).unwrap();
    me.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 2048];
    let mut from_peer = std::collections::HashSet::new();
    let mut latest: Option<u16> = None;
    // Start once the peer is up (it sends at time 0).
    let n = recv(&me, &mut buf).expect("the peer's first packet");
    note(&buf[..n], &mut from_peer, &mut latest);
    me.set_read_timeout(Some(Duration::from_millis(10))).unwrap();
    let garbage: [&[u8]; 3] = [&[], &[0x01, 0, 0, 0, 0], &[0xC0, 1, 2, 3, 4, 5]];
    let (mut valid_sent, mut garbage_sent) = (0u32, 0u32);
    let until = Instant::now() + Duration::from_millis(1000);
    while Instant::now() < until {
        let mut out = Vec::new();
        header_acking(valid_sent as u16, latest, &from_peer).encode(&mut out);
        out.extend_from_slice(b"opaque payload of a foreign implementation");
        me.send(&out).unwrap();
        valid_sent += 1;
        if valid_sent % 4 == 0 {
            me.send(garbage[garbage_sent as usize % garbage.len()]).unwrap();
            garbage_sent += 1;
        }
        if let Ok(n) = recv(&me, &mut buf) {
            note(&buf[..n], &mut from_peer, &mut latest);
        }
    }
    // The peer keeps sending until it ends; its latest header acks our last packet.
    let mut last_ack = None;
    me.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    while let Ok(n) = recv(&me, &mut buf) {
        last_ack = Some(note(&buf[..n], &mut from_peer, &mut latest).ack);
    }
    let j = json_of(&child.wait_with_output().unwrap());
    let p = &j["packets"];
    assert_eq!(p["malformed"].as_u64(), Some(garbage_sent as u64), "{j}");
    assert_eq!(p["received"].as_u64(), Some(valid_sent as u64), "{j}");
    assert_eq!(last_ack, Some((valid_sent - 1) as u16), "the raw peer acks what it received");
    let acked = p["acked"].as_u64().unwrap();
    assert!(acked > 20, "we acked its packets: {j}");
    assert!(acked <= from_peer.len() as u64, "it cannot believe more acked than we received: {j}");
}

/// `UdpSocket::recv`, retried when a signal interrupts it (EINTR: the test process gets signals
/// from the processes it and other tests spawn; an interrupted wait is not a timeout or an error).
fn recv(sock: &UdpSocket, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match sock.recv(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

fn peer_fails(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope")).arg("peer").args(args).output().unwrap();
    assert!(!out.status.success(), "{args:?} should fail");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line, got {err:?}");
    assert!(err.starts_with("ackscope: "), "{err}");
    err
}

#[test]
fn peer_refuses_bad_input_with_one_line() {
    let e = peer_fails(&["--bind", "nonsense", "--connect", "127.0.0.1:9"]);
    assert!(e.contains("bad address 'nonsense'"), "{e}");
    let e = peer_fails(&["--bind", "127.0.0.1:0", "--connect", "127.0.0.1"]);
    assert!(e.contains("bad address"), "{e}");
    let busy = UdpSocket::bind(any_port()).unwrap();
    let b = busy.local_addr().unwrap().to_string();
    let e = peer_fails(&["--bind", &b, "--connect", "127.0.0.1:9"]);
    assert!(e.contains(&format!("cannot bind {b}")), "{e}");
    let e = peer_fails(&["--raw", "--set", "strategy=chunks", "--bind", "127.0.0.1:0", "--connect", "127.0.0.1:9"]);
    assert!(e.contains("--raw"), "{e}");
    peer_fails(&["--seconds", "-1", "--bind", "127.0.0.1:0", "--connect", "127.0.0.1:9"]);
    peer_fails(&["--side", "c", "--bind", "127.0.0.1:0", "--connect", "127.0.0.1:9"]);
    peer_fails(&["--connect", "127.0.0.1:9"]);
    let help = Command::new(env!("CARGO_BIN_EXE_ackscope")).args(["peer", "--help"]).output().unwrap();
    assert!(help.status.success());
    let h = String::from_utf8(help.stdout).unwrap();
    for k in ["--bind", "--connect", "--raw", "--side", "--json", "--set", "null"] {
        assert!(h.contains(k), "help lacks {k}: {h}");
    }
}

/// Runs side a and side b against each other with `extra` arguments on both; returns their
/// outputs (a, b).
fn run_pair(extra_a: &[String], extra_b: &[String]) -> (Output, Output) {
    let (pa, pb) = (free_port().to_string(), free_port().to_string());
    let mut a = s(&["--side", "a", "--bind", &pa, "--connect", &pb]);
    a.extend_from_slice(extra_a);
    let mut b = s(&["--side", "b", "--bind", &pb, "--connect", &pa]);
    b.extend_from_slice(extra_b);
    let (ca, cb) = (spawn_peer(&a), spawn_peer(&b));
    (ca.wait_with_output().unwrap(), cb.wait_with_output().unwrap())
}

#[test]
fn without_link_settings_the_peers_link_is_transparent() {
    let args = s(&["--seconds", "1.5", "--json", "--set", "strategy=acks"]);
    let (oa, ob) = run_pair(&args, &args);
    for j in [json_of(&oa), json_of(&ob)] {
        let (p, e) = (&j["packets"], &j["estimates"]);
        assert_eq!(p["link_dropped"], 0, "no loss unless asked for: {j}");
        assert!(p["delivered"].as_u64().unwrap() > 50, "{j}");
        assert_eq!(e["incoming_link_delay_ms"].as_f64(), Some(0.0), "no delay unless asked for: {j}");
        assert!(e["rtt_min_ms"].as_f64().unwrap() < 40.0, "loopback plus a tick, not 100 ms: {j}");
    }
}

#[test]
fn a_peer_whose_partner_stays_silent_says_so_and_exits_non_zero() {
    let nobody = free_port().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(["peer", "--bind", "127.0.0.1:0", "--connect", &nobody, "--seconds", "1", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(&format!("nothing arrived from {nobody}")), "{err}");
    // The report is still printed, and says the same.
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["datagrams_received"], 0);
    assert!(j["estimates"]["rtt_ms"].is_null(), "{j}");
}

#[test]
fn joined_recordings_of_two_impaired_peers_give_the_whole_truth() {
    let dir = std::env::temp_dir().join(format!("ackscope-peer-join-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (fa, fb) = (dir.join("a.ron"), dir.join("b.ron"));
    let common = s(&[
        "--seconds",
        "4",
        "--json",
        "--set",
        "link.loss_percent=20",
        "--set",
        "link.latency_ms=30",
        "--set",
        "seed=7",
    ]);
    let mut a = common.clone();
    a.extend(s(&["--out", fa.to_str().unwrap()]));
    let mut b = common;
    b.extend(s(&["--out", fb.to_str().unwrap()]));
    let (oa, ob) = run_pair(&a, &b);
    let (ja, jb) = (json_of(&oa), json_of(&ob));
    assert!(ja["session_bytes"].as_u64().unwrap() > 0 && fa.exists() && fb.exists());
    // Given in either order, side b's file second.
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(["summary", fb.to_str().unwrap(), fa.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["a_file"].as_str(), fa.to_str(), "{j}");
    for (name, d, sender, receiver) in [("a_to_b", &j["a_to_b"], &ja, &jb), ("b_to_a", &j["b_to_a"], &jb, &ja)] {
        assert_eq!(d["false_acks"], 0, "{name}: {d}");
        assert_eq!(d["paired"], d["arrived"], "{name}: every datagram the link read is named: {d}");
        // The impairment's own count (the receiving process's report) is the truth.
        assert_eq!(d["link_dropped"], receiver["packets"]["link_dropped"], "{name}: {d}");
        assert_eq!(d["delivered"], receiver["packets"]["delivered"], "{name}: {d}");
        assert_eq!(d["sent"], sender["packets"]["sent"], "{name}: {d}");
        assert_eq!(d["acked"], sender["packets"]["acked"], "{name}: {d}");
        let loss = d["true_loss_percent"].as_f64().unwrap();
        let want = d["link_dropped"].as_f64().unwrap() * 100.0 / d["arrived"].as_f64().unwrap();
        assert!((loss - want).abs() < 1e-3 && (8.0..35.0).contains(&loss), "{name}: {d}");
    }
    assert_eq!(j["packets"]["false_acks"], 0, "{j}");
    // Every reliable message exactly once and in order; only the last ones in flight missing.
    let r = &j["reliable"];
    assert_eq!((r["duplicated"].as_u64(), r["out_of_order"].as_u64()), (Some(0), Some(0)), "{r}");
    let (sent, delivered) = (r["sent"].as_u64().unwrap(), r["delivered"].as_u64().unwrap());
    assert!(delivered > 0 && delivered <= sent && sent - delivered <= sent / 4, "{r}");
    // On one clock, a message takes at least the link's 30 ms one way.
    let p50 = r["latency_ms"]["p50"].as_f64().unwrap();
    assert!((29.0..400.0).contains(&p50), "latency {p50} ms: the clocks are joined: {r}");
    assert!(j["clock_offset_ms"].as_f64().unwrap().abs() < 10_000.0, "{j}");
    // A file of another kind is refused with a reason.
    let bad = Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(["summary", fa.to_str().unwrap(), fa.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("side"), "{bad:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_peer_takes_its_scenario_from_a_positional_file_as_run_does() {
    // A scenario file with its own strategy, seed and an impaired link: both peers run it (no --set).
    let dir = std::env::temp_dir().join(format!("ackscope-peer-scenario-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ue4-lossy.ron");
    std::fs::write(
        &file,
        "(format_version: 1, scenario: (seed: 11, strategy: ue4, link: (\
         a_to_b: (latency_ms: 30.0, loss_percent: 10.0), b_to_a: (latency_ms: 30.0, loss_percent: 10.0))))",
    )
    .unwrap();
    let args = s(&[file.to_str().unwrap(), "--seconds", "2", "--json"]);
    let (oa, ob) = run_pair(&args, &args);
    for j in [json_of(&oa), json_of(&ob)] {
        assert_eq!(j["strategy"], "ue4", "the file's strategy: {j}");
        assert_eq!(j["seed"], 11, "{j}");
        assert!(j["packets"]["link_dropped"].as_u64().unwrap() > 0, "the file's 10 % loss: {j}");
        let delay = j["estimates"]["incoming_link_delay_ms"].as_f64().unwrap();
        assert!((29.0..32.0).contains(&delay), "the file's 30 ms: {j}");
    }
    let e = peer_fails(&["/nonexistent/scenario.ron", "--bind", "127.0.0.1:0", "--connect", "127.0.0.1:9"]);
    assert!(e.contains("/nonexistent/scenario.ron"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
