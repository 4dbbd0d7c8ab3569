//! `ackscope export --pcapng` of recordings whose datagrams crossed real sockets: a pair of
//! `ackscope peer --out` processes, an `ackscope proxy --out` between a client and an echo
//! server, and a UDP loopback run exported from the window, on loopback. The capture is read back and checked datagram by datagram against the
//! session: one packet on the sent interface per datagram at its send instant, one on the
//! delivered interface per copy the recorded link delivered, sizes as the events say, bytes as
//! the sockets wrote them (the proxy's as the client made them), fates as the link decided. A
//! recording without bytes is refused naming the file and what is missing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ackscope::capture::comment;
use ackscope::session::{self, Session};
use ackscope_protocol::{ClientId, Dir, DropReason, EventKind, SimTime};

use crate::pcapng_export::read_all;
use crate::proxy::{index_of, payload, spawn_peer, spawn_proxy, Client, Server};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-export-real-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn ackscope() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ackscope"))
}

fn free_port() -> std::net::SocketAddr {
    std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

/// What the session's events say of one datagram.
#[derive(Debug)]
struct Want {
    dir: Dir,
    sent_at: SimTime,
    size: u32,
    on_link: bool,
    dropped: Option<DropReason>,
    copies: u32,
}

impl Want {
    fn fate(&self) -> Option<&'static str> {
        self.on_link.then_some(match (self.dropped, self.copies) {
            (Some(DropReason::Random), _) => "dropped_loss",
            (Some(DropReason::Burst), _) => "dropped_burst",
            (Some(DropReason::QueueFull), _) => "dropped_queue",
            (Some(DropReason::Mtu), _) => "dropped_mtu",
            (None, 0) => "in_flight",
            (None, 1) => "delivered",
            (None, _) => "duplicated",
        })
    }
}

/// Every datagram by client and uid.
type Datagrams = BTreeMap<(ClientId, u64), Want>;
/// Every delivered copy: client, uid, instant.
type Copies = Vec<(ClientId, u64, SimTime)>;

/// Every datagram of `s` and every delivered copy.
fn wanted(s: &Session) -> (Datagrams, Copies) {
    let mut d: BTreeMap<(ClientId, u64), Want> = BTreeMap::new();
    let mut copies = Vec::new();
    for e in &s.events {
        let key = match e.kind {
            EventKind::PacketSent { uid, .. }
            | EventKind::LinkSent { uid, .. }
            | EventKind::LinkDropped { uid, .. }
            | EventKind::LinkDelivered { uid, .. } => (e.client, uid),
            _ => continue,
        };
        match e.kind {
            EventKind::PacketSent { side, bytes, .. } => {
                let w = d.entry(key).or_insert(Want {
                    dir: side.outgoing(),
                    sent_at: e.time,
                    size: bytes,
                    on_link: false,
                    dropped: None,
                    copies: 0,
                });
                w.sent_at = w.sent_at.min(e.time);
            }
            EventKind::LinkSent { dir, bytes, .. } => {
                let w = d.entry(key).or_insert(Want {
                    dir,
                    sent_at: e.time,
                    size: bytes,
                    on_link: true,
                    dropped: None,
                    copies: 0,
                });
                w.on_link = true;
                assert_eq!((w.dir, w.size), (dir, bytes), "{key:?}: the link and the sender agree");
            }
            EventKind::LinkDropped { reason, .. } => d.get_mut(&key).unwrap().dropped = Some(reason),
            EventKind::LinkDelivered { .. } => {
                d.get_mut(&key).unwrap().copies += 1;
                copies.push((key.0, key.1, e.time));
            }
            _ => {}
        }
    }
    (d, copies)
}

