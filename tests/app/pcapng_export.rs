//! `ackscope export --pcapng`: the capture read back with the pcapng reader and checked against
//! the session's events (every send on the sent interface at its send time with the bytes the
//! endpoint wrote, every delivered copy on the delivered interface at its arrival), and the
//! refusals (UDP recordings, recordings whose re-run differs).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ackscope::capture::address::{client_addr, client_port, server_port, strategy_of_port, SERVER_ADDR};
use ackscope::capture::comment;
use ackscope::capture::{write_capture, CaptureReader, CapturedPacket, Interface};
use ackscope::session::{self, run_lane, run_lane_on, Session};
use ackscope_protocol::{
    make_peer, Action, Dir, EventKind, Peer, PeerFactory, Scenario, Side, SimTime, Simulation, Step, Strategy, TapDir,
    TapLog,
};

/// Loss, duplicates and jitter both ways: every fate shows.
pub fn lossy(strategy: Strategy, seed: u64) -> Scenario {
    let mut s = Scenario { strategy, seed, ..Scenario::default() };
    s.workload.chunk_kib = 24;
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.loss_percent = 12.0;
        l.duplicate_percent = 4.0;
        l.jitter_ms = 25.0;
    }
    s
}

/// A recorded session of `secs` of `scenario` with `actions`.
pub fn recorded(scenario: Scenario, actions: Vec<Step>, secs: f64) -> Session {
    let until = SimTime::from_secs_f64(secs);
    let (_, events, actions) = run_lane(&scenario, &actions, until).unwrap();
    Session { events, actions, duration_us: until.0, ..Session::scenario_only(scenario) }
}

/// Every packet of a capture with its interface.
pub fn read_all(bytes: &[u8]) -> (Vec<CapturedPacket>, Vec<Interface>) {
    let mut r = CaptureReader::new(bytes, "capture").unwrap();
    let mut packets = Vec::new();
    while let Some(p) = r.next_packet() {
        packets.push(p.unwrap());
    }
    (packets, r.interfaces().to_vec())
}

/// The bytes each side wrote in send order, from an independent tapped re-run: (time, seq,
/// bytes) per side (several datagrams may share an instant and a sequence: fragments).
fn independent_bytes(scenario: &Scenario, actions: &[Step], secs: f64) -> [Vec<(SimTime, u32, Vec<u8>)>; 2] {
    let log = TapLog::new();
    let peers = Side::BOTH.map(|side| Box::new(log.tap(side, make_peer(scenario, side))) as Box<dyn Peer>);
    let mut sim = Simulation::with_peers(scenario.clone(), peers);
    let factory_log = log.clone();
    sim.set_peer_factory(move || -> PeerFactory {
        let log = factory_log.clone();
        Box::new(move |s: &Scenario, side: Side| Box::new(log.tap(side, make_peer(s, side))) as Box<dyn Peer>)
    });
    run_lane_on(sim, actions, SimTime::from_secs_f64(secs)).unwrap();
    let mut out: [Vec<(SimTime, u32, Vec<u8>)>; 2] = Default::default();
    for t in log.take() {
        if let TapDir::Sent { seq } = t.dir {
            out[t.side.index()].push((t.time, seq, t.bytes));
        }
    }
    out
}

