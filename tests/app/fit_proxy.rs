//! A link fitted from a real capture: the real ENet library pair (`enet_peer.c`, as
//! `decode_enet` builds it) talks through the conditioning proxy, which writes what it relayed as
//! a pcapng capture with both sides ([`RelayedCapture`]: each datagram as it reached the proxy,
//! each copy as it left), and `fit` of that capture must give back the proxy's link within the
//! issue's bounds: latency and jitter within 10 %, loss within 1 point, no bursts, no duplicates.
//!
//! The loss is judged against what the proxy's link did (its own count of drops, the link's
//! ground truth) within 1 point, and against the configured chance within 1 point plus four
//! binomial standard deviations of the run's sample: a few thousand datagrams of a 6 % chance
//! realise it only to about half a point, which is the run's luck, not the fit's error.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use ackscope::capture::records;
use ackscope::capture::relayed::RelayedCapture;
use ackscope::fit::{self, DirFit};
use ackscope::proxy::{Proxy, ProxyConfig};
use ackscope_protocol::{Dir, JitterDistribution};

use crate::decode_enet::{build_enet_peer, finish, spawn};
use crate::proxy::scenario;

/// The proxy's link: the same delay both ways, a different loss each way (so a swapped
/// direction shows).
const LATENCY_MS: f64 = 40.0;
const JITTER_MS: f64 = 10.0;
const LOSS_TO_CLIENT: f64 = 6.0;
const LOSS_TO_SERVER: f64 = 3.0;

/// The fitted link's overall loss: the good state's, or the bursts' stationary mix.
fn overall_loss_percent(f: &DirFit) -> f64 {
    let l = &f.loss;
    if l.p_percent <= 0.0 {
        return l.loss_percent;
    }
    let bad = l.p_percent / (l.p_percent + l.r_percent);
    (1.0 - bad) * l.loss_percent + bad * l.loss_in_bad_percent
}

#[test]
fn a_capture_of_enet_through_the_proxy_fits_back_to_the_proxys_link() {
    let exe = build_enet_peer();
    let server_port = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server_addr: SocketAddr = format!("127.0.0.1:{server_port}").parse().unwrap();
    let (latency, jitter) = (format!("link.latency_ms={LATENCY_MS}"), format!("link.jitter_ms={JITTER_MS}"));
    let (to_client, to_server) =
        (format!("link.a_to_b.loss_percent={LOSS_TO_CLIENT}"), format!("link.b_to_a.loss_percent={LOSS_TO_SERVER}"));
    let sets = [latency.as_str(), jitter.as_str(), to_client.as_str(), to_server.as_str(), "seed=26"];
    let mut cfg = ProxyConfig::new("127.0.0.1:0".parse().unwrap(), server_addr, scenario(&sets));
    cfg.keep_bytes = true;
    let proxy = Proxy::start(cfg).unwrap();
    let path = std::env::temp_dir().join(format!("ackscope-fit-proxy-{}.pcapng", std::process::id()));
    let mut capture = RelayedCapture::new(std::fs::File::create(&path).unwrap(), server_addr).unwrap();

    // 8 s of 150 reliable packets a second each way (the server's on channel 1): some 2,000
    // datagrams each way, so the jitter's sampling spread (about 0.2 ms) is a fifth of the 10 %
    // bound. (ENet's own counters, which restart every 10 s, are not compared here.)
    let secs = "8";
    let mut server = spawn(&exe, &["server".into(), server_port.to_string(), secs.into()]);
    assert!(crate::common::wait_until_udp_bound(server_addr, Duration::from_secs(10)), "the ENet server took its port");
    let mut client = spawn(&exe, &["client".into(), proxy.local_addr().port().to_string(), secs.into(), "150".into()]);
    let deadline = Instant::now() + Duration::from_secs(40);
    while (client.try_wait().unwrap().is_none() || server.try_wait().unwrap().is_none()) && Instant::now() < deadline {
        if let Ok(b) = proxy.batches().recv_timeout(Duration::from_millis(20)) {
            capture.take(&b).unwrap();
        }
    }
    let (client, server) = (finish(client), finish(server));
    let (outcome, rest) = proxy.stop_with_batches().unwrap();
    for b in rest.try_iter() {
        capture.take(&b).unwrap();
    }
    assert_eq!(capture.orphan_copies(), 0, "every copy's datagram was held");
    let written = capture.packets();
    drop(capture.into_inner());
    assert!(client.sent > 500 && server.sent > 500, "the exchange ran: client {client:?}, server {server:?}");
    assert_eq!(outcome.clients.len(), 1);
    let truth = &outcome.clients[0];

    let recs = records::load(&path).unwrap().require_fates(&path).unwrap();
    let info = &recs.info;
    println!("capture: {written} packets; records: {info:?}");
    assert_eq!(info.paired_flows, 2, "{info:?}");
    assert_eq!((info.unmatched_copies, info.one_sided_flows), (0, 0), "{info:?}");
    let fitted = fit::fit(&recs, 3);
    // Side A is the server, read from the address the proxy's capture gave it (whatever the
    // ports): the fit's directions are the proxy's (A->B is server to client there).
    let server_is_a = info.side_a.as_deref() == Some(&format!("10.0.0.1:{server_port}"));
    assert!(server_is_a, "side A is the server: {info:?}");
    for (name, proxy_dir, loss, link) in [
        ("server -> client", Dir::AtoB, LOSS_TO_CLIENT, &truth.server_to_client),
        ("client -> server", Dir::BtoA, LOSS_TO_SERVER, &truth.client_to_server),
    ] {
        let dir = if server_is_a { proxy_dir } else { Dir::BOTH[1 - proxy_dir.index()] };
        let f = fitted.dirs[dir.index()].as_ref().unwrap_or_else(|| panic!("{name}: not fitted"));
        let (d, fit_loss) = (&f.delay, overall_loss_percent(f));
        let sample_sd = (loss * (100.0 - loss) / f.counts.packets as f64).sqrt();
        println!(
            "{name}: {} datagrams, proxy dropped {:.2} % (configured {loss}); fit latency {:.2} ms, jitter {:.2} ms {:?}, \
             loss {fit_loss:.2} % (bursts p {:.2} %), duplicates {}, reorder {:.2} %; KS delay per seed {:?}",
            f.counts.packets,
            link.dropped_percent,
            d.latency_ms,
            d.jitter_ms,
            d.distribution,
            f.loss.p_percent,
            f.link.duplicate_percent,
            d.reorder_percent,
            f.check.delay_ks,
        );
        assert!((d.latency_ms - LATENCY_MS).abs() <= LATENCY_MS * 0.1, "{name}: latency {}", d.latency_ms);
        assert!((d.jitter_ms - JITTER_MS).abs() <= JITTER_MS * 0.1, "{name}: jitter {}", d.jitter_ms);
        assert_eq!(d.distribution, JitterDistribution::Uniform, "{name}");
        assert!((fit_loss - link.dropped_percent).abs() <= 1.0, "{name}: loss {fit_loss} vs the link's {link:?}");
        assert!(
            (fit_loss - loss).abs() <= 1.0 + 4.0 * sample_sd,
            "{name}: loss {fit_loss} vs configured {loss} (sample sd {sample_sd:.2})"
        );
        assert!(f.loss.p_percent <= 1.0, "{name}: independent loss fitted as bursts: {:?}", f.loss);
        assert!(f.link.duplicate_percent <= 1.0 && d.reorder_percent <= 1.0, "{name}: {:?}", f.link);
    }
    let _ = std::fs::remove_file(&path);
}
