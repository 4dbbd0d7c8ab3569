//! Links from captures: a session's own link trace replayed into the same run meets the same
//! fates (0 differences); the records of an exported capture are the session's; `ackscope fit
//! --json` fits known links back from exported captures; a fitted link file runs headless;
//! one-sided, damaged and mutated captures are refused or counted, never a panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ackscope::capture::records;
use ackscope::capture::write_capture;
use ackscope::session::{self, run_lane, Session};
use ackscope_protocol::{Dir, Event, EventKind, Scenario, SimTime, Strategy, TraceFate};
use proptest::prelude::*;
use serde_json::Value;

fn ackscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ackscope")).args(args).output().expect("run ackscope")
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-fit-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A recorded session of `secs` of `scenario`.
fn recorded(scenario: Scenario, secs: f64) -> Session {
    let until = SimTime::from_secs_f64(secs);
    let (_, events, actions) = run_lane(&scenario, &[], until).unwrap();
    Session { events, actions, duration_us: until.0, ..Session::scenario_only(scenario) }
}

/// A scenario over a link set the same both ways by `set`.
fn over(seed: u64, set: impl Fn(&mut ackscope_protocol::LinkConfig)) -> Scenario {
    let mut s = Scenario { strategy: Strategy::Glenn, seed, ..Scenario::default() };
    for d in Dir::BOTH {
        set(s.link.get_mut(d));
    }
    s
}

/// The link's events of a run: what the link did, packet by packet.
fn link_events(events: &[Event]) -> Vec<(u64, String)> {
    events
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::LinkSent { .. }
                    | EventKind::LinkDropped { .. }
                    | EventKind::LinkDelivered { .. }
                    | EventKind::LinkDuplicated { .. }
            )
        })
        .map(|e| (e.time.0, format!("{:?}", e.kind)))
        .collect()
}