/// Every send and delivery of `events`, checked packet by packet against the capture.
fn check_capture(session: &Session, packets: &[CapturedPacket], secs: f64) {
    let (scenario, events, lane) = (&session.scenario, &session.events, 1);
    let sent_if = (lane as u32 - 1) * 2;
    let strategy = scenario.strategy;
    let wrote = independent_bytes(scenario, &session.actions, secs);
    let sent: Vec<&CapturedPacket> = packets.iter().filter(|p| p.interface == sent_if).collect();
    let delivered: Vec<&CapturedPacket> = packets.iter().filter(|p| p.interface == sent_if + 1).collect();
    let sends: Vec<(SimTime, Side, u32, u32, u64)> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::PacketSent { side, seq, bytes, uid } => Some((e.time, side, seq, bytes, uid)),
            _ => None,
        })
        .collect();
    assert_eq!(sent.len(), sends.len(), "{strategy:?}: one packet per send");
    let mut time_of: HashMap<u64, SimTime> = HashMap::new();
    let mut nth = [0usize; 2];
    for (p, (time, side, seq, bytes, uid)) in sent.iter().zip(&sends) {
        let f = comment::parse(&p.comment).expect("an ackscope comment");
        assert_eq!(f["uid"], uid.to_string(), "{strategy:?}: sends in order");
        assert_eq!(f["seq"], seq.to_string());
        assert_eq!(p.time_ns, time.0 * 1000, "{strategy:?}: uid {uid} at its send time");
        let udp = p.udp(pcap_file::DataLink::RAW).expect("IPv4/UDP");
        assert_eq!(udp.payload.len(), *bytes as usize);
        let (t, s, b) = &wrote[side.index()][nth[side.index()]];
        nth[side.index()] += 1;
        assert_eq!((t, s), (time, seq), "{strategy:?}: uid {uid}: the independent run's send");
        assert!(udp.payload == *b, "{strategy:?}: uid {uid} is not the bytes written");
        // The server's port names the format in force (a restart may change it: tested below).
        let (server, client) = if *side == Side::A { (udp.src, udp.dst) } else { (udp.dst, udp.src) };
        assert_eq!((server.0, client), (SERVER_ADDR, (client_addr(1), client_port(lane))), "{strategy:?}");
        assert!(strategy_of_port(server.1).is_some(), "{strategy:?}: server port {}", server.1);
        time_of.insert(*uid, *time);
    }
    let arrivals: Vec<(SimTime, u64, u32)> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::LinkDelivered { uid, delay_us, .. } => Some((e.time, uid, delay_us)),
            _ => None,
        })
        .collect();
    assert_eq!(delivered.len(), arrivals.len(), "{strategy:?}: one packet per delivered copy");
    let mut by_time: Vec<(SimTime, u64)> = arrivals.iter().map(|a| (a.0, a.1)).collect();
    let mut seen: Vec<(SimTime, u64)> = Vec::new();
    for p in &delivered {
        let f = comment::parse(&p.comment).unwrap();
        let uid: u64 = f["uid"].parse().unwrap();
        seen.push((SimTime(p.time_ns / 1000), uid));
        let delay_us = p.time_ns / 1000 - time_of[&uid].0;
        assert_eq!(f["delay_ms"], format!("{:.3}", delay_us as f64 / 1000.0), "{strategy:?}: uid {uid}");
        let sent_bytes = &sent.iter().find(|s| comment::parse(&s.comment).unwrap()["uid"] == f["uid"]).unwrap().data;
        assert_eq!(&p.data, sent_bytes, "{strategy:?}: a delivered copy is the packet sent");
    }
    by_time.sort();
    seen.sort();
    assert_eq!(seen, by_time, "{strategy:?}: deliveries at their arrival times");
    let dropped = events.iter().filter(|e| matches!(e.kind, EventKind::LinkDropped { .. })).count();
    let said_dropped = sent.iter().filter(|p| p.comment.contains("fate=dropped_")).count();
    assert_eq!(dropped, said_dropped, "{strategy:?}: drops in the comments");
    assert!(dropped > 0 && sent.iter().any(|p| p.comment.contains("fate=duplicated")), "{strategy:?}: fates show");
}

#[test]
fn every_datagram_of_every_strategy_is_in_the_capture_as_recorded() {
    let secs = 3.0;
    for strategy in Strategy::all() {
        let scenario = lossy(strategy, 5);
        let session = recorded(scenario.clone(), Vec::new(), secs);
        let mut bytes = Vec::new();
        let summary = write_capture(&session, &mut bytes).unwrap();
        let (packets, interfaces) = read_all(&bytes);
        assert_eq!(interfaces.len(), 2);
        assert_eq!(interfaces[0].name, "lane1-sent");
        assert!(interfaces[1].description.contains(strategy.name()));
        assert_eq!(summary.sent + summary.delivered, packets.len() as u64);
        check_capture(&session, &packets, secs);
        assert!(packets.windows(2).all(|w| w[0].time_ns <= w[1].time_ns), "{strategy:?}: in time order");
    }
}

