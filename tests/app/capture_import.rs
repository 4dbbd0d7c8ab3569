//! Captures read back (`ackscope::capture::import`, `summary CAPTURE`): a session exported to
//! pcapng and imported gives the session's own per-direction counts, true loss and delays; the
//! ENet and KCP traffic of the real-library tests, written as a capture, gives the decoders'
//! figures; each flow's server end is found by the rule of `capture::server_end`; damaged, cut and foreign captures give a clear error or counted skips, never a
//! panic.

use std::path::{Path, PathBuf};

use ackscope::capture::address::client_of;
use ackscope::capture::import::{import, ImportOptions, ImportSummary};
use ackscope::capture::server_end::ServerBy;
use ackscope::capture::write_capture;
use ackscope_protocol::{summarize, Clients, Dir, Event, EventKind, Strategy};

use crate::pcapng_export::{lossy, recorded};

/// A fresh path in the system's temp directory for this test.
pub fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-capture-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// What the link did in one direction, from a session's own events: sends, drops, first
/// copies, extra copies, the sum of every delivered copy's delay (µs: the one-way delay is a
/// mean over copies, as the session's ledger takes it).
fn truth_of(events: &[Event], dir: Dir) -> [u64; 5] {
    let mut first = std::collections::HashSet::new();
    let mut t = [0u64; 5];
    for e in events {
        match e.kind {
            EventKind::LinkSent { dir: d, .. } if d == dir => t[0] += 1,
            EventKind::LinkDropped { dir: d, .. } if d == dir => t[1] += 1,
            EventKind::LinkDelivered { dir: d, uid, delay_us } if d == dir => {
                if first.insert(uid) {
                    t[2] += 1;
                } else {
                    t[3] += 1;
                }
                t[4] += u64::from(delay_us);
            }
            _ => {}
        }
    }
    t
}

fn imported_truth(s: &ImportSummary, dir: Dir) -> [u64; 5] {
    let c = &s.clients[0];
    let d = if dir == Dir::AtoB { &c.server_to_client } else { &c.client_to_server };
    let t = d.truth;
    [t.sent, t.dropped, t.delivered, t.duplicates, t.delay_sum_us]
}

/// Exports `strategy`'s lossy session (seed `seed`) and imports it back.
fn round_trip(strategy: Strategy, seed: u64, secs: f64) -> (Vec<Event>, Vec<Event>, ImportSummary) {
    let session = recorded(lossy(strategy, seed), Vec::new(), secs);
    let path = temp_path(&format!("{}-{seed}.pcapng", strategy.name()));
    write_capture(&session, std::fs::File::create(&path).unwrap()).unwrap();
    let (events, summary) = import(&path, &ImportOptions::default()).unwrap();
    std::fs::remove_file(&path).ok();
    (session.events, events, summary)
}