fn export(session: &Session, name: &str) -> PathBuf {
    let path = temp(name);
    let mut bytes = Vec::new();
    write_capture(session, &mut bytes).unwrap();
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_sessions_own_trace_replayed_into_the_same_run_gives_0_differences() {
    let scenario = over(7, |l| {
        l.loss_percent = 5.0;
        l.burst.p_percent = 0.5;
        l.jitter_ms = 15.0;
        l.duplicate_percent = 3.0;
        l.reorder_percent = 2.0;
    });
    let session = recorded(scenario.clone(), 8.0);
    let path = temp("own.session");
    session::save(&session, &path).unwrap();
    // The same run over a link whose own settings would lose nothing: every fate must come from
    // the trace.
    let mut replayed = scenario;
    replayed.set("link.trace", &format!("{:?}", path.display().to_string())).unwrap();
    for d in Dir::BOTH {
        *replayed.link.get_mut(d) = ackscope_protocol::LinkConfig { loss_percent: 0.0, ..Default::default() };
    }
    let (_, events, _) = run_lane(&replayed, &[], SimTime::from_secs_f64(8.0)).unwrap();
    let (want, got) = (link_events(&session.events), link_events(&events));
    assert!(want.len() > 1000, "a busy run: {}", want.len());
    let differences = want.iter().zip(&got).filter(|(a, b)| a != b).count() + want.len().abs_diff(got.len());
    assert_eq!(differences, 0, "first: {:?}", want.iter().zip(&got).find(|(a, b)| a != b));
}

#[test]
fn an_exported_captures_records_are_the_sessions_fate_for_fate() {
    let session = recorded(
        over(3, |l| {
            l.loss_percent = 8.0;
            l.jitter_ms = 10.0;
            l.duplicate_percent = 4.0;
        }),
        5.0,
    );
    let capture = export(&session, "both.pcapng");
    let from_capture = records::load(&capture).unwrap();
    let from_session = records::from_session(&session, "mem").unwrap();
    assert_eq!(from_capture.info.paired_flows, 2, "{:?}", from_capture.info);
    for d in Dir::BOTH {
        let (a, b): (Vec<_>, Vec<_>) =
            (from_capture.trace.dir(d).iter().collect(), from_session.trace.dir(d).iter().collect());
        assert_eq!(a.len(), b.len(), "{d:?}");
        let differ = a.iter().zip(&b).filter(|(x, y)| x != y).count();
        assert_eq!(differ, 0, "{d:?}: {:?}", a.iter().zip(&b).find(|(x, y)| x != y));
        assert!(a.iter().any(|p| matches!(&p.fate, TraceFate::Delivered(c) if c.len() > 1)), "duplicates seen");
    }
}

fn fit_json(capture: &Path) -> Value {
    let out = ackscope(&["fit", capture.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn value(v: &Value, dir: &str, name: &str) -> f64 {
    v[dir]["link"][name].as_f64().unwrap_or_else(|| panic!("{dir}.{name} in {v}"))
}

#[test]
fn fit_json_gives_known_links_back_under_their_parameter_names() {
    // Random loss and 20 ms jitter; then jitter 0 with a duplicate share.
    for seed in [1, 2] {
        let s = over(seed, |l| {
            l.latency_ms = 60.0;
            l.loss_percent = 6.0;
            l.jitter_ms = 20.0;
        });
        let v = fit_json(&export(&recorded(s, 40.0), &format!("random{seed}.pcapng")));
        for dir in ["a_to_b", "b_to_a"] {
            assert!((value(&v, dir, "loss_percent") - 6.0).abs() <= 1.0, "seed {seed} {dir}: {}", v[dir]["link"]);
            assert_eq!(value(&v, dir, "burst.p_percent"), 0.0, "{}", v[dir]["link"]);
            assert!((value(&v, dir, "latency_ms") - 60.0).abs() <= 6.0, "{}", v[dir]["link"]);
            assert!((value(&v, dir, "jitter_ms") - 20.0).abs() <= 2.0, "{}", v[dir]["link"]);
            assert_eq!(value(&v, dir, "bandwidth_kbps"), 0.0, "{}", v[dir]["link"]);
            // No cap, so no queue to size: said, not guessed.
            assert!(v[dir]["link"]["queue_bytes"].is_null(), "{}", v[dir]["link"]);
            let reason = v[dir]["link"]["queue_bytes_reason"].as_str().unwrap_or_default();
            assert!(reason.contains("no rate cap"), "{}", v[dir]["link"]);
            assert!(v[dir]["distances"].is_object(), "{v}");
        }
    }
    let s = over(5, |l| {
        l.latency_ms = 40.0;
        l.loss_percent = 0.0;
        l.duplicate_percent = 5.0;
    });
    let v = fit_json(&export(&recorded(s, 40.0), "plain.pcapng"));
    for dir in ["a_to_b", "b_to_a"] {
        assert!((value(&v, dir, "latency_ms") - 40.0).abs() <= 0.5, "{}", v[dir]["link"]);
        assert_eq!(value(&v, dir, "jitter_ms"), 0.0, "{}", v[dir]["link"]);
        assert!((value(&v, dir, "duplicate_percent") - 5.0).abs() <= 1.0, "{}", v[dir]["link"]);
        assert!(value(&v, dir, "loss_percent") <= 0.5, "{}", v[dir]["link"]);
    }
}

#[test]
fn a_fitted_link_file_runs_headless_and_a_bad_one_is_refused_naming_it() {
    let s = over(4, |l| {
        l.latency_ms = 70.0;
        l.loss_percent = 3.0;
    });
    let capture = export(&recorded(s, 20.0), "for_file.pcapng");
    let link = temp("fitted.ron");
    let out = ackscope(&["fit", capture.to_str().unwrap(), "--out", link.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut scenario = Scenario::default();
    ackscope::params::overrides::apply(&mut scenario, &format!("link.file={}", link.display())).unwrap();
    assert!((scenario.link.a_to_b.latency_ms - 70.0).abs() < 1.0, "{:?}", scenario.link.a_to_b);
    let set = format!("link.file={}", link.display());
    let run = ackscope(&["run", "--seconds", "2", "--set", &set, "--json"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let bad = ackscope(&["run", "--seconds", "1", "--set", "link.file=/nonexistent/link.ron"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("/nonexistent/link.ron"));
}

#[test]
fn a_one_sided_capture_is_refused_saying_why() {
    let session = recorded(over(2, |l| l.loss_percent = 5.0), 3.0);
    let capture = export(&session, "full.pcapng");
    // Keep one interface only: the sent side of the lane.
    let bytes = std::fs::read(&capture).unwrap();
    let mut reader = ackscope::capture::CaptureReader::new(&bytes[..], "capture").unwrap();
    let mut kept = Vec::new();
    while let Some(p) = reader.next_packet() {
        let p = p.unwrap();
        if p.interface == 0 {
            kept.push(p);
        }
    }
    let link = reader.interfaces()[0].linktype;
    let one = temp("one_sided.pcapng");
    let mut w = ackscope::capture::CaptureWriter::new(std::fs::File::create(&one).unwrap(), "one side").unwrap();
    w.add_interface("lane1-sent", "sender side only").unwrap();
    for p in &kept {
        w.write_udp(0, p.time_ns / 1000, &p.udp(link).unwrap(), "").unwrap();
    }
    drop(w);
    let out = ackscope(&["fit", one.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("one side only"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    /// Damaged captures: cut short or with bytes changed, reading gives records or an error,
    /// never a panic, and what was skipped is counted.
    #[test]
    fn mutated_captures_never_panic(cut in 0.0f64..1.0, flips in proptest::collection::vec((0.0f64..1.0, any::<u8>()), 0..8)) {
        let bytes = base_capture();
        let mut b = bytes.clone();
        for (at, v) in flips {
            let i = ((at * b.len() as f64) as usize).min(b.len() - 1);
            b[i] = v;
        }
        b.truncate(((cut * b.len() as f64) as usize).max(1));
        let path = temp("mutated.pcapng");
        std::fs::write(&path, &b).unwrap();
        if let Ok(r) = records::load(&path) {
            let read: u64 = Dir::BOTH.iter().map(|d| r.trace.dir(*d).len() as u64).sum();
            prop_assert!(read <= r.info.packets);
        }
    }
}

/// A small exported capture, made once.
fn base_capture() -> Vec<u8> {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES
        .get_or_init(|| {
            let session = recorded(over(9, |l| l.loss_percent = 10.0), 1.0);
            let mut bytes = Vec::new();
            write_capture(&session, &mut bytes).unwrap();
            bytes
        })
        .clone()
}

/// The short form of `examples/fit_accuracy.rs`: its first link (Gilbert-Elliott bursts between
/// grid points, 12 ms jitter, Glenn at 120 pps for 60 s), seed 1, both directions, within
/// tolerances of about three times the spread the example measured over seeds (README, "Fit
/// accuracy"), and no reorder where the link has none.
#[test]
fn fit_accuracy_short_form() {
    let mut s = over(1, |l| {
        l.latency_ms = 45.0;
        l.jitter_ms = 12.0;
        l.loss_percent = 0.7;
        l.burst = ackscope_protocol::BurstLoss { p_percent: 0.37, r_percent: 6.3, loss_in_bad_percent: 83.0 };
    });
    s.send_rate_pps = 120.0;
    let capture = export(&recorded(s, 60.0), "accuracy.pcapng");
    let fit = ackscope::fit::fit(&records::load(&capture).unwrap(), ackscope::fit::CHECK_SEEDS);
    for d in fit.dirs.iter() {
        let d = d.as_ref().expect("both directions fitted");
        let l = &d.link;
        let near = |name: &str, got: f64, want: f64, tol: f64| {
            assert!((got - want).abs() <= tol, "{:?} {name}: fitted {got}, true {want} (tolerance {tol}): {l:?}", d.dir)
        };
        near("latency_ms", l.latency_ms, 45.0, 0.5);
        near("jitter_ms", l.jitter_ms, 12.0, 0.5);
        near("loss_percent", l.loss_percent, 0.7, 1.2);
        near("burst.p_percent", l.burst.p_percent, 0.37, 0.2);
        near("burst.r_percent", l.burst.r_percent, 6.3, 1.5);
        near("burst.loss_in_bad_percent", l.burst.loss_in_bad_percent, 83.0, 12.0);
        assert_eq!(l.reorder_percent, 0.0, "{:?}: no reorder on this link: {:?}", d.dir, d.delay);
        let delay_ks = d.check.delay_ks.iter().sum::<f64>() / d.check.delay_ks.len() as f64;
        assert!(delay_ks < 0.05, "{:?}: delay KS {delay_ks}", d.dir);
    }
}
