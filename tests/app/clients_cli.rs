//! `run --json` with many clients: the run's figures are totals over every client (estimates the
//! mean), each client has its own, and the server's totals come beside them; one client prints
//! exactly today's fields.

use crate::common::window_harness;
use std::process::Command;

fn json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope")).args(args).output().expect("run ackscope");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn run_json_of_many_clients_has_each_clients_figures_and_the_servers_totals() {
    let base = ["run", "--seconds", "5", "--seed", "4", "--json", "--set", "clients=3"];
    let v = json(&[&base[..], &["--set", "client.2.link.loss_percent=30", "--set", "server.uplink_kbps=400"]].concat());
    let clients = v["clients"].as_array().expect("clients");
    assert_eq!(clients.len(), 3);
    for k in ["sent", "link_dropped", "delivered", "acked", "false_acks"] {
        let sum: u64 = clients.iter().map(|c| c["packets"][k].as_u64().unwrap()).sum();
        assert_eq!(v["packets"][k].as_u64(), Some(sum), "packets.{k}: the run's is the total over clients");
    }
    let true_loss: Vec<f64> = clients.iter().map(|c| c["estimates"]["true_loss_percent"].as_f64().unwrap()).collect();
    let mean = true_loss.iter().sum::<f64>() / 3.0;
    assert!((v["estimates"]["true_loss_percent"].as_f64().unwrap() - mean).abs() < 1e-3, "{v}");
    assert!(true_loss[1] > 20.0 && true_loss[0] < 12.0 && true_loss[2] < 12.0, "client 2's own link: {true_loss:?}");
    for (i, c) in clients.iter().enumerate() {
        assert_eq!(c["client"].as_u64(), Some(i as u64 + 1));
        assert!(c["reliable"]["sent"].as_u64().unwrap() > 0, "{c}");
        assert!(c["snapshots"]["received"].as_u64().unwrap() > 0, "{c}");
    }
    let server = &v["server"];
    assert!(server["kbps_out"].as_f64().unwrap() > 0.0 && server["kbps_in"].as_f64().unwrap() > 0.0);
    let up = &server["uplink"];
    assert_eq!(up["kbps"].as_f64(), Some(400.0));
    for q in ["p50", "p95", "p99"] {
        assert!(up["queue_delay_ms"][q].as_f64().is_some(), "uplink.queue_delay_ms.{q}: {server}");
    }
    // Without a cap: no uplink figures.
    assert!(json(&base)["server"].get("uplink").is_none());
    // One client: today's fields only.
    let one = json(&["run", "--seconds", "5", "--seed", "4", "--json"]);
    assert!(one.get("clients").is_none() && one.get("server").is_none(), "{one}");
}

