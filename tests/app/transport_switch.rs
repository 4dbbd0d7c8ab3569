//! A transport change during a live run is an action in the one recording: in-process -> real UDP
//! sockets -> in-process, saved, re-run headless; the re-run reproduces every event before the
//! switch to UDP, and ground truth holds across the whole mixed recording.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use ackscope::app::{AppCommand, AppState};
use ackscope::runtime::udp::Transport;
use ackscope::session;
use ackscope_protocol::{summarize, Action, Event, EventKind, ParamChange, Scenario, Side, SimTime};

/// Pulls events until `done` holds (or 30 s of wall time pass).
fn pull_until(s: &mut AppState, mut done: impl FnMut(&AppState) -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        s.pull_events();
        s.poll_files();
        if done(s) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Runs on until the recording has `secs` more of virtual time.
fn run_on(s: &mut AppState, secs: f64) {
    let until = s.end_time().plus_micros((secs * 1e6) as u64);
    assert!(pull_until(s, |s| s.end_time() >= until), "the run did not advance {secs} s");
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-transport-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn marker_value(e: &Event) -> Option<&str> {
    match &e.kind {
        EventKind::ParamChanged { name, value } if name == "transport" => Some(value),
        _ => None,
    }
}

#[test]
fn a_transport_change_is_an_action_in_the_recording_and_re_runs_exactly_up_to_it() {
    let mut scenario = Scenario { seed: 11, ..Scenario::default() };
    scenario.link.a_to_b.latency_ms = 37.0;
    scenario.link.b_to_a.latency_ms = 37.0;
    scenario.link.a_to_b.loss_percent = 10.0;
    let mut s = AppState::new(scenario, || {});
    s.live_log = ackscope::app::live_log::LiveLog::new(temp_dir().join("live"));
    s.start();
    run_on(&mut s, 1.2);
    s.apply(AppCommand::SetParam(ParamChange::new("link.loss_percent", 5.0)));
    run_on(&mut s, 0.3);

    // In-process -> UDP: no guard, no new recording.
    let lane_id = s.lanes[0].id();
    assert!(s.switches_in_place(Transport::Udp));
    s.apply(AppCommand::SetTransport(Transport::Udp));
    assert!(s.guard.is_none() && s.error.is_none(), "{:?} {:?}", s.guard, s.error);
    assert_eq!((s.transport, s.lanes.len(), s.lanes[0].id()), (Transport::Udp, 1, lane_id), "the same recording");
    let to_udp = s.lanes[0].actions.last().cloned().expect("the switch is logged");
    assert_eq!(to_udp.action, Action::Transport(Transport::Udp));
    let acked_before =
        s.lanes[0].store.events().iter().filter(|e| matches!(e.kind, EventKind::PacketAcked { .. })).count();
    assert!(
        pull_until(&mut s, |s| s.lanes[0].store.events().iter().any(|e| e.time > to_udp.at.plus_micros(300_000)
            && matches!(e.kind, EventKind::PacketAcked { side: Side::B, .. }))),
        "no acks over UDP after the switch"
    );
    assert!(s.is_running());
    // A change made over UDP lands in the same log, on the recording's timeline.
    s.apply(AppCommand::SetParam(ParamChange::new("link.loss_percent", 2.0)));
    run_on(&mut s, 0.5);

    // UDP -> in-process.
    s.apply(AppCommand::SetTransport(Transport::InProcess));
    assert!(s.guard.is_none() && s.error.is_none(), "{:?} {:?}", s.guard, s.error);
    run_on(&mut s, 0.8);
    s.apply(AppCommand::Stop);
    assert!(!s.is_running());

    let lane = &s.lanes[0];
    let names: Vec<String> = lane.actions.iter().map(|a| a.action.to_string()).collect();
    assert_eq!(
        names,
        ["set link.loss_percent=5", "transport udp", "set link.loss_percent=2", "transport in_process"],
        "the action log"
    );
    assert!(lane.actions.windows(2).all(|w| w[0].at <= w[1].at), "{:?}", lane.actions);
    let events = lane.store.events();
    let markers: Vec<(SimTime, &str)> = events.iter().filter_map(|e| marker_value(e).map(|v| (e.time, v))).collect();
    assert_eq!(markers, [(to_udp.at, "udp"), (lane.actions[3].at, "in_process")]);
    let acked_after = events.iter().filter(|e| matches!(e.kind, EventKind::PacketAcked { .. })).count();
    assert!(acked_after > acked_before + 50, "{acked_before} -> {acked_after} acks");
    // Send ids stay unique across the three runners, and every ack is true.
    let mut uids: Vec<u64> = events
        .iter()
        .filter_map(|e| if let EventKind::PacketSent { uid, .. } = e.kind { Some(uid) } else { None })
        .collect();
    let n = uids.len();
    uids.sort_unstable();
    uids.dedup();
    assert_eq!(uids.len(), n, "a send id was used twice");
    let (totals, _) = summarize(events);
    assert_eq!(totals.false_acks, 0, "{totals:?}");

    // Saved and re-run headless: identical up to the switch to UDP, the switch itself included.
    let dir = temp_dir();
    let (saved, again) = (dir.join("switched.ron"), dir.join("again.ron"));
    s.save_path(&saved);
    assert!(pull_until(&mut s, |s| s.file_jobs().is_empty()), "the save did not finish");
    assert!(s.error.is_none(), "{:?}", s.error);
    let recorded = session::load(&saved).unwrap();
    assert_eq!(recorded.transport, Transport::InProcess, "the header names the transport the run started on");
    assert_eq!(recorded.actions, s.lanes[0].actions);
    assert_eq!(recorded.udp_from(), Some(to_udp.at));
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(["run", saved.to_str().unwrap(), "--out", again.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(note.contains("ran over UDP on real time from"), "{note}");
    let rerun = session::load(&again).unwrap();
    let upto = recorded.events.iter().position(|e| marker_value(e).is_some()).unwrap();
    assert!(upto > 500, "{upto} events before the switch");
    assert_eq!(rerun.events[..=upto], recorded.events[..=upto], "the re-run differs before the switch to UDP");
    assert_eq!(rerun.actions, recorded.actions, "the re-run logs the same actions");
    let (totals, _) = summarize(&rerun.events);
    assert_eq!(totals.false_acks, 0);
}

#[test]
fn without_a_live_single_lane_run_a_transport_change_starts_a_new_recording() {
    let mut s = AppState::new(Scenario::default(), || {});
    s.live_log = ackscope::app::live_log::LiveLog::new(temp_dir().join("live-ab"));
    s.ab = Some(ackscope_protocol::Strategy::Ue4);
    s.start();
    run_on(&mut s, 0.3);
    assert!(!s.switches_in_place(Transport::Udp), "A/B stays in-process");
    assert!(!s.switches_in_place(Transport::InProcess), "no change");
    s.apply(AppCommand::Stop);
    assert!(!s.switches_in_place(Transport::Udp), "nothing live");
    // A script cannot switch sockets: refused before the run, naming the step.
    let mut scripted = Scenario::default();
    scripted.script.push(ackscope_protocol::Step::at_secs(2.0, Action::Transport(Transport::Udp)));
    let err = ackscope::params::validate::scenario(&scripted).unwrap_err().to_string();
    assert!(err.contains("script[0]") && err.contains("cannot be scripted"), "{err}");
}
