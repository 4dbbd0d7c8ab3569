//! Real traffic through the proxy: a plain UDP echo, IPv6, and two `ackscope peer --raw`
//! processes (the reliable.io format) paired through it.

use std::collections::BTreeMap;
use std::net::UdpSocket;
use std::time::{Duration, Instant};

use ackscope_protocol::{Dir, EventKind};

use super::*;

/// Datagrams the client sends. The link's draws are keyed by each datagram's arrival instant, so
/// its drop share is a binomial draw, not a fixed figure: with 40,000 up (and about 32,000
/// echoed back) its standard deviation at 20 % is 0.2 (0.22) points, and "within 1 point of 20 %
/// over at least 10,000 datagrams" (issue 24) holds by 4.5 deviations each way.
const ECHO_DATAGRAMS: u32 = 40_000;
/// Sent in bursts, each once the proxy has read the one before (no sleeps, no socket buffer
/// overflowing on a busy machine): 3.4 s at load 4 on two cores. A burst's copies leave the
/// relay one after another at their deadline and queue at each reader: 100 a burst put the
/// medians below 0.3 ms later than 40 did.
const BURST: u32 = 40;

/// The least of `v`.
fn least(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// The median of `v` (sorted here).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn a_udp_echo_at_20_percent_loss_and_50_ms_each_way_meets_its_link_exactly() {
    let server = Server::echo("127.0.0.1:0");
    let s = scenario(&["link.latency_ms=50", "link.loss_percent=20", "seed=7"]);
    let proxy = start(server.addr, s);
    let client = Client::to(proxy.local_addr());
    let mut rec = recording();

    // Each datagram's send instant, taken before the send: no datagram can be read earlier.
    let mut sent_at = Vec::with_capacity(ECHO_DATAGRAMS as usize);
    let (mut scanned, mut read) = (0, 0u32);
    for i in 0..ECHO_DATAGRAMS {
        sent_at.push(Instant::now());
        client.send(&payload(i));
        if i % BURST == BURST - 1 {
            let deadline = Instant::now() + Duration::from_secs(10);
            while read <= i {
                assert!(Instant::now() < deadline, "the proxy read {read} of {} datagrams in 10 s", i + 1);
                if let Ok(b) = proxy.batches().recv_timeout(Duration::from_millis(20)) {
                    rec.take(b);
                }
                for e in &rec.events[scanned..] {
                    read += u32::from(matches!(e.kind, EventKind::LinkSent { dir: Dir::BtoA, .. }));
                }
                scanned = rec.events.len();
            }
        }
    }
    // Every datagram has met its fate both ways, and what the proxy forwarded has arrived. A
    // generous deadline: it returns as soon as everything has settled (about 1 s on an idle
    // machine), and a full-suite run at load 5-7 once took over 15 s.
    let done = until(&proxy, &mut rec, 60.0, |r| {
        let up = counts(r, Some(1), Dir::BtoA);
        let down = counts(r, Some(1), Dir::AtoB);
        up.sent == ECHO_DATAGRAMS as u64
            && settled(r)
            && down.sent == up.delivered
            && server.received() as u64 == up.delivered
            && client.count() as u64 == down.delivered
    });
    let (up, down) = (counts(&rec, Some(1), Dir::BtoA), counts(&rec, Some(1), Dir::AtoB));
    assert!(done, "not settled: up {up:?}, down {down:?}, server {}, client {}", server.received(), client.count());
    let outcome = proxy.stop().unwrap();

    // The proxy's own report agrees with its events.
    assert_eq!(outcome.clients.len(), 1);
    let c = &outcome.clients[0];
    assert_eq!((c.client, c.expired), (1, false));
    for (name, d, n) in [("client->server", &c.client_to_server, up), ("server->client", &c.server_to_client, down)] {
        assert_eq!((d.datagrams, d.dropped, d.forwarded), (n.sent, n.dropped, n.delivered), "{name}");
        assert_eq!(d.send_failed, 0, "{name}: the proxy lost datagrams itself");
        assert!(n.sent >= 10_000, "{name}: {n:?}");
        assert!((d.dropped_percent - 20.0).abs() < 1.0, "{name}: dropped {:.2} %", d.dropped_percent);
        // The link's delay is exact; the proxy's added delay is it plus the proxy's lateness.
        assert!((d.added_delay_p50_ms - 50.0).abs() <= 1.0, "{name}: p50 {} ms", d.added_delay_p50_ms);
        assert!(d.added_delay_p50_ms >= 50.0, "{name}: nothing leaves early");
    }
    // The link's decision for every copy: exactly 50 ms.
    for e in &rec.events {
        if let EventKind::LinkDelivered { delay_us, .. } = e.kind {
            assert_eq!(delay_us, 50_000);
        }
    }
    assert_eq!(outcome.counters.in_flight_at_stop, 0);

    // No datagram altered: each arrived as sent (its index and bytes match), none twice.
    let mut at_server = BTreeMap::new();
    for ((_, bytes), at) in server.log().iter().zip(server.arrivals()) {
        let i = index_of(bytes).expect("the server got a datagram the client never sent");
        assert!(at_server.insert(i, at).is_none(), "datagram {i} arrived twice");
    }
    let mut at_client = BTreeMap::new();
    for (bytes, at) in client.received().iter().zip(client.arrivals()) {
        let i = index_of(bytes).expect("the client got back a datagram it never sent");
        assert!(at_server.contains_key(&i), "echo of {i}, which never reached the server");
        assert!(at_client.insert(i, at).is_none(), "echo {i} arrived twice");
    }
    // The delay each copy was given. By the proxy's clock (the bytes side table: when it read
    // the datagram, when its copy left) never under 50 ms and the median within 1 ms of it: the
    // issue's "added delay 50 +- 1 ms", measured by the relay thread, whose timer spins to the
    // deadline. By the receivers' (the sender stamps before its send, the reader after its read)
    // never under 50 ms either, but the median only within 5 ms: it also counts a burst's
    // datagrams queueing behind each other at each reader and the reading threads' wake-ups,
    // which on two cores shared with the rest of this binary's tests take milliseconds (a run at
    // load 5.7 measured a median of 52.4 ms there while the proxy's own was under 51). The tail is
    // the machine's likewise (CI saw 88 % of copies within 1 ms by the proxy's clock);
    // examples/proxy_bench measures it with the cores to itself.
    let mut by_receivers = [Vec::new(), Vec::new()];
    for (i, at) in &at_server {
        by_receivers[0].push(at.duration_since(sent_at[*i as usize]).as_secs_f64() * 1e3);
        if let Some(back) = at_client.get(i) {
            by_receivers[1].push(back.duration_since(*at).as_secs_f64() * 1e3);
        }
    }
    let mut checked = 0;
    let mut by_proxy = [Vec::new(), Vec::new()];
    for d in rec.bytes.iter() {
        let i = index_of(&d.bytes).expect("recorded bytes are what the client sent");
        if d.dir == Dir::BtoA {
            assert_eq!(d.forwarded.is_empty(), !at_server.contains_key(&i), "datagram {i}");
            checked += 1;
        }
        for f in &d.forwarded {
            by_proxy[usize::from(d.dir == Dir::AtoB)].push(f.saturating_since(d.at).0 as f64 / 1e3);
        }
    }
    for (k, name) in ["client->server", "server->client"].iter().enumerate() {
        let (proxy_ms, receiver_ms) = (&mut by_proxy[k], &mut by_receivers[k]);
        let (p_least, r_least) = (least(proxy_ms), least(receiver_ms));
        let (p_m, r_m) = (median(proxy_ms), median(receiver_ms));
        let p99 = |v: &[f64]| v[v.len() * 99 / 100];
        println!(
            "{name}: added delay by the proxy's clock median {p_m:.3} ms, least {p_least:.3}, p99 {:.3} over {}; \
             by the receivers' median {r_m:.3} ms, least {r_least:.3}, p99 {:.3} over {}",
            p99(proxy_ms),
            proxy_ms.len(),
            p99(receiver_ms),
            receiver_ms.len()
        );
        assert!(p_least >= 50.0 && r_least >= 50.0, "{name}: a copy left or arrived early");
        assert!(p_m <= 51.0, "{name}: median added delay {p_m} ms by the proxy's clock");
        assert!(r_m <= 55.0, "{name}: median one-way {r_m} ms by the receivers");
    }
    assert_eq!(checked, ECHO_DATAGRAMS);
}

