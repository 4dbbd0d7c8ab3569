//! The bytes pane: re-encoded packet bytes checked byte for byte against what every strategy's
//! endpoints really sent (a wire tap on the original run), and the field <-> byte selection
//! driven headless with egui_kittest.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ackscope::app::{AppState, Tab};
use ackscope::capture::reencode::Reencoder;
use ackscope::model::Recording;
use ackscope::runtime::action::apply_and_record;
use ackscope::ui::bytes::{decode_with, Provenance};
use ackscope::ui::bytes_ui::{byte_label, field_row_label};
use ackscope::ui::WindowView;
use ackscope::window::frame_ui;
use ackscope_protocol::{
    make_peer, Action, ClientId, Dir, EventKind, Peer, PeerFactory, Scenario, Side, SimTime, Simulation, Step,
    Strategy, Tap, TapHook,
};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

const SEED: u64 = 23;

/// What each endpoint of the original run wrote, per (client, side), in send order.
type Wire = Arc<Mutex<HashMap<(ClientId, Side), Vec<(SimTime, u32, Vec<u8>)>>>>;

struct Keep {
    client: ClientId,
    side: Side,
    wire: Wire,
}

impl TapHook for Keep {
    fn sent(&mut self, now: SimTime, seq: u32, bytes: &[u8]) {
        self.wire.lock().unwrap().entry((self.client, self.side)).or_default().push((now, seq, bytes.to_vec()));
    }
}

fn tapped(wire: &Wire, s: &Scenario, client: ClientId, side: Side) -> Box<dyn Peer> {
    Box::new(Tap::new(make_peer(s, side), Keep { client, side, wire: wire.clone() }))
}

fn scenario(strategy: Strategy) -> Scenario {
    let mut s = Scenario { seed: SEED, strategy, ..Scenario::default() };
    // The block strategies send a block of this size each side, one after the other.
    s.workload.chunk_kib = 64;
    for d in Dir::BOTH {
        s.link.get_mut(d).loss_percent = 10.0;
        s.link.get_mut(d).jitter_ms = 10.0;
    }
    s
}

/// The original run: every endpoint tapped (a restart's too), `actions` applied at their
/// instants as the window applies them; its recording and the bytes each endpoint wrote.
fn original(scenario: Scenario, actions: &[(f64, Action)], secs: f64) -> (Recording, Wire) {
    let wire: Wire = Arc::default();
    let mut sim = Simulation::with_client_peers(scenario.clone(), |k, s, side| tapped(&wire, s, k, side));
    let mut asked: ClientId = 0;
    let w = wire.clone();
    sim.set_peer_factory(move || -> PeerFactory {
        let w = w.clone();
        let client = asked / 2 + 1;
        asked += 1;
        Box::new(move |s: &Scenario, side: Side| tapped(&w, s, client, side))
    });
    let mut log: Vec<Step> = Vec::new();
    let mut events = Vec::new();
    for (at, action) in actions {
        sim.run_until(SimTime::from_secs_f64(*at));
        apply_and_record(&mut sim, &mut log, action.clone()).unwrap();
        events.extend(sim.drain_events());
    }
    sim.run_until(SimTime::from_secs_f64(secs));
    events.extend(sim.drain_events());
    let mut rec = Recording::new(scenario);
    rec.actions = log;
    rec.ingest(events);
    (rec, wire)
}

/// Re-encodes every send of `rec` and compares it with what the tap saw: the number compared.
fn compare_every_send(rec: &Recording, wire: &Wire, what: &str) -> usize {
    let wire = wire.lock().unwrap();
    let mut next: HashMap<(ClientId, Side), usize> = HashMap::new();
    let mut reencoder = Reencoder::default();
    let mut compared = 0;
    for e in rec.events() {
        let EventKind::PacketSent { side, seq, uid, .. } = e.kind else { continue };
        let n = next.entry((e.client, side)).or_default();
        let (at, tap_seq, sent) = &wire[&(e.client, side)][*n];
        *n += 1;
        assert_eq!((*at, *tap_seq), (e.time, seq), "{what}: the tap and the events pair up (seed {SEED})");
        let re = reencoder.bytes_of(rec, e.client, uid).unwrap_or_else(|why| panic!("{what} uid {uid}: {why}"));
        assert_eq!(re, &sent[..], "{what}: link send {uid} of client {} at {at:?} (seed {SEED})", e.client);
        compared += 1;
    }
    compared
}

