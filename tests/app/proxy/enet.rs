//! The real ENet library pair (`tests/app/enet_peer.c` against `-lenet`) through the proxy at 20 %
//! loss and 50 ms each way, decoded by the proxy's decoder (`auto`): what it derives equals what
//! ENet itself reports, as with the plain test relay (`decode_enet`).

use ackscope::proxy::decode::ProxyDecoder;
use ackscope_protocol::decode::{DecodeChoice, FormatKind};
use ackscope_protocol::SimTime;

use super::enet_trail::EnetTrail;
use super::*;
use crate::decode_enet::{build_enet_peer, finish, finish_connected, spawn, with_connected_pair};

#[test]
fn the_enet_library_pair_through_the_proxy_is_decoded_as_enet_reports_itself() {
    // Seed rounds 24-26, 27-29, 30-32: see `until_rtt_agrees` for why the RTT may be judged again.
    crate::common::until_rtt_agrees(3, |n| enet_pair_through_the_proxy([24, 25, 26].map(|s| s + 3 * n as u64)));
}

/// One ENet exchange through the proxy on the first seed of `seeds` whose handshake got through;
/// every exact comparison asserts, the RTT's is `Err`.
fn enet_pair_through_the_proxy(seeds: [u64; 3]) -> Result<(), String> {
    let exe = build_enet_peer();
    let (client, server, outcome, decoder, trail) = with_connected_pair(seeds, |seed| {
        let server_port = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let server_addr: SocketAddr = format!("127.0.0.1:{server_port}").parse().unwrap();
        let seed = format!("seed={seed}");
        let mut cfg = ProxyConfig::new(
            "127.0.0.1:0".parse().unwrap(),
            server_addr,
            scenario(&["link.latency_ms=50", "link.loss_percent=20", &seed]),
        );
        cfg.keep_bytes = true;
        let proxy = Proxy::start(cfg).unwrap();
        let mut decoder = ProxyDecoder::new(DecodeChoice::Auto);
        let mut trail = EnetTrail::default();
        // Each side sends for 6 s, then serves on until channel 0's head got through (`enet_peer.c`:
        // at most 40 s, 9 s or so as a rule).
        let secs = "6";
        let mut server = spawn(&exe, &["server".into(), server_port.to_string(), secs.into()]);
        // The client may start once the server's port is taken.
        assert!(
            crate::common::wait_until_udp_bound(server_addr, Duration::from_secs(10)),
            "the ENet server took its port"
        );
        let mut client =
            spawn(&exe, &["client".into(), proxy.local_addr().port().to_string(), secs.into(), "50".into()]);
        // Past the peers' own deadlines (30 s and 40 s): they end by themselves.
        let deadline = Instant::now() + Duration::from_secs(60);
        while (client.try_wait().unwrap().is_none() || server.try_wait().unwrap().is_none())
            && Instant::now() < deadline
        {
            if let Ok(b) = proxy.batches().recv_timeout(Duration::from_millis(20)) {
                decoder.feed(&b);
                trail.feed(&b);
            }
        }
        let (client, server) = (finish(client), finish_connected(server));
        let (outcome, rest) = proxy.stop_with_batches().unwrap();
        for b in rest.try_iter() {
            decoder.feed(&b);
            trail.feed(&b);
        }
        decoder.finish(SimTime::from_secs_f64(outcome.seconds));
        server.map(|server| (client, server, outcome, decoder, trail))
    });
    assert_eq!(decoder.format().as_deref(), Some(FormatKind::Enet.name()), "{:?}", decoder.probe_reason());
    assert_eq!(outcome.clients.len(), 1);
    let truth = &outcome.clients[0];
    let stats = decoder.client(truth.client).expect("the client was decoded");
    // In the proxy's directions: BtoA is what the client sends.
    let (c, s) = (stats.dirs[Dir::BtoA.index()], stats.dirs[Dir::AtoB.index()]);
    // Every failure below says what each ENet peer printed and what the proxy saw per direction.
    let dir_text = |d: &ackscope::proxy::DirSummary| {
        format!(
            "{} datagrams, {} dropped, {} forwarded, {} send failures",
            d.datagrams, d.dropped, d.forwarded, d.send_failed
        )
    };
    let context = format!(
        "ENet client printed {client:?}, server {server:?}; proxy client->server: {}; server->client: {}; \
         proxy receive errors {}; {}",
        dir_text(&truth.client_to_server),
        dir_text(&truth.server_to_client),
        outcome.counters.receive_errors,
        trail.report()
    );
    println!("{context}");
    for (name, lib, dec, link) in
        [("client", client, c, &truth.client_to_server), ("server", server, s, &truth.server_to_client)]
    {
        println!(
            "{name}: link dropped {:.1} %; ENet rtt {} ms, decoded {:.1}; ENet packetsLost {} of {}, decoded resends {} of {} ({} spurious)",
            link.dropped_percent, lib.rtt, dec.rtt_ms, lib.lost, lib.sent, dec.resends, dec.items_sent, dec.spurious_resends
        );
        // What is compared is what ENet sent and lost: each side sends 50 packets a second of its own
        // for 6 s (the server on channel 1, which does not wait on channel 0's deliveries; an
        // echo-only server sent 25 in one CI run), so each sends far over 150. At 20 % loss each way
        // ENet's doubling retransmit timeout can hold an ordered channel's head for much of a run (2
        // echoes seen in CI; once none at all, "sent=387 received=0"), so the peers serve on until
        // channel 0's head got through, with a deadline (`enet_peer.c`), and both must have received.
        assert!(
            lib.sent > 150 && lib.received > 0,
            "{name}: the exchange ran ({} sent, {} received); {context}",
            lib.sent,
            lib.received
        );
        assert!(!lib.disconnected, "{name}: ENet dropped its peer mid-run (its counters restart then); {context}");
        assert_eq!(dec.resends, lib.lost, "{name}: decoded resends vs ENet packetsLost; {context}");
        assert_eq!(dec.items_sent, lib.sent, "{name}: decoded reliable sends vs ENet packetsSent; {context}");
        assert!((10.0..30.0).contains(&link.dropped_percent), "{name}: {link:?}");
    }
    assert_eq!(stats.malformed, 0);
    for (name, lib, dec) in [("client", client, c), ("server", server, s)] {
        crate::common::rtt_agrees(name, dec.rtt_ms, lib.rtt, 0.05)?;
    }
    Ok(())
}