#[test]
fn ipv6_clients_and_server_relay_both_ways() {
    let server = Server::echo("[::1]:0");
    let proxy = start(server.addr, scenario(&["link.latency_ms=5"]));
    assert!(proxy.local_addr().is_ipv6());
    let client = Client::to(proxy.local_addr());
    for i in 0..50 {
        client.send(&payload(i));
    }
    let mut rec = recording();
    assert!(until(&proxy, &mut rec, 10.0, |r| settled(r) && client.count() == 50), "{}", client.count());
    let mut back: Vec<u32> = client.received().iter().map(|b| index_of(b).unwrap()).collect();
    back.sort_unstable();
    assert_eq!(back, (0..50).collect::<Vec<_>>());
    assert!(server.log().iter().all(|(from, _)| from.is_ipv6()));
    assert!(rec.clients[0].1.is_ipv6());
}

fn free_port() -> std::net::SocketAddr {
    UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

fn peer_json(child: std::process::Child) -> serde_json::Value {
    json_of_output(child.wait_with_output().unwrap(), "peer")
}

#[test]
fn two_raw_peers_pair_through_the_proxy_and_see_its_loss() {
    // The server side must be told where its client is: the proxy's socket towards it is bound
    // to a fixed port (`--upstream`) for this one client.
    let (server_addr, client_addr, upstream) = (free_port(), free_port(), free_port());
    let mut cfg = ackscope::proxy::ProxyConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        server_addr,
        scenario(&["link.latency_ms=50", "link.loss_percent=20", "seed=3"]),
    );
    cfg.upstream_bind = Some(upstream);
    let proxy = ackscope::proxy::Proxy::start(cfg).unwrap();
    // Each peer's own simulated link is made transparent: the proxy is the only impairment.
    let peer_args = ["--raw", "--json", "--seconds", "4", "--set", "link.latency_ms=0", "--set", "link.loss_percent=0"];
    let a = spawn_peer("a", server_addr, upstream, &peer_args);
    let b = spawn_peer("b", client_addr, proxy.local_addr(), &peer_args);
    let (ja, jb) = (peer_json(a), peer_json(b));
    let outcome = proxy.stop().unwrap();

    assert_eq!(outcome.clients.len(), 1, "one client: {:?}", outcome.clients);
    let c = &outcome.clients[0];
    assert_eq!(c.addr, client_addr.to_string());
    for (name, j, sent_dir, recv_dir) in
        [("a", &ja, &c.server_to_client, &c.client_to_server), ("b", &jb, &c.client_to_server, &c.server_to_client)]
    {
        let p = &j["packets"];
        let sent = p["sent"].as_u64().unwrap();
        let acked = p["acked"].as_u64().unwrap();
        // What the peer sent is what the proxy read (the other peer may have stopped reading a
        // few datagrams early; none were malformed).
        assert!(sent_dir.datagrams <= sent && sent_dir.datagrams + 10 >= sent, "{name}: {j}");
        assert!(p["received"].as_u64().unwrap() + 10 >= recv_dir.forwarded, "{name}: {j}");
        assert_eq!(p["malformed"], 0, "{name}: {j}");
        // Acks are redundant (32 ack bits), so about the 80 % the proxy let through are acked.
        let share = acked as f64 / sent as f64;
        assert!((0.65..0.9).contains(&share), "{name}: acked {acked} of {sent}: {j}");
        // 20 % of a few hundred datagrams: within 8 points or 4.5 standard deviations of a
        // binomial draw of that many, whichever is wider (CI saw 67 of 239 dropped, 3.1 sd off).
        let sd_points = 100.0 * (0.2f64 * 0.8 / sent_dir.datagrams.max(1) as f64).sqrt();
        let tolerance = (4.5 * sd_points).max(8.0);
        assert!((sent_dir.dropped_percent - 20.0).abs() < tolerance, "{name}: {sent_dir:?}");
        // The peer's own RTT estimate sees the proxy's 50 ms each way.
        let rtt = j["estimates"]["rtt_ms"].as_f64().unwrap();
        assert!((95.0..140.0).contains(&rtt), "{name}: RTT {rtt}: {j}");
    }
}
