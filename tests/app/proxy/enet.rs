//! The real ENet library pair (`tests/app/enet_peer.c` against `-lenet`) through the proxy at 20 %
//! loss and 50 ms each way, decoded by the proxy's decoder (`auto`): what it derives equals what
//! ENet itself reports, as with the plain test relay (`decode_enet`).

use ackscope::proxy::decode::ProxyDecoder;
use ackscope_protocol::decode::{DecodeChoice, FormatKind};
use ackscope_protocol::SimTime;

use super::*;
use crate::decode_enet::{build_enet_peer, finish, spawn};

#[test]
fn the_enet_library_pair_through_the_proxy_is_decoded_as_enet_reports_itself() {
    let exe = build_enet_peer();
    let server_port = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server_addr: SocketAddr = format!("127.0.0.1:{server_port}").parse().unwrap();
    let mut cfg = ProxyConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        server_addr,
        scenario(&["link.latency_ms=50", "link.loss_percent=20", "seed=24"]),
    );
    cfg.keep_bytes = true;
    let proxy = Proxy::start(cfg).unwrap();
    let mut decoder = ProxyDecoder::new(DecodeChoice::Auto);
    // 6 s: under ENet's 10 s counter interval (see `decode_enet`).
    let secs = "6";
    let mut server = spawn(&exe, &["server".into(), server_port.to_string(), secs.into()]);
    // The client may start once the server's port is taken.
    let deadline = Instant::now() + Duration::from_secs(10);
    while UdpSocket::bind(server_addr).is_ok() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut client = spawn(&exe, &["client".into(), proxy.local_addr().port().to_string(), secs.into(), "50".into()]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while (client.try_wait().unwrap().is_none() || server.try_wait().unwrap().is_none()) && Instant::now() < deadline {
        if let Ok(b) = proxy.batches().recv_timeout(Duration::from_millis(20)) {
            decoder.feed(&b);
        }
    }
    let (client, server) = (finish(client), finish(server));
    let (outcome, rest) = proxy.stop_with_batches().unwrap();
    for b in rest.try_iter() {
        decoder.feed(&b);
    }
    decoder.finish(SimTime::from_secs_f64(outcome.seconds));
    assert_eq!(decoder.format().as_deref(), Some(FormatKind::Enet.name()), "{:?}", decoder.probe_reason());
    assert_eq!(outcome.clients.len(), 1);
    let truth = &outcome.clients[0];
    let stats = decoder.client(truth.client).expect("the client was decoded");
    // In the proxy's directions: BtoA is what the client sends.
    let (c, s) = (stats.dirs[Dir::BtoA.index()], stats.dirs[Dir::AtoB.index()]);
    for (name, lib, dec, link) in
        [("client", client, c, &truth.client_to_server), ("server", server, s, &truth.server_to_client)]
    {
        println!(
            "{name}: link dropped {:.1} %; ENet rtt {} ms, decoded {:.1}; ENet packetsLost {} of {}, decoded resends {} of {} ({} spurious)",
            link.dropped_percent, lib.rtt, dec.rtt_ms, lib.lost, lib.sent, dec.resends, dec.items_sent, dec.spurious_resends
        );
        // What is compared is what ENet sent and lost, so "the exchange ran" is judged on sends: at 20 %
        // loss each way ENet's doubling retransmit timeout can hold the ordered channel's head for
        // much of a short run, so few packets may be *delivered* (2 echoes seen in CI). Each side sends
        // 50 packets a second of its own for 6 s (the server on channel 1, which does not wait on
        // channel 0's deliveries; an echo-only server sent 25 in one CI run), so each sends far over 150.
        assert!(
            lib.sent > 150 && lib.received > 0,
            "{name}: the exchange ran ({} sent, {} received)",
            lib.sent,
            lib.received
        );
        assert!(
            (dec.rtt_ms - lib.rtt).abs() <= lib.rtt * 0.05,
            "{name}: decoded RTT {} vs ENet's {}",
            dec.rtt_ms,
            lib.rtt
        );
        assert_eq!(dec.resends, lib.lost, "{name}: decoded resends vs ENet packetsLost");
        assert_eq!(dec.items_sent, lib.sent, "{name}: decoded reliable sends vs ENet packetsSent");
        assert!((10.0..30.0).contains(&link.dropped_percent), "{name}: {link:?}");
    }
    assert_eq!(stats.malformed, 0);
}