/// Checks the capture `bytes` against the session `s` (module doc); the numbers of datagrams
/// and of delivered copies.
fn check_capture(s: &Session, bytes: &[u8], name: &str) -> (usize, usize) {
    assert!(!s.payloads.is_empty(), "{name}: the recording keeps its datagrams' bytes");
    let (packets, interfaces) = read_all(bytes);
    let names: Vec<&str> = interfaces.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["lane1-sent", "lane1-delivered"], "{name}");
    let (want, copies) = wanted(s);
    let kept: HashMap<(ClientId, u64), &[u8]> = s.payloads.iter().map(|p| ((p.client, p.uid), &p.hex[..])).collect();
    let (mut sent, mut delivered) = (HashSet::new(), Vec::new());
    for p in &packets {
        let udp = p.udp(interfaces[p.interface as usize].linktype).expect("IPv4/UDP");
        let c = comment::parse(&p.comment).unwrap_or_else(|| panic!("{name}: comment {:?}", p.comment));
        let key: (ClientId, u64) = (c["client"].parse().unwrap(), c["uid"].parse().unwrap());
        let w = want.get(&key).unwrap_or_else(|| panic!("{name}: {key:?} is in no event"));
        assert_eq!(udp.payload.len(), w.size as usize, "{name} {key:?}: size");
        assert_eq!(&udp.payload[..], kept[&key], "{name} {key:?}: the bytes the socket wrote or read");
        let at = SimTime(p.time_ns / 1000);
        if p.interface == 0 {
            assert!(sent.insert(key), "{name} {key:?}: sent once");
            assert_eq!(at, w.sent_at, "{name} {key:?}: send instant");
            assert_eq!(c.get("fate").map(String::as_str), w.fate(), "{name} {key:?}: fate");
        } else {
            delivered.push((key.0, key.1, at));
        }
    }
    assert_eq!(sent.len(), want.len(), "{name}: every datagram on the sent interface");
    let mut copies = copies;
    copies.sort();
    delivered.sort();
    assert_eq!(delivered, copies, "{name}: every copy the link delivered, when it arrived");
    (want.len(), copies.len())
}

