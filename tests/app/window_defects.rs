//! The window's rough edges of issue 25, each driven headless with egui_kittest the way a user
//! met it: a click on a packet or anomaly row that cut the list, notices that pushed the tabs
//! down under the pointer, a save notice that counted one lane of an A/B recording.

use std::path::PathBuf;

use crate::common::{lossy_recording, replay_window, step_until, window_harness, Window};
use ackscope::app::TABS;
use ackscope::app::{AppState, Tab};
use ackscope::model::Recording;
use ackscope::ui::packets_ui::{compact_row_text, row_text, COMPACT_HEADER, HEADER};
use ackscope_protocol::{Dir, Scenario, SimTime, Strategy};
use egui_kittest::kittest::{NodeT, Queryable};
use egui_kittest::Harness;

const SEED: u64 = 25;

/// Text the last frame painted: its string, its smallest font size and its screen rectangle
/// (painted text that is no widget, such as plot and canvas labels, is not in the accessibility
/// tree).
pub fn painted_texts<S>(h: &Harness<'_, S>) -> Vec<(String, f32, egui::Rect)> {
    fn walk(shape: &egui::Shape, clip: egui::Rect, out: &mut Vec<(String, f32, egui::Rect)>) {
        match shape {
            egui::Shape::Vec(shapes) => shapes.iter().for_each(|s| walk(s, clip, out)),
            egui::Shape::Text(t) => {
                let size = t.galley.job.sections.iter().map(|s| s.format.font_id.size).fold(f32::INFINITY, f32::min);
                let rect = t.galley.rect.translate(t.pos.to_vec2());
                if !t.galley.job.text.trim().is_empty() && clip.intersects(rect) {
                    out.push((t.galley.job.text.clone(), size, rect));
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for c in &h.output().shapes {
        walk(&c.shape, c.clip_rect, &mut out);
    }
    out
}

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

/// The window showing the run of `scenario` for `secs` with `changes` (name, value, at s), the
/// cursor at `at_s`, on `tab`.
fn window_of_run(scenario: &Scenario, secs: f64, changes: &[(&str, &str, f64)], at_s: f64, tab: Tab) -> Window {
    let steps: Vec<_> = changes
        .iter()
        .map(|(name, value, at)| ackscope::session::Change {
            at_us: (at * 1e6) as u64,
            name: (*name).into(),
            value: (*value).into(),
        })
        .map(Into::into)
        .collect();
    let session = ackscope::report::run_with_actions(scenario, secs, &steps).unwrap().session;
    let mut state = AppState::new(scenario.clone(), || {});
    state.settings.tab = tab;
    let mut h = window_harness(state);
    h.state_mut().0.show_session(session, None);
    h.state_mut().0.playback.seek(SimTime::from_secs_f64(at_s));
    h.run_steps(5);
    h
}

#[test]
fn every_parameter_marker_is_labelled_even_a_second_apart() {
    let changes = [("link.latency_ms", "150", 3.0), ("link.loss_percent", "5", 3.6), ("send_rate_pps", "30", 4.2)];
    let h = window_of_run(&Scenario::default(), 20.0, &changes, 20.0, Tab::Overview);
    let texts = painted_texts(&h);
    for label in ["latency_ms=150", "loss_percent=5", "send_rate_pps=30"] {
        let found: Vec<_> = texts.iter().filter(|(t, _, _)| t == label).collect();
        assert!(!found.is_empty(), "no marker labelled {label}");
    }
    // Labels on one strip do not overlap.
    let rects: Vec<egui::Rect> = texts.iter().filter(|(t, _, _)| t.contains('=')).map(|(_, _, r)| *r).collect();
    for (i, a) in rects.iter().enumerate() {
        assert!(rects[i + 1..].iter().all(|b| !a.shrink(0.5).intersects(b.shrink(0.5))), "{rects:?}");
    }
}

#[test]
fn the_slice_map_writes_send_counts_and_outlines_resends_darkly_in_the_light_theme() {
    let mut s = Scenario { seed: SEED, strategy: Strategy::Chunks, ..Scenario::default() };
    s.workload.chunk_kib = 32;
    for d in Dir::BOTH {
        s.link.get_mut(d).loss_percent = 30.0;
    }
    let mut h = window_of_run(&s, 6.0, &[], 6.0, Tab::Slices);
    h.state_mut().0.settings.dark = false;
    h.run_steps(4);
    h.get_by_label_contains("sends per slice: 1x");
    let grid = h.get_by_label("slice grid").rect();
    let texts = painted_texts(&h);
    let counts: Vec<_> =
        texts.iter().filter(|(t, _, r)| grid.contains(r.center()) && t.parse::<u32>().is_ok_and(|n| n >= 2)).collect();
    assert!(!counts.is_empty(), "no send count written on a resent slice");
    assert!(counts.iter().all(|(_, size, _)| *size >= 9.0));
    // Resent cells' outlines: dark on the light theme (white vanished there).
    let mut outlines = Vec::new();
    for c in &h.output().shapes {
        if let egui::Shape::Rect(r) = &c.shape {
            if grid.contains_rect(r.rect) && r.stroke.width >= 1.5 {
                outlines.push(r.stroke.color);
            }
        }
    }
    assert!(!outlines.is_empty(), "no resent slice outlined");
    assert!(outlines.iter().all(|c| c.r() < 100 && c.g() < 100 && c.b() < 100), "{:?}", outlines[0]);
}

#[test]
fn packets_filter_labels_come_before_their_boxes() {
    let h = window(vec![recording(Strategy::Glenn, 2.0)], Tab::Packets);
    use egui::accesskit::Role;
    for name in ["direction", "fate"] {
        let label = h.get_by_role_and_label(Role::Label, name).rect();
        let combo = h.get_by_role_and_label(Role::ComboBox, name).rect();
        assert!(label.right() <= combo.left() + 1.0, "{name}: label {label:?}, box {combo:?}");
    }
}

#[test]
fn summary_shows_each_lanes_head_of_line_wait_as_compare_does() {
    let mut h = window(vec![recording(Strategy::Glenn, 8.0), recording(Strategy::Ue4, 8.0)], Tab::Summary);
    let end = h.state().0.end_time();
    let expected: Vec<String> = (0..2)
        .map(|k| {
            let f = ackscope::model::compare::LaneFigures::compute((&h.state().0.lanes[k]).into(), end);
            format!("{:.0} / {:.0}", f.totals.hol_total_ms, f.totals.hol_max_ms)
        })
        .collect();
    assert!(expected[0] != "0 / 0", "glenn at 15 % loss waits on the head of line");
    h.run_steps(20);
    h.get_by_label("head-of-line wait total / max ms");
    for e in &expected {
        assert!(h.query_all_by_label(e).count() >= 1, "no cell reads {e}");
    }
}

#[test]
fn every_text_of_every_tab_is_at_least_the_small_size_in_both_themes() {
    let mut h = window(vec![recording(Strategy::Glenn, 5.0), recording(Strategy::Ue4, 5.0)], Tab::Overview);
    let small = egui::TextStyle::Small.resolve(&h.ctx.global_style()).size;
    for dark in [true, false] {
        h.state_mut().0.settings.dark = dark;
        for (tab, name) in TABS {
            h.state_mut().0.settings.tab = tab;
            h.run_steps(3);
            let tiny: Vec<_> = painted_texts(&h).into_iter().filter(|(_, size, _)| *size < small - 0.01).collect();
            assert!(tiny.is_empty(), "{name} ({}): {tiny:?}", if dark { "dark" } else { "light" });
        }
    }
}
