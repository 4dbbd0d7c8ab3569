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

/// The transport choice *proxy...* in the window, clicked in the transport combo: its form,
/// filled in by typing, starts the proxy over loopback to a UDP echo, a client sending through
/// it shows in the Clients table by its address, and the transport choice reads *proxy*.
#[test]
fn the_proxy_form_starts_the_proxy_and_its_client_shows_in_the_clients_table() {
    use ackscope::app::Tab;
    use ackscope::ui::proxy_form_ui::ProxyForm;
    use egui::accesskit::Role;
    use egui_kittest::kittest::Queryable;

    let server = Server::echo("127.0.0.1:0");
    let listen = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let dir = std::env::temp_dir().join(format!("ackscope-proxy-form-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut state = AppState::new(Scenario::default(), || {});
    state.live_log = LiveLog::new(dir.join("live"));
    let mut h = window_harness(state);
    h.run_steps(2);
    // The transport combo (unlabelled: its value names the transport) opens on a click, and its
    // "proxy..." entry opens the form.
    assert!(h.query_by_label("Start proxy").is_none(), "the form is closed");
    h.get_by_value("in-process").click();
    h.run_steps(2);
    h.get_by_label("proxy...").click();
    h.run_steps(2);
    assert!(ProxyForm::load(&h.ctx).open, "proxy... opened the form");
    // The user types the addresses into its fields.
    h.get_by_role_and_label(Role::TextInput, "listen").set_text_value_accesskit(&listen.to_string());
    h.run_steps(2);
    h.get_by_role_and_label(Role::TextInput, "forward").set_text_value_accesskit(&server.addr.to_string());
    h.run_steps(2);
    let form = ProxyForm::load(&h.ctx);
    assert_eq!((form.listen, form.forward), (listen.to_string(), server.addr.to_string()), "typed into the form");
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

/// A recording whose lane came through the proxy (here ENet, as the decoder named it) shows that
/// protocol in the top bar, not the scenario's strategy, and offers no strategy switch nor A/B;
/// a simulated recording keeps both.
#[test]
fn the_top_bar_names_a_proxied_lanes_protocol_and_offers_no_strategy_switch() {
    use ackscope::model::{LaneInfo, Protocol, Recording};
    use ackscope::ui::WindowView;
    use ackscope::window::frame_ui;
    use egui_kittest::kittest::{By, Queryable};
    use egui_kittest::Harness;

    let scenario = Scenario::default();
    let strategy = ackscope_protocol::registry::info(scenario.strategy).label;
    let mut state = AppState::new(scenario, || {});
    state.settings.intro_dismissed = true;
    let mut h = Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, s: &mut (AppState, WindowView)| frame_ui(&mut s.0, &mut s.1, ui),
        (state, WindowView::default()),
    );
    h.run_steps(2);
    assert!(h.query_by_label("A/B").is_some(), "a simulated recording offers A/B");
    // A combo box's selected text is its value.
    assert!(h.query_all(By::new().value(strategy)).next().is_some(), "and its strategy's combo");

    let origin = Origin::Proxy { listen: "127.0.0.1:7000".into(), upstream: "127.0.0.1:7001".into() };
    h.state_mut().0.lanes = vec![Recording::of(LaneInfo::new(origin, Protocol::named("enet", None)), None)];
    h.run_steps(2);
    assert!(h.query_by_label("A/B").is_none(), "no A/B over a proxied lane");
    assert!(h.query_all(By::new().value(strategy)).next().is_none(), "no {strategy} for a lane that runs ENet");
    // The top bar is the window's first row (other views may name the lane too).
    let top_bar_y = h.query_by_label("Restart").expect("the top bar").rect().center().y;
    assert!(
        h.query_all_by_label("enet").any(|n| (n.rect().center().y - top_bar_y).abs() < 10.0),
        "the lane's own label stands in the top bar"
    );
}

/// The window's live stream file of a proxy run names what the decoder picked and each client by
/// its address, though both are learnt after the file was made: a save that copies the stream
/// file (a run longer than the memory window) says what the run was.
#[test]
fn the_live_stream_file_names_the_decoders_pick_and_the_clients() {
    let server = Server::echo("127.0.0.1:0");
    let listen = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let dir = std::env::temp_dir().join(format!("ackscope-proxy-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut s = AppState::new(Scenario::default(), || {});
    s.live_log = LiveLog::new(dir.join("live"));
    let mut cfg = ProxyConfig::new(listen, server.addr, transparent_scenario());
    cfg.decode = ackscope::proxy::decode::choice("kcp").unwrap();
    s.start_source(Spec::Proxy(Box::new(cfg)));
    assert!(s.error.is_none(), "{:?}", s.error);
    let client = Client::to(listen);
    let mut sent = 0;
    let named = |s: &AppState| s.lanes[0].info.named_clients().count() == 1 && s.lanes[0].info.label() == "KCP";
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline && (client.count() < 10 || !named(&s)) {
        client.send(&payload(sent));
        sent += 1;
        s.pull_events();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(named(&s), "the lane took the decoder's pick and named its client: {}", s.lanes[0].info.label());
    let (stream, _) = s.live_log.stream_of(&s.lanes[0]).expect("the run streams to a file");
    s.stop();
    let saved = ackscope::session::load(&stream).unwrap();
    assert_eq!(saved.protocol.as_deref(), Some("KCP"), "the decoder's pick, not `unknown`");
    let names: Vec<_> = saved.clients.iter().map(|c| (c.id, c.name.clone())).collect();
    assert_eq!(names, vec![(1, client.local_addr().to_string())]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An edit the proxy cannot apply (an endpoint setting: the proxy has no endpoints) is shown as
/// the window's error and changes nothing: not the scenario, not the recording. A link edit
/// still applies after it.
#[test]
fn an_edit_the_proxy_refuses_is_shown_and_not_recorded() {
    let server = Server::echo("127.0.0.1:0");
    let listen = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let dir = std::env::temp_dir().join(format!("ackscope-proxy-refused-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut s = AppState::new(Scenario::default(), || {});
    s.live_log = LiveLog::new(dir.join("live"));
    s.start_source(Spec::Proxy(Box::new(ProxyConfig::new(listen, server.addr, transparent_scenario()))));
    assert!(s.error.is_none(), "{:?}", s.error);
    let before = s.scenario.ack.sent_packets_buffer_size;
    s.apply(AppCommand::SetParam(ParamChange::new("ack.sent_packets_buffer_size", 512.0)));
    let error = s.error.take().expect("the refusal is shown");
    assert!(error.contains("ack.sent_packets_buffer_size") && error.contains("link"), "{error}");
    assert_eq!(s.scenario.ack.sent_packets_buffer_size, before, "the scenario is as it was");
    // A link edit goes through and is the only change recorded.
    s.apply(AppCommand::SetParam(ParamChange::new("link.latency_ms", 30.0)));
    assert!(s.error.is_none(), "{:?}", s.error);
    let changed = |s: &AppState| {
        s.lanes[0]
            .events()
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::ParamChanged { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert!(pull_until(&mut s, |s| !changed(s).is_empty()), "the link edit was recorded");
    assert!(changed(&s).iter().all(|n| n.starts_with("link.")), "{:?}", changed(&s));
    s.stop();
    let _ = std::fs::remove_dir_all(&dir);
}