#[test]
fn an_exported_session_imports_with_its_own_counts_loss_and_delays() {
    for (strategy, seed) in [(Strategy::Glenn, 1), (Strategy::Ue4, 2), (Strategy::Acks, 3), (Strategy::Dnm, 1)] {
        let (session, imported, s) = round_trip(strategy, seed, 12.0);
        let ctx = format!("{} seed {seed}", strategy.name());
        assert_eq!(s.clients.len(), 1, "{ctx}: one flow");
        assert_eq!(s.decoder, strategy_format(strategy), "{ctx}: {}", s.decoder_reason);
        assert_eq!(s.unmatched_copies, 0, "{ctx}");
        for dir in Dir::BOTH {
            let want = truth_of(&session, dir);
            assert!(want[1] > 0 && want[3] > 0, "{ctx}: the session drops and duplicates");
            assert_eq!(imported_truth(&s, dir), want, "{ctx} {dir:?}: sent, dropped, delivered, duplicates, delay sum");
            assert_eq!(truth_of(&imported, dir), want, "{ctx} {dir:?}: the imported link events");
        }
        let (a, b) = (summarize(&session).0, summarize(&imported).0);
        assert_eq!(
            (a.sent, a.link_dropped, a.delivered),
            (b.sent, b.link_dropped, b.delivered),
            "{ctx}: ledger totals"
        );
        // A copy the link made that had not arrived when the recording ended is in no capture.
        let extra: u64 = Dir::BOTH.iter().map(|d| truth_of(&session, *d)[3]).sum();
        assert_eq!(b.duplicated, extra, "{ctx}: duplicates delivered");
        assert!(a.duplicated >= extra);
        assert!(imported.windows(2).all(|w| w[0].time <= w[1].time), "{ctx}: events in time order");
        // What the decoder derived: the endpoints' acks are the session's (a few at the end
        // may be in flight differently).
        let acked =
            |events: &[Event]| events.iter().filter(|e| matches!(e.kind, EventKind::PacketAcked { .. })).count();
        let (sa, ia) = (acked(&session), acked(&imported));
        println!("{ctx}: session acked {sa}, decoded {ia}");
        // dnm too, under duplicates and 25 ms jitter: the decoder drops late packets' acks as
        // dnm's receiver does (it once counted 841 where the endpoints took 650).
        assert!(sa.abs_diff(ia) * 100 <= sa, "{ctx}: session acked {sa}, decoded {ia}");
    }
}

/// The decoder format name `auto` should pick for an ackscope strategy's traffic.
fn strategy_format(s: Strategy) -> &'static str {
    match s {
        Strategy::Glenn | Strategy::Hybrid => "glenn",
        Strategy::Acks => "reliable",
        other => other.name(),
    }
}

