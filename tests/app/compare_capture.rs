//! Any two recordings side by side, captures included (issue 25): `ackscope compare` and the
//! window's *Compare with...* take a packet capture (.pcapng) on either side, read through the
//! capture importer as the window opens one, so "did my change make it better" works for two
//! captures and for a capture against a session. The Summary tab then has a B - A column.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{replay_window, step_until};
use crate::pcapng_export::{lossy, recorded};
use ackscope::app::Tab;
use ackscope::capture::write_capture;
use ackscope::model::{Origin, Recording};
use ackscope_protocol::Strategy;
use egui_kittest::kittest::Queryable;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-compare-capture-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A 3 s lossy recording of `strategy`, saved as a session and exported as a capture: the paths.
fn recorded_pair(strategy: Strategy, seed: u64) -> (PathBuf, PathBuf) {
    let session = recorded(lossy(strategy, seed), Vec::new(), 3.0);
    // The seed in the name: the tests of this file run at once in one process (one temp dir) and
    // record the same strategies; one test's glenn.ron must not be the other's.
    let name = format!("{}-{seed}", strategy.name());
    let (ron, pcap) = (temp(&format!("{name}.ron")), temp(&format!("{name}.pcapng")));
    ackscope::session::save(&session, &ron).unwrap();
    write_capture(&session, std::fs::File::create(&pcap).unwrap()).unwrap();
    (ron, pcap)
}

fn compare(a: &Path, b: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope")).arg("compare").arg(a).arg(b).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "compare {} {}: {stderr}", a.display(), b.display());
    stdout.into_owned()
}

#[test]
fn compare_takes_a_capture_on_either_side_and_two_captures() {
    let (glenn_ron, glenn_pcap) = recorded_pair(Strategy::Glenn, 71);
    let (_, ue4_pcap) = recorded_pair(Strategy::Ue4, 71);
    for (a, b) in [(&glenn_pcap, &ue4_pcap), (&glenn_pcap, &glenn_ron), (&glenn_ron, &ue4_pcap)] {
        let text = compare(a, b);
        for f in [a, b] {
            assert!(text.contains(&f.display().to_string()), "{} not named:\n{text}", f.display());
        }
        assert!(text.contains("| packets sent |") && text.contains("B - A"), "{text}");
    }
    // The capture's packets are the session's: the same count on both sides, no difference.
    let text = compare(&glenn_pcap, &glenn_ron);
    let row = text.lines().find(|l| l.starts_with("| packets sent |")).unwrap();
    assert!(row.ends_with("| 0 |"), "a capture of a session sends what the session sent: {row}");
    // A file that is neither says so, naming it.
    let junk = temp("junk.pcapng");
    std::fs::write(&junk, b"not a capture").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope")).arg("compare").arg(&glenn_ron).arg(&junk).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("junk.pcapng"));
}

#[test]
fn the_window_compares_a_session_with_a_capture_beside_it() {
    let (glenn_ron, _) = recorded_pair(Strategy::Glenn, 72);
    let (_, ue4_pcap) = recorded_pair(Strategy::Ue4, 72);
    let rec = Recording::from_session(ackscope::session::load(&glenn_ron).unwrap(), &Default::default()).unwrap();
    let mut h = replay_window(vec![rec], Tab::Summary);
    h.state_mut().0.read_beside(&ue4_pcap, true);
    assert!(step_until(&mut h, 30.0, |s| s.0.compare_with.shown().is_some() || s.0.error.is_some()));
    assert_eq!(h.state().0.error, None);
    let beside = &h.state().0.compare_with.shown().unwrap().lanes;
    assert!(matches!(beside[0].info.origin, Origin::Capture { .. }), "{:?}", beside[0].info.origin);
    assert!(beside[0].primary().packets.len() > 100, "the capture's packets are read");
    h.run_steps(4);
    assert_eq!(h.state().0.settings.tab, Tab::Compare);
    // The Summary: a column per lane and the B - A column.
    h.state_mut().0.settings.tab = Tab::Summary;
    h.run_steps(6);
    h.get_by_label("B - A");
}
