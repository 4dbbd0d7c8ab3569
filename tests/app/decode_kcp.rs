//! The passive KCP decoder against a real KCP implementation: the `kcp` crate (a port of the
//! reference `ikcp.c`) as client and server, each on its own thread and UDP socket, through the
//! test relay (20 % loss, 50 ms each way, seeded). The client sends 50 messages a second for 8 s,
//! the server echoes them. The decoder's smoothed RTT must be within 5 % of each end's own
//! `rx_srtt`, and its resends equal each end's retransmission counter (`xmit`; fast resend is off,
//! so every retransmission is a timeout's).

use std::io::Write;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ackscope_protocol::decode::{DecodeChoice, FormatKind};
use ackscope_protocol::Dir;
use kcp::Kcp;

use crate::relay::Relay;

/// KCP's output: each datagram it flushes goes to `to` over the shared socket.
struct Output {
    socket: Arc<UdpSocket>,
    to: SocketAddr,
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.socket.send_to(buf, self.to)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What one KCP end reports at the end: its smoothed RTT and retransmissions (read from its
/// `Debug` form, the crate's only window on them), and the messages it received.
#[derive(Debug, Clone, Copy)]
pub struct KcpStats {
    pub srtt: f64,
    pub xmit: u64,
    pub received: u64,
}

fn debug_field(dump: &str, name: &str) -> f64 {
    let at = dump.find(&format!("{name}: ")).unwrap_or_else(|| panic!("no {name} in {dump}")) + name.len() + 2;
    dump[at..].split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
}

/// Runs one KCP end on `socket` towards `peer` (None: the server, which answers whoever sends).
pub fn run_end(socket: UdpSocket, peer: Option<SocketAddr>, send_secs: f64, total_secs: f64) -> KcpStats {
    let socket = Arc::new(socket);
    socket.set_read_timeout(Some(Duration::from_millis(1))).unwrap();
    let mut to = peer;
    let mut kcp: Option<Kcp<Output>> = None;
    let make = |to: SocketAddr| {
        let mut k = Kcp::new(0x4B43_5031, Output { socket: socket.clone(), to });
        k.set_nodelay(true, 10, 0, true);
        k.set_wndsize(128, 128);
        k
    };
    if let Some(to) = to {
        kcp = Some(make(to));
    }
    let start = Instant::now();
    let ms = || start.elapsed().as_millis() as u32;
    let mut next_send = 0u32;
    let mut received = 0u64;
    let mut buf = vec![0u8; 65_536];
    let mut msg = vec![0u8; 4096];
    while start.elapsed().as_secs_f64() < total_secs {
        if let Ok((n, from)) = socket.recv_from(&mut buf) {
            if to.is_none() {
                to = Some(from);
                kcp = Some(make(from));
            }
            if let Some(k) = kcp.as_mut() {
                // The clock KCP times its acks with is the one of its last update: bring it to now.
                let _ = k.update(ms());
                let _ = k.input(&buf[..n]);
            }
        }
        let Some(k) = kcp.as_mut() else { continue };
        let _ = k.update(ms());
        while let Ok(n) = k.recv(&mut msg) {
            received += 1;
            if peer.is_none() {
                let echo = msg[..n].to_vec();
                let _ = k.send(&echo);
            }
        }
        if peer.is_some() && ms() >= next_send && (ms() as f64) < send_secs * 1000.0 {
            let _ = k.send(&[0x5A; 100]);
            next_send += 20;
        }
    }
    let dump = format!("{:?}", kcp.expect("the exchange started"));
    KcpStats { srtt: debug_field(&dump, "rx_srtt"), xmit: debug_field(&dump, "xmit") as u64, received }
}

#[test]
fn decoded_kcp_rtt_and_resends_match_the_library() {
    // Seeds 31, 32, 33: see `until_rtt_agrees` for why the RTT may be judged again.
    crate::common::until_rtt_agrees(3, |n| kcp_exchange_through_the_relay(31 + n as u64));
}

/// One exchange through the relay on `seed`; every exact comparison asserts, the RTT's is `Err`.
fn kcp_exchange_through_the_relay(seed: u64) -> Result<(), String> {
    let server_socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let server_addr = server_socket.local_addr().unwrap();
    let relay = Relay::start(server_addr, 0.2, Duration::from_millis(50), seed, DecodeChoice::Auto);
    let relay_addr = relay.client_addr();
    let server = std::thread::spawn(move || run_end(server_socket, None, 8.0, 11.0));
    let client_socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let client = std::thread::spawn(move || run_end(client_socket, Some(relay_addr), 8.0, 9.5));
    let (client, server) = (client.join().unwrap(), server.join().unwrap());
    let (decoder, counts) = relay.stop();
    let probe = decoder.probe().expect("probed").clone();
    assert_eq!(probe.picked, Some(FormatKind::Kcp), "{}", probe.reason);
    let stats = decoder.client_stats(1).unwrap();
    println!("decoder: {}", probe.reason);
    println!(
        "relay (seed {seed}): {} / {} datagrams, {} / {} dropped",
        counts.datagrams[0], counts.datagrams[1], counts.dropped[0], counts.dropped[1]
    );
    for (name, lib, dir) in [("client", client, Dir::AtoB), ("server", server, Dir::BtoA)] {
        let dec = stats.dirs[dir.index()];
        println!(
            "{name}: KCP rx_srtt {} ms, decoded {:.1} ms (mean {:.1}, {} samples); KCP xmit {}, decoded resends {} of {} \
             segments ({:.1} %), {} spurious; {} messages received",
            lib.srtt,
            dec.rtt_ms,
            dec.rtt_mean_ms,
            dec.rtt_samples,
            lib.xmit,
            dec.resends,
            dec.items_sent,
            dec.loss_percent,
            dec.spurious_resends,
            lib.received
        );
        assert!(lib.received > 300, "{name}: the exchange ran");
        assert_eq!(dec.resends, lib.xmit, "{name}: decoded resends vs KCP's xmit (seed {seed})");
        assert!(dec.resends > 0 && dec.spurious_resends <= dec.resends);
    }
    assert_eq!(stats.malformed, 0);
    for (name, lib, dir) in [("client", client, Dir::AtoB), ("server", server, Dir::BtoA)] {
        crate::common::rtt_agrees(name, stats.dirs[dir.index()].rtt_ms, lib.srtt, 0.05)
            .map_err(|e| format!("{e} (seed {seed})"))?;
    }
    Ok(())
}
