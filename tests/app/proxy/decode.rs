//! `ackscope proxy --decode`: the passive decoder reads the traffic it relays, and what it derives
//! (acks the sender got, its RTT) agrees with what the endpoints themselves report; the figures
//! go into the JSON report and, as `Stats` events of the client, into the v3 recording.

use std::process::Command;

use ackscope::model::Origin;
use ackscope::session;
use ackscope_protocol::{EventKind, Side};

use super::*;

fn free_port() -> SocketAddr {
    UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

fn json_of(child: std::process::Child, what: &str) -> serde_json::Value {
    json_of_output(child.wait_with_output().unwrap(), what)
}

#[test]
fn raw_peers_through_the_proxy_are_decoded_as_they_report_themselves() {
    let (server, client, upstream, listen) = (free_port(), free_port(), free_port(), free_port());
    let dir = std::env::temp_dir().join(format!("ackscope-proxy-decode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("decoded.ron");
    // --seconds 8 is a cap: the proxy is stopped once both peers have finished (4 s).
    let up = upstream.to_string();
    let args = ["--upstream", &up, "--decode", "reliable", "--seconds", "8", "--json", "--out", out.to_str().unwrap()];
    let set = ["--set", "link.latency_ms=40", "--set", "link.loss_percent=10", "--set", "seed=9"];
    let proxy = spawn_proxy(listen, server, &[&args[..], &set[..]].concat());
    // The proxy is up once its listening port is taken.
    assert!(crate::common::wait_until_udp_bound(listen, Duration::from_secs(10)), "the proxy took its port");
    let peer_args = ["--raw", "--json", "--seconds", "4", "--set", "link.latency_ms=0", "--set", "link.loss_percent=0"];
    let a = spawn_peer("a", server, upstream, &peer_args);
    let b = spawn_peer("b", client, listen, &peer_args);
    let (ja, jb) = (json_of(a, "peer a"), json_of(b, "peer b"));
    let j = json_of_output(stop_proxy(proxy), "proxy");

    assert_eq!(
        (j["decode"].as_str(), j["decode_format"].as_str(), j["decoded"].as_bool()),
        (Some("reliable"), Some("reliable"), Some(true)),
        "{j}"
    );
    let c = &j["clients"][0]["decoded"];
    // Peer b is the client: what it sends is client_to_server; a is the server.
    for (name, peer, d) in [("b", &jb, &c["client_to_server"]), ("a", &ja, &c["server_to_client"])] {
        let acked = peer["packets"]["acked"].as_u64().unwrap();
        let decoded_acked = d["packets_acked"].as_u64().unwrap();
        // The peer stops a moment before or after the proxy saw its last acks.
        assert!(
            acked.abs_diff(decoded_acked) <= acked / 50 + 10,
            "{name}: peer acked {acked}, decoded {decoded_acked}: {d}"
        );
        let rtt = peer["estimates"]["rtt_ms"].as_f64().unwrap();
        let decoded_rtt = d["rtt_ms"].as_f64().unwrap();
        assert!((decoded_rtt - rtt).abs() <= rtt * 0.1, "{name}: peer RTT {rtt}, decoded {decoded_rtt}: {d}");
        assert!((75.0..130.0).contains(&decoded_rtt), "{name}: {decoded_rtt}");
        // The link dropped about 10 %: the decoder's estimate sees it, the truth is beside it.
        let loss = d["loss_percent"].as_f64().unwrap();
        assert!((3.0..20.0).contains(&loss), "{name}: decoded loss {loss}: {d}");
    }
    assert_eq!(c["malformed"], 0);

    // The recording: version 3, origin proxy, the link's truth and the decoded figures per client.
    let s = session::load(&out).unwrap();
    assert_eq!(s.format_version, 3);
    assert!(matches!(&s.origin, Some(Origin::Proxy { listen: l, .. }) if *l == listen.to_string()), "{:?}", s.origin);
    let stats: Vec<_> = s
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Stats { side, stats } => Some((e.client, *side, stats.rtt_ms)),
            _ => None,
        })
        .collect();
    assert!(stats.iter().any(|&(k, side, rtt)| k == 1 && side == Side::B && rtt > 70.0), "{stats:?}");
    assert!(stats.iter().any(|&(k, side, _)| k == 1 && side == Side::A));
    assert!(s.events.windows(2).all(|w| w[0].time <= w[1].time), "events in time order");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_header_description_is_read_and_its_errors_name_the_file_and_field() {
    let dir = std::env::temp_dir().join(format!("ackscope-proxy-header-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.ron");
    std::fs::write(&bad, "(sequence: (offset: \"x\"))").unwrap();
    let run = |arg: String| {
        Command::new(env!("CARGO_BIN_EXE_ackscope"))
            .args(["proxy", "--listen", "127.0.0.1:0", "--forward", "127.0.0.1:9", "--seconds", "1", "--decode", &arg])
            .output()
            .unwrap()
    };
    let o = run(format!("header:{}", bad.display()));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&bad.display().to_string()) && err.contains("field"), "{err}");
    // A valid description: the proxy runs and reports it.
    let good = dir.join("game.ron");
    std::fs::write(&good, "(name: \"game\", sequence: (offset: 0, bytes: 2), ack: (offset: 2, bytes: 2), ack_bits: Some((offset: 4, bytes: 4)))").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(["proxy", "--listen", "127.0.0.1:0", "--forward", "127.0.0.1:9", "--seconds", "0.2", "--json"])
        .arg("--decode")
        .arg(format!("header:{}", good.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["decode"], format!("header:{}", good.display()));
    let o = run(format!("header:{}", dir.join("missing.ron").display()));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("missing.ron") && err.contains("cannot read"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
