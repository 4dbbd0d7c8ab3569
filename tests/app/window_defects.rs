//! The window's rough edges of issue 25, each driven headless with egui_kittest the way a user
//! met it: a click on a packet or anomaly row that cut the list, notices that pushed the tabs
//! down under the pointer, a save notice that counted one lane of an A/B recording.

use std::path::PathBuf;

use crate::common::{lossy_recording, replay_window, step_until, Window};
use ackscope::app::Tab;
use ackscope::app::TABS;
use ackscope::model::Recording;
use ackscope::ui::packets_ui::{compact_row_text, row_text, COMPACT_HEADER, HEADER};
use ackscope_protocol::{SimTime, Strategy};
use egui_kittest::kittest::{NodeT, Queryable};

const SEED: u64 = 25;

/// A recording of `strategy` over a lossy link (so rows have every fate) run for `secs`.
fn recording(strategy: Strategy, secs: f64) -> Recording {
    lossy_recording(SEED, strategy, 15.0, secs)
}

/// The window replaying `lanes` on `tab`, the cursor at the end.
fn window(lanes: Vec<Recording>, tab: Tab) -> Window {
    replay_window(lanes, tab)
}

/// The rectangle of packet row `i` of lane 0 if the log shows it reading as known at `at`
/// (in either of the log's layouts).
fn packet_row_rect(h: &Window, i: usize, at: SimTime) -> Option<egui::Rect> {
    let rec = &h.state().0.lanes[0];
    let row = rec.packets.row(i, &rec.ledger).unwrap();
    [row_text(&row, at), compact_row_text(&row, at)].iter().find_map(|text| h.query_by_label(text).map(|n| n.rect()))
}

#[test]
fn clicking_a_packet_row_selects_it_and_keeps_every_later_row_as_it_read() {
    let mut h = window(vec![recording(Strategy::Glenn, 6.0)], Tab::Packets);
    let end = h.state().0.end_time();
    let n = h.state().0.lanes[0].packets.len();
    // The log sticks to the bottom at the end: the newest rows are in view, as known at the end.
    let pick = (n - 12..n - 2)
        .find(|&i| {
            let rec = &h.state().0.lanes[0];
            rec.packets.rows()[i].time < rec.packets.rows()[i + 1].time && packet_row_rect(&h, i, end).is_some()
        })
        .expect("a row near the end in view");
    let later = pick + 1;
    assert!(packet_row_rect(&h, later, end).is_some(), "the next row in view");
    let clicked_at = h.state().0.lanes[0].packets.rows()[pick].time;
    h.get_by_label(&row_text_in_view(&h, pick, end)).click();
    h.run_steps(6);
    let (state, view) = h.state();
    assert_eq!(state.cursor(), clicked_at, "the click moves the cursor to the row's send");
    assert_eq!(view.panels.selected_packet(0), Some(pick as u32), "the row is selected");
    // The row after it is still listed, saying what it said before the click (not "in flight").
    assert!(packet_row_rect(&h, later, end).is_some(), "the row after the clicked one was hidden or changed its text");
    // The clicked row stays in sight above the detail pane that opened under the log.
    assert!(packet_row_rect(&h, pick, clicked_at).is_some(), "the clicked row left the view");
    // The count line speaks of the whole run.
    h.get_by_label_contains(&format!("{n} packets match"));
}

/// The text the log shows for row `i` when it reads as known at `at` (whichever layout is on).
fn row_text_in_view(h: &Window, i: usize, at: SimTime) -> String {
    let rec = &h.state().0.lanes[0];
    let row = rec.packets.row(i, &rec.ledger).unwrap();
    [row_text(&row, at), compact_row_text(&row, at)]
        .into_iter()
        .find(|t| h.query_by_label(t).is_some())
        .expect("the row is in view")
}

