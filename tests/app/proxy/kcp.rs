//! The real KCP implementation (the `kcp` crate, a port of the reference `ikcp.c`) as client and
//! server through the proxy at 20 % loss and 50 ms each way, decoded by the proxy's decoder
//! (`auto`): what it derives equals what KCP itself counts (as with the plain test relay,
//! `decode_kcp`), and what it reads from each datagram is in the recording beside the link's
//! events, in time order, each decoded send naming the relay's send and every decoded ack one
//! the link really delivered.

use ackscope::proxy::decode::ProxyDecoder;
use ackscope_protocol::decode::{DecodeChoice, FormatKind};
use ackscope_protocol::{summarize, Event, Side, SimTime};

use super::*;
use crate::decode_kcp::run_end;

#[test]
fn the_kcp_library_pair_through_the_proxy_is_decoded_and_recorded() {
    let server_socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let server_addr = server_socket.local_addr().unwrap();
    let seed = 31;
    let proxy = start(server_addr, scenario(&["link.latency_ms=50", "link.loss_percent=20", &format!("seed={seed}")]));
    let proxy_addr = proxy.local_addr();
    let mut decoder = ProxyDecoder::new(DecodeChoice::Auto);
    let server = std::thread::spawn(move || run_end(server_socket, None, 6.0, 8.5));
    let client_socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let client = std::thread::spawn(move || run_end(client_socket, Some(proxy_addr), 6.0, 7.5));
    let mut events: Vec<Event> = Vec::new();
    while !(client.is_finished() && server.is_finished()) {
        if let Ok(b) = proxy.batches().recv_timeout(Duration::from_millis(20)) {
            events.extend(decoder.feed(&b));
        }
    }
    let (client, server) = (client.join().unwrap(), server.join().unwrap());
    let (outcome, rest) = proxy.stop_with_batches().unwrap();
    for b in rest.try_iter() {
        events.extend(decoder.feed(&b));
    }
    events.extend(decoder.finish(SimTime::from_secs_f64(outcome.seconds)));
    assert_eq!(decoder.format().as_deref(), Some(FormatKind::Kcp.name()), "{:?}", decoder.probe_reason());
    let truth = &outcome.clients[0];
    let stats = decoder.client(truth.client).expect("the client was decoded");
    // In the proxy's directions: BtoA is what the client sends.
    for (name, lib, dir) in [("client", client, Dir::BtoA), ("server", server, Dir::AtoB)] {
        let dec = stats.dirs[dir.index()];
        println!(
            "{name}: KCP rx_srtt {} ms, decoded {:.1}; KCP xmit {}, decoded resends {} of {} segments; {} received",
            lib.srtt, dec.rtt_ms, lib.xmit, dec.resends, dec.items_sent, lib.received
        );
        assert!(lib.received > 200, "{name}: the exchange ran");
        // KCP's own RTT also counts the time its endpoint's thread waits to read an ack, which the
        // proxy cannot see: at load 10 on 2 cores that added 7-10 ms (111 vs 118, 106 vs 116 ms),
        // on a quiet machine under 2 (106 vs 107). Within 5 %, or 12 ms when the machine is that busy.
        assert!(
            (dec.rtt_ms - lib.srtt).abs() <= (lib.srtt * 0.05).max(12.0),
            "{name}: decoded RTT {} vs KCP's {}",
            dec.rtt_ms,
            lib.srtt
        );
        assert_eq!(dec.resends, lib.xmit, "{name}: decoded resends vs KCP's xmit (seed {seed})");
        assert!(dec.resends > 0);
    }
    assert_eq!(stats.malformed, 0);

    // The recording: in time order, every datagram decoded as a send of its sender (the client
    // is the proxy's side B), and the decoded acks checked against the link's truth.
    assert!(events.windows(2).all(|w| w[0].time <= w[1].time), "the recording stays in time order");
    let count = |f: &dyn Fn(&EventKind) -> bool| events.iter().filter(|e| f(&e.kind)).count() as u64;
    for (side, dir) in [(Side::B, Dir::BtoA), (Side::A, Dir::AtoB)] {
        let link_sent = count(&|k| matches!(k, EventKind::LinkSent { dir: d, .. } if *d == dir));
        let decoded = count(&|k| matches!(k, EventKind::PacketSent { side: s, .. } if *s == side));
        assert_eq!(decoded, link_sent, "{side:?}: one decoded send per datagram");
        let acked = count(&|k| matches!(k, EventKind::PacketAcked { side: s, .. } if *s == side));
        let messages = count(&|k| matches!(k, EventKind::MessageSent { side: s, .. } if *s == side));
        println!("{side:?}: {link_sent} datagrams, {decoded} decoded sends, {acked} acked, {messages} segments");
        // The echo side's datagrams are mostly pure acks, which nothing acks.
        // Loose on purpose: on a loaded machine KCP's own pacing sends fewer (once: a failure here
        // with the library's "> 200 received" above holding); what is decoded is checked exactly above.
        assert!(acked > 20 && messages > 100, "{side:?}: {acked} acked, {messages} segments");
    }
    let (packets, _) = summarize(&events);
    assert!(packets.acked > 200, "{packets:?}");
    assert_eq!(packets.false_acks, 0, "every decoded ack names a datagram the link delivered: {packets:?}");
}
