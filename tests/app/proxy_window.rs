//! The window runs the conditioning proxy as one more event source (`Spec::Proxy`): a client
//! sends through it to a UDP echo server on loopback, its rows reach the lane the views read
//! (origin proxy, the client named by its address, its datagrams with the link's fates), and a
//! link edit made in the window applies to the relay at once and is in the recording.

use crate::common::window_harness;
use std::net::UdpSocket;
use std::time::{Duration, Instant};

use ackscope::app::live_log::LiveLog;
use ackscope::app::{AppCommand, AppState};
use ackscope::model::Origin;
use ackscope::proxy::config::transparent_scenario;
use ackscope::proxy::ProxyConfig;
use ackscope::source::Spec;
use ackscope_protocol::{EventKind, ParamChange, Scenario};

use crate::proxy::{payload, Client, Server};

/// Pulls events until `done` holds (or 30 s of wall time pass).
fn pull_until(s: &mut AppState, mut done: impl FnMut(&AppState) -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        s.pull_events();
        if done(s) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

fn link_delays_ms(s: &AppState) -> Vec<(u64, f64)> {
    s.lanes[0]
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::LinkDelivered { delay_us, .. } => Some((e.time.0, delay_us as f64 / 1000.0)),
            _ => None,
        })
        .collect()
}

#[test]
fn the_window_runs_the_proxy_and_records_a_live_link_edit() {
    let server = Server::echo("127.0.0.1:0");
    let listen = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let dir = std::env::temp_dir().join(format!("ackscope-proxy-window-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut s = AppState::new(Scenario::default(), || {});
    s.live_log = LiveLog::new(dir.join("live"));
    let mut scenario = transparent_scenario();
    scenario.link.a_to_b.latency_ms = 5.0;
    scenario.link.b_to_a.latency_ms = 5.0;
    s.start_source(Spec::Proxy(Box::new(ProxyConfig::new(listen, server.addr, scenario))));
    assert!(s.error.is_none(), "{:?}", s.error);
    assert!(matches!(s.lanes[0].info.origin, Origin::Proxy { .. }));

    let client = Client::to(listen);
    let mut sent = 0;
    let deadline = Instant::now() + Duration::from_secs(10);
    while client.count() == 0 && Instant::now() < deadline {
        client.send(&payload(sent));
        sent += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(client.count() > 0, "the proxy never answered");
    for _ in 0..40 {
        client.send(&payload(sent));
        sent += 1;
    }
    // Echoes of what the client sent are datagrams in both directions, each with its fate.
    assert!(
        pull_until(&mut s, |s| link_delays_ms(s).len() >= 80 && s.lanes[0].info.named_clients().count() == 1),
        "rows reached the lane: {} deliveries",
        link_delays_ms(&s).len()
    );
    let lane = &s.lanes[0];
    let client_info = lane.info.named_clients().next().unwrap().clone();
    assert_eq!(client_info.id, 1);
    assert!(client_info.name.starts_with("127.0.0.1:"), "named by its address: {client_info:?}");
    assert_eq!(lane.info.label(), "unknown", "no known protocol in these payloads");
    let rows = ackscope::model::clients::rows_at(lane, lane.end_time());
    assert_eq!(rows.len(), 1, "one client in the Clients table");
    assert!(link_delays_ms(&s).iter().all(|(_, d)| (4.9..30.0).contains(d)), "the 5 ms link");

    // A live edit in the window: the relay applies it at once and records it.
    let edit_at = s.lanes[0].end_time().0;
    s.apply(AppCommand::SetParam(ParamChange::new("link.latency_ms", 40.0)));
    assert!(s.error.is_none(), "{:?}", s.error);
    let before = link_delays_ms(&s).len();
    for _ in 0..20 {
        client.send(&payload(sent));
        sent += 1;
    }
    let changed = |s: &AppState| {
        s.lanes[0].events().iter().any(
            |e| matches!(&e.kind, EventKind::ParamChanged { name, value } if name == "link.latency_ms" && value == "40"),
        )
    };
    assert!(pull_until(&mut s, |s| changed(s) && link_delays_ms(s).len() >= before + 40), "the edit was recorded");
    let after: Vec<f64> = link_delays_ms(&s).into_iter().skip(before).map(|(_, d)| d).collect();
    assert!(after.iter().any(|d| (39.9..80.0).contains(d)), "datagrams sent after it wait 40 ms: {after:?}");
    assert!(s.lanes[0].end_time().0 >= edit_at);
    // The recording saved from the window says what it is.
    let saved = s.lanes[0].to_session();
    assert!(matches!(saved.origin, Some(Origin::Proxy { .. })));
    assert_eq!(saved.protocol.as_deref(), Some("unknown"));
    s.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The transport choice *proxy* in the window: its form starts the proxy, a client sending
/// through it shows in the Clients table by its address, and the transport choice reads *proxy*.
#[test]
fn the_proxy_form_starts_the_proxy_and_its_client_shows_in_the_clients_table() {
    use ackscope::app::Tab;
    use ackscope::ui::proxy_form_ui::ProxyForm;
    use egui_kittest::kittest::Queryable;

    let server = Server::echo("127.0.0.1:0");
    let listen = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let dir = std::env::temp_dir().join(format!("ackscope-proxy-form-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut state = AppState::new(Scenario::default(), || {});
    state.live_log = LiveLog::new(dir.join("live"));
    let mut h = window_harness(state);
    h.run_steps(2);
    // The transport combo's "proxy..." opens the form (the combo has no label to query it by):
    // the form as the user fills it in, where the form keeps it.
    ProxyForm { open: true, listen: listen.to_string(), forward: server.addr.to_string(), ..ProxyForm::default() }
        .store(&h.ctx);
    h.run_steps(2);
    h.get_by_label("Start proxy").click();
    h.run_steps(2);
    assert!(h.state().0.error.is_none(), "{:?}", h.state().0.error);
    assert!(matches!(h.state().0.lanes[0].info.origin, Origin::Proxy { .. }));

    let client = Client::to(listen);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut i = 0;
    while Instant::now() < deadline && (client.count() < 20 || h.state().0.lanes[0].info.named_clients().count() == 0) {
        client.send(&payload(i));
        i += 1;
        h.run_steps(1);
        std::thread::sleep(Duration::from_millis(10));
    }
    let name = h.state().0.lanes[0].info.named_clients().next().expect("the client reached the lane").name.clone();
    h.state_mut().0.settings.tab = Tab::Clients;
    h.run_steps(3);
    assert!(h.query_all_by_label_contains(&name).next().is_some(), "the Clients table lists {name}");
    assert!(ackscope::ui::proxy_form_ui::proxy_running(&h.state().0), "the transport choice reads proxy");
    h.state_mut().0.stop();
    let _ = std::fs::remove_dir_all(&dir);
}