/// `ackscope proxy --out` of the ENet pair: the recording's lane says ENet (the decoder's pick,
/// not the default scenario's strategy), and `summary` of it reports as ENet with the decoded
/// figures the proxy printed when it ran, not an empty reliable-message section.
#[test]
fn a_proxy_recording_of_enet_is_described_and_summarised_as_enet() {
    use std::process::Command;

    let exe = build_enet_peer();
    let dir = std::env::temp_dir().join(format!("ackscope-proxy-enet-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("enet.ron");
    let live = with_connected_pair([24, 25, 26], |seed| {
        let free = || UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let (server_addr, listen) = (free(), free());
        let _ = std::fs::remove_file(&out);
        let server = spawn(&exe, &["server".into(), server_addr.port().to_string(), "6".into()]);
        let seed_set = format!("seed={seed}");
        // --seconds 60 is a cap past the ENet peers' own deadlines (`enet_peer.c`): the proxy is
        // stopped once the pair has finished (9 s or so: 6 s of sends, then each side's drain).
        let set = ["--set", "link.latency_ms=50", "--set", "link.loss_percent=20", "--set", &seed_set];
        let out_arg = ["--seconds", "60", "--json", "--out", out.to_str().unwrap()];
        let proxy = spawn_proxy(listen, server_addr, &[&set[..], &out_arg[..]].concat());
        // The client starts once the proxy and the server hold their ports.
        for (what, addr) in [("the proxy", listen), ("the ENet server", server_addr)] {
            assert!(crate::common::wait_until_udp_bound(addr, Duration::from_secs(10)), "{what} took its port");
        }
        let client = spawn(&exe, &["client".into(), listen.port().to_string(), "6".into(), "50".into()]);
        let client = finish(client);
        let server = finish_connected(server);
        let done = stop_proxy(proxy);
        server?;
        assert!(client.sent > 150, "the exchange ran: {client:?}");
        Some(serde_json::from_slice::<serde_json::Value>(&done.stdout).unwrap())
    });

    let s = ackscope::session::load_verified(&out, ackscope::session::Verify::Checksum).unwrap();
    let lane = ackscope::model::Recording::from_header(&s).info;
    assert_eq!(lane.label(), "ENet");
    assert_eq!(lane.first().wire, ackscope::lane::WireFormat::Opaque);
    assert_eq!(lane.first().strategy, None);

    let summary = Command::new(env!("CARGO_BIN_EXE_ackscope")).args(["summary", "--json"]).arg(&out).output().unwrap();
    assert!(summary.status.success(), "{}", String::from_utf8_lossy(&summary.stderr));
    let j: serde_json::Value = serde_json::from_slice(&summary.stdout).unwrap();
    assert_eq!(j["strategy"], "ENet", "{j}");
    assert!(j["reliable"].is_null() && j["snapshots"].is_null(), "no workload sections on a decoded lane: {j}");
    // Side A is the server, B the client: the summary's decoded figures are the proxy's own.
    for (side, dir) in [("b", "client_to_server"), ("a", "server_to_client")] {
        let (got, want) = (&j["decoded"][side], &live["clients"][0]["decoded"][dir]);
        for k in ["items_sent", "resends", "spurious_resends", "items_acked", "packets_acked"] {
            assert_eq!(got[k], want[k], "{side} {k}: summary {got} vs proxy {want}");
        }
        assert!(got["items_sent"].as_u64().unwrap() > 100, "{side}: {got}");
    }
    let text = Command::new(env!("CARGO_BIN_EXE_ackscope")).arg("summary").arg(&out).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.starts_with("ackscope: protocol ENet") && text.contains("decoded, side B (client) sends"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