#[test]
fn reencoded_bytes_equal_the_sent_bytes_for_every_strategy() {
    for strategy in Strategy::all() {
        let (rec, wire) = original(scenario(strategy), &[], 4.0);
        let n = compare_every_send(&rec, &wire, strategy.name());
        eprintln!("{}: {n} packets re-encoded byte for byte", strategy.name());
        assert!(n > 100, "{}: only {n} packets (seed {SEED})", strategy.name());
    }
}

#[test]
fn reencoding_follows_a_strategy_switch_and_live_edits() {
    let set = |name: &str, value: &str| Action::Set(ackscope_protocol::ParamChange::parse(name, value));
    let actions = [
        (1.0, set("link.loss_percent", "25")),
        (1.5, Action::Burst { side: Side::A }),
        (2.0, Action::Strategy(Strategy::Ue4)),
        (3.0, Action::Strategy(Strategy::Dnm)),
    ];
    let mut s = scenario(Strategy::Glenn);
    s.clients = ackscope_protocol::Clients::Count(3);
    let (rec, wire) = original(s, &actions, 4.0);
    let n = compare_every_send(&rec, &wire, "glenn -> ue4 -> dnm, 3 clients");
    assert!(n > 600, "{n} (seed {SEED})");
}

#[test]
fn a_udp_lane_is_refused_with_its_reason() {
    let (mut rec, _) = original(scenario(Strategy::Glenn), &[], 1.0);
    rec.transport = ackscope::session::Transport::Udp;
    let uid = rec.packets.rows()[3].uid;
    let err = Reencoder::default().bytes_of(&rec, 1, uid).unwrap_err();
    assert!(err.contains("real UDP"), "{err}");
}

// ----- the pane in the window, headless -----

fn window(rec: Recording, cursor: SimTime) -> Harness<'static, (AppState, WindowView)> {
    let mut state = AppState::new(rec.scenario.clone().unwrap_or_default(), || {});
    state.lanes = vec![rec];
    state.settings.tab = Tab::Packets;
    state.playback.seek(cursor);
    Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, s: &mut (AppState, WindowView)| frame_ui(&mut s.0, &mut s.1, ui),
        (state, WindowView::default()),
    )
}

/// Steps the window until its bytes pane has what it waited for (the worker's re-encoding).
fn wait_for_pane(hs: &mut Harness<'static, (AppState, WindowView)>) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        hs.step();
        let pv = hs.state().1.panels.packets.0.get(0).unwrap();
        if pv.bytes.shown.is_some() && pv.bytes.waiting_for().is_none() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the bytes pane never filled in");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    hs.run_steps(4);
}

#[test]
fn a_long_lane_is_re_encoded_off_the_frame_and_the_pane_fills_in_later() {
    let mut s = scenario(Strategy::Glenn);
    s.send_rate_pps = 60.0;
    let (rec, _) = original(s, &[], 240.0);
    let row = *rec.packets.rows().iter().rfind(|r| r.time < SimTime(230_000_000)).unwrap();
    let row = rec.packets.row_by_uid(row.uid, &rec.ledger).unwrap();
    let expected = Reencoder::default().bytes_of(&rec, 1, row.uid).unwrap().to_vec();
    let mut hs = window(rec, row.time);
    hs.run_steps(20);
    hs.get_by_label(&ackscope::ui::packets_ui::row_text(&row, row.time)).click();
    // The first frame that shows the packet draws the pane saying so: it did not wait for 240 s
    // of re-run.
    let pane = |hs: &Harness<'static, (AppState, WindowView)>| {
        let b = &hs.state().1.panels.packets.0.get(0).unwrap().bytes;
        (b.waiting_for(), b.shown.is_some())
    };
    let mut frames = 0;
    while pane(&hs) == (None, false) {
        let t = std::time::Instant::now();
        hs.step();
        eprintln!("frame {frames} after the click took {:?}", t.elapsed());
        frames += 1;
        assert!(frames < 10, "the click did not reach the bytes pane");
    }
    assert_eq!(pane(&hs), (Some(row.uid), false), "the pane waits for the worker");
    hs.get_by_label(ackscope::ui::bytes_ui::REENCODING);
    wait_for_pane(&mut hs);
    assert!(hs.query_by_label(ackscope::ui::bytes_ui::REENCODING).is_none());
    hs.get_by_label_contains("RE-ENCODED");
    let pv = hs.state().1.panels.packets.0.get(0).unwrap();
    let shown = pv.bytes.bytes().expect("the bytes came");
    assert_eq!((shown.uid, &shown.bytes, shown.provenance), (row.uid, &expected, Provenance::ReEncoded));
}

