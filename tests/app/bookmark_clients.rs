//! Bookmarks and marks name a packet's client: a hand-written stream numbers uids per client
//! (each of its three clients has a uid 12), so a bookmark made on client 2's packet must land
//! on client 2's packet, from any client's view, and keep its client through a save.

use ackscope::app::{AppCommand, MarkCommand, Tab};
use ackscope::model::marks::MarkTarget;
use ackscope::session::{self, BookmarkTarget};
use ackscope_protocol::{SimTime, FIRST_CLIENT};
use egui_kittest::kittest::Queryable;

use super::common::{step_until, window_harness};

/// Client `client`'s packet with link uid 12: its row in that client's log.
fn row_12(s: &ackscope::app::AppState, client: u32) -> ackscope::model::index::PacketRow {
    let c = s.lanes[0].client(client).unwrap();
    c.packets.row_by_uid(12, &c.ledger).unwrap()
}

#[test]
fn a_bookmark_on_client_2s_packet_goes_to_client_2s_packet() {
    let path = crate::clients::temp("bookmark-clients.jsonl");
    std::fs::write(&path, crate::clients::hand_written_stream()).unwrap();
    let mut state = ackscope::app::AppState::new(Default::default(), || {});
    state.open_path(&path);
    let mut h = window_harness(state);
    assert!(step_until(&mut h, 30.0, |s| s.0.file_jobs().is_empty()), "the stream did not open");
    let (r1, r2) = (row_12(&h.state().0, 1), row_12(&h.state().0, 2));
    assert_ne!(r1.time, r2.time, "uid 12 is a different packet in each client");
    // Client 2's packet log: its row for uid 12 clicked, as a user selects it.
    h.state_mut().0.apply_all([
        AppCommand::FocusClient(2),
        AppCommand::SetTab(Tab::Packets),
        AppCommand::SeekTo(r2.time),
    ]);
    h.run_steps(4);
    h.get_by_label(&ackscope::ui::packets_ui::row_text(&r2, r2.time)).click();
    h.run_steps(4);
    let selected = h.state().0.selection().expect("the click selects the packet").target;
    assert!(
        matches!(selected, MarkTarget::Packet { lane: 0, client: 2, uid: 12, .. }),
        "the selection names client 2: {selected:?}"
    );
    h.state_mut().0.apply_all([AppCommand::Marks(MarkCommand::AddBookmark(Some("c2 uid 12".into())))]);
    let b = h.state().0.bookmarks()[0].clone();
    assert_eq!(b.target, Some(BookmarkTarget::Packet { lane: 0, uid: 12, client: Some(2) }));
    assert_eq!(b.at_us, r2.time.0);
    // From client 1's view, going to it shows client 2 and its packet.
    h.state_mut().0.apply_all([AppCommand::FocusClient(FIRST_CLIENT), AppCommand::SeekTo(SimTime::ZERO)]);
    h.run_steps(2);
    h.state_mut().0.apply_all([AppCommand::Marks(MarkCommand::GoToBookmark(0))]);
    h.run_steps(6);
    let s = &h.state().0;
    assert_eq!(s.focus, 2, "going to the bookmark shows its client");
    assert_eq!(s.cursor(), r2.time, "at client 2's packet, not client 1's ({:?})", r1.time);
    let selected = s.selection().unwrap().target;
    assert!(matches!(selected, MarkTarget::Packet { client: 2, uid: 12, seq, .. } if seq == r2.seq), "{selected:?}");
    // The packet log shows client 2's row selected: its detail names client 2's send time.
    assert!(h.query_all_by_label_contains(&format!("{:.4}", r2.time.as_secs_f64())).count() > 0);
    // Saved and read back: the bookmark keeps its client; one-client bookmarks leave it out.
    let saved = crate::clients::temp("bookmark-clients.ron");
    let mut file = h.state().0.lanes[0].to_session();
    file.bookmarks.push(session::Bookmark {
        name: "first client".into(),
        at_us: r1.time.0,
        target: Some(BookmarkTarget::Packet { lane: 0, uid: 12, client: None }),
    });
    let text = session::to_text(&file).unwrap();
    assert!(text.contains("target:Some(Packet(lane:0,uid:12,client:Some(2)))"), "client named");
    assert!(text.contains("target:Some(Packet(lane:0,uid:12))"), "the first client's as before");
    session::save(&file, &saved).unwrap();
    assert_eq!(session::load(&saved).unwrap().bookmarks, file.bookmarks);
}
