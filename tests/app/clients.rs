//! Many clients, any origin: a JSON-lines stream written by hand (no scenario, no simulation)
//! opens in the window and every tab shows it; the Clients table focuses a client everywhere;
//! malformed lines are refused with their line and field; a recording of several clients
//! survives session format v3; `export --events` and `summary FILE.jsonl` agree.

use std::path::PathBuf;
use std::process::Command;

use ackscope::app::{AppState, Tab};
use ackscope::model::{Origin, Recording};
use ackscope::session::{self, Session};
use ackscope::ui::WindowView;
use ackscope_protocol::{Event, EventKind, Scenario, Side, SimTime, StatsSample};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

use super::common::{step_until, window_harness};

type Window = (AppState, WindowView);

fn window(state: AppState) -> Harness<'static, Window> {
    window_harness(state)
}

pub(crate) fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ackscope-clients-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A stream as a game would write it, by hand: three clients (named, two groups), each with 60
/// packets each way at 20 Hz over 3 s, every seventh server packet dropped for client 3,
/// reliable messages, RTT samples and stats; client `k`'s link delay is 20 ms x k each way.
pub(crate) fn hand_written_stream() -> String {
    let mut lines = vec![
        r#"{"ackscope_events":1,"producer":"handmade 1.0","protocol":"mygame-net","clients":[{"id":1,"name":"alice","group":"EU"},{"id":2,"name":"bob","group":"EU"}]}"#.to_string(),
        r#"{"event":"ClientInfo","client":3,"name":"carol","group":"4G"}"#.to_string(),
    ];
    let mut uid = [0u64; 4];
    let mut events: Vec<(u64, u32, String)> = Vec::new();
    for k in 1..=3u32 {
        let delay_us = 20_000 * k as u64;
        for i in 0..60u64 {
            let t = i * 50_000 + k as u64 * 100;
            for (side, dir, other) in [("A", "AtoB", "B"), ("B", "BtoA", "A")] {
                let u = uid[k as usize];
                uid[k as usize] += 1;
                let seq = i;
                events.push((
                    t,
                    k,
                    format!(r#""event":"PacketSent","side":"{side}","seq":{seq},"bytes":80,"uid":{u}"#),
                ));
                events.push((t, k, format!(r#""event":"LinkSent","dir":"{dir}","uid":{u},"bytes":80"#)));
                let dropped = k == 3 && side == "A" && i % 7 == 3;
                if dropped {
                    events.push((t, k, format!(r#""event":"LinkDropped","dir":"{dir}","uid":{u},"reason":"Random""#)));
                } else {
                    let at = t + delay_us;
                    events.push((
                        at,
                        k,
                        format!(r#""event":"LinkDelivered","dir":"{dir}","uid":{u},"delay_us":{delay_us}"#),
                    ));
                    events.push((
                        at,
                        k,
                        format!(r#""event":"PacketReceived","side":"{other}","seq":{seq},"bytes":80"#),
                    ));
                    events.push((at + delay_us, k, format!(r#""event":"PacketAcked","side":"{side}","seq":{seq}"#)));
                    let rtt = 2.0 * delay_us as f64 / 1000.0;
                    events.push((at + delay_us, k, format!(r#""event":"RttSample","side":"{side}","rtt_ms":{rtt}"#)));
                }
            }
            if i % 4 == 0 {
                let msg = i / 4;
                events.push((
                    t,
                    k,
                    format!(r#""event":"MessageQueued","side":"A","msg":{msg},"bytes":32,"reliable":true"#),
                ));
                events.push((
                    t,
                    k,
                    format!(r#""event":"MessageSent","side":"A","msg":{msg},"seq":{i},"kind":"First""#),
                ));
                let got = t + delay_us + 5_000 * k as u64;
                events.push((got, k, format!(r#""event":"MessageDelivered","side":"B","msg":{msg}"#)));
            }
            if i % 2 == 0 {
                let rtt = 2.0 * delay_us as f64 / 1000.0;
                let loss = if k == 3 { 14.3 } else { 0.0 };
                events.push((t + 1, k, format!(
                    r#""event":"Stats","side":"A","stats":{{"rtt_ms":{rtt},"rtt_display_ms":{rtt},"rtt_min_ms":{rtt},"rtt_max_ms":{rtt},"jitter_ms":0.0,"loss_percent":{loss},"sent_kbps":12.8,"received_kbps":12.8,"acked_kbps":12.0}}"#
                )));
            }
        }
    }
    // A kind and a field from a newer game: skipped and counted, not fatal.
    events.push((10, 1, r#""event":"PlayerTeleported","x":3"#.to_string()));
    events.sort_by_key(|e| e.0);
    for (t, k, rest) in events {
        lines.push(format!(r#"{{"t_us":{t},"client":{k},{rest}}}"#));
    }
    lines.join("\n") + "\n"
}

fn open(path: &std::path::Path) -> Harness<'static, Window> {
    let mut state = AppState::new(Scenario::default(), || {});
    state.open_path(path);
    let mut h = window(state);
    assert!(step_until(&mut h, 30.0, |s| s.0.file_jobs().is_empty()), "the stream did not open");
    h
}

#[test]
fn a_hand_written_stream_of_three_clients_opens_in_every_tab() {
    let path = temp("three.jsonl");
    std::fs::write(&path, hand_written_stream()).unwrap();
    let mut h = open(&path);
    {
        let s = &h.state().0;
        assert_eq!(s.error, None);
        let rec = &s.lanes[0];
        assert!(rec.scenario.is_none(), "a stream has no scenario");
        assert!(matches!(&rec.info.origin, Origin::EventStream { producer, .. } if producer == "handmade 1.0"));
        assert_eq!(rec.info.label(), "mygame-net");
        assert_eq!(rec.clients().iter().map(|c| c.client).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(rec.info.client(3).label(), "carol");
        // Client 3's truth: the link dropped every seventh server packet.
        let c3 = rec.client(3).unwrap();
        assert_eq!(c3.ledger.totals().link_dropped, 9, "client 3's drops");
        assert_eq!(rec.client(1).unwrap().ledger.totals().link_dropped, 0);
    }
    h.state_mut().0.playback.seek(SimTime(3_500_000));
    let tabs = [
        (Tab::Clients, "3 clients"),
        (Tab::Overview, "mygame-net"),
        (Tab::Messages, "mygame-net"),
        (Tab::Packets, "mygame-net"),
        (Tab::Anomalies, "anomalies"),
        (Tab::Summary, "metric"),
    ];
    for (tab, want) in tabs {
        h.state_mut().0.settings.tab = tab;
        h.run_steps(3);
        assert!(h.query_all_by_label_contains(want).next().is_some(), "{tab:?} does not show '{want}'");
    }
    // The Clients table: one row per client; clicking carol focuses client 3 everywhere.
    h.state_mut().0.settings.tab = Tab::Clients;
    h.run_steps(2);
    for name in ["alice (EU)", "bob (EU)", "carol (4G)"] {
        assert!(h.query_by_label(name).is_some(), "no row for {name}");
    }
    assert_eq!(h.state().1.panels.clients.plot.lines.len(), 3, "a line per client");
    h.get_by_label("carol (4G)").click();
    h.run_steps(2);
    assert_eq!(h.state().0.focus, 3);
    let shown = h.state().0.shown();
    assert_eq!(shown[0].conn.client, 3, "every tab reads client 3");
    assert_eq!(shown[0].packets.len(), 120);
    // The Anomalies tab lists client 3's drops and names the client.
    h.state_mut().0.settings.tab = Tab::Anomalies;
    h.run_steps(3);
    assert!(h.query_all_by_label_contains("mygame-net - carol").next().is_some(), "the anomaly list names its client");
    assert!(h.query_all_by_label_contains("9 anomalies").next().is_some(), "client 3's nine drops");
    // Summary of client 3 counts its own packets only.
    h.state_mut().0.settings.tab = Tab::Summary;
    h.run_steps(3);
    assert!(h.query_all_by_label_contains("carol").next().is_some());
}

#[test]
fn the_summary_of_a_stream_names_every_client_and_what_was_skipped() {
    let path = temp("summary.jsonl");
    std::fs::write(&path, hand_written_stream()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(["summary", path.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let lane = &v["lanes"][0];
    assert_eq!(lane["protocol"], "mygame-net");
    assert_eq!(lane["packets"]["sent"], 360);
    assert_eq!(lane["packets"]["link_dropped"], 9);
    let clients = lane["clients"].as_array().unwrap();
    assert_eq!(clients.len(), 3);
    assert_eq!(clients[1]["name"], "bob");
    assert_eq!(clients[1]["rtt_ms"], 80.0);
    assert_eq!(clients[2]["loss_true_percent"].as_f64().map(|l| l > 10.0), Some(true), "{}", clients[2]);
    assert_eq!(clients[0]["message_p99_ms"], 25.0, "20 ms link + 5 ms for client 1");
    assert_eq!(v["skipped_kinds"]["PlayerTeleported"], 1);
    assert_eq!(
        v["skipped_fields"]["PlayerTeleported.x"],
        serde_json::Value::Null,
        "a skipped kind's fields are not counted"
    );
}

#[test]
fn malformed_lines_are_refused_with_the_line_and_the_field() {
    let good = hand_written_stream();
    let mut lines: Vec<&str> = good.lines().collect();
    let bad = r#"{"t_us":900000,"client":2,"event":"PacketSent","side":"A","seq":"seven","bytes":80,"uid":1}"#;
    lines.insert(5, bad);
    let path = temp("bad.jsonl");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope")).args(["summary", path.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.jsonl:6: field `seq` of PacketSent"), "{err}");
    // The window says the same and shows nothing of the file.
    let h = open(&path);
    let e = h.state().0.error.clone().unwrap_or_default();
    assert!(e.contains("bad.jsonl:6: field `seq`"), "{e}");
}

#[test]
fn a_recording_of_several_clients_survives_session_format_3() {
    let mut rec = Recording::new(Scenario::default());
    let stats = |rtt_ms| EventKind::Stats { side: Side::A, stats: StatsSample { rtt_ms, ..StatsSample::default() } };
    let mut events = Vec::new();
    for t in 0..50u64 {
        for k in [1u32, 2, 7] {
            events.push(Event::for_client(SimTime(t * 100_000), k, stats(10.0 * k as f32)));
        }
        if t == 20 {
            events.push(Event::for_client(
                SimTime(t * 100_000),
                0,
                EventKind::ParamChanged { name: "link.loss_percent".into(), value: "5".into() },
            ));
        }
    }
    rec.ingest(events.clone());
    let text = session::to_text(&rec.to_session()).unwrap();
    assert!(text.contains("format_version:3"));
    assert!(text.contains(",7)"), "another client's event carries it");
    let back: Session = session::from_text(&text, "v3.ron").unwrap();
    assert!(back.events == events, "every event comes back with its client");
    let lanes = Recording::lanes_from_session(back, &session::Progress::new()).unwrap();
    assert_eq!(lanes[0].clients().len(), 3);
    assert_eq!(lanes[0].client(7).unwrap().store.changes.len(), 1, "a run-wide change reaches every client");
}

#[test]
fn export_events_and_summary_of_the_stream_agree_with_the_session() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let session = root.join("sessions/recorded-glenn.ron");
    let out = temp("glenn.jsonl");
    let bin = env!("CARGO_BIN_EXE_ackscope");
    let run = |args: &[&str]| Command::new(bin).args(args).output().unwrap();
    let e = run(&["export", session.to_str().unwrap(), "--events", out.to_str().unwrap()]);
    assert!(e.status.success(), "{}", String::from_utf8_lossy(&e.stderr));
    let stream = session::jsonl::load(&out).unwrap();
    let s = session::load(&session).unwrap();
    assert_eq!(stream.lanes[0].len(), s.events.len());
    let diff = stream.lanes[0].iter().zip(&s.events).position(|(a, b)| a != b);
    assert!(diff.is_none(), "event {diff:?} differs: {:?}", diff.map(|i| (&stream.lanes[0][i], &s.events[i])));
    assert_eq!(stream.header.lane.protocol.as_deref(), Some("glenn"));
    let a: serde_json::Value =
        serde_json::from_slice(&run(&["summary", session.to_str().unwrap(), "--json"]).stdout).unwrap();
    let b: serde_json::Value =
        serde_json::from_slice(&run(&["summary", out.to_str().unwrap(), "--json"]).stdout).unwrap();
    assert_eq!(a["packets"], b["lanes"][0]["packets"], "the same ground truth from the same events");
    // The stream opens in the window as glenn, decoded as glenn's packets.
    let h = open(&out);
    let rec = &h.state().0.lanes[0];
    assert_eq!(rec.info.first().strategy, Some(ackscope_protocol::Strategy::Glenn));
    assert_eq!(rec.len(), s.events.len());
}