#[test]
fn clicking_a_field_highlights_its_bytes_and_clicking_a_byte_selects_its_field() {
    let (rec, wire) = original(scenario(Strategy::Ue4), &[], 3.0);
    // A packet of side A that carried a bunch, its bytes as sent.
    let row = *rec.packets.rows().iter().rfind(|r| r.time < SimTime(2_500_000) && r.contents.msgs > 0).unwrap();
    let row = rec.packets.row_by_uid(row.uid, &rec.ledger).unwrap();
    let k = rec
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::PacketSent { side, .. } if side == row.dir.sender()))
        .position(|e| matches!(e.kind, EventKind::PacketSent { uid, .. } if uid == row.uid))
        .unwrap();
    let sent = wire.lock().unwrap()[&(1, row.dir.sender())][k].2.clone();
    let scenario = rec.scenario.clone().unwrap();
    let (_, fields, error, _) = decode_with(Strategy::Ue4, &scenario, row.dir, &sent);
    assert_eq!(error, None);
    let mut hs = window(rec, row.time);
    hs.run_steps(20);
    hs.get_by_label(&ackscope::ui::packets_ui::row_text(&row, row.time)).click();
    wait_for_pane(&mut hs);
    hs.get_by_label_contains("RE-ENCODED");
    let pane = |hs: &Harness<'static, (AppState, WindowView)>| {
        let pv = hs.state().1.panels.packets.0.get(0).unwrap();
        (pv.bytes.selected, pv.bytes.bytes().cloned())
    };
    let (selected, shown) = pane(&hs);
    let shown = shown.expect("the packet's bytes are shown");
    assert_eq!((shown.uid, &shown.bytes, shown.provenance), (row.uid, &sent, Provenance::ReEncoded));
    assert_eq!(selected, None);
    // Click the 14-bit packet id (bits 18-31): bytes 2 and 3 light up, and in byte 2 only its top
    // six bits (the archive packs from each byte's lowest bit).
    let seq = fields.iter().position(|f| f.name == "seq").unwrap();
    let label = field_row_label(&fields[seq]);
    hs.get_by_label(&label).scroll_to_me();
    hs.run_steps(4);
    hs.get_by_label(&label).click();
    hs.run_steps(10);
    let (selected, shown) = pane(&hs);
    let shown = shown.unwrap();
    assert_eq!(selected, Some(seq));
    assert_eq!(shown.field_bytes(seq), 2..4);
    let lit: Vec<bool> = (0..8).map(|b| shown.bit_in_field(seq, 2, b)).collect();
    assert_eq!(lit, [true, true, true, true, true, true, false, false]);
    hs.get_by_label_contains("packed from each byte's lowest bit");
    // Click byte 0 (the history word count and the acked seq's low bits): the narrowest field
    // covering it is selected.
    hs.get_by_label(&byte_label(0)).scroll_to_me();
    hs.run_steps(4);
    hs.get_by_label(&byte_label(0)).click();
    hs.run_steps(10);
    let (selected, _) = pane(&hs);
    assert_eq!(selected.map(|i| fields[i].name.as_str()), Some("history words"));
    // The first bunch's data: a click inside it selects it.
    let data = fields.iter().position(|f| f.name == "bunch 0 data").unwrap();
    let inside = shown.field_bytes(data);
    assert!(inside.len() >= 3, "{inside:?}");
    let mid = byte_label((inside.start + inside.end) / 2);
    hs.get_by_label(&mid).scroll_to_me();
    hs.run_steps(4);
    hs.get_by_label(&mid).click();
    hs.run_steps(10);
    assert_eq!(pane(&hs).0, Some(data));
}

