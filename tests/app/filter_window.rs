//! The display filter in the window, driven headless with egui_kittest as a user would: typed
//! into the Packets, Messages and Anomalies tabs' boxes it lists the rows `export --filter` writes
//! (and the filter's own fold finds), an error draws its caret under the character it names and
//! keeps the last valid filter, Tab takes a completion, and the Overview's IO graph draws the
//! per-interval counts of the filter's rows.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{replay_window, Window};
use ackscope::app::Tab;
use ackscope::filter::{matching_rows, PacketFacts, SharedFilter};
use ackscope::model::anomaly::Anomaly;
use ackscope::model::index::MessageRecord;
use ackscope::model::{Recording, Shown};
use ackscope::session::{self, Progress};
use ackscope::ui::io_graph_ui::{points_in, MeasureKind};
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions").join(name)
}

fn recording(path: &Path) -> Recording {
    Recording::from_session(session::load(path).unwrap(), &Progress::new()).unwrap()
}

/// The window showing `rec` on `tab`, the cursor at the end.
fn window(rec: Recording, tab: Tab) -> Window {
    replay_window(vec![rec], tab)
}

/// Types `text` into the tab's filter box (the text input labelled "filter").
fn type_filter(h: &mut Window, text: &str) {
    h.get_by_role_and_label(Role::TextInput, "filter").click();
    h.run_steps(2);
    h.get_by_role_and_label(Role::TextInput, "filter").type_text(text);
    settle(h);
}

/// Steps frames until no filter cache has rows left to check: a cache checks the rows a frame's
/// time budget allows, so a debug build on a loaded machine takes more frames than a release one.
fn settle(h: &mut Window) {
    h.run_steps(2);
    for _ in 0..5000 {
        if !ackscope::filter::budget::pending() {
            break;
        }
        h.step();
    }
    assert!(!ackscope::filter::budget::pending(), "a filter cache never finished");
    h.run_steps(2);
}

