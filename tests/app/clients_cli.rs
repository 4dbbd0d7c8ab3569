//! `run --json` with many clients: the run's figures are totals over every client (estimates the
//! mean), each client has its own, and the server's totals come beside them; one client prints
//! exactly today's fields.

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
    use ackscope::ui::WindowView;
    use ackscope::window::frame_ui;
    use egui_kittest::kittest::Queryable;
    use egui_kittest::Harness;

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
    state.settings.intro_dismissed = true;
    state.open_path(&path);
    let mut h = Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, s: &mut (AppState, WindowView)| frame_ui(&mut s.0, &mut s.1, ui),
        (state, WindowView::default()),
    );
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
}