// ----- exact bytes: what a UDP lane's sockets sent, what a capture holds -----

/// The packet `uid` of client 1 shown in a bytes pane, as the window builds it.
fn pane_of(rec: &Recording, uid: u64) -> Result<ackscope::ui::bytes::PacketBytes, String> {
    let mut view = ackscope::ui::bytes::BytesView::default();
    view.show(&ackscope::model::Shown::focus(rec, 1), uid);
    view.shown.take().unwrap().1
}

/// Runs `state`'s live source until `enough` holds of its first lane (or it ends), then stops it.
fn run_until(state: &mut AppState, what: &str, enough: impl Fn(&Recording) -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while state.is_running() && !enough(&state.lanes[0]) {
        state.pull_events();
        assert!(std::time::Instant::now() < deadline, "{what}: not enough traffic within 120 s");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    state.stop();
    assert_eq!(state.error, None, "{what}");
}

#[test]
fn a_udp_lane_shows_exactly_the_bytes_its_socket_sent() {
    let mut s = scenario(Strategy::Glenn);
    for d in Dir::BOTH {
        s.link.get_mut(d).loss_percent = 0.0;
    }
    let mut state = AppState::new(s.clone(), || {});
    state.start_source(ackscope::source::Spec::UdpLoopback(Box::new(s.clone())));
    run_until(&mut state, "udp", |rec| rec.packets.rows().len() >= 120);
    let rec = &state.lanes[0];
    let store = rec.payloads.clone().expect("a UDP lane keeps its datagrams' bytes");
    // The tap: the receiving endpoint read the same bytes from its socket that the sender's
    // socket wrote, so every send is checked against what decodes as that very packet.
    let mut checked = 0;
    for row in rec.packets.rows().iter().take(120) {
        let sent = store.get(1, row.uid).unwrap_or_else(|| panic!("uid {} kept", row.uid));
        let row = rec.packets.row_by_uid(row.uid, &rec.ledger).unwrap();
        assert_eq!(sent.len() as u32, row.bytes, "uid {}: the size the events recorded", row.uid);
        let p = pane_of(rec, row.uid).unwrap_or_else(|why| panic!("uid {}: {why}", row.uid));
        assert_eq!((p.provenance, &p.bytes), (Provenance::Exact, &sent), "uid {}", row.uid);
        assert_eq!((p.format, p.error.as_deref()), ("glenn", None), "uid {}", row.uid);
        let seq = p.fields.iter().find(|f| f.name == "sequence").expect("a sequence field");
        assert_eq!(seq.value, row.seq.to_string(), "uid {}: the bytes are that packet's", row.uid);
        checked += 1;
    }
    assert_eq!(checked, 120);
    // The re-run path would refuse this lane: the pane did not need it.
    assert!(Reencoder::default().bytes_of(rec, 1, rec.packets.rows()[0].uid).is_err());
}

#[test]
fn a_capture_lane_shows_the_captures_own_payloads_in_the_window() {
    use ackscope::capture::{write_capture, CaptureReader};
    let session = crate::pcapng_export::recorded(crate::pcapng_export::lossy(Strategy::Glenn, 7), Vec::new(), 4.0);
    let path = crate::capture_import::temp_path("bytes-pane-exact.pcapng");
    write_capture(&session, std::fs::File::create(&path).unwrap()).unwrap();
    // Every UDP payload the file holds, with its capture time.
    let file = std::fs::read(&path).unwrap();
    let mut reader = CaptureReader::new(&file[..], "capture").unwrap();
    let mut captured = Vec::new();
    while let Some(p) = reader.next_packet() {
        let p = p.unwrap();
        let link = reader.interfaces()[p.interface as usize].linktype;
        captured.push((p.time_ns, p.udp(link).unwrap().payload));
    }
    let origin_ns = captured.iter().map(|c| c.0).min().unwrap();
    let at_ns = |rec: &Recording, uid: u64| origin_ns + rec.packets.row_by_uid(uid, &rec.ledger).unwrap().time.0 * 1000;
    let mut state = AppState::new(Scenario::default(), || {});
    state.open_path(&path);
    run_until(&mut state, "capture", |_| false);
    let rec = state.lanes.remove(0);
    let rows: Vec<_> = rec.packets.rows().iter().filter(|r| r.contents.msgs > 0).take(50).copied().collect();
    assert_eq!(rows.len(), 50);
    // The lane's clock starts at the first datagram the import kept: one offset from the file's.
    let first = pane_of(&rec, rows[0].uid).unwrap();
    let offset_ns = captured.iter().find(|(_, payload)| *payload == first.bytes).unwrap().0 as i128
        - at_ns(&rec, rows[0].uid) as i128;
    for row in &rows {
        let p = pane_of(&rec, row.uid).unwrap_or_else(|why| panic!("uid {}: {why}", row.uid));
        assert_eq!(p.provenance, Provenance::Exact, "uid {}", row.uid);
        let at_ns = (at_ns(&rec, row.uid) as i128 + offset_ns) as u64;
        let when: Vec<u64> =
            captured.iter().filter(|(_, payload)| *payload == p.bytes).map(|(t, _)| t.abs_diff(at_ns)).collect();
        assert!(
            when.iter().any(|d| *d < 1000),
            "uid {} at {:?}: the bytes shown are a payload the capture holds at that instant (off by {when:?} ns)",
            row.uid,
            row.time
        );
    }
    // In the window: the heading says the bytes are as sent, not re-encoded.
    let row = rec.packets.row_by_uid(rows[10].uid, &rec.ledger).unwrap();
    let mut hs = window(rec, row.time);
    hs.run_steps(20);
    hs.get_by_label(&ackscope::ui::packets_ui::row_text(&row, row.time)).click();
    hs.run_steps(20);
    hs.get_by_label_contains("bytes as sent, read as glenn");
    assert!(hs.query_by_label_contains("RE-ENCODED").is_none());
    std::fs::remove_file(&path).ok();
}

// ----- the decoders' spans -----

/// The bits of `len` bytes not covered by exactly one leaf field (a field containing no other):
/// (bit, leaves covering it).
fn uncovered_bits(fields: &[ackscope_protocol::decode::Field], len: usize) -> Vec<(u32, usize)> {
    let span = |f: &ackscope_protocol::decode::Field| f.start_bit..f.start_bit + f.bits;
    let leaves: Vec<_> = fields
        .iter()
        .filter(|f| f.bits > 0)
        .filter(|f| {
            !fields.iter().any(|g| {
                g.bits > 0
                    && !std::ptr::eq(*f, g)
                    && span(g) != span(f)
                    && span(f).contains(&g.start_bit)
                    && g.start_bit + g.bits <= f.start_bit + f.bits
            })
        })
        .collect();
    (0..len as u32 * 8)
        .map(|bit| (bit, leaves.iter().filter(|f| span(f).contains(&bit)).count()))
        .filter(|(_, n)| *n != 1)
        .collect()
}

#[test]
fn every_bit_of_every_strategys_packets_belongs_to_exactly_one_leaf_field() {
    for strategy in Strategy::all() {
        let s = scenario(strategy);
        let (rec, wire) = original(s.clone(), &[], 3.0);
        let wire = wire.lock().unwrap();
        let mut checked = 0;
        for side in Side::BOTH {
            let dir = if side == Side::A { Dir::AtoB } else { Dir::BtoA };
            for (_, seq, bytes) in wire.get(&(1, side)).into_iter().flatten() {
                let (_, fields, error, _) = decode_with(strategy, &s, dir, bytes);
                assert_eq!(error, None, "{} seq {seq}: the decoder reads its own packets", strategy.name());
                let bad = uncovered_bits(&fields, bytes.len());
                assert!(
                    bad.is_empty(),
                    "{} {side:?} seq {seq} ({} bytes): bits not in exactly one leaf field (bit, leaves): {:?}\n{fields:#?}",
                    strategy.name(),
                    bytes.len(),
                    &bad[..bad.len().min(12)]
                );
                checked += 1;
            }
        }
        drop(rec);
        assert!(checked > 50, "{}: {checked} packets", strategy.name());
    }
}
