//! The real kcptun (Debian's `kcptun`: kcp-go carrying smux, the most used KCP program; `.ci/run`
//! installs it) through the proxy, with encryption, compression and error correction off:
//! a TCP echo server in the test, `kcptun-server` forwarding to it, the proxy in front of
//! `kcptun-server` at 20 % loss and 30 ms each way, `kcptun-client` pointed at the proxy, and
//! 64 KB echoed through the client's TCP side.
//!
//! Checked: the bytes come back intact; `auto` picks the `kcptun` frame (16-byte nonce and CRC32
//! before the segments) and reads every datagram both ways (segments, acks, RTT samples); the
//! decoded RTT is the configured 60 ms round trip plus what kcp-go waits before acking (its 20 ms
//! flush interval in the `fast` profile); and what the decoder derives equals what kcptun itself
//! counts (its `--snmplog`): datagrams and bytes sent, datagrams received, and resent segments
//! (`RetransSegs`, every fast, early and timeout resend).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use ackscope::proxy::decode::ProxyDecoder;
use ackscope_protocol::decode::{DecodeChoice, FormatKind};
use ackscope_protocol::{Event, SimTime};

use super::*;

/// Bytes echoed through the tunnel: about fifty 1350-byte datagrams each way, so at 20 % loss
/// each direction loses some of its data (all fifty pass with probability 0.8^50, 1e-5).
const ECHO_BYTES: usize = 64 * 1024;
const DELAY_MS: f64 = 30.0;
/// kcp-go's flush interval in kcptun's default `fast` profile: how long a receiver may hold an
/// ack, on top of the round trip.
const KCP_INTERVAL_MS: f64 = 20.0;

/// A kcptun process, killed (and reaped) when dropped, so a failing test leaves none behind.
struct Running {
    child: Child,
    name: &'static str,
}

impl Running {
    fn spawn(name: &'static str, args: &[String]) -> Self {
        let child =
            Command::new(name).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap_or_else(|e| {
                panic!("{name}: {e}: install Debian's kcptun package (apt-get install kcptun; .ci/run does)")
            });
        Self { child, name }
    }