/// The link ids `export --filter` writes for `session`'s packets.
fn exported_link_ids(session: &Path, filter: &str) -> Vec<u64> {
    let dir = std::env::temp_dir().join(format!("ackscope-filter-window-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let csv_path = dir.join("packets.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(["export", session.to_str().unwrap(), "--packets", csv_path.to_str().unwrap(), "--filter", filter])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut r = csv::Reader::from_path(&csv_path).unwrap();
    let col = r.headers().unwrap().iter().position(|h| h == "link_id").unwrap();
    r.records().map(|x| x.unwrap().get(col).unwrap().parse().unwrap()).collect()
}

#[test]
fn the_packets_tab_lists_the_rows_export_filter_writes() {
    let session = shipped("recorded-glenn.ron");
    let text = "fate == dropped || seq in 100..200 && dir == a_to_b";
    let mut h = window(recording(&session), Tab::Packets);
    let all = h.state().0.lanes[0].packets.len();
    type_filter(&mut h, text);
    let (state, view) = h.state();
    let rec = &state.lanes[0];
    let pv = view.panels.packets.0.get(0).unwrap();
    assert_eq!(pv.expr.bar.applied(), Some(text));
    let m = pv.expr.active().expect("the filter applies");
    assert_eq!(m.rows_checked(), all, "every row checked");
    let window_ids: Vec<u64> = m.set().iter().map(|i| rec.packets.rows()[i].uid).collect();
    let exported = exported_link_ids(&session, text);
    assert!(!exported.is_empty() && exported.len() < all / 2, "{} of {all}", exported.len());
    assert_eq!(window_ids, exported, "the window's rows are not export --filter's");
    // The log says how many match, and lists the last of them (it sticks to the end).
    let count = format!("{} packets match `{text}`", exported.len());
    assert!(h.query_by_label_contains(&count).is_some(), "no '{count}'");
    let last = rec.packets.row(m.set().iter().last().unwrap(), &rec.ledger).unwrap();
    let end = state.end_time();
    let shown =
        [ackscope::ui::packets_ui::row_text(&last, end), ackscope::ui::packets_ui::compact_row_text(&last, end)];
    assert!(shown.iter().any(|t| h.query_by_label(t).is_some()), "the last matching row is not listed");
    // The direction box narrows the filter's rows further (ANDed), still from the cache.
    h.get_by_role_and_label(Role::ComboBox, "direction").click();
    h.run();
    // The list's entry (the popup is drawn last), not the box's own text.
    h.query_all_by_label("B->A").last().unwrap().click();
    settle(&mut h);
    let pv = h.state().1.panels.packets.0.get(0).unwrap();
    let rec = &h.state().0.lanes[0];
    let narrowed: Vec<u64> = pv.expr.active().unwrap().set().iter().map(|i| rec.packets.rows()[i].uid).collect();
    let b_to_a: Vec<u64> = exported_link_ids(&session, &format!("({text}) && dir == b_to_a"));
    assert_eq!(narrowed, b_to_a);
}

#[test]
fn a_filter_built_over_frames_says_how_far_it_got_and_ends_with_every_row() {
    use ackscope::filter::budget::{set_frame_budget, MIN_ROWS};
    // Several thousand packets: a build of several frames.
    let rec = crate::common::lossy_recording(7, ackscope_protocol::Strategy::Glenn, 10.0, 120.0);
    let text = "fate == dropped || delay_ms > 60";
    let want = matching_rows(Shown::from(&rec), &SharedFilter::<PacketFacts>::compile(text).unwrap());
    let all = rec.packets.len();
    assert!(all > 3 * MIN_ROWS, "{all} packets: too few to take several frames");
    let mut h = window(rec, Tab::Packets);
    // No time per frame: every frame checks exactly MIN_ROWS rows, so the build takes a known
    // number of frames whatever the machine's speed.
    set_frame_budget(std::time::Duration::ZERO);
    h.get_by_role_and_label(Role::TextInput, "filter").click();
    h.run_steps(2);
    h.get_by_role_and_label(Role::TextInput, "filter").type_text(text);
    h.step();
    let checked = |h: &Window| h.state().1.panels.packets.0.get(0).unwrap().expr.matches.rows_checked();
    let first = checked(&h);
    assert_eq!(first % MIN_ROWS, 0, "{first}");
    assert!(first < all, "built in the frame it was typed: {first} of {all}");
    h.step();
    let pct = checked(&h) * 100 / all;
    assert!(ackscope::filter::budget::pending(), "a partial build asks for another frame");
    assert!(
        h.query_by_label(&format!("filtering... {pct} %")).is_some(),
        "no progress shown at {} of {all}",
        checked(&h)
    );
    let mut frames = 2;
    while checked(&h) < all && frames < 1000 {
        h.step();
        frames += 1;
    }
    set_frame_budget(ackscope::filter::budget::FRAME_BUDGET);
    assert_eq!(checked(&h), all);
    assert!(frames >= all / MIN_ROWS, "{frames} frames for {all} rows");
    h.run_steps(2);
    assert!(h.query_by_label_contains("filtering...").is_none(), "progress still shown once built");
    let got: Vec<u32> =
        h.state().1.panels.packets.0.get(0).unwrap().expr.matches.set().iter().map(|i| i as u32).collect();
    assert_eq!(got, want, "the rows built over frames are not the filter's");
}

#[test]
fn an_error_points_at_its_character_and_keeps_the_last_valid_filter() {
    let mut h = window(recording(&shipped("recorded-glenn.ron")), Tab::Packets);
    type_filter(&mut h, "dropped");
    let rows = h.state().1.panels.packets.0.get(0).unwrap().expr.active().unwrap().count();
    assert!(rows > 0);
    // Typo: "&& seqq" (character 12 counting from 1).
    h.get_by_role_and_label(Role::TextInput, "filter").type_text(" && seqq > 5");
    settle(&mut h);
    let pv = h.state().1.panels.packets.0.get(0).unwrap();
    let e = pv.expr.bar.error.clone().expect("an error");
    assert_eq!(e.column(), 12, "{e}");
    assert!(h.query_by_label_contains("unknown field `seqq` at 12: did you mean `seq`?").is_some());
    assert!(h.query_by_label_contains("still showing `dropped`").is_some());
    assert_eq!(pv.expr.bar.applied(), Some("dropped"));
    assert_eq!(pv.expr.active().unwrap().count(), rows, "the last valid filter still applies");
}

#[test]
fn tab_takes_a_completion_in_the_messages_filter() {
    let mut h = window(recording(&shipped("recorded-glenn.ron")), Tab::Messages);
    type_filter(&mut h, "resend.ca");
    h.key_press(egui::Key::Tab);
    h.run_steps(3);
    let bar = &h.state().1.panels.messages.0.get(0).unwrap().expr.bar;
    assert_eq!(bar.text, "resend.cause ");
    h.get_by_role_and_label(Role::TextInput, "filter").type_text("== delay");
    settle(&mut h);
    let (state, view) = h.state();
    let tl = view.panels.messages.0.get(0).unwrap();
    let rec = &state.lanes[0];
    let f = SharedFilter::<MessageRecord>::compile("resend.cause == delay").unwrap();
    let want = matching_rows(Shown::from(rec), &f);
    let got: Vec<u32> = tl.expr.active().expect("applied").set().iter().map(|i| i as u32).collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
    // Every row the timeline draws is one the filter matches.
    let layout = tl.last_layout.as_ref().expect("drawn");
    assert!(!layout.rows.is_empty(), "no rows drawn");
    for (key, _) in &layout.rows {
        let i = rec.messages.index_of(*key).unwrap();
        assert!(want.contains(&(i as u32)), "message {key:?} drawn but not matched");
    }
}

#[test]
fn the_anomalies_tab_and_strip_take_the_filter() {
    let rec = recording(&shipped("recorded-glenn.ron"));
    let text = "kind == drop && dir == a_to_b";
    let f = SharedFilter::<Anomaly>::compile(text).unwrap();
    let want = matching_rows(Shown::from(&rec), &f);
    let mut h = window(rec, Tab::Anomalies);
    type_filter(&mut h, text);
    let view = &h.state().1.panels.anomalies;
    let lane = view.per_lane.get(0).unwrap();
    let got: Vec<u32> = (0..lane.filtered.len()).map(|k| lane.filtered.get(k).unwrap()).collect();
    assert!(!want.is_empty());
    assert_eq!(got, want, "the list is not the filter's rows");
    assert!(h.query_by_label_contains(&format!("{} anomalies,", want.len())).is_some());
}

#[test]
fn the_io_graph_draws_the_filters_count_per_interval() {
    let rec = recording(&shipped("recorded-glenn.ron"));
    let text = "dropped";
    // Independently: each matching packet's send time, counted per second.
    let f = SharedFilter::<PacketFacts>::compile(text).unwrap();
    let rows = matching_rows(Shown::from(&rec), &f);
    let mut counts: Vec<Option<f64>> = Vec::new();
    for &i in &rows {
        let b = rec.packets.rows()[i as usize].time.as_secs_f64().floor() as usize;
        if counts.len() <= b {
            counts.resize(b + 1, Some(0.0));
        }
        counts[b] = Some(counts[b].unwrap() + 1.0);
    }
    let mut h = window(rec, Tab::Overview);
    h.get_by_label("IO graph").click();
    h.run_steps(3);
    assert!(h.state().1.panels.overview.io.open);
    type_filter(&mut h, text);
    let io = &h.state().1.panels.overview.io;
    assert_eq!(io.measure, MeasureKind::Count);
    assert_eq!(io.interval_ms, 1000);
    assert_eq!(io.drawn.len(), 1, "one line for the one lane");
    let drawn = &io.drawn[0].points;
    let end = h.state().0.lanes[0].primary().store.end_time().as_secs_f64();
    let want = points_in(&counts, 1.0, 0.0, end);
    assert!(want.len() > 3, "{want:?}");
    assert_eq!(drawn, &want, "the graph's points are not the per-second counts");
    assert_eq!(drawn.iter().map(|p| p[1]).sum::<f64>(), rows.len() as f64);
    // The rate of the same rows per 100 ms is ten times each 100 ms count.
    h.state_mut().1.panels.overview.io.measure = MeasureKind::Rate;
    h.state_mut().1.panels.overview.io.interval_ms = 100;
    settle(&mut h);
    let io = &h.state().1.panels.overview.io;
    let total: f64 = io.drawn[0].points.iter().map(|p| p[1] / 10.0).sum();
    assert!((total - rows.len() as f64).abs() < 1e-6, "{total} vs {}", rows.len());
}

#[test]
fn readme_documents_every_filter_field_of_each_kind() {
    use ackscope::filter::fields::names_of;
    use ackscope::filter::RowKind;
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme.find("### Display filters").expect("README has a Display filters section");
    let section = &readme[start..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    for (kind, heading) in [
        (RowKind::Packet, "Packet fields:"),
        (RowKind::Message, "Message fields:"),
        (RowKind::Anomaly, "Anomaly fields:"),
    ] {
        let at = section.find(heading).unwrap_or_else(|| panic!("no '{heading}'"));
        let listed: Vec<&str> = section[at..]
            .lines()
            .skip_while(|l| !l.starts_with("| `"))
            .take_while(|l| l.starts_with("| `"))
            .map(|l| l.trim_start_matches("| `").split('`').next().unwrap())
            .collect();
        assert_eq!(listed, names_of(kind), "README's {heading} table is not the {} fields", kind.plural());
    }
}