/// `run --set clients=8 --out S.ron` saves session format 3 with every client's events; the
/// window opens it with a connection per client, the Clients tab shows them, and each client's
/// ground truth there is the one `run --json` reports for it.
#[test]
fn a_simulated_run_of_eight_clients_saves_as_v3_and_opens_in_the_clients_tab() {
    use ackscope::app::{AppState, Tab};
    use egui_kittest::kittest::Queryable;

    let dir = std::env::temp_dir().join(format!("ackscope-clients-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("eight.ron");
    let _ = std::fs::remove_file(&path);
    let args = ["run", "--seconds", "4", "--seed", "9", "--set", "clients=8", "--set", "client.5.link.loss_percent=25"];
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(args)
        .args(["--out", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("format_version:3"), "{}", &text[..200.min(text.len())]);
    let v = json(&[&args[..], &["--json"]].concat());

    let mut state = AppState::new(ackscope_protocol::Scenario::default(), || {});
    state.open_path(&path);
    let mut h = window_harness(state);
    assert!(super::common::step_until(&mut h, 60.0, |s| s.0.file_jobs().is_empty()), "the session did not open");
    {
        let s = &h.state().0;
        assert_eq!(s.error, None);
        let rec = &s.lanes[0];
        assert_eq!(rec.clients().iter().map(|c| c.client).collect::<Vec<_>>(), (1..=8).collect::<Vec<_>>());
        for k in 1..=8u32 {
            let t = rec.client(k).unwrap().ledger.totals();
            let j = &v["clients"][k as usize - 1]["packets"];
            assert_eq!(t.sent, j["sent"].as_u64().unwrap(), "client {k}'s sends: the window and run --json");
            assert_eq!(t.link_dropped, j["link_dropped"].as_u64().unwrap(), "client {k}'s drops");
            assert_eq!(t.false_acks, 0, "client {k}");
        }
        let loss = |k: u32| {
            let t = rec.client(k).unwrap().ledger.totals();
            t.link_dropped as f64 / t.sent as f64
        };
        assert!(loss(5) > 2.0 * loss(4), "client 5's own lossy link: {} vs {}", loss(5), loss(4));
    }
    h.state_mut().0.settings.tab = Tab::Clients;
    h.run_steps(3);
    assert!(h.query_all_by_label_contains("8 clients").next().is_some(), "the Clients tab counts the clients");
    assert_eq!(h.state().1.panels.clients.plot.lines.len(), 8, "a line per client");
    // The status bar names the lane and its clients ("glenn, 8 clients", not "glenn vs 8 clients").
    let name = h.state().0.lanes[0].info.label();
    let said = format!("| {name}, 8 clients, showing client 1");
    assert!(h.query_by_label_contains(&said).is_some(), "status bar: {said}");
    assert!(h.query_by_label_contains(&format!("{name} vs 8")).is_none());
    // Two lanes (A/B) of 8 clients each: both lanes, then the clients.
    let r = &h.state().0.lanes[0];
    let mut second = ackscope::model::Recording::of(r.info.clone(), r.scenario.clone());
    second.ingest(r.store.events().to_vec());
    h.state_mut().0.lanes.push(second);
    h.run_steps(2);
    let said = format!("| {name} vs {name}, 8 clients each, showing client 1");
    assert!(h.query_by_label_contains(&said).is_some(), "status bar: {said}");
}

fn text(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope")).args(args).output().expect("run ackscope");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `compare --set clients=4`: every variant runs the same four clients, the grid's loss on
/// every client's link but the one a client sets for itself; each row's figures are over all
/// clients (their sums), lists each client, and names the worst client's p99.
#[test]
fn compare_runs_every_variant_over_every_client() {
    let base = ["compare", "--seconds", "6", "--seed", "5", "--loss", "12", "--latency", "40", "--set", "clients=4"];
    let own = ["--set", "client.3.link.loss_percent=35"];
    let v = json(&[&base[..], &own, &["--json"]].concat());
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 4, "the default variants");
    for r in rows {
        let name = r["variant"].as_str().unwrap();
        let clients = r["clients"].as_array().unwrap_or_else(|| panic!("{name}: no clients"));
        assert_eq!(clients.len(), 4, "{name}");
        for k in ["sent", "delivered", "lost"] {
            let sum: u64 = clients.iter().map(|c| c["reliable"][k].as_u64().unwrap()).sum();
            assert_eq!(r["reliable"][k].as_u64(), Some(sum), "{name}: reliable.{k} is the clients' total");
        }
        assert_eq!(r["reliable"]["lost"].as_u64(), Some(0), "{name}: every message of every client arrives");
        assert_eq!(r["packets"]["false_acks"].as_u64(), Some(0), "{name}");
        let loss: Vec<f64> = clients.iter().map(|c| c["estimates"]["true_loss_percent"].as_f64().unwrap()).collect();
        for (i, l) in loss.iter().enumerate() {
            let want = if i == 2 { 35.0 } else { 12.0 };
            assert!((l - want).abs() < 7.0, "{name}: client {}'s true loss {l} (want about {want})", i + 1);
        }
        let p99s: Vec<f64> = clients.iter().map(|c| c["reliable"]["latency_ms"]["p99"].as_f64().unwrap()).collect();
        let worst = r["worst_client_p99_ms"].as_f64().expect("worst_client_p99_ms");
        assert_eq!(worst, p99s.iter().copied().fold(0.0, f64::max), "{name}");
        assert!(
            worst >= r["reliable"]["latency_ms"]["p99"].as_f64().unwrap(),
            "{name}: the worst client's p99 bounds the pooled p99"
        );
    }
    let table = text(&[&base[..], &own].concat());
    assert!(table.lines().next().unwrap().ends_with("| worst client p99 ms |"), "{table}");
    assert!(table.contains("clients: each run has N clients"), "{table}");
    // One client: the table and its rows as before.
    let one = text(&["compare", "--seconds", "3", "--loss", "5", "--latency", "40"]);
    assert!(!one.contains("worst client") && !one.contains("clients:"), "{one}");
    let one = json(&["compare", "--seconds", "3", "--loss", "5", "--latency", "40", "--json"]);
    assert!(one[0].get("worst_client_p99_ms").is_none() && one[0].get("clients").is_none(), "{}", one[0]);
}

/// `sweep --set clients=3`: each point's runs have three clients, and a point's figures for a
/// seed are exactly what `run --json` prints for that scenario, over all clients and for the
/// worst one.
#[test]
fn sweep_points_run_every_client_and_match_run() {
    let common = ["--seconds", "4", "--seed", "7", "--set", "clients=3", "--set", "client.2.link.latency_ms=120"];
    let rows = json(
        &[
            &["sweep"],
            &common[..],
            &["--vary", "link.loss_percent=0,10", "--seeds", "2"],
            &["--strategies", "glenn,ue4", "--json"],
        ]
        .concat(),
    );
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for r in rows {
        assert_eq!(r["clients"].as_u64(), Some(3), "{r}");
        let worst: Vec<f64> =
            r["runs"].as_array().unwrap().iter().map(|s| s["worst_client_p99_ms"].as_f64().unwrap()).collect();
        assert_eq!(worst.len(), 2);
        assert!((r["worst_client_p99_ms"].as_f64().unwrap() - (worst[0] + worst[1]) / 2.0).abs() < 1e-3, "{r}");
    }
    // The point (ue4, 10 % loss) at seed 7, run alone.
    let r = rows.iter().find(|r| r["strategy"] == "ue4" && r["values"]["link.loss_percent"] == 10).unwrap();
    let run =
        json(&[&["run"], &common[..], &["--set", "strategy=ue4", "--set", "link.loss_percent=10", "--json"]].concat());
    let seed0 = &r["runs"][0];
    assert_eq!(seed0["seed"].as_u64(), Some(7));
    assert_eq!(seed0["p99_ms"], run["reliable"]["latency_ms"]["p99"], "pooled p99: sweep vs run");
    assert_eq!(seed0["bytes_per_message"], run["reliable"]["wire_bytes_per_delivered"]);
    let p99s: Vec<f64> = run["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["reliable"]["latency_ms"]["p99"].as_f64().unwrap())
        .collect();
    assert_eq!(seed0["worst_client_p99_ms"].as_f64(), Some(p99s.iter().copied().fold(0.0, f64::max)));
    assert!(p99s[1] > p99s[0] && p99s[1] > p99s[2], "client 2's own 120 ms link is the worst: {p99s:?}");
    let table = text(
        &[&["sweep"], &common[..], &["--vary", "link.loss_percent=0,10", "--seeds", "1", "--strategies", "glenn"]]
            .concat(),
    );
    assert!(table.contains("worst client p99 ms") && table.contains("With several clients per run"), "{table}");
}
