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
