//! Session files: round trips, deterministic re-runs, shipped files, and refusing bad files.

use std::path::{Path, PathBuf};

use ackscope::report;
use ackscope::session::{self, Session};
use ackscope_protocol::{LinkPatch, LinkStep, Scenario, StepDirection};

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ackscope-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn recorded(seconds: f64) -> Session {
    let mut s = Scenario { seed: 77, ..Scenario::default() };
    s.link.a_to_b.jitter_ms = 20.0;
    s.link.b_to_a.duplicate_percent = 2.0;
    s.script = vec![LinkStep {
        at_s: 2.0,
        dir: StepDirection::AToB,
        set: LinkPatch { loss_percent: Some(50.0), ..Default::default() },
    }
    .into()];
    let changes =
        vec![session::Change { at_us: 3_500_000, name: "glenn.resend_delay_ms".into(), value: "30".into() }.into()];
    report::run_with_actions(&s, seconds, &changes).unwrap().session
}

#[test]
fn save_load_round_trip_is_identical() {
    let dir = tmp_dir("roundtrip");
    let s = recorded(8.0);
    assert!(s.events.len() > 5000);
    let path = dir.join("rec.ron");
    let bytes = session::save(&s, &path).unwrap();
    let back = session::load(&path).unwrap();
    assert_eq!(back.events, s.events);
    assert_eq!(back.scenario, s.scenario);
    assert_eq!(back.actions, s.actions);
    assert_eq!(back.duration_us, s.duration_us);
    assert!(bytes as f64 / s.events.len() as f64 <= 64.0, "{} bytes per event", bytes as f64 / s.events.len() as f64);
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn rerun_from_the_header_reproduces_identical_events() {
    let s = recorded(8.0);
    assert!(s.actions.len() >= 3, "the live change and the drain are recorded: {:?}", s.actions);
    let again = session::rerun(&s).unwrap();
    assert_eq!(again.len(), s.events.len());
    assert!(again == s.events, "re-run differs from the recording");
}

#[test]
fn every_shipped_file_loads_and_runs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "ron") {
            let s = session::load(&p).unwrap_or_else(|e| panic!("{e:#}"));
            if s.has_events() {
                let again = session::rerun(&s).unwrap();
                assert!(again == s.events, "{}: recording does not re-run identically", p.display());
            } else {
                let run = report::run_with_actions(&s.scenario, 5.0, &s.actions).unwrap();
                assert!(run.report.packets.sent > 0, "{}", p.display());
                assert_eq!(run.report.packets.false_acks, 0);
            }
            n += 1;
        }
    }
    assert!(n >= 5, "only {n} shipped sessions");
}

fn refused(text: &str, origin: &str) -> String {
    match session::from_text(text, origin) {
        Ok(_) => panic!("{origin} was accepted"),
        Err(e) => {
            let msg = format!("{e:#}");
            assert!(msg.contains(origin), "error does not name the file: {msg}");
            msg
        }
    }
}

#[test]
fn truncated_and_corrupted_files_are_refused_with_the_file_named() {
    let s = recorded(2.0);
    let text = session::to_text(&s).unwrap();
    assert!(session::from_text(&text, "ok.ron").is_ok());
    // Truncation at many offsets, including inside the checksum and the last bytes.
    let len = text.len();
    let mut offsets: Vec<usize> = (0..len).step_by(len / 97 + 1).collect();
    offsets.extend([len - 1, len - 2, len - 5, len - 20, 1, 0]);
    for cut in offsets {
        let cut = (0..=cut).rev().find(|c| text.is_char_boundary(*c)).unwrap();
        refused(&text[..cut], &format!("cut-{cut}.ron"));
    }
    // Flipped bytes anywhere.
    let bytes = text.as_bytes();
    for (i, pos) in (0..len).step_by(len / 211 + 1).enumerate() {
        let mut b = bytes.to_vec();
        b[pos] ^= 1 << (i % 7);
        if let Ok(t) = String::from_utf8(b) {
            refused(&t, &format!("flip-{pos}.ron"));
        }
    }
}

#[test]
fn wrong_version_not_ron_and_unknown_strategy_are_explained() {
    let text = session::to_text(&Session::scenario_only(Scenario::default())).unwrap();
    let v4 = text.replacen("format_version:3", "format_version:4", 1);
    assert!(refused(&v4, "v4.ron").contains("format version 4 is not supported"));
    assert!(refused("this is not RON at all", "junk.ron").contains("not an ackscope session"));
    assert!(refused("{\"format_version\": 1}", "json.ron").contains("line"));
    let hand = "(format_version: 1, app_version: \"x\", scenario: (strategy: warp_drive))";
    let msg = refused(hand, "strategy.ron");
    assert!(msg.contains("warp_drive") && msg.contains("line 1"), "{msg}");
}

#[test]
fn a_failed_save_leaves_the_previous_file_intact() {
    let dir = tmp_dir("atomic");
    let path = dir.join("keep.ron");
    let first = recorded(1.0);
    session::save(&first, &path).unwrap();
    let before = std::fs::read(&path).unwrap();
    // Block the temporary file's name with a directory so the save fails before the rename.
    let blocker = dir.join(format!(".keep.ron.tmp-{}", std::process::id()));
    std::fs::create_dir(&blocker).unwrap();
    let second = recorded(2.0);
    assert!(session::save(&second, &path).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), before, "the previous file changed");
    std::fs::remove_dir(&blocker).unwrap();
    session::save(&second, &path).unwrap();
    assert_eq!(session::load(&path).unwrap().events, second.events);
}

#[test]
fn hand_written_scenarios_without_checksum_load() {
    let text = r#"#![enable(implicit_some)]
(
    format_version: 1,
    app_version: "hand",
    scenario: (
        seed: 5,
        strategy: acks,
        link: (a_to_b: (loss_percent: 20.0), b_to_a: (loss_percent: 0.0)),
        script: [(at_s: 1.0, dir: b_to_a, set: (latency_ms: 300.0))],
    ),
)"#;
    let s = session::from_text(text, "hand.ron").unwrap();
    assert_eq!(s.scenario.seed, 5);
    assert_eq!(s.scenario.link.a_to_b.loss_percent, 20.0);
    assert_eq!(s.scenario.link.a_to_b.latency_ms, 50.0, "unset fields keep their defaults");
    assert_eq!(s.scenario.script[0].as_link().unwrap().1.latency_ms, Some(300.0));
}
