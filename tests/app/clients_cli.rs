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
