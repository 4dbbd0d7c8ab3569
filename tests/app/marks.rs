//! Marks, deltas, bookmarks and go-to (issue 25), driven headless with egui_kittest as a user
//! does: click a packet row and press Ctrl+M, click another and read the distance in its row
//! and the status bar; bookmark an instant, save, open the file again and find it; type a
//! message id, a sequence or a time in the go-to box (Ctrl+G); type nonsense there.

use std::path::PathBuf;

use crate::common::{lossy_recording, replay_window, step_until, Window};
use ackscope::app::{AppCommand, MarkCommand, Tab};
use ackscope::model::marks::{Mark, MarkTarget};
use ackscope::model::Recording;
use ackscope::session::{self, Bookmark, BookmarkTarget};
use ackscope::ui::packets_ui::{compact_row_text, row_text, with_delta};
use ackscope_protocol::{Side, SimTime, Strategy};
use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;

const SEED: u64 = 2525;

/// A glenn recording over a lossy link, `secs` long.
fn recording(secs: f64) -> Recording {
    lossy_recording(SEED, Strategy::Glenn, 10.0, secs)
}

/// The window replaying `rec` on `tab`, the cursor at the end.
fn window(rec: Recording, tab: Tab) -> Window {
    replay_window(vec![rec], tab)
}

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ackscope-marks-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Packet row `i` of the log as it reads at `at` after the delta column for `mark`, in whichever
/// layout (full or compact) the log shows; `None` when not in view.
fn row_label(h: &Window, i: usize, at: SimTime, mark: Option<&Mark>) -> Option<String> {
    let rec = &h.state().0.lanes[0];
    let row = rec.packets.row(i, &rec.ledger).unwrap();
    let point = Mark::packet(0, row.uid, row.dir, row.seq, row.time);
    let delta =
        mark.map(|m| if *m == point { ackscope::model::marks::mark_column() } else { m.delta_to(&point).column() });
    [row_text(&row, at), compact_row_text(&row, at)]
        .into_iter()
        .map(|t| with_delta(delta.clone(), t))
        .find(|t| h.query_by_label(t).is_some())
}

/// Types `text` into the go-to box (reached with Ctrl+G) and presses Enter.
fn go_to(h: &mut Window, text: &str) {
    h.key_press_modifiers(Modifiers::COMMAND, Key::G);
    h.run_steps(2);
    let field = h.get_by_role_and_label(Role::TextInput, "Go to");
    assert!(field.is_focused(), "Ctrl+G gives the go-to box the keyboard");
    // Select what an earlier go-to left, so the new text replaces it.
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.run_steps(1);
    h.get_by_role_and_label(Role::TextInput, "Go to").type_text(text);
    h.run_steps(1);
    h.key_press(Key::Enter);
    h.run_steps(6);
}

#[test]
fn marking_a_packet_then_selecting_another_shows_the_time_and_seq_delta_in_its_row_and_the_status_bar() {
    let mut h = window(recording(6.0), Tab::Packets);
    let end = h.state().0.end_time();
    let n = h.state().0.lanes[0].packets.len();
    // Two rows of one direction in view near the end (the log sticks to the bottom), sent apart.
    let rows = h.state().0.lanes[0].packets.rows().to_vec();
    let in_view: Vec<usize> = (n - 14..n).filter(|&i| row_label(&h, i, end, None).is_some()).collect();
    let dir_of = |i: usize| {
        let rec = &h.state().0.lanes[0];
        rec.packets.row(i, &rec.ledger).unwrap().dir
    };
    let (first, second) = in_view
        .iter()
        .flat_map(|&i| in_view.iter().map(move |&j| (i, j)))
        .find(|&(i, j)| j > i + 1 && dir_of(i) == dir_of(j) && rows[i].time < rows[j].time)
        .expect("two rows of one direction in view");
    let label = row_label(&h, first, end, None).unwrap();
    h.get_by_label(&label).click();
    h.run_steps(4);
    h.key_press_modifiers(Modifiers::COMMAND, Key::M);
    h.run_steps(4);
    let (a, b) = {
        let rec = &h.state().0.lanes[0];
        (rec.packets.row(first, &rec.ledger).unwrap(), rec.packets.row(second, &rec.ledger).unwrap())
    };
    let mark = Mark::packet(0, a.uid, a.dir, a.seq, a.time);
    assert_eq!(h.state().0.current_mark(), Some(mark), "Ctrl+M marks the clicked packet");
    assert!(row_label(&h, first, a.time, Some(&mark)).is_some(), "the marked row says MARK");

    // The later row reads as known now until it is clicked; then as known at its send.
    let label = row_label(&h, second, end, Some(&mark)).expect("the second row in view, after its delta");
    h.get_by_label(&label).click();
    h.run_steps(4);
    assert_eq!(h.state().0.cursor(), b.time);
    let point = Mark::packet(0, b.uid, b.dir, b.seq, b.time);
    let delta = mark.delta_to(&point);
    let dt_s = (b.time.0 - a.time.0) as f64 / 1e6;
    let dseq = b.seq as i64 - a.seq as i64;
    assert_eq!(delta.text(), format!("Δt +{dt_s:.4} s, Δseq {dseq:+}"));
    assert!(row_label(&h, second, b.time, Some(&mark)).is_some(), "the clicked row starts with {}", delta.column());
    assert!(delta.column().contains(&format!("{dseq:+}")) && delta.column().contains(&format!("+{dt_s:.4}")));
    let status = format!("selected {}: {}", point.describe(), delta.text());
    h.get_by_label_contains(&status);

    // Ctrl+M on the mark itself clears it, and the delta column goes.
    h.state_mut().0.apply(AppCommand::Marks(MarkCommand::Select(mark)));
    h.key_press_modifiers(Modifiers::COMMAND, Key::M);
    h.run_steps(4);
    assert_eq!(h.state().0.current_mark(), None);
    assert!(h.query_by_label_contains("Δt mark s").is_none(), "no delta column without a mark");
}

