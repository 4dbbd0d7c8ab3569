//! The passive reliable.io decoder against ackscope's own `acks` endpoints on real UDP sockets
//! (`UdpEndpoint`, the raw mode `peer --raw` runs), through the test relay (20 % loss, 50 ms each
//! way, seeded; the endpoints' own links transparent). The acks, RTT and loss the decoder derives
//! from the bytes must agree with what each endpoint reports of itself.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use ackscope::runtime::udp::{EndpointOptions, UdpEndpoint};
use ackscope_protocol::decode::{DecodeChoice, FormatKind};
use ackscope_protocol::{Dir, Event, EventKind, Scenario, Side, Strategy};

use crate::relay::Relay;

fn free_port() -> SocketAddr {
    UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

/// What one endpoint said of itself: packets acked, mean RTT sample, last loss estimate.
fn own_view(events: &[Event], side: Side) -> (u64, f64, f64) {
    let (mut acked, mut rtt_sum, mut rtts, mut loss) = (0u64, 0.0, 0u64, 0.0);
    for e in events {
        match e.kind {
            EventKind::PacketAcked { side: s, .. } if s == side => acked += 1,
            EventKind::RttSample { side: s, rtt_ms } if s == side => {
                rtt_sum += rtt_ms as f64;
                rtts += 1;
            }
            EventKind::Stats { side: s, stats } if s == side => loss = stats.loss_percent as f64,
            _ => {}
        }
    }
    (acked, rtt_sum / rtts.max(1) as f64, loss)
}

#[test]
fn decoded_reliable_io_acks_rtt_and_loss_match_the_acks_endpoints() {
    let mut scenario = Scenario { seed: 5, strategy: Strategy::Acks, ..Scenario::default() };
    for d in Dir::BOTH {
        let l = scenario.link.get_mut(d);
        l.loss_percent = 0.0;
        l.latency_ms = 0.0;
        l.jitter_ms = 0.0;
    }
    let (pa, pb) = (free_port(), free_port());
    let seed = 9;
    let relay = Relay::start(pb, 0.2, Duration::from_millis(50), seed, DecodeChoice::Auto);
    let opts = |side, bind, connect| EndpointOptions {
        side,
        scenario: scenario.clone(),
        raw: true,
        bind,
        connect,
        seconds: Some(6.0),
    };
    let server = UdpEndpoint::spawn(opts(Side::B, pb, relay.server_side_addr()), || {}).unwrap();
    let client = UdpEndpoint::spawn(opts(Side::A, pa, relay.client_addr()), || {}).unwrap();
    let ea: Vec<_> = client.batches_until_end().flat_map(|b| b.events).collect();
    let eb: Vec<_> = server.batches_until_end().flat_map(|b| b.events).collect();
    let (decoder, counts) = relay.stop();
    let probe = decoder.probe().expect("probed");
    assert_eq!(probe.picked, Some(FormatKind::Reliable), "{}", probe.reason);
    let stats = decoder.client_stats(1).unwrap();
    println!("decoder: {}", probe.reason);
    for (name, events, side) in [("client", &ea, Side::A), ("server", &eb, Side::B)] {
        let (acked, rtt, loss) = own_view(events, side);
        let dec = stats.dirs[side.outgoing().index()];
        let i = side.outgoing().index();
        println!(
            "{name}: endpoint acked {acked}, decoded {}; RTT mean {rtt:.1} ms, decoded {:.1} ms; loss estimate {loss:.1} %, \
             decoded {:.1} %; relay dropped {:.1} % of {} datagrams",
            dec.packets_acked,
            dec.rtt_mean_ms,
            dec.loss_percent,
            counts.dropped[i] as f64 * 100.0 / counts.datagrams[i] as f64,
            counts.datagrams[i]
        );
        assert!(acked > 150, "{name}: the exchange ran");
        // The run's last acks may reach one and not the other before both stop.
        assert!(
            acked.abs_diff(dec.packets_acked) <= 3,
            "{name}: endpoint acked {acked}, decoded {} (seed {seed})",
            dec.packets_acked
        );
        assert!(
            (dec.rtt_mean_ms - rtt).abs() <= rtt * 0.05,
            "{name}: decoded RTT {} vs {rtt} (seed {seed})",
            dec.rtt_mean_ms
        );
        assert!(
            (dec.loss_percent - loss).abs() <= 5.0,
            "{name}: decoded loss {} vs {loss} (seed {seed})",
            dec.loss_percent
        );
        assert_eq!(dec.resends, 0, "reliable.io resends nothing");
    }
    assert_eq!(stats.malformed, 0);
}
