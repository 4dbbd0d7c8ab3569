//! Exact bytes survive a save: a UDP loopback run saved from the window and a proxy recording
//! (`ackscope proxy --out`) reopened show each datagram's bytes as its socket sent them (EXACT),
//! not re-encoded, and a file without them still reads as before.

use std::path::{Path, PathBuf};

use ackscope::app::AppState;
use ackscope::model::Recording;
use ackscope::session;
use ackscope::ui::bytes::Provenance;
use ackscope_protocol::{Dir, EventKind, Scenario, Strategy};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-saved-bytes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The packet `uid` of client 1 shown in a bytes pane, as the window builds it.
fn pane_of(rec: &Recording, uid: u64) -> Result<ackscope::ui::bytes::PacketBytes, String> {
    let mut view = ackscope::ui::bytes::BytesView::default();
    view.show(&ackscope::model::Shown::focus(rec, 1), uid);
    view.shown.take().unwrap().1
}

/// `path` opened in a fresh window state, as File > Open does: its first lane.
fn reopened(path: &Path) -> Recording {
    let mut state = AppState::new(Scenario::default(), || {});
    state.open_path(path);
    crate::common::finish_jobs(&mut state, "open");
    state.lanes.remove(0)
}

#[test]
fn a_udp_run_saved_and_reopened_shows_the_bytes_its_socket_sent() {
    let mut s = Scenario { seed: 31, strategy: Strategy::Glenn, ..Scenario::default() };
    for d in Dir::BOTH {
        s.link.get_mut(d).loss_percent = 0.0;
    }
    let mut state = crate::common::udp_run_until(s, 150);
    let sent = state.lanes[0].payloads.clone().expect("a UDP lane keeps what its sockets wrote");
    let path = temp("udp.ron");
    state.save_path(&path);
    crate::common::finish_jobs(&mut state, "save");
    let file = session::load(&path).unwrap();
    assert!(!file.payloads.is_empty(), "the file holds the datagrams' bytes");
    let rec = reopened(&path);
    let kept = rec.payloads.clone().expect("the reopened lane has the saved bytes");
    let mut checked = 0;
    for row in rec.packets.rows() {
        let Some(wire) = sent.get(1, row.uid) else { continue };
        let p = pane_of(&rec, row.uid).unwrap_or_else(|why| panic!("uid {}: {why}", row.uid));
        assert_eq!((p.provenance, &p.bytes), (Provenance::Exact, &wire), "uid {}: as the socket sent it", row.uid);
        assert_eq!(kept.get(1, row.uid), Some(wire));
        checked += 1;
    }
    assert!(checked >= 150, "{checked} datagrams compared");
    assert_eq!(kept.len(), sent.len(), "every datagram the run kept was saved");
    // Saved again from the reopened lane: the same file.
    let again = temp("udp-again.ron");
    session::save(&rec.to_session(), &again).unwrap();
    assert_eq!(session::load(&again).unwrap().payloads, file.payloads);
}

#[test]
fn a_proxy_recording_reopened_shows_the_bytes_the_client_sent_and_the_server_echoed() {
    use crate::proxy::{index_of, payload, spawn_proxy, Client, Server};
    let server = Server::echo("127.0.0.1:0");
    let listen = std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let out = temp("proxied.ron");
    let set = ["--set", "link.latency_ms=5", "--set", "seed=3", "--seconds", "3", "--decode", "none"];
    let child = spawn_proxy(listen, server.addr, &[&set[..], &["--out", out.to_str().unwrap()]].concat());
    let client = Client::to(listen);
    client.send_until_answered(&payload(0));
    for i in 1..=60 {
        client.send(&payload(i));
    }
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let rec = reopened(&out);
    let kept = rec.payloads.clone().expect("the proxy's recording keeps the datagrams' bytes");
    let mut by_dir = [0usize; 2];
    for e in rec.events() {
        let EventKind::LinkSent { uid, dir, .. } = e.kind else { continue };
        let bytes = kept.get(e.client, uid).unwrap_or_else(|| panic!("uid {uid}: no bytes saved"));
        let i = index_of(&bytes).unwrap_or_else(|| panic!("uid {uid}: {bytes:?} is not a payload the client sent"));
        assert!(i <= 60);
        // No decoder reads these payloads, so the lane has link sends but no packet rows to
        // open a pane on: the store the pane reads is checked.
        by_dir[dir.index()] += 1;
    }
    // What the server read is what the client sent through the proxy (no loss set): all 60.
    assert!(by_dir[0] >= 61, "{by_dir:?} datagrams up");
    assert!(by_dir[1] >= 1, "{by_dir:?}: the echoes are kept too");
    assert!(server.log().iter().all(|(_, b)| index_of(b).is_some()));
}

#[test]
fn a_saved_payload_that_is_not_hex_is_refused_with_the_field() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/recorded-ue4.ron");
    let mut s = session::load(&path).unwrap();
    assert!(s.payloads.is_empty(), "a simulated recording saves no bytes");
    s.payloads.push(session::payloads::SavedPayload { client: 2, uid: 7, at_us: 5, hex: vec![0xab, 0x01] });
    let text = session::to_text(&s).unwrap();
    assert!(text.contains("payloads:[\n(client:2,uid:7,at_us:5,hex:\"ab01\"),\n]"), "one line each");
    assert_eq!(session::from_text(&text, "t").unwrap().payloads, s.payloads);
    let bad = text.replace("\"ab01\"", "\"ab0x\"");
    let err = session::from_text_verified(&bad, "t.ron", session::Verify::Skip).unwrap_err().to_string();
    assert!(err.contains("t.ron") && err.contains("'x' at digit 3"), "{err}");
}
