//! Any two saved sessions side by side: `ackscope compare A.ron B.ron` (text and JSON, a bad file
//! named), the window's *Compare with...* opening a second recording beside the one shown so the
//! Compare tab shows both lanes and a verdict with its reasons, and resends by cause one row per
//! lane (issue 25, defect 3).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{app_harness, step_until, without_dialogs, WINDOW_SIZE};
use ackscope::app::{AppCommand, AppState, PromptKind, Tab};
use ackscope::model::compare::LaneFigures;
use ackscope::model::Recording;
use ackscope::report::compare_sessions::{compare_files, compare_lanes, load_lanes};
use ackscope::session::Verify;
use ackscope_protocol::{Dir, Scenario, Simulation, Strategy};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions").join(name)
}

fn ackscope(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ackscope")).args(args).output().expect("run ackscope")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn compare_two_sessions_prints_both_lanes_resends_per_lane_and_a_verdict_with_its_reason() {
    let (a, b) = (shipped("recorded-glenn.ron"), shipped("recorded-ue4.ron"));
    let out = ackscope(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("A: ") && stdout.contains("recorded-glenn.ron"), "{stdout}");
    assert!(stdout.contains("B: ") && stdout.contains("recorded-ue4.ron"), "{stdout}");
    assert!(stdout.contains("| figure | A glenn | B ue4 | B - A |"), "{stdout}");
    // Resends by cause: a row of its own per lane, each starting with the lane's name.
    let rows: Vec<&str> =
        stdout.lines().filter(|l| l.starts_with("| A glenn |") || l.starts_with("| B ue4 |")).collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    let verdict = stdout.lines().find(|l| l.starts_with("Verdict, A glenn vs B ue4: ")).expect(&stdout);
    assert!(verdict.contains("fewer bytes per message") && verdict.contains("p99"), "{verdict}");
    let why = stdout.lines().find(|l| l.starts_with("Why: ")).expect(&stdout);
    assert!(why.contains("spurious") && why.contains("all on a Nak") && why.contains("head-of-line"), "{why}");

    // The figures are the Compare tab's over each whole recording, and the reason agrees.
    let c = compare_files(&a, &b, Verify::Checksum).unwrap();
    let lanes = load_lanes(&a, Verify::Checksum).unwrap();
    let f = LaneFigures::compute((&lanes[0]).into(), lanes[0].end_time());
    let glenn = &c.lanes[0];
    assert_eq!((glenn.delivered, glenn.spurious), (f.totals.delivered, f.totals.spurious));
    assert_eq!(glenn.resends.total, f.totals.resends_total());
    assert!(glenn.spurious > 0 && c.lanes[1].resends.nak == c.lanes[1].resends.total, "{c:?}");
    assert!(why.contains(&format!("{} spurious", glenn.spurious)), "{why}");
}