#[test]
fn summary_of_a_capture_prints_per_client_directions_and_json() {
    let session = recorded(lossy(Strategy::Glenn, 4), Vec::new(), 4.0);
    let path = temp_path("summary.pcapng");
    write_capture(&session, std::fs::File::create(&path).unwrap()).unwrap();
    let out = run(&["summary", path.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let c = &v["clients"][0];
    assert_eq!(c["server"], "10.0.0.1:27100");
    assert_eq!(c["client_end"], "10.1.0.1:50001");
    let sent = truth_of(&session.events, Dir::AtoB)[0];
    assert_eq!(c["server_to_client"]["packets"], sent);
    assert!(c["client_to_server"]["loss_true_percent"].as_f64().unwrap() > 0.0);
    let text = run(&["summary", path.to_str().unwrap(), "--decode", "none", "--port", "27100"]);
    assert!(text.contains("decoder none") && text.contains("client 1: 10.1.0.1:50001"), "{text}");
    let none = run(&["summary", path.to_str().unwrap(), "--client-filter", "10.9.9.9", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&none).unwrap();
    assert_eq!(v["clients"].as_array().unwrap().len(), 0);
    assert!(v["filtered"].as_u64().unwrap() > 0);
    std::fs::remove_file(&path).ok();
}

/// Runs the ackscope binary; its stdout (it must succeed).
pub fn run(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ackscope")).args(args).output().unwrap();
    assert!(out.status.success(), "ackscope {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Imports `bytes` written to a file (the property test's mutated captures).
fn import_bytes(bytes: &[u8], name: &str) -> anyhow::Result<ImportSummary> {
    let path = temp_path(name);
    std::fs::write(&path, bytes).unwrap();
    let r = import(Path::new(&path), &ImportOptions::default()).map(|r| r.1);
    std::fs::remove_file(&path).ok();
    r
}

#[test]
fn foreign_and_damaged_captures_are_errors_or_counted_skips() {
    let e = import_bytes(b"definitely not a capture", "junk.pcapng").unwrap_err().to_string();
    assert!(e.contains("not a pcapng or pcap file") && e.contains("junk.pcapng"), "{e}");
    let session = recorded(lossy(Strategy::Acks, 6), Vec::new(), 2.0);
    let mut bytes = Vec::new();
    write_capture(&session, &mut bytes).unwrap();
    let whole = import_bytes(&bytes, "whole.pcapng").unwrap();
    let cut = import_bytes(&bytes[..bytes.len() * 2 / 3], "cut.pcapng").unwrap();
    assert!(cut.skipped.damaged.is_some(), "a cut file says so");
    assert!(cut.skipped.packets < whole.skipped.packets && cut.skipped.packets > 0);
    // An Ethernet pcap with a UDP datagram, an ARP frame, a truncated datagram, and a packet on
    // an unknown link type (as its own file).
    let s = import_bytes(&classic_pcap(1, &[udp_frame(60), arp_frame(), udp_frame(60)[..50].to_vec()]), "eth.pcap")
        .unwrap();
    assert_eq!((s.skipped.packets, s.skipped.not_udp, s.skipped.truncated), (3, 1, 1), "{:?}", s.skipped);
    assert_eq!(s.clients.len(), 1);
    let s = import_bytes(&classic_pcap(147, &[udp_frame(60)]), "user.pcap").unwrap();
    assert_eq!(s.skipped.link_types.get(&147), Some(&1));
    assert!(s.to_text().contains("on link type 147"), "{}", s.to_text());
}

/// Sixteen clients of one session exported and imported: a flow per client, each with the
/// session's own truth for that client in each direction, and the server end read from the
/// address the export gave it (never guessed), as it was before the import's rule changed.
#[test]
fn sixteen_clients_export_and_import_each_with_its_own_truth() {
    let mut scenario = lossy(Strategy::Glenn, 7);
    scenario.clients = Clients::Count(16);
    let session = recorded(scenario, Vec::new(), 3.0);
    let path = temp_path("sixteen-clients.pcapng");
    write_capture(&session, std::fs::File::create(&path).unwrap()).unwrap();
    let (_, s) = import(&path, &ImportOptions::default()).unwrap();
    std::fs::remove_file(&path).ok();
    assert_eq!(s.clients.len(), 16);
    let mut seen = std::collections::BTreeSet::new();
    for c in &s.clients {
        assert_eq!((c.server.as_str(), c.server_by), ("10.0.0.1:27100", ServerBy::Ackscope), "client {}", c.client);
        let end: std::net::SocketAddr = c.client_end.parse().unwrap();
        let std::net::IpAddr::V4(ip) = end.ip() else { panic!("{end}") };
        let k = client_of(ip).unwrap_or_else(|| panic!("{end} is no client address"));
        seen.insert(k);
        let own: Vec<Event> = session.events.iter().filter(|e| e.client == k).cloned().collect();
        for (dir, d) in [(Dir::AtoB, &c.server_to_client), (Dir::BtoA, &c.client_to_server)] {
            let t = d.truth;
            let want = truth_of(&own, dir);
            assert!(want[0] > 0, "client {k} sent {dir:?}");
            assert_eq!([t.sent, t.dropped, t.delivered, t.duplicates, t.delay_sum_us], want, "client {k} {dir:?}");
        }
    }
    assert_eq!(seen.len(), 16, "every client once: {seen:?}");
}

/// A capture someone else wrote (a classic pcap, with no word of who is the server) and the
/// server on the higher port: one flow is read by who spoke first, and a server that speaks first
/// to each of three clients by the end the flows share.
#[test]
fn a_foreign_capture_finds_its_server_by_who_spoke_first_and_the_end_flows_share() {
    let server = ([192, 168, 1, 1], 50_000);
    let client = |k: u8| ([192, 168, 1, 10 + k], 40_000);
    let mut frames = Vec::new();
    for i in 0..5 {
        frames.push(frame(client(1), server, format!("up {i}").as_bytes()));
        if i < 3 {
            frames.push(frame(server, client(1), format!("down {i}").as_bytes()));
        }
    }
    let s = import_bytes(&classic_pcap(1, &frames), "one-flow.pcap").unwrap();
    assert_eq!(s.clients.len(), 1);
    let c = &s.clients[0];
    assert_eq!((c.server.as_str(), c.client_end.as_str()), ("192.168.1.1:50000", "192.168.1.11:40000"));
    assert_eq!(c.server_by, ServerBy::FirstSender);
    assert_eq!((c.client_to_server.packets, c.server_to_client.packets), (5, 3));

    let mut frames = Vec::new();
    for k in 1..=3 {
        frames.push(frame(server, client(k), b"hello"));
        frames.push(frame(client(k), server, b"hi"));
        frames.push(frame(client(k), server, b"hi again"));
    }
    let s = import_bytes(&classic_pcap(1, &frames), "three-flows.pcap").unwrap();
    assert_eq!(s.clients.len(), 3);
    for c in &s.clients {
        assert_eq!((c.server.as_str(), c.server_by), ("192.168.1.1:50000", ServerBy::SharedEnd), "{c:?}");
        assert_eq!((c.client_to_server.packets, c.server_to_client.packets), (2, 1), "{c:?}");
    }
}

/// An Ethernet frame with IPv4/UDP from `src` to `dst` carrying `payload`.
fn frame(src: ([u8; 4], u16), dst: ([u8; 4], u16), payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1])
        .ipv4(src.0, dst.0, 64)
        .udp(src.1, dst.1)
        .write(&mut out, payload)
        .unwrap();
    out
}

/// An Ethernet frame with IPv4/UDP from 192.168.1.2:40000 to 192.168.1.1:9000 and `n` payload bytes.
fn udp_frame(n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1])
        .ipv4([192, 168, 1, 2], [192, 168, 1, 1], 64)
        .udp(40000, 9000)
        .write(&mut out, &vec![7u8; n])
        .unwrap();
    out
}

fn arp_frame() -> Vec<u8> {
    let mut f = vec![0xff; 12];
    f.extend([0x08, 0x06]);
    f.extend([0u8; 28]);
    f
}

/// A classic little-endian microsecond pcap of link type `link` holding `frames`.
fn classic_pcap(link: u32, frames: &[Vec<u8>]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(0xA1B2_C3D4u32.to_le_bytes());
    b.extend(2u16.to_le_bytes());
    b.extend(4u16.to_le_bytes());
    b.extend([0u8; 8]);
    b.extend(65535u32.to_le_bytes());
    b.extend(link.to_le_bytes());
    for (i, f) in frames.iter().enumerate() {
        b.extend((1_700_000_000u32 + i as u32).to_le_bytes());
        b.extend(0u32.to_le_bytes());
        b.extend((f.len() as u32).to_le_bytes());
        b.extend((f.len() as u32 + 10).to_le_bytes());
        b.extend(f);
    }
    b
}

mod mutated {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
        /// Bytes flipped, cut or inserted anywhere in a real capture: an error or a summary,
        /// never a panic.
        #[test]
        fn mutated_captures_never_panic(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
                                       cut in any::<usize>(), seed in 0u64..4) {
            let session = recorded(lossy(ackscope_protocol::Strategy::Glenn, seed), Vec::new(), 1.0);
            let mut bytes = Vec::new();
            write_capture(&session, &mut bytes).unwrap();
            for (at, x) in flips {
                let i = at % bytes.len();
                bytes[i] ^= x | 1;
            }
            bytes.truncate(cut % (bytes.len() + 1));
            let _ = import_bytes(&bytes, &format!("mutated-{seed}.pcapng"));
        }
    }
}