/// Exports `session_path` with the command line and checks the capture against the session
/// (module doc); returns the session.
fn export_and_check(session_path: &Path, name: &str) -> Session {
    let s = session::load(session_path).unwrap();
    let out = temp(&format!("{name}.pcapng"));
    let done = ackscope().arg("export").arg(session_path).arg("--pcapng").arg(&out).arg("--json").output().unwrap();
    assert!(done.status.success(), "{name}: {}", String::from_utf8_lossy(&done.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap();
    let (sent, delivered) = check_capture(&s, &std::fs::read(&out).unwrap(), name);
    assert_eq!(summary["sent"].as_u64(), Some(sent as u64), "{name}: {summary}");
    assert_eq!(summary["delivered"].as_u64(), Some(delivered as u64), "{name}: {summary}");
    assert!(summary.get("without_bytes").is_none(), "{name}: nothing left out: {summary}");
    s
}

/// A UDP loopback run in the window, exported with *Export...* to a `.pcapng`: the capture has
/// the bytes both sockets wrote, with the link's fates (15 % loss each way).
#[test]
fn the_window_exports_a_udp_run_with_the_bytes_its_sockets_wrote() {
    let mut s = ackscope_protocol::Scenario { seed: 8, ..Default::default() };
    for d in Dir::BOTH {
        s.link.get_mut(d).loss_percent = 15.0;
    }
    let mut state = crate::common::udp_run_until(s, 150);
    let path = temp("window-udp.pcapng");
    state.export_pcapng(&path);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !state.file_jobs().is_empty() {
        state.poll_files();
        assert!(Instant::now() < deadline, "the export did not finish within 60 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    state.poll_files();
    assert_eq!(state.error, None);
    let session = state.lanes[0].to_session();
    let (sent, _) = check_capture(&session, &std::fs::read(&path).unwrap(), "window-udp");
    assert!(sent >= 150, "{sent} datagrams");
    let (want, _) = wanted(&session);
    assert!(want.values().any(|w| w.dropped.is_some()), "15 % loss drops some");
    // Both ends are in this process, so the link's fate is known for every datagram the other
    // socket read (the last few may still be in the kernel when the run stops).
    let known = want.values().filter(|w| w.on_link).count();
    assert!(known + 20 >= want.len(), "{known} fates known of {}", want.len());
}

/// Two `ackscope peer` processes on loopback, 10 % loss into each: both recordings export, and
/// what side b's socket read is what side a's wrote.
#[test]
fn peer_recordings_export_with_the_bytes_their_sockets_wrote_and_read() {
    let (pa, pb) = (free_port(), free_port());
    let (oa, ob) = (temp("peer-a.ron"), temp("peer-b.ron"));
    let peer = |side: &str, bind, connect, out: &Path| {
        let args = ["--seconds", "2", "--set", "seed=4", "--set", "link.loss_percent=10", "--force", "--out"];
        spawn_peer(side, bind, connect, &[&args[..], &[out.to_str().unwrap()]].concat())
    };
    let (a, b) = (peer("a", pa, pb, &oa), peer("b", pb, pa, &ob));
    for p in [a, b] {
        let done = p.wait_with_output().unwrap();
        assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    }
    let sa = export_and_check(&oa, "peer-a");
    let sb = export_and_check(&ob, "peer-b");
    // a's own sends (its PacketSent uids) and b's reads (its link's sends): the same bytes.
    let own = |s: &Session| -> HashSet<u64> {
        s.events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::PacketSent { uid, .. } => Some(uid),
                _ => None,
            })
            .collect()
    };
    let bytes_of = |s: &Session, mine: bool| -> Vec<Vec<u8>> {
        let own = own(s);
        s.payloads.iter().filter(|p| own.contains(&p.uid) == mine).map(|p| p.hex.clone()).collect()
    };
    let (a_wrote, b_read) = (bytes_of(&sa, true), bytes_of(&sb, false));
    assert!(a_wrote.len() > 50 && b_read.len() > 50, "{} written, {} read", a_wrote.len(), b_read.len());
    // b may start after a's first sends or stop before its last (those never reach a socket):
    // what it read is a's writes, in a's order.
    let mut rest = a_wrote.iter();
    for (i, r) in b_read.iter().enumerate() {
        assert!(rest.any(|w| w == r), "datagram {i} b read is not one a wrote next");
    }
    for s in [&sa, &sb] {
        assert!(
            s.events.iter().any(|e| matches!(e.kind, EventKind::LinkDropped { .. })),
            "10 % loss drops some arrivals"
        );
    }
}

/// `ackscope proxy --out` with 10 % loss and 5 ms each way between a client and an echo server:
/// the capture has every datagram the client sent and the server echoed, with the proxy's fates.
#[test]
fn a_proxy_recording_exports_every_datagram_it_relayed_with_its_fate() {
    let server = Server::echo("127.0.0.1:0");
    let listen = free_port();
    let out = temp("proxied.ron");
    let set = ["--set", "link.latency_ms=5", "--set", "link.loss_percent=10", "--set", "seed=9"];
    let child = spawn_proxy(
        listen,
        server.addr,
        &[&set[..], &["--seconds", "3", "--decode", "none", "--out", out.to_str().unwrap()]].concat(),
    );
    let client = Client::to(listen);
    client.send_until_answered(&payload(0));
    for i in 1..=120 {
        client.send(&payload(i));
        std::thread::sleep(Duration::from_millis(2));
    }
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let s = export_and_check(&out, "proxy");
    // Every byte string is one the client made (the server echoes them unchanged).
    assert!(s.payloads.iter().all(|p| index_of(&p.hex).is_some()), "payloads as the client made them");
    let (want, _) = wanted(&s);
    let drops = want.values().filter(|w| w.dropped.is_some()).count();
    assert!(drops > 0 && want.len() > 150, "{drops} dropped of {}", want.len());
    // The capture read back by `summary`: per direction, the proxy's own drops.
    let pcap = temp("proxy.pcapng");
    let j = crate::capture_import::run(&["summary", pcap.to_str().unwrap(), "--json", "--decode", "none"]);
    let v: serde_json::Value = serde_json::from_str(&j).unwrap();
    for (dir, key) in [(Dir::AtoB, "server_to_client"), (Dir::BtoA, "client_to_server")] {
        let t = &v["clients"][0][key]["truth"];
        let sent = want.values().filter(|w| w.dir == dir).count() as u64;
        let dropped = want.values().filter(|w| w.dir == dir && w.dropped.is_some()).count() as u64;
        assert_eq!((t["sent"].as_u64(), t["dropped"].as_u64()), (Some(sent), Some(dropped)), "{key}: {t}");
    }
}

/// A peer recording saved without bytes (as every one was before they were kept) is refused,
/// the message naming the file and what is missing; nothing is written.
#[test]
fn a_real_udp_recording_without_bytes_is_refused_naming_what_is_missing() {
    let mut s = Session::scenario_only(ackscope_protocol::Scenario::default());
    s.transport = session::Transport::Udp;
    s.origin = Some(ackscope::lane::Origin::UdpPeer { local: "127.0.0.1:1".into(), remote: "127.0.0.1:2".into() });
    s.events = vec![ackscope_protocol::Event::new(
        SimTime(1000),
        EventKind::PacketSent { side: ackscope_protocol::Side::A, seq: 0, bytes: 20, uid: 0 },
    )];
    s.duration_us = 2000;
    let path = temp("old-peer.ron");
    session::save(&s, &path).unwrap();
    let pcap = temp("old-peer.pcapng");
    let done = ackscope().arg("export").arg(&path).arg("--pcapng").arg(&pcap).output().unwrap();
    let err = String::from_utf8_lossy(&done.stderr);
    assert!(!done.status.success());
    assert!(err.contains("old-peer.ron") && err.contains("payloads") && err.contains("1 datagrams"), "{err}");
    assert!(!pcap.exists(), "a refused export writes nothing");
}
