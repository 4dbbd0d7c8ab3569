//! Whatever datagrams arrive, the proxy relays or drops them as its link is configured, never
//! alters one and never panics: empty, garbage, truncated-looking and oversized payloads.

use std::sync::OnceLock;

use ackscope_protocol::{Dir, DropReason, EventKind};
use proptest::prelude::*;

use super::*;

/// The link's MTU in these tests: a payload above `MTU - 28` (IP and UDP headers) is dropped.
const MTU: usize = 1200;
const MAX_PAYLOAD: usize = MTU - 28;

/// One proxy and sink for every case (a proxy per case would spend the time on set-up).
struct Rig {
    server: Server,
    proxy: Proxy,
    client: Client,
    rec: Mutex<Recording>,
}

fn rig() -> &'static Rig {
    static RIG: OnceLock<Rig> = OnceLock::new();
    RIG.get_or_init(|| {
        let server = Server::sink("127.0.0.1:0");
        let proxy = start(server.addr, scenario(&[&format!("link.mtu_bytes={MTU}")]));
        let client = Client::to(proxy.local_addr());
        Rig { server, proxy, client, rec: Mutex::new(recording()) }
    })
}

/// Sends `datagrams` and waits until the sink has every one the MTU lets through: what it got
/// since `from`, and the drops the recording shows meanwhile.
fn relay(datagrams: &[Vec<u8>]) -> (Vec<Vec<u8>>, Vec<DropReason>) {
    let r = rig();
    let mut rec = r.rec.lock().unwrap();
    let (log_from, events_from) = (r.server.received(), rec.events.len());
    for d in datagrams {
        r.client.send(d);
    }
    let expected = datagrams.iter().filter(|d| d.len() <= MAX_PAYLOAD).count();
    let sent_before = counts(&rec, None, Dir::BtoA).sent;
    let ok = until(&r.proxy, &mut rec, 10.0, |rec| {
        counts(rec, None, Dir::BtoA).sent == sent_before + datagrams.len() as u64
            && r.server.received() == log_from + expected
    });
    assert!(ok, "the sink got {} of {expected}", r.server.received() - log_from);
    let got = r.server.log()[log_from..].iter().map(|(_, b)| b.clone()).collect();
    let drops = rec.events[events_from..]
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::LinkDropped { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    (got, drops)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_datagram_is_relayed_unaltered_or_dropped_for_its_size(
        datagrams in prop::collection::vec(
            prop_oneof![
                prop::collection::vec(any::<u8>(), 0..64),
                prop::collection::vec(any::<u8>(), MAX_PAYLOAD - 4..MAX_PAYLOAD + 4),
                prop::collection::vec(any::<u8>(), 0..3000),
            ],
            1..40,
        )
    ) {
        let (got, drops) = relay(&datagrams);
        // Without delay or loss the link keeps the order: the sink gets exactly the datagrams
        // that fit, as they were sent.
        let fits: Vec<Vec<u8>> = datagrams.iter().filter(|d| d.len() <= MAX_PAYLOAD).cloned().collect();
        prop_assert_eq!(&got, &fits);
        prop_assert_eq!(drops.len(), datagrams.len() - fits.len());
        prop_assert!(drops.iter().all(|r| *r == DropReason::Mtu));
    }
}

#[test]
fn the_largest_udp_datagrams_are_read_whole_and_dropped_by_the_mtu() {
    // 65,507 bytes: the most an IPv4 UDP datagram carries; read whole (never cut to a buffer).
    let (got, drops) = relay(&[vec![0xAB; 65_507], vec![], vec![7; MAX_PAYLOAD]]);
    assert_eq!(got, vec![vec![], vec![7; MAX_PAYLOAD]]);
    assert_eq!(drops, vec![DropReason::Mtu]);
    let rec = rig().rec.lock().unwrap();
    let sizes: Vec<u32> = rec
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::LinkSent { bytes, .. } => Some(bytes),
            _ => None,
        })
        .collect();
    assert!(sizes.contains(&65_507), "recorded at its full size");
}
