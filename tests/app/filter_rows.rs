//! Display filters over real recorded rows (sessions/recorded-*.ron): each field's answer checked
//! against the exported CSV tables (written by separate code from the same model), a live cache
//! extended event block by event block equal to one built at the end, and the window's cache,
//! `export --filter` and `summary --filter` giving the same rows.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ackscope::filter::{matching_rows, Budget, Matches, PacketFacts, SharedFilter};
use ackscope::model::index::MessageRecord;
use ackscope::model::{Recording, Shown};
use ackscope::session::{self, Progress};
use csv::StringRecord;

fn ackscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ackscope")).args(args).output().expect("run ackscope")
}

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions").join(name)
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ackscope-filter-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn recording(session: &Path) -> Recording {
    Recording::from_session(session::load(session).unwrap(), &Progress::new()).unwrap()
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<StringRecord>) {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header = r.headers().unwrap().iter().map(String::from).collect();
    (header, r.records().map(|x| x.unwrap()).collect())
}

/// The CSV tables `which` (`packets`, `messages`) of `session`, unfiltered or filtered by `filter`.
fn export(session: &Path, dir: &Path, filter: Option<&str>, which: &[&str]) -> Vec<Table> {
    let paths: Vec<PathBuf> = which.iter().map(|t| dir.join(format!("{t}.csv"))).collect();
    let mut args = vec!["export".to_string(), session.to_str().unwrap().to_string()];
    for (t, p) in which.iter().zip(&paths) {
        args.extend([format!("--{t}"), p.to_str().unwrap().to_string()]);
    }
    if let Some(f) = filter {
        args.extend(["--filter".to_string(), f.to_string()]);
    }
    let out = ackscope(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    paths.iter().map(|p| Table::read(p)).collect()
}

struct Table {
    header: Vec<String>,
    rows: Vec<StringRecord>,
}

impl Table {
    fn read(p: &Path) -> Self {
        let (header, rows) = read_csv(p);
        Self { header, rows }
    }

    fn col(&self, name: &str) -> usize {
        self.header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"))
    }

    /// Each row's `key` cells, for rows passing `keep`.
    fn keys(&self, key: &[&str], keep: impl Fn(&dyn Fn(&str) -> String) -> bool) -> Vec<String> {
        let idx: Vec<usize> = key.iter().map(|k| self.col(k)).collect();
        self.rows
            .iter()
            .filter(|r| keep(&|c: &str| r.get(self.col(c)).unwrap().to_string()))
            .map(|r| idx.iter().map(|&i| r.get(i).unwrap()).collect::<Vec<_>>().join("/"))
            .collect()
    }
}

fn num(s: &str) -> Option<f64> {
    (!s.is_empty()).then(|| s.parse().unwrap())
}

/// The link ids of the packets `text` matches in `rec` (its first client).
fn packet_ids(rec: &Recording, text: &str) -> Vec<String> {
    let f = SharedFilter::<PacketFacts>::compile(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let rows = matching_rows(Shown::from(rec), &f);
    rows.iter().map(|&i| rec.packets.rows()[i as usize].uid.to_string()).collect()
}

/// `side/id` of the messages `text` matches in `rec`.
fn message_ids(rec: &Recording, text: &str) -> Vec<String> {
    let f = SharedFilter::<MessageRecord>::compile(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let all = rec.messages.messages();
    let side = |s: ackscope_protocol::Side| if s == ackscope_protocol::Side::A { "A" } else { "B" };
    matching_rows(Shown::from(rec), &f)
        .iter()
        .map(|&i| &all[i as usize])
        .map(|m| format!("{}/{}", side(m.side), m.id))
        .collect()
}

#[test]
fn packet_and_message_fields_agree_with_the_exported_tables() {
    let dir = temp_dir("fields");
    // Rows each packet check matched over both sessions (every check but one must match some).
    let mut matched: std::collections::BTreeMap<String, usize> = Default::default();
    for name in ["recorded-acks.ron", "recorded-glenn.ron", "recorded-ue4.ron"] {
        let session = shipped(name);
        let rec = recording(&session);
        let [p, m]: [Table; 2] = export(&session, &dir, None, &["packets", "messages"]).try_into().ok().unwrap();
        // Only message rows (the table also lists chunks).
        type Check<'a> = (&'a str, Box<dyn Fn(&dyn Fn(&str) -> String) -> bool>);
        let packet_checks: Vec<Check> = vec![
            ("dropped", Box::new(|c| c("fate").starts_with("dropped"))),
            ("fate == dropped_loss", Box::new(|c| c("fate") == "dropped_loss")),
            (
                "fate in {delivered, duplicated}",
                Box::new(|c| ["delivered", "duplicated"].contains(&c("fate").as_str())),
            ),
            ("fate != delivered", Box::new(|c| c("fate") != "delivered")),
            ("delay_ms >= 50", Box::new(|c| num(&c("delay_ms")).is_some_and(|d| d >= 50.0))),
            ("!(delay_ms < 50)", Box::new(|c| num(&c("delay_ms")).is_none_or(|d| d >= 50.0))),
            (
                "seq in 100..200 && dir == b_to_a",
                Box::new(|c| (100..=200).contains(&c("seq").parse::<u32>().unwrap()) && c("dir") == "b_to_a"),
            ),
            (
                "seq in {3, 7, 900..910} || side == a && bytes > 100",
                Box::new(|c| {
                    let s: u32 = c("seq").parse().unwrap();
                    [3, 7].contains(&s)
                        || (900..=910).contains(&s)
                        || (c("side") == "A" && c("bytes").parse::<u32>().unwrap() > 100)
                }),
            ),
            ("acked && !nakked", Box::new(|c| !c("acked_s").is_empty() && c("nakked_s").is_empty())),
            ("nakked", Box::new(|c| !c("nakked_s").is_empty())),
            ("received == false", Box::new(|c| c("received_s").is_empty())),
            ("time >= 5 && time < 6.5", Box::new(|c| (5.0..6.5).contains(&c("time_s").parse::<f64>().unwrap()))),
            ("link_id < 40", Box::new(|c| c("link_id").parse::<u64>().unwrap() < 40)),
            ("resends >= 1", Box::new(|c| c("resends").parse::<u32>().unwrap() >= 1)),
            ("msgs == 0", Box::new(|c| c("msgs").parse::<u32>().unwrap() == 0)),
            ("client == 1", Box::new(|_| true)),
            ("client != 1", Box::new(|_| false)),
        ];
        for (text, keep) in &packet_checks {
            let want = p.keys(&["link_id"], keep);
            let got = packet_ids(&rec, text);
            assert_eq!(got, want, "{name}: {text}");
            *matched.entry(text.to_string()).or_insert(0) += want.len();
        }
        let message_checks: Vec<Check> = vec![
            ("latency_ms > 100", Box::new(|c| num(&c("latency_ms")).is_some_and(|d| d > 100.0))),
            ("msg.sends > 1", Box::new(|c| c("sends").parse::<u32>().unwrap() > 1)),
            ("spurious", Box::new(|c| c("spurious_resends").parse::<u32>().unwrap() > 0)),
            ("kind == reliable && side == b", Box::new(|c| c("kind") == "reliable" && c("side") == "B")),
            ("msg.id in 10..20", Box::new(|c| (10..=20).contains(&c("message_id").parse::<u64>().unwrap()))),
            ("delivered && !acked", Box::new(|c| !c("delivered_s").is_empty() && c("acked_s").is_empty())),
            ("bytes > 40", Box::new(|c| c("bytes").parse::<u32>().unwrap() > 40)),
            ("time < 2", Box::new(|c| c("queued_s").parse::<f64>().unwrap() < 2.0)),
        ];
        if rec.messages.is_empty() {
            continue; // acks carries no messages
        }
        for (text, keep) in &message_checks {
            let want = m.keys(&["side", "message_id"], |c| c("kind") != "chunk" && keep(c));
            let got = message_ids(&rec, text);
            assert_eq!(got, want, "{name}: {text}");
            *matched.entry(text.to_string()).or_insert(0) += want.len();
        }
    }
    for (text, n) in matched {
        assert!(n > 0 || text == "client != 1", "{text} matched nothing in either session (a check that cannot fail)");
    }
}

#[test]
fn resend_causes_and_anomalies_follow_the_model() {
    let rec = recording(&shipped("recorded-glenn.ron"));
    // resend.cause: any of the message's sends had that kind.
    for (text, kind) in [
        ("resend.cause == nak", ackscope_protocol::SendKind::NakResend),
        ("resend.cause == timeout", ackscope_protocol::SendKind::TimeoutResend),
        ("resend.cause == delay", ackscope_protocol::SendKind::DelayResend),
    ] {
        let want: Vec<String> = rec
            .messages
            .messages()
            .iter()
            .filter(|m| m.sends.iter().any(|s| s.kind == kind))
            .map(|m| format!("{}/{}", if m.side == ackscope_protocol::Side::A { "A" } else { "B" }, m.id))
            .collect();
        assert_eq!(message_ids(&rec, text), want, "{text}");
    }
    let f = SharedFilter::<ackscope::model::anomaly::Anomaly>::compile("kind == drop && seq > 100").unwrap();
    let rows = matching_rows(Shown::from(&rec), &f);
    let want: Vec<u32> = (0..rec.anomalies.len() as u32)
        .filter(|&i| {
            matches!(rec.anomalies.get(i as usize).unwrap().kind,
                ackscope::model::anomaly::AnomalyKind::Drop { seq: Some(s), .. } if s > 100)
        })
        .collect();
    assert!(!want.is_empty());
    assert_eq!(rows, want);
}

#[test]
fn a_live_cache_extended_block_by_block_equals_one_built_at_the_end() {
    let full = recording(&shipped("recorded-glenn.ron"));
    let events = full.events().to_vec();
    let mut live = Recording::of(full.info.clone(), full.scenario.clone());
    let p = SharedFilter::<PacketFacts>::compile("acked && delay_ms > 40 || fate == in_flight || ack > 500").unwrap();
    let m = SharedFilter::<MessageRecord>::compile("delivered && msg.sends >= 2 || latency_ms > 80").unwrap();
    let (mut pc, mut mc) = (Matches::<PacketFacts>::default(), Matches::<MessageRecord>::default());
    for block in events.chunks(997) {
        live.ingest(block.to_vec());
        pc.update(Shown::from(&live), &p, None, Budget::rows(5_000));
        mc.update(Shown::from(&live), &m, None, Budget::rows(5_000));
    }
    for _ in 0..100 {
        pc.update(Shown::from(&live), &p, None, Budget::rows(5_000));
        mc.update(Shown::from(&live), &m, None, Budget::rows(5_000));
    }
    assert_eq!(pc.rebuilds, 1, "the cache started over");
    let lp: Vec<u32> = pc.set().iter().map(|i| i as u32).collect();
    let lm: Vec<u32> = mc.set().iter().map(|i| i as u32).collect();
    assert_eq!(lp, matching_rows(Shown::from(&full), &p));
    assert_eq!(lm, matching_rows(Shown::from(&full), &m));
    assert!(!lp.is_empty() && !lm.is_empty(), "{} packets, {} messages", lp.len(), lm.len());
}

#[test]
fn window_export_and_summary_give_the_same_rows() {
    let dir = temp_dir("same");
    let session = shipped("recorded-glenn.ron");
    let rec = recording(&session);
    let text = "fate == dropped || seq in 100..200 && dir == a_to_b";
    let mtext = "resend.cause == nak || latency_ms > 100";
    // The window's cache, extended a frame budget at a time.
    let pf = SharedFilter::<PacketFacts>::compile(text).unwrap();
    let mut window = Matches::<PacketFacts>::default();
    while !window.update(Shown::from(&rec), &pf, None, Budget::rows(1000)).complete {}
    let window_ids: Vec<String> = window.set().iter().map(|i| rec.packets.rows()[i].uid.to_string()).collect();
    let p = export(&session, &dir, Some(text), &["packets"]).remove(0);
    assert_eq!(p.keys(&["link_id"], |_| true), window_ids);
    let m = export(&session, &dir, Some(mtext), &["messages"]).remove(0);
    assert_eq!(m.keys(&["side", "message_id"], |_| true), message_ids(&rec, mtext));
    for (t, rows, kind) in [(text, window_ids.len(), "packets"), (mtext, m.rows.len(), "messages")] {
        let out = ackscope(&["summary", session.to_str().unwrap(), "--filter", t, "--json"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["lanes"][0][kind]["rows"], rows as u64, "{t}: {v}");
    }
    // The figures are over those rows: dropped + delivered + in flight is every matching packet.
    let out = ackscope(&["summary", session.to_str().unwrap(), "--filter", text, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pk = &v["lanes"][0]["packets"];
    let dropped = p.keys(&["link_id"], |c| c("fate").starts_with("dropped")).len() as u64;
    assert_eq!(pk["dropped"], dropped);
    assert_eq!(
        pk["dropped"].as_u64().unwrap() + pk["delivered"].as_u64().unwrap() + pk["in_flight"].as_u64().unwrap(),
        window_ids.len() as u64
    );
    // Distinct packets.
    assert_eq!(window_ids.iter().collect::<BTreeSet<_>>().len(), window_ids.len());
}

#[test]
fn bad_filters_are_refused_with_the_position() {
    let session = shipped("recorded-acks.ron");
    let s = session.to_str().unwrap();
    let out = ackscope(&["summary", s, "--filter", "seqq > 3"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown field `seqq` at 1: did you mean `seq`?"), "{err}");
    let dir = temp_dir("bad");
    let p = dir.join("p.csv");
    let out = ackscope(&["export", s, "--packets", p.to_str().unwrap(), "--filter", "latency_ms > 3"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--packets") && err.contains("does not apply to packets"), "{err}");
    assert!(!p.exists(), "a refused export wrote a file");
    // A filter of messages only: the summary says packets do not apply.
    let out = ackscope(&["summary", s, "--filter", "latency_ms > 100"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("packets    - (`latency_ms` does not apply to packets"), "{text}");
}
