//! `ackscope proxy` as a process: its JSON report, its session file, its refusals.

use std::process::Command;

use ackscope::session;
use ackscope_protocol::EventKind;

use super::*;

fn free_port() -> SocketAddr {
    UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

#[test]
fn the_proxy_command_reports_per_client_and_writes_a_session() {
    let server = Server::echo("127.0.0.1:0");
    let listen = free_port();
    let dir = std::env::temp_dir().join(format!("ackscope-proxy-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("proxied.ron");
    let set = ["--set", "link.latency_ms=10", "--set", "seed=5", "--seconds", "3", "--json", "--decode", "none"];
    let child = spawn_proxy(listen, server.addr, &[&set[..], &["--out", out.to_str().unwrap()]].concat());
    // The proxy is up once a datagram comes back; then 100 more.
    let client = Client::to(listen);
    let probes = client.send_until_answered(&payload(0));
    for i in 1..=100 {
        client.send(&payload(i));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while client.count() < 101 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let j: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(j["listen"], listen.to_string());
    assert_eq!(j["decode"], "none");
    assert_eq!((j["clients_seen"].as_u64(), j["seed"].as_u64()), (Some(1), Some(5)));
    let c = &j["clients"][0];
    assert_eq!(c["client"], 1);
    let up = &c["client_to_server"];
    let sent = (probes + 100) as u64;
    // Probes sent before the proxy was listening never reached it.
    assert!(up["datagrams"].as_u64().unwrap() >= 101 && up["datagrams"].as_u64().unwrap() <= sent, "{j}");
    assert_eq!(up["dropped_percent"].as_f64(), Some(0.0));
    let p50 = up["added_delay_p50_ms"].as_f64().unwrap();
    // Never early; late only by what the machine's scheduler adds (once 17.6 ms under load: the
    // accuracy figure is examples/proxy_bench's, not a test's).
    assert!((10.0..40.0).contains(&p50), "{j}");
    assert_eq!(j["server_to_client"]["datagrams"], up["datagrams"]);

    // The session opens like any recording: every datagram's link events, the scenario it ran.
    let s = session::load(&out).unwrap();
    assert_eq!(s.scenario.seed, 5);
    assert_eq!(s.scenario.link.a_to_b.latency_ms, 10.0);
    // Its client is named by its address, as the window names a proxy's clients.
    let names: Vec<_> = s.clients.iter().map(|c| (c.id, c.name.clone())).collect();
    assert_eq!(names, vec![(1, client.local_addr().to_string())]);
    let sends = s.events.iter().filter(|e| matches!(e.kind, EventKind::LinkSent { .. })).count() as u64;
    assert_eq!(sends, up["datagrams"].as_u64().unwrap() * 2);
    assert_eq!(j["session_bytes"].as_u64(), Some(std::fs::metadata(&out).unwrap().len()));
    // Opened in the window, the lane runs no scenario, but the controls show the link that
    // conditioned it (not the window's own scenario's 50 ms).
    let lanes = ackscope::model::Recording::lanes_from_session(s, &session::Progress::new()).unwrap();
    assert!(lanes[0].scenario.is_none());
    let shown = lanes[0].shown_settings_at(0.0).expect("a proxy's lane shows its link");
    assert_eq!((shown.seed, shown.link.a_to_b.latency_ms), (5, 10.0));
    let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().filter(|e| e.path() != out).collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn refused(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope")).arg("proxy").args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

#[test]
fn bad_proxy_arguments_are_refused_with_the_reason() {
    let base = ["--listen", "127.0.0.1:0", "--forward", "127.0.0.1:9"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> { [&base[..], extra].concat() };
    assert!(refused(&with(&["--decode", "quic"])).contains("unknown decoder 'quic'"));
    assert!(refused(&with(&["--set", "link.loss_percent=300"])).contains("link.loss_percent"));
    assert!(refused(&with(&["--seconds", "0"])).contains("--seconds"));
    assert!(refused(&with(&["--expire-s", "0"])).contains("--expire-s"));
    assert!(refused(&["--listen", "nowhere", "--forward", "127.0.0.1:9", "--seconds", "1"]).contains("--listen"));
    let busy = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().to_string();
    assert!(refused(&["--listen", &port, "--forward", "127.0.0.1:9", "--seconds", "1"]).contains("cannot listen"));
}

/// `proxy --pcapng` writes a capture that `summary` opens, with as many datagrams each way as the
/// proxy's own report counts (the client's datagrams lose 30 % on the way, so the two directions
/// differ and a swap would show). The server's port is above the client's and no `--port` is
/// given: the import takes the server from the address the proxy's capture gave it, where the
/// lower port once swapped the directions.
#[test]
fn the_proxys_capture_opens_with_summary_and_counts_what_the_proxy_counted() {
    let listen = free_port();
    let client = Client::to(listen);
    let client_port = client.local_addr().port();
    // Above the client's port and the ephemeral range, so no other socket takes it meanwhile.
    let server_port = (client_port.max(61_000) + 1..=u16::MAX)
        .find(|p| UdpSocket::bind(("127.0.0.1", *p)).is_ok())
        .expect("a free port above the client's");
    let server = Server::echo(&format!("127.0.0.1:{server_port}"));
    let dir = std::env::temp_dir().join(format!("ackscope-proxy-pcapng-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let capture = dir.join("relayed.pcapng");
    let set = ["--set", "link.b_to_a.loss_percent=30", "--set", "seed=3", "--seconds", "3", "--json"];
    let child = spawn_proxy(
        listen,
        server.addr,
        &[&set[..], &["--decode", "none", "--pcapng", capture.to_str().unwrap()]].concat(),
    );
    assert!(crate::common::wait_until_udp_bound(listen, Duration::from_secs(10)), "the proxy took its port");
    for i in 0..200 {
        client.send(&payload(i));
        if i % 20 == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let j: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap();
    let (up, down) = (&j["clients"][0]["client_to_server"], &j["clients"][0]["server_to_client"]);
    let (sent_up, sent_down) = (up["datagrams"].as_u64().unwrap(), down["datagrams"].as_u64().unwrap());
    assert!((150..=200).contains(&sent_up), "{j}");
    assert!(sent_down < sent_up * 9 / 10, "30 % of the client's datagrams dropped: {j}");

    let out = Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(["summary", capture.to_str().unwrap(), "--json", "--decode", "none"])
        .output()
        .unwrap();
    assert!(out.status.success(), "summary: {}", String::from_utf8_lossy(&out.stderr));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &s["clients"][0];
    assert_eq!(s["clients"].as_array().unwrap().len(), 1, "{s}");
    assert_eq!(c["server"], format!("10.0.0.1:{server_port}"), "{s}");
    assert_eq!(c["client_end"], format!("10.1.0.1:{client_port}"), "{s}");
    assert_eq!(c["server_by"], "ackscope", "{s}");
    assert_eq!(c["client_to_server"]["packets"], up["datagrams"], "client to server: {s}");
    assert_eq!(c["server_to_client"]["packets"], down["datagrams"], "server to client: {s}");
    let _ = std::fs::remove_dir_all(&dir);
}
