//! An A/B session's second lane keeps its datagrams' bytes as the first lane does (issue 25,
//! packet bytes): the session's `ab_payloads` field is read into lane B's store, the bytes pane
//! on lane B shows them as sent (EXACT), and the window saves them back unchanged.

use std::path::{Path, PathBuf};

use ackscope::app::AppState;
use ackscope::model::Recording;
use ackscope::session::{self, payloads::SavedPayload, run_lane, run_lane_on, Session};
use ackscope::ui::bytes::Provenance;
use ackscope_protocol::{make_peer, EventKind, Peer, Scenario, Side, SimTime, Simulation, Strategy, TapDir, TapLog};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-ab-payloads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs `scenario` for `secs` with both endpoints tapped: its events and the bytes of each send,
/// named by uid (the n-th datagram a side wrote is its n-th `PacketSent`).
fn run_keeping_bytes(scenario: &Scenario, secs: f64) -> (Vec<ackscope_protocol::Event>, Vec<SavedPayload>) {
    let log = TapLog::new();
    let peers = Side::BOTH.map(|side| Box::new(log.tap(side, make_peer(scenario, side))) as Box<dyn Peer>);
    let sim = Simulation::with_peers(scenario.clone(), peers);
    let (_, events, _) = run_lane_on(sim, &[], SimTime::from_secs_f64(secs)).unwrap();
    let mut wrote: [std::collections::VecDeque<(SimTime, u32, Vec<u8>)>; 2] = Default::default();
    for t in log.take() {
        if let TapDir::Sent { seq } = t.dir {
            wrote[t.side.index()].push_back((t.time, seq, t.bytes));
        }
    }
    let mut saved = Vec::new();
    for e in &events {
        if let EventKind::PacketSent { side, seq, bytes, uid } = e.kind {
            let (at, s, b) = wrote[side.index()].pop_front().expect("a datagram for every PacketSent");
            assert_eq!((at, s, b.len()), (e.time, seq, bytes as usize), "send {uid} is the tap's datagram");
            saved.push(SavedPayload { client: e.client, uid, at_us: at.0, hex: b });
        }
    }
    saved.sort_by_key(|p| (p.at_us, p.client, p.uid));
    (events, saved)
}

fn opened(path: &Path) -> AppState {
    let mut state = AppState::new(Scenario::default(), || {});
    state.open_path(path);
    crate::common::finish_jobs(&mut state, "open");
    state
}

/// Packet `uid` of client 1 of `rec` in a bytes pane, as the window builds it.
fn pane_of(rec: &Recording, uid: u64) -> Result<ackscope::ui::bytes::PacketBytes, String> {
    let mut view = ackscope::ui::bytes::BytesView::default();
    view.show(&ackscope::model::Shown::focus(rec, 1), uid);
    view.shown.take().unwrap().1
}

#[test]
fn an_ab_sessions_second_lane_keeps_shows_and_saves_the_bytes_it_sent() {
    let a = Scenario { seed: 12, strategy: Strategy::Glenn, ..Scenario::default() };
    let b = Scenario { strategy: Strategy::Ue4, ..a.clone() };
    let secs = 3.0;
    let (_, events, actions) = run_lane(&a, &[], SimTime::from_secs_f64(secs)).unwrap();
    let (ab_events, sent) = run_keeping_bytes(&b, secs);
    assert!(sent.len() > 200, "{} datagrams", sent.len());
    let session = Session {
        events,
        actions,
        ab: Some(Strategy::Ue4),
        ab_events,
        ab_payloads: sent.clone(),
        duration_us: SimTime::from_secs_f64(secs).0,
        ..Session::scenario_only(a)
    };
    let path = temp("ab.ron");
    session::save(&session, &path).unwrap();
    assert_eq!(session::load(&path).unwrap().ab_payloads, sent, "the file keeps lane B's bytes");

    let mut state = opened(&path);
    assert_eq!(state.lanes.len(), 2);
    assert!(state.lanes[0].payloads.is_none(), "lane A kept none: it re-encodes, as before");
    let lane_b = &state.lanes[1];
    assert!(lane_b.payloads.is_some(), "lane B has the saved bytes");
    let mut checked = 0;
    for p in &sent {
        let pane = pane_of(lane_b, p.uid).unwrap_or_else(|why| panic!("lane B uid {}: {why}", p.uid));
        assert_eq!((pane.provenance, &pane.bytes), (Provenance::Exact, &p.hex), "lane B uid {}: as sent", p.uid);
        checked += 1;
    }
    assert_eq!(checked, sent.len());

    // Saved again from the window: lane B's bytes go back into the file unchanged.
    let again = temp("ab-again.ron");
    state.save_path(&again);
    crate::common::finish_jobs(&mut state, "save");
    let s = session::load(&again).unwrap();
    assert_eq!(s.ab_payloads, sent);
    assert!(s.payloads.is_empty());

    // Without `ab`, the field is refused as the other A/B fields are.
    let lone = Session { ab: None, ab_events: Vec::new(), ..session };
    let text = session::to_text(&lone).unwrap();
    let err = session::from_text(&text, "lone.ron").unwrap_err().to_string();
    assert!(err.contains("lone.ron") && err.contains("ab_payloads"), "{err}");
}