#[test]
fn compare_two_sessions_as_json_and_with_ab_sessions_pairs_by_strategy() {
    let (a, b) = (shipped("recorded-ue4.ron"), shipped("recorded-glenn.ron"));
    let out = ackscope(&["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["a"]["lanes"][0], "A ue4");
    assert_eq!(v["lanes"].as_array().unwrap().len(), 2);
    for lane in v["lanes"].as_array().unwrap() {
        let r = &lane["resends"];
        let sum: u64 = ["delay", "nak", "redundant", "timeout"].iter().map(|k| r[k].as_u64().unwrap()).sum();
        assert_eq!(Some(sum), r["total"].as_u64(), "{lane}");
        assert!(lane["latency_ms"]["p99"].is_number() && lane["redundant_copy_bytes"].is_number(), "{lane}");
    }
    let verdict = &v["verdicts"][0];
    assert_eq!((verdict["a"].as_str(), verdict["b"].as_str()), (Some("A ue4"), Some("B glenn")));
    assert!(verdict["why"].as_str().unwrap().starts_with("Why: "), "{verdict}");

    // Two lanes a side (A/B recordings): each B lane is judged against A's lane of its strategy.
    let lanes_a = vec![recording(Strategy::Glenn, 5.0), recording(Strategy::Ue4, 5.0)];
    let lanes_b = vec![recording(Strategy::Ue4, 15.0), recording(Strategy::Glenn, 15.0)];
    let c = compare_lanes((Path::new("x.ron"), &lanes_a), (Path::new("y.ron"), &lanes_b));
    assert_eq!(c.lanes.len(), 4);
    let judged: Vec<(&str, &str)> = c.verdicts.iter().map(|p| (p.a.as_str(), p.b.as_str())).collect();
    assert_eq!(judged, [("A ue4", "B ue4"), ("A glenn", "B glenn")]);
}

/// A recording of `strategy` over 8 s at `loss` percent both ways.
fn recording(strategy: Strategy, loss: f64) -> Recording {
    let mut s = Scenario { seed: 21, strategy, ..Scenario::default() };
    for d in Dir::BOTH {
        s.link.get_mut(d).loss_percent = loss;
    }
    let mut sim = Simulation::new(s.clone());
    sim.run_for_secs(8.0);
    let mut rec = Recording::new(s);
    rec.ingest(sim.drain_events().collect());
    rec
}

#[test]
fn compare_names_the_file_it_cannot_read_and_refuses_grid_options() {
    let a = shipped("recorded-glenn.ron");
    let out = ackscope(&["compare", a.to_str().unwrap(), "no-such-session.ron"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("no-such-session.ron"), "{}", text(&out.stderr));
    let scenario = shipped("default.ron");
    let out = ackscope(&["compare", scenario.to_str().unwrap(), a.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("default.ron") && err.contains("without events"), "{err}");
    let out = ackscope(&["compare", a.to_str().unwrap(), a.to_str().unwrap(), "--loss", "5"]);
    assert!(text(&out.stderr).contains("--loss applies to the grid form"), "{}", text(&out.stderr));
}

#[test]
fn the_grid_form_of_compare_still_runs_from_one_scenario() {
    let s = shipped("default.ron");
    let out = ackscope(&["compare", s.to_str().unwrap(), "--seconds", "3", "--loss", "5", "--latency", "25"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("| 25 ms | 5 % | ue4 nak |"), "{stdout}");
}

/// The whole window, with file dialogs that cannot be shown.
fn window(state: AppState) -> Harness<'static, AppState> {
    app_harness(without_dialogs(state), WINDOW_SIZE)
}

#[test]
fn the_window_opens_a_second_session_beside_and_compare_shows_both_lanes_and_why() {
    let mut state = AppState::new(Scenario::default(), || {});
    let a = shipped("recorded-glenn.ron");
    state.show_session(ackscope::session::load(&a).unwrap(), Some(a.clone()));
    let mut h = window(state);
    h.step();
    h.get_by_label("Compare with...").click();
    assert!(step_until(&mut h, 5.0, |s| s.prompt == Some(PromptKind::CompareWith)), "no path field");
    h.run_steps(2);
    assert!(h.query_by_label("Compare with a saved session (shown beside this one)").is_some());
    // The path field's answer (typing into it is `files::`' test; the window has other fields).
    h.state_mut().apply(AppCommand::PromptChosen(shipped("recorded-ue4.ron")));
    h.step();
    assert!(step_until(&mut h, 60.0, |s| s.compare_with.shown().is_some() || s.error.is_some()), "never read");
    h.run_steps(3);
    let s = h.state();
    assert!(s.error.is_none(), "{:?}", s.error);
    assert_eq!(s.settings.tab, Tab::Compare, "the comparison is what the user asked to see");
    assert_eq!(s.file.as_deref(), Some(a.as_path()), "the recording shown stays");
    assert_eq!(s.lanes.len(), 1, "the other tabs keep their lanes");
    assert!(!s.has_unsaved(), "opening beside discards and adds nothing to save");
    // Both lanes: their legend entries, a verdict and why, and resends by cause per lane.
    assert!(h.query_by_label("show A glenn").is_some() && h.query_by_label("show B ue4").is_some());
    assert!(h.query_by_label_contains("fewer bytes per message than").is_some(), "no verdict");
    assert!(h.query_by_label_contains("Why: A glenn resent").is_some(), "the verdict's reason");
    assert!(h.query_by_label_contains("B ue4 resent").is_some() && h.query_by_label_contains("all on a Nak").is_some());
    assert!(h.query_by_label("resends by cause").is_some());
    assert!(h.query_all_by_label("A glenn").count() >= 2, "a row per lane in the totals and the resends grid");
    assert!(h.query_all_by_label("B ue4").count() >= 2);

    // The Summary shows both, named by side; closing B leaves one lane.
    h.get_by_label("Summary").click();
    h.run_steps(3);
    assert!(h.query_by_label("A glenn").is_some() && h.query_by_label("B ue4").is_some(), "Summary columns");
    h.state_mut().apply(AppCommand::CloseCompared);
    h.get_by_label("Compare").click();
    h.run_steps(2);
    assert!(h.query_by_label("show B ue4").is_none());
    assert!(h.query_by_label_contains("Compare with... a saved session").is_some());
}

#[test]
fn a_second_file_that_cannot_be_read_is_named_and_changes_nothing() {
    let mut state = AppState::new(Scenario::default(), || {});
    let a = shipped("recorded-glenn.ron");
    state.show_session(ackscope::session::load(&a).unwrap(), Some(a));
    state.apply(AppCommand::CompareWith(shipped("default.ron")));
    assert!(state.wait_compare_with(std::time::Duration::from_secs(30)));
    let err = state.error.clone().unwrap_or_default();
    assert!(err.contains("default.ron") && err.contains("without events"), "{err}");
    assert!(state.compare_with.shown().is_none());
    assert_eq!(state.lanes.len(), 1);
}