    /// Still running (a kcptun that exits early, e.g. on a flag this version lacks, says why).
    fn alive(&mut self) -> bool {
        match self.child.try_wait().unwrap() {
            None => true,
            Some(status) => {
                let mut err = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                panic!("{} exited ({status}): {err}", self.name)
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The flags both ends share: the frame the decoder reads (no cipher, no FEC, no compression),
/// a counters line every second.
fn common_flags(snmp: &Path) -> Vec<String> {
    let mut v: Vec<String> = ["--crypt", "none", "--nocomp", "--datashard", "0", "--parityshard", "0"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.extend(["--mode", "fast", "--quiet", "--snmpperiod", "1"].map(String::from));
    v.extend(["--snmplog".to_string(), snmp.display().to_string()]);
    v
}

/// The last line of a kcptun `--snmplog` file, by column name, once it has one.
fn snmp_last(path: &Path) -> Option<BTreeMap<String, u64>> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next()?.split(',').collect();
    let last = lines.rfind(|l| !l.trim().is_empty())?;
    let values = last.split(',').map(|v| v.parse::<u64>().ok());
    Some(header.iter().zip(values).filter_map(|(k, v)| Some((k.to_string(), v?))).collect())
}

/// A TCP echo server on loopback: every connection's bytes sent back until it closes.
fn tcp_echo() -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let thread = std::thread::spawn(move || {
        // One connection: the tunnel's. The accept is bounded by kcptun-server's dial, which
        // happens when the client's stream opens; a test that fails before never connects, and
        // the listener thread ends with the process.
        if let Ok((mut conn, _)) = listener.accept() {
            conn.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            let mut buf = vec![0u8; 16_384];
            while let Ok(n) = conn.read(&mut buf) {
                if n == 0 || conn.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    });
    (addr, thread)
}

fn free_udp() -> SocketAddr {
    UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

fn free_tcp() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

#[test]
fn real_kcptun_through_the_proxy_is_decoded_as_kcptun_counts_itself() {
    let dir = std::env::temp_dir().join(format!("ackscope-kcptun-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (client_snmp, server_snmp): (PathBuf, PathBuf) = (dir.join("client.csv"), dir.join("server.csv"));
    for f in [&client_snmp, &server_snmp] {
        let _ = std::fs::remove_file(f);
    }
    let (echo_addr, _echo) = tcp_echo();
    let kcp_server_addr = free_udp();
    let seed = 41;
    let latency = format!("link.latency_ms={DELAY_MS}");
    let proxy = start(kcp_server_addr, scenario(&[&latency, "link.loss_percent=20", &format!("seed={seed}")]));
    let mut decoder = ProxyDecoder::new(DecodeChoice::Auto);
    let mut events: Vec<Event> = Vec::new();

    let mut args = vec!["--listen".into(), kcp_server_addr.to_string(), "--target".into(), echo_addr.to_string()];
    args.extend(common_flags(&server_snmp));
    let mut server = Running::spawn("kcptun-server", &args);
    assert!(crate::common::wait_until_udp_bound(kcp_server_addr, Duration::from_secs(15)), "kcptun-server's port");
    let tcp_side = free_tcp();
    let mut args =
        vec!["--localaddr".into(), tcp_side.to_string(), "--remoteaddr".into(), proxy.local_addr().to_string()];
    args.extend(common_flags(&client_snmp));
    args.extend(["--conn".into(), "1".into()]);
    let mut client = Running::spawn("kcptun-client", &args);

    // The client's TCP side, once it listens.
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut conn = loop {
        assert!(client.alive() && server.alive());
        match TcpStream::connect(tcp_side) {
            Ok(c) => break c,
            Err(e) if Instant::now() >= deadline => panic!("kcptun-client never listened on {tcp_side}: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    };
    conn.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let sent: Vec<u8> = (0..ECHO_BYTES as u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let writer = {
        let (mut w, data) = (conn.try_clone().unwrap(), sent.clone());
        std::thread::spawn(move || w.write_all(&data))
    };
    let mut back = Vec::with_capacity(ECHO_BYTES);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut buf = vec![0u8; 16_384];
    while back.len() < ECHO_BYTES {
        assert!(Instant::now() < deadline, "echoed {} of {ECHO_BYTES} bytes in 30 s", back.len());
        if let Ok(n) = conn.read(&mut buf) {
            if n == 0 {
                let _ = (client.alive(), server.alive());
                panic!("the tunnel closed after {} bytes", back.len());
            }
            back.extend_from_slice(&buf[..n]);
        }
        for b in proxy.batches().try_iter() {
            events.extend(decoder.feed(&b));
        }
    }
    writer.join().unwrap().expect("write into the tunnel");
    assert!(back == sent, "the echo came back altered");
    drop(conn);

    // kcptun's counters settle once every resend is acked: both ends' counters (a line each
    // second) agree with what the proxy read from them, and a later line of each repeats them
    // (a second with nothing sent: kcp-go's timeouts resend well within it).
    let deadline = Instant::now() + Duration::from_secs(20);
    type Counters = BTreeMap<String, u64>;
    let split = |m: &Counters| {
        let mut m = m.clone();
        (m.remove("Unix").unwrap_or(0), m)
    };
    let mut since: Option<(u64, u64, Counters, Counters)> = None;
    let (c, s) = loop {
        for b in proxy.batches().try_iter() {
            events.extend(decoder.feed(&b));
        }
        let now = (snmp_last(&client_snmp), snmp_last(&server_snmp));
        if let (Some(c), Some(s)) = &now {
            let ((cu, cm), (su, sm)) = (split(c), split(s));
            let read = |dir: Dir| decoder.client(1).map_or(0, |k| k.dirs[dir.index()].datagrams);
            let matched = cm["OutPkts"] == read(Dir::BtoA) && sm["OutPkts"] == read(Dir::AtoB);
            match &since {
                Some((cu0, su0, cm0, sm0)) if matched && *cm0 == cm && *sm0 == sm => {
                    if cu > *cu0 && su > *su0 {
                        break (cm, sm);
                    }
                }
                _ => since = matched.then_some((cu, su, cm, sm)),
            }
        }
        assert!(Instant::now() < deadline, "kcptun's counters never settled: {now:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    drop((client, server));
    let (outcome, rest) = proxy.stop_with_batches().unwrap();
    for b in rest.try_iter() {
        events.extend(decoder.feed(&b));
    }
    events.extend(decoder.finish(SimTime::from_secs_f64(outcome.seconds)));

    assert_eq!(decoder.format().as_deref(), Some(FormatKind::Kcptun.name()), "{:?}", decoder.probe_reason());
    assert_eq!(outcome.clients.len(), 1, "kcptun-client's one UDP connection");
    let truth = &outcome.clients[0];
    let stats = decoder.client(truth.client).expect("the client was decoded");
    assert_eq!(stats.malformed, 0, "every kcptun datagram read");
    // In the proxy's directions: BtoA is what kcptun-client sends.
    for (name, lib, other, dir, link) in [
        ("kcptun-client", &c, &s, Dir::BtoA, &truth.client_to_server),
        ("kcptun-server", &s, &c, Dir::AtoB, &truth.server_to_client),
    ] {
        let dec = stats.dirs[dir.index()];
        println!(
            "{name}: sent {} datagrams ({} dropped), {} segments, {} resends (kcptun: {}; {} spurious), \
             {} items acked; RTT {} ms over {} samples (mean {:.1}, min {:.1}, max {:.1}); kcptun {lib:?}",
            dec.datagrams,
            dec.dropped,
            dec.items_sent,
            dec.resends,
            lib["RetransSegs"],
            dec.spurious_resends,
            dec.items_acked,
            dec.rtt_ms,
            dec.rtt_samples,
            dec.rtt_mean_ms,
            dec.rtt_min_ms,
            dec.rtt_max_ms
        );
        assert_eq!((dec.datagrams, dec.bytes), (lib["OutPkts"], lib["OutBytes"]), "{name}: datagrams and bytes");
        assert_eq!(link.forwarded, other["InPkts"], "{name}: what the proxy delivered is what the other end read");
        assert_eq!(dec.resends, lib["RetransSegs"], "{name}: decoded resends vs kcptun's RetransSegs (seed {seed})");
        // A copy the receiver already had is one sent after an earlier copy was delivered.
        assert!(other["RepeatSegs"] <= dec.spurious_resends, "{name}: spurious resends vs the receiver's repeats");
        assert!(link.dropped > 0 && dec.resends > 0, "{name}: 20 % loss resends: {link:?}");
        assert!(dec.items_sent > 40 && dec.items_acked > 40, "{name}: the echo's segments sent and acked");
        assert!(dec.rtt_samples > 0, "{name}: RTT samples");
        // The proxy holds each way exactly 30 ms, so no ack comes back sooner than 60 ms; the
        // fastest comes at most a flush interval later, plus slack for a loaded machine.
        let round_trip = 2.0 * DELAY_MS;
        assert!(dec.rtt_min_ms >= round_trip, "{name}: RTT {} ms under the link's round trip", dec.rtt_min_ms);
        assert!(dec.rtt_min_ms <= round_trip + KCP_INTERVAL_MS + 10.0, "{name}: fastest RTT {} ms", dec.rtt_min_ms);
        assert!(dec.rtt_ms >= round_trip - 8.0 && dec.rtt_ms <= round_trip + 100.0, "{name}: RTT {} ms", dec.rtt_ms);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