mod window {
    use ackscope::app::{AppState, Tab};
    use ackscope::model::Origin;
    use ackscope_protocol::{Scenario, SimTime};
    use egui_kittest::kittest::Queryable;

    use super::*;
    use crate::common::{step_until, window_harness};

    /// An exported glenn session opened as a file: one lane of origin "capture", glenn's
    /// packets, the session's link truth, and every tab shows it (the Packets tab its rows).
    #[test]
    fn a_capture_opens_in_the_window_and_every_tab_shows_it() {
        let session = recorded(lossy(Strategy::Glenn, 7), Vec::new(), 4.0);
        let path = temp_path("window.pcapng");
        write_capture(&session, std::fs::File::create(&path).unwrap()).unwrap();
        let mut state = AppState::new(Scenario::default(), || {});
        state.open_path(&path);
        let mut h = window_harness(state);
        // A capture opens as a source, read as the window draws (`capture_stream`).
        assert!(step_until(&mut h, 60.0, |s| !s.0.is_running()), "the capture was not read");
        h.state_mut().0.stop();
        {
            let s = &h.state().0;
            assert_eq!(s.error, None);
            let rec = &s.lanes[0];
            assert!(matches!(&rec.info.origin, Origin::Capture { path: p } if p.ends_with("window.pcapng")));
            assert_eq!(rec.info.label(), "glenn");
            let sent: u64 = Dir::BOTH.iter().map(|d| truth_of(&session.events, *d)[0]).sum();
            let dropped: u64 = Dir::BOTH.iter().map(|d| truth_of(&session.events, *d)[1]).sum();
            let totals = rec.client(1).unwrap().ledger.totals();
            assert_eq!((totals.sent, totals.link_dropped), (sent, dropped), "the session's truth");
        }
        h.state_mut().0.playback.seek(SimTime(4_000_000));
        for (tab, want) in [
            (Tab::Overview, "glenn"),
            (Tab::Packets, "glenn"),
            (Tab::Messages, "glenn"),
            (Tab::Clients, "1 client"),
            (Tab::Summary, "metric"),
        ] {
            h.state_mut().0.settings.tab = tab;
            h.run_steps(3);
            assert!(h.query_all_by_label_contains(want).next().is_some(), "{tab:?} does not show '{want}'");
        }
        let shown = h.state().0.shown();
        assert!(shown[0].packets.len() > 100, "the Packets tab has rows: {}", shown[0].packets.len());
        std::fs::remove_file(&path).ok();
    }