#[test]
fn clicking_an_anomaly_row_keeps_the_packet_log_whole() {
    let mut h = window(vec![recording(Strategy::Glenn, 6.0)], Tab::Anomalies);
    let end = h.state().0.end_time();
    let n = h.state().0.lanes[0].packets.len();
    // An anomaly row in view (the list starts at the cursor's end): click it.
    let times: Vec<SimTime> = h.state().0.lanes[0].anomalies.list().iter().map(|a| a.time).collect();
    let row = times
        .iter()
        .rev()
        .filter(|t| t.0 + 500_000 < end.0)
        .find_map(|t| {
            let time = format!("{:>9.3}  ", t.as_secs_f64());
            h.get_all_by_role(egui::accesskit::Role::Button)
                .find(|b| b.accesskit_node().label().is_some_and(|l| l.starts_with(&time)))
        })
        .expect("an anomaly row in view, half a second before the end or more");
    row.click();
    h.run_steps(4);
    let cursor = h.state().0.cursor();
    assert!(cursor < end, "the click moved the cursor back");
    h.state_mut().0.settings.tab = Tab::Packets;
    h.run_steps(6);
    // The log lists every packet, and the first row after the cursor reads as known at the end.
    let rows = h.state().0.lanes[0].packets.rows();
    let next = rows.partition_point(|r| r.time <= cursor);
    assert!(next < n, "the anomaly was at the last packet");
    assert!(packet_row_rect(&h, next, end).is_some(), "the row after the cursor is missing or reads 'in flight'");
    h.get_by_label_contains(&format!("{n} packets match"));
}

/// Every tab button's rectangle, in tab-bar order.
fn tab_rects(h: &Window) -> Vec<egui::Rect> {
    TABS.iter()
        .map(|(_, name)| {
            h.get_all_by_role(egui::accesskit::Role::Button)
                .find(|b| b.accesskit_node().label().as_deref() == Some(*name))
                .unwrap_or_else(|| panic!("tab {name}"))
                .rect()
        })
        .collect()
}

#[test]
fn notices_and_errors_move_neither_the_tabs_nor_the_controls() {
    let mut h = window(vec![recording(Strategy::Glenn, 3.0)], Tab::Packets);
    let tabs = tab_rects(&h);
    let header = |h: &Window| {
        [HEADER, COMPACT_HEADER].iter().find_map(|t| h.query_by_label(t).map(|n| n.rect())).expect("the log's header")
    };
    let log = header(&h);
    h.state_mut().0.notice = Some("Saved /tmp/some/where/run.ron (1.2 MiB, 322661 events).".into());
    h.state_mut().0.error = Some("Not saved: /tmp/x.ron: permission denied".into());
    h.run_steps(4);
    assert_eq!(tab_rects(&h), tabs, "the tab bar moved");
    assert_eq!(header(&h), log, "the tab's content moved");
    // Both are shown, inside the window, and each can be dismissed.
    let notice = h.get_by_label_contains("Saved /tmp/some/where/run.ron").rect();
    let error = h.get_by_label_contains("permission denied").rect();
    for r in [notice, error] {
        assert!(r.left() >= 0.0 && r.right() <= 1280.0 && r.top() > tabs[0].bottom() && r.bottom() <= 800.0, "{r:?}");
    }
    assert!(!notice.intersects(error));
    h.get_by_label("OK").click();
    h.get_by_label("Dismiss").click();
    h.run_steps(4);
    assert!(h.state().0.notice.is_none() && h.state().0.error.is_none());
    assert_eq!(tab_rects(&h), tabs);
}

/// A fresh directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-window-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_save_notice_counts_both_lanes_of_an_ab_recording() {
    let dir = temp_dir("ab-save");
    let mut h = window(vec![recording(Strategy::Glenn, 3.0), recording(Strategy::Ue4, 3.0)], Tab::Overview);
    let (a, b) = (h.state().0.lanes[0].len(), h.state().0.lanes[1].len());
    let target = dir.join("ab.ron");
    h.state_mut().0.save_path(&target);
    assert!(step_until(&mut h, 30.0, |s| s.0.file_jobs().is_empty()), "the save did not finish");
    assert!(h.state().0.error.is_none(), "{:?}", h.state().0.error);
    let notice = h.state().0.notice.clone().expect("a save notice");
    assert!(notice.contains(&format!("{} events in 2 lanes", a + b)), "{a} + {b}: {notice}");
    let saved = ackscope::session::load(&target).unwrap();
    assert_eq!(saved.events.len() + saved.ab_events.len(), a + b, "the file holds what the notice says");
    h.get_by_label_contains(&format!("{} events", a + b));
    let _ = std::fs::remove_dir_all(&dir);
}
