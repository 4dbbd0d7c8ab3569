//! Captures opened as a source (`source::capture`): read on a thread and handed over in batches
//! as the file is read, they give exactly the events of the whole-file import, each flow named
//! as a client before its events arrive; the window opens a capture that way, and a file that is
//! not a capture is an error naming it.

use std::time::{Duration, Instant};

use ackscope::app::AppState;
use ackscope::capture::import::{import, ImportOptions};
use ackscope::capture::write_capture;
use ackscope::model::Origin;
use ackscope::source::{self, Spec};
use ackscope_protocol::{Event, Scenario, Strategy};

use crate::capture_import::temp_path;
use crate::pcapng_export::{lossy, recorded};

/// An exported lossy session of `strategy` written as a capture at `name`.
fn capture(strategy: Strategy, seed: u64, secs: f64, name: &str) -> std::path::PathBuf {
    let session = recorded(lossy(strategy, seed), Vec::new(), secs);
    let path = temp_path(name);
    write_capture(&session, std::fs::File::create(&path).unwrap()).unwrap();
    path
}

#[test]
fn a_streamed_capture_gives_the_events_of_the_whole_file_import() {
    for (strategy, seed) in [(Strategy::Glenn, 3), (Strategy::Ue4, 4)] {
        let path = capture(strategy, seed, 30.0, &format!("stream-{}.pcapng", strategy.name()));
        let (whole, summary) = import(&path, &ImportOptions::default()).unwrap();
        let spec = Spec::Capture { path: path.clone(), options: ImportOptions::default() };
        let lanes = source::capture::lanes_of(&spec);
        assert_eq!(lanes.len(), 1);
        assert_eq!(lanes[0].info.first().name, summary.decoder, "{}: the probed protocol", strategy.name());
        let mut src = source::start(spec, || {}).unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        let (mut streamed, mut batches, mut clients) = (Vec::<Event>::new(), 0, Vec::new());
        loop {
            let running = src.is_running();
            clients.extend(src.take_clients());
            for b in src.try_batches() {
                assert_eq!((b.lane, b.error.as_deref()), (0, None), "{}", strategy.name());
                assert!(clients.iter().any(|(_, c)| c.id == 1), "client 1 is named before its events");
                batches += 1;
                streamed.extend(b.events);
            }
            if !running {
                break;
            }
            assert!(Instant::now() < deadline, "the capture source did not finish");
            std::thread::sleep(Duration::from_millis(5));
        }
        src.stop();
        assert!(
            batches > 1,
            "{}: handed over in batches as read ({batches} for {} events)",
            strategy.name(),
            whole.len()
        );
        assert_eq!(streamed.len(), whole.len(), "{}: event count", strategy.name());
        assert!(streamed == whole, "{}: the streamed events differ from the whole-file import", strategy.name());
        assert_eq!(clients.len(), 1);
        assert!(clients[0].1.name.starts_with("10.1.0.1:50001 <-> 10.0.0.1:"), "{}", clients[0].1.name);
        std::fs::remove_file(&path).ok();
    }
}

#[test]
fn the_window_opens_a_capture_as_a_source_with_the_import_events() {
    let path = capture(Strategy::Glenn, 5, 6.0, "stream-window.pcapng");
    let (whole, _) = import(&path, &ImportOptions::default()).unwrap();
    let mut state = AppState::new(Scenario::default(), || {});
    state.open_path(&path);
    assert_eq!(state.error, None);
    assert!(state.file_jobs().is_empty(), "a capture is a source, not a file job");
    let deadline = Instant::now() + Duration::from_secs(120);
    while state.is_running() {
        state.pull_events();
        assert!(Instant::now() < deadline, "the capture did not finish");
        std::thread::sleep(Duration::from_millis(5));
    }
    state.stop();
    assert_eq!(state.error, None);
    let rec = &state.lanes[0];
    assert!(matches!(&rec.info.origin, Origin::Capture { path: p } if p.ends_with("stream-window.pcapng")));
    assert_eq!(rec.info.label(), "glenn");
    assert!(rec.store.events() == &whole[..], "the window holds the import's events");
    assert!(rec.client(1).is_some(), "the flow is client 1");

    let junk = temp_path("not-a-capture.pcapng");
    std::fs::write(&junk, [0x0A, 0x0D, 0x0D, 0x0A, 1, 2]).unwrap();
    state.open_path(&junk);
    let error = state.error.clone().unwrap_or_default();
    assert!(error.contains("not-a-capture.pcapng"), "the error names the file: {error}");
    std::fs::remove_file(&path).ok();
    std::fs::remove_file(&junk).ok();
}