    /// *Export...* given a `.pcapng` name writes the recording as a capture (the same as
    /// `export --pcapng`), and refuses to replace an existing file.
    #[test]
    fn export_pcapng_in_the_window_writes_the_capture_and_never_replaces_a_file() {
        let session_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/recorded-glenn.ron");
        let mut state = AppState::new(Scenario::default(), || {});
        state.open_path(&session_path);
        let mut h = window_harness(state);
        assert!(step_until(&mut h, 60.0, |s| s.0.file_jobs().is_empty()), "the session did not open");
        let out = temp_path("from-window.pcapng");
        std::fs::remove_file(&out).ok();
        h.state_mut().0.export_pcapng(&out);
        assert!(step_until(&mut h, 60.0, |s| s.0.file_jobs().is_empty()), "the export did not finish");
        assert_eq!(h.state().0.error, None);
        let session = ackscope::session::load(&session_path).unwrap();
        let (_, s) = import(&out, &ImportOptions::default()).unwrap();
        let sent: u64 = Dir::BOTH.iter().map(|d| truth_of(&session.events, *d)[0]).sum();
        assert_eq!(s.clients[0].server_to_client.truth.sent + s.clients[0].client_to_server.truth.sent, sent);
        let before = std::fs::read(&out).unwrap();
        h.state_mut().0.export_pcapng(&out);
        assert!(step_until(&mut h, 60.0, |s| s.0.file_jobs().is_empty()));
        let e = h.state().0.error.clone().unwrap_or_default();
        assert!(e.contains("exists"), "{e}");
        assert_eq!(std::fs::read(&out).unwrap(), before, "the file is untouched");
        std::fs::remove_file(&out).ok();
    }
}
