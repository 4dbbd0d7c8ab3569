//! Opening a session shows it while it is parsed: the header first, then the events block by
//! block; what the window ends with equals the session opened whole, and a file whose checksum
//! fails once everything was shown is refused and taken away again.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ackscope::app::AppState;
use ackscope::model::Recording;
use ackscope::session::{self, Loading, Progress, Session};
use ackscope_protocol::{Dir, Scenario, Simulation};

/// A lossy, jittery 60 s run saved to a fresh file: about 55,000 events, several parse blocks.
fn saved_run(name: &str) -> (PathBuf, Session) {
    let mut s = Scenario { seed: 21, ..Scenario::default() };
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.loss_percent = 10.0;
        l.jitter_ms = 20.0;
        l.duplicate_percent = 2.0;
    }
    let mut sim = Simulation::new(s.clone());
    sim.run_for_secs(60.0);
    let mut session = Session::scenario_only(s);
    session.events = sim.drain_events().collect();
    session.duration_us = session.events.last().unwrap().time.0;
    let dir = std::env::temp_dir().join(format!("ackscope-progressive-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.ron");
    session::save(&session, &path).unwrap();
    (path, session)
}

/// Everything a panel reads of a recording, as text (the message index by its records: its
/// lookup map prints in a random order; the packet index without its process-wide identity).
fn contents(r: &Recording) -> String {
    let packets = format!("{:?}", r.packets);
    let rows = packets.find(", rows:").expect("the packet index's rows");
    assert!(packets.starts_with("PacketIndex { instance: "), "{}", &packets[..40]);
    let packets = &packets[rows..];
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        r.scenario,
        r.actions,
        r.transport,
        r.ledger,
        r.store,
        r.messages.messages(),
        r.chunks,
        packets
    )
}

/// Opens `path` in a window's state and steps its frames until the open has ended.
fn open_in_window(path: &Path) -> AppState {
    let mut state = AppState::new(Scenario::default(), || {});
    state.open_path(path);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !state.file_jobs().is_empty() {
        assert!(Instant::now() < deadline, "still opening after 60 s");
        state.poll_files();
        assert!(!state.has_unsaved(), "what came from the file so far is not an unsaved run");
        std::thread::sleep(Duration::from_millis(2));
    }
    state
}

#[test]
fn the_header_comes_first_and_the_events_follow_in_order_as_in_a_whole_load() {
    let (path, _) = saved_run("stream");
    let whole = session::load(&path).unwrap();
    let mut got = Vec::new();
    let rest = session::load_streaming(&path, &std::sync::Arc::new(Progress::new()), |m| got.push(m)).unwrap();
    assert!(rest.is_none(), "a file ackscope wrote is streamed");
    let mut msgs = got.into_iter();
    let Some(Loading::Header(header, total)) = msgs.next() else { panic!("the header comes first") };
    assert_eq!(total, whole.events.len());
    let mut events = Vec::new();
    let mut blocks = 0;
    for m in msgs {
        let Loading::Events(block) = m else { panic!("one header only") };
        events.extend(block);
        blocks += 1;
    }
    assert!(blocks >= 2, "{blocks} blocks");
    assert!(events == whole.events, "the streamed events are the file's (seed 21)");
    // Several blocks joined: equal to what `ron` alone reads too.
    let by_ron: Session = ron::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(events == by_ron.events, "the streamed events are ron's (seed 21)");
    assert!(*header == Session { events: Vec::new(), ..whole }, "the header is the file's");
}

#[test]
fn a_session_opened_while_parsed_equals_the_same_session_opened_whole() {
    let (path, _) = saved_run("window");
    let state = open_in_window(&path);
    assert!(state.error.is_none(), "{:?}", state.error);
    let whole = Recording::lanes_from_session(session::load(&path).unwrap(), &Progress::new()).unwrap();
    assert_eq!(state.lanes.len(), 1);
    assert!(state.lanes[0].store.len() > 50_000, "{} events", state.lanes[0].store.len());
    assert!(contents(&state.lanes[0]) == contents(&whole[0]), "store, ledger and indexes equal (seed 21)");
    assert_eq!(state.file.as_deref(), Some(path.as_path()));
    assert!(!state.has_unsaved(), "an opened file is saved as it is");
}

#[test]
fn a_checksum_that_fails_after_every_event_was_shown_refuses_the_file_and_takes_them_away() {
    let (path, _) = saved_run("corrupt");
    let text = std::fs::read_to_string(&path).unwrap();
    // Still a valid event, so only the checksum can tell.
    let at = text.rfind("bytes:9,").expect("a 9-byte send");
    let bad = format!("{}bytes:7,{}", &text[..at], &text[at + "bytes:9,".len()..]);
    std::fs::write(&path, bad).unwrap();
    let state = open_in_window(&path);
    let error = state.error.clone().unwrap_or_default();
    assert!(error.contains("checksum mismatch"), "{error}");
    assert!(state.lanes.iter().all(|l| l.store.is_empty()), "nothing of the refused file stays");
    assert!(state.file.is_none());
}