#[test]
fn a_bookmark_survives_save_and_reload() {
    let dir = tmp_dir("bookmark");
    let path = dir.join("marked.ron");
    let mut h = window(recording(4.0), Tab::Packets);
    // An instant bookmarked with Ctrl+B, and a message through its right-click menu's command.
    h.state_mut().0.playback.seek(SimTime(2_500_000));
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::B);
    h.run_steps(3);
    let m = h.state().0.lanes[0].messages.messages()[5].clone();
    let point = Mark::message(0, m.side, m.id, m.queued_at);
    h.state_mut().0.apply_all([
        AppCommand::Marks(MarkCommand::Select(point)),
        AppCommand::Marks(MarkCommand::AddBookmark(Some("sixth message".into()))),
        AppCommand::Marks(MarkCommand::RenameBookmark(1, "loss here".into())),
    ]);
    let expected = vec![
        Bookmark {
            name: "sixth message".into(),
            at_us: m.queued_at.0,
            target: Some(BookmarkTarget::Message { lane: 0, side: m.side, id: m.id }),
        },
        Bookmark { name: "loss here".into(), at_us: 2_500_000, target: None },
    ];
    assert!(m.queued_at.0 < 2_500_000, "bookmarks are kept in time order");
    assert_eq!(h.state().0.bookmarks(), &expected[..]);
    h.state_mut().0.save_path(&path);
    assert!(step_until(&mut h, 30.0, |s| s.0.file_jobs().is_empty()), "the save finished");
    assert_eq!(h.state().0.error, None);
    assert!(!h.state().0.has_unsaved(), "saved, bookmarks and all");
    assert_eq!(session::load(&path).unwrap().bookmarks, expected, "the file holds the bookmarks");

    // A bookmark added after the save is unsaved work.
    h.state_mut().0.apply(AppCommand::Marks(MarkCommand::AddBookmark(None)));
    assert!(h.state().0.has_unsaved(), "a new bookmark is unsaved");
    let added = h.state().0.bookmarks().iter().position(|b| b.name == "Bookmark 3").expect("named by its count");
    h.state_mut().0.apply(AppCommand::Marks(MarkCommand::RemoveBookmark(added)));
    assert!(!h.state().0.has_unsaved());

    // Opened again (another recording shown in between), the bookmarks come back.
    h.state_mut().0.lanes = vec![recording(1.0)];
    h.run_steps(2);
    assert!(h.state().0.bookmarks().is_empty());
    h.state_mut().0.open_path(&path);
    assert!(
        step_until(&mut h, 30.0, |s| s.0.file_jobs().is_empty() && s.0.file.as_deref() == Some(path.as_path())),
        "the file opened"
    );
    assert_eq!(h.state().0.bookmarks(), &expected[..]);
    // The menu lists them; a click on one moves the cursor there and shows its message.
    h.get_by_label("Bookmarks (2)").click();
    h.run_steps(2);
    h.get_by_label_contains("loss here").click();
    h.run_steps(4);
    assert_eq!(h.state().0.cursor(), SimTime(2_500_000));
    h.get_by_label("Bookmarks (2)").click();
    h.run_steps(2);
    h.get_by_label_contains("sixth message").click();
    h.run_steps(4);
    let (state, view) = h.state();
    assert_eq!(state.cursor(), m.queued_at);
    assert_eq!(state.settings.tab, Tab::Messages);
    assert_eq!(view.panels.selected_message(0), Some((m.side, m.id)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sessions_without_bookmarks_are_written_as_before() {
    let rec = recording(1.0);
    let mut s = rec.to_session();
    let plain = session::to_text(&s).unwrap();
    assert!(!plain.contains("bookmarks"), "no bookmarks field when there are none");
    s.bookmarks = vec![Bookmark {
        name: "x".into(),
        at_us: 5,
        target: Some(BookmarkTarget::Packet { lane: 0, uid: 3, client: None }),
    }];
    let marked = session::to_text(&s).unwrap();
    // The same text, the bookmarks' lines and the checksum apart.
    let without = |t: &str| -> Vec<String> {
        let mut out = Vec::new();
        let mut in_list = false;
        for l in t.lines() {
            if l.starts_with("bookmarks:") {
                in_list = !l.ends_with("],");
            } else if in_list {
                in_list = l != "],";
            } else if !l.starts_with("checksum") {
                out.push(l.to_string());
            }
        }
        out
    };
    assert!(marked.contains("bookmarks:"));
    assert_eq!(without(&marked), without(&plain));
    let back = session::from_text(&marked, "marked").unwrap();
    assert_eq!(back.bookmarks, s.bookmarks);
    assert!(session::from_text(&plain, "plain").unwrap().bookmarks.is_empty());
}

#[test]
fn go_to_a_message_id_a_packet_seq_or_a_time_moves_the_cursor_and_selects_the_row() {
    let mut h = window(recording(4.0), Tab::Packets);
    // A sequence: the first packet with it, its row selected in the Packets tab.
    let (uid, at, i) = {
        let rec = &h.state().0.lanes[0];
        let i = (0..rec.packets.len()).find(|&i| rec.packets.row(i, &rec.ledger).unwrap().seq == 40).unwrap();
        let r = rec.packets.row(i, &rec.ledger).unwrap();
        (r.uid, r.time, i)
    };
    go_to(&mut h, "seq 40");
    let (state, view) = h.state();
    assert_eq!(state.cursor(), at);
    assert_eq!(view.panels.selected_packet(0), Some(i as u32));
    assert!(matches!(state.selection().map(|m| m.target), Some(MarkTarget::Packet { uid: u, .. }) if u == uid));

    // A message id: the Messages tab, the cursor at its queueing, the message selected.
    let queued = h.state().0.lanes[0].messages.get((Side::A, 12)).unwrap().queued_at;
    go_to(&mut h, "msg 12");
    let (state, view) = h.state();
    assert_eq!(state.settings.tab, Tab::Messages);
    assert_eq!(state.cursor(), queued);
    assert_eq!(view.panels.selected_message(0), Some((Side::A, 12)));

    // A time, in the Packets tab: the cursor there and the row at the cursor selected.
    h.state_mut().0.settings.tab = Tab::Packets;
    h.run_steps(2);
    go_to(&mut h, "1500 ms");
    let (state, view) = h.state();
    assert_eq!(state.cursor(), SimTime(1_500_000));
    let sent = state.lanes[0].packets.sent_by(SimTime(1_500_000));
    assert_eq!(view.panels.selected_packet(0), Some(sent as u32 - 1));
    go_to(&mut h, "2.25 s");
    assert_eq!(h.state().0.cursor(), SimTime(2_250_000));
}

#[test]
fn a_bad_go_to_says_why_and_moves_nothing() {
    let mut h = window(recording(2.0), Tab::Packets);
    let before = h.state().0.cursor();
    for (text, says) in [
        ("seq banana", "not a sequence"),
        ("banana", "cannot read"),
        ("seq 4294967296", "not a sequence"),
        ("msg 99999", "no message #99999"),
        ("seq 65000", "no packet with seq 65000"),
        ("999 s", "past the end"),
        ("-1 s", "0 or more"),
        ("seq c 3", "the side is a or b"),
        ("1 parsec", "cannot read"),
    ] {
        go_to(&mut h, text);
        assert!(h.query_by_label_contains(says).is_some(), "`{text}` should say `{says}`");
        assert_eq!(h.state().0.cursor(), before, "`{text}` moved the cursor");
        assert_eq!(h.state().0.error, None);
    }
    // A good one after clears the error.
    go_to(&mut h, "0.5 s");
    assert_eq!(h.state().0.cursor(), SimTime(500_000));
    assert!(h.query_by_label_contains("cannot read").is_none());
}

#[test]
fn a_marked_message_gives_other_messages_their_id_and_time_distance() {
    let mut h = window(recording(4.0), Tab::Packets);
    go_to(&mut h, "msg 12");
    h.key_press_modifiers(Modifiers::COMMAND, Key::M);
    h.run_steps(3);
    let at = |h: &Window, id: u64| h.state().0.lanes[0].messages.get((Side::A, id)).unwrap().queued_at;
    let mark = Mark::message(0, Side::A, 12, at(&h, 12));
    assert_eq!(h.state().0.current_mark(), Some(mark), "Ctrl+M marks the message gone to");
    go_to(&mut h, "msg 15");
    let dt_s = (at(&h, 15).0 - at(&h, 12).0) as f64 / 1e6;
    let text = format!("Δt +{dt_s:.4} s, Δid +3");
    // In the selected message's list and in the status bar.
    h.get_by_label(&format!("from the mark: {text}"));
    h.get_by_label_contains(&format!("selected message A #15 at {:.4} s: {text}", at(&h, 15).as_secs_f64()));
    // The anomaly list starts each row with its distance too.
    h.state_mut().0.settings.tab = Tab::Anomalies;
    h.run_steps(4);
    assert!(h.query_by_label_contains("Δt mark s").is_some(), "the anomaly list has the delta column");
}