#[test]
fn a_restart_into_another_strategy_moves_the_server_port_and_ab_lanes_get_their_own_interfaces() {
    let scenario = lossy(Strategy::Glenn, 9);
    let actions = vec![Step::new(SimTime(1_500_000), Action::Strategy(Strategy::Ue4))];
    let mut session = recorded(scenario.clone(), actions, 3.0);
    let b = Scenario { strategy: Strategy::Dnm, ..scenario.clone() };
    let (_, ab_events, ab_actions) = run_lane(&b, &[], SimTime(session.duration_us)).unwrap();
    (session.ab, session.ab_events, session.ab_actions) = (Some(Strategy::Dnm), ab_events, ab_actions);
    let mut bytes = Vec::new();
    let summary = write_capture(&session, &mut bytes).unwrap();
    assert_eq!(summary.lanes, 2);
    let (packets, interfaces) = read_all(&bytes);
    assert_eq!(
        interfaces.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(),
        ["lane1-sent", "lane1-delivered", "lane2-sent", "lane2-delivered"]
    );
    let port = |p: &CapturedPacket| {
        let u = p.udp(pcap_file::DataLink::RAW).unwrap();
        if u.src.0 == SERVER_ADDR {
            (u.src.1, u.dst.1)
        } else {
            (u.dst.1, u.src.1)
        }
    };
    let lane1: Vec<&CapturedPacket> = packets.iter().filter(|p| p.interface < 2).collect();
    let before = lane1.iter().filter(|p| p.time_ns < 1_500_000_000).map(|p| port(p)).collect::<Vec<_>>();
    let after = lane1.iter().filter(|p| p.time_ns > 1_500_000_000).map(|p| port(p)).collect::<Vec<_>>();
    assert!(!before.is_empty() && before.iter().all(|p| *p == (server_port(Strategy::Glenn), client_port(1))));
    assert!(!after.is_empty() && after.iter().all(|p| *p == (server_port(Strategy::Ue4), client_port(1))));
    let lane2: Vec<&CapturedPacket> = packets.iter().filter(|p| p.interface >= 2).collect();
    assert!(lane2.iter().all(|p| port(p) == (server_port(Strategy::Dnm), client_port(2))));
    let b_sends = session.ab_events.iter().filter(|e| matches!(e.kind, EventKind::PacketSent { .. })).count();
    assert_eq!(lane2.iter().filter(|p| p.interface == 2).count(), b_sends);
    // The restarted lane is checked send by send as well (its endpoints were rebuilt, tapped).
    let lane1: Vec<CapturedPacket> = packets.iter().filter(|p| p.interface < 2).cloned().collect();
    check_capture(&session, &lane1, 3.0);
}

fn ackscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ackscope")).args(args).output().expect("run ackscope")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ackscope-pcapng-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_command_line_exports_a_shipped_session_and_refuses_what_it_cannot() {
    let dir = temp_dir("cli");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/recorded-glenn.ron");
    let out = dir.join("glenn.pcapng");
    let o = ackscope(&["export", shipped.to_str().unwrap(), "--pcapng", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let (packets, _) = read_all(&std::fs::read(&out).unwrap());
    let s = session::load(&shipped).unwrap();
    let sends = s.events.iter().filter(|e| matches!(e.kind, EventKind::PacketSent { .. })).count() as u64;
    assert_eq!(json["sent"], sends);
    assert_eq!(json["sent"].as_u64().unwrap() + json["delivered"].as_u64().unwrap(), packets.len() as u64);
    assert_eq!(json["bytes"], std::fs::metadata(&out).unwrap().len());

    // A recording made over UDP without its datagrams' bytes (saved before they were kept):
    // refused, nothing written.
    let udp = dir.join("udp.ron");
    let mut u = recorded(lossy(Strategy::Glenn, 1), Vec::new(), 1.0);
    u.transport = ackscope_protocol::Transport::Udp;
    session::save(&u, &udp).unwrap();
    let target = dir.join("udp.pcapng");
    let o = ackscope(&["export", udp.to_str().unwrap(), "--pcapng", target.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("real UDP") && err.contains("udp.ron"), "{err}");
    assert!(!target.exists());

    // A recording whose re-run differs (edited events) is refused, naming the first difference.
    let edited = dir.join("edited.ron");
    let mut e = recorded(lossy(Strategy::Glenn, 1), Vec::new(), 1.0);
    let i = e.events.iter().position(|e| matches!(e.kind, EventKind::PacketSent { .. })).unwrap();
    if let EventKind::PacketSent { ref mut bytes, .. } = e.events[i].kind {
        *bytes += 1;
    }
    session::save(&e, &edited).unwrap();
    let o = ackscope(&["export", edited.to_str().unwrap(), "--pcapng", target.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains(&format!("differs from the recording at event {i}")), "{err}");
    assert!(!target.exists());

    // Not over the session itself, and not together with the CSV tables.
    let o = ackscope(&["export", edited.to_str().unwrap(), "--pcapng", edited.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("is the session being exported"));
    let o = ackscope(&["export", edited.to_str().unwrap(), "--pcapng", "a.pcapng", "--packets", "p.csv"]);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}
