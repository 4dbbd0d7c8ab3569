//! The packet detail pane: its header fields checked against the bytes the simulation's endpoints
//! really wrote, and the links between packets and messages driven headless with egui_kittest.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ackscope::app::{AppCommand, AppState, RevealTarget};
use ackscope::model::Recording;
use ackscope::ui::packet_detail::{AckScheme, PacketDetail};
use ackscope::ui::packet_detail_ui::message_link_label;
use ackscope::ui::packets_ui::compact_row_text;
use ackscope::ui::timeline_ui::packet_link_label;
use ackscope::ui::WindowView;
use ackscope::window::frame_ui;
use ackscope_protocol::strategies::ue4::packet::decode_packet;
use ackscope_protocol::wire::PacketHeader;
use ackscope_protocol::{make_peer, Dir, EventKind, Peer, Scenario, Side, SimTime, Simulation, Strategy, Tap, TapHook};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

const SEED: u64 = 11;

/// What each side's endpoint wrote: (time, sequence) -> bytes.
type Wire = Arc<Mutex<HashMap<(SimTime, u32), Vec<u8>>>>;

/// A tap hook that keeps a copy of every packet its endpoint sends: the bytes the recording does
/// not keep.
struct Capture(Wire);

impl TapHook for Capture {
    fn sent(&mut self, now: SimTime, seq: u32, bytes: &[u8]) {
        self.0.lock().unwrap().insert((now, seq), bytes.to_vec());
    }
}

fn scenario(strategy: Strategy, loss_percent: f64) -> Scenario {
    let mut s = Scenario { seed: SEED, strategy, ..Scenario::default() };
    for d in Dir::BOTH {
        s.link.get_mut(d).loss_percent = loss_percent;
        s.link.get_mut(d).jitter_ms = 10.0;
    }
    s
}

/// A recording of `secs` of `scenario` and the bytes each side wrote.
fn captured(scenario: Scenario, secs: f64) -> (Recording, [Wire; 2]) {
    let wires: [Wire; 2] = Default::default();
    let peers: [Box<dyn Peer>; 2] = [Side::A, Side::B]
        .map(|side| Box::new(Tap::new(make_peer(&scenario, side), Capture(wires[side.index()].clone()))) as _);
    let mut sim = Simulation::with_peers(scenario.clone(), peers);
    sim.run_for_secs(secs);
    let mut rec = Recording::new(scenario);
    rec.ingest(sim.drain_events().collect());
    (rec, wires)
}

/// Every packet send of the recording: (uid, side, time, seq).
fn sends(rec: &Recording) -> Vec<(u64, Side, SimTime, u32)> {
    rec.store
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::PacketSent { side, seq, uid, .. } => Some((uid, side, e.time, seq)),
            _ => None,
        })
        .collect()
}

#[test]
fn glenn_detail_shows_the_header_its_endpoint_wrote() {
    let (rec, wires) = captured(scenario(Strategy::Glenn, 15.0), 6.0);
    let all = sends(&rec);
    assert!(all.len() > 500, "{} packets (seed {SEED})", all.len());
    let mut checked = 0;
    for &(uid, side, t, seq) in &all {
        let bytes = wires[side.index()].lock().unwrap()[&(t, seq)].clone();
        let (h, _) = PacketHeader::decode(&bytes).expect("glenn packets decode");
        let d = PacketDetail::of(&(&rec).into(), uid).expect("a row for every send");
        assert_eq!(d.scheme, AckScheme::ReliableIo);
        assert_eq!(d.row.seq, h.sequence as u32, "uid {uid} (seed {SEED})");
        if h.ack == 65535 && h.ack_bits == 0 {
            assert_eq!(d.ack, None, "nothing received yet when uid {uid} was written (seed {SEED})");
            continue;
        }
        let w = d.ack.expect("glenn acks after its first receipt");
        assert_eq!((w.ack, w.bits), (h.ack as u32, h.ack_bits), "uid {uid} at {t:?} (seed {SEED})");
        checked += 1;
    }
    assert!(checked > 400, "{checked}");
}

#[test]
fn ue4_detail_shows_the_acked_seq_and_history_its_endpoint_wrote() {
    let (rec, wires) = captured(scenario(Strategy::Ue4, 15.0), 6.0);
    let all = sends(&rec);
    let (mut checked, mut same) = (0, 0);
    for &(uid, side, t, seq) in &all {
        let Some(bytes) = wires[side.index()].lock().unwrap().get(&(t, seq)).cloned() else { continue };
        let p = decode_packet(&bytes).expect("ue4 packets decode");
        let d = PacketDetail::of(&(&rec).into(), uid).unwrap();
        assert_eq!(d.scheme, AckScheme::Ue4);
        assert_eq!(d.row.seq, p.header.seq.get() as u32, "uid {uid} (seed {SEED})");
        let Some(w) = d.ack else { continue };
        let history: u32 = (0..32).filter(|&i| p.header.history.is_delivered(i)).map(|i| 1u32 << i).sum();
        checked += 1;
        same += ((w.ack, w.bits) == (p.header.acked_seq.get() as u32, history)) as usize;
    }
    eprintln!("ue4: {same} of {checked} headers rebuilt exactly");
    assert!(checked > 300 && same == checked, "{same} of {checked} (seed {SEED})");
}

// ----- the whole window, headless -----

/// The window showing `lanes` as a replay, on `tab`, with the cursor at `cursor`; the harness
/// state keeps the views so tests can read the panels' selections.
fn window(lanes: Vec<Recording>, tab: ackscope::app::Tab, cursor: SimTime) -> Harness<'static, (AppState, WindowView)> {
    let mut state = AppState::new(lanes[0].scenario.clone().unwrap_or_default(), || {});
    state.lanes = lanes;
    state.settings.tab = tab;
    state.playback.seek(cursor);
    Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, s: &mut (AppState, WindowView)| frame_ui(&mut s.0, &mut s.1, ui),
        (state, WindowView::default()),
    )
}

/// A packet of side A that carried messages and was settled (acked or nakked) later.
fn packet_with_messages(rec: &Recording, after: SimTime) -> (u64, SimTime) {
    rec.packets
        .rows()
        .iter()
        .filter(|r| r.time > after && r.contents.msgs > 0)
        .find_map(|r| {
            let row = rec.packets.row_by_uid(r.uid, &rec.ledger)?;
            (row.dir == Dir::AtoB && row.nakked_at.or(row.acked_at).is_some()).then_some((r.uid, r.time))
        })
        .expect("a packet carrying messages")
}

#[test]
fn clicking_a_packet_shows_its_header_and_its_messages_link_back() {
    let (rec, wires) = captured(scenario(Strategy::Glenn, 15.0), 6.0);
    let (uid, t) = packet_with_messages(&rec, SimTime(3_000_000));
    let row = rec.packets.row_by_uid(uid, &rec.ledger).unwrap();
    let bytes = wires[0].lock().unwrap()[&(t, row.seq)].clone();
    let (h, _) = PacketHeader::decode(&bytes).unwrap();
    let mut hs = window(vec![rec], ackscope::app::Tab::Packets, t);
    hs.run_steps(40);
    // The packet is the newest row at its own send: click it.
    let label = ackscope::ui::packets_ui::row_text(&row, t);
    hs.get_by_label(&label).click();
    hs.run_steps(40);
    hs.run_steps(40);
    // Its header, field by field, as its endpoint wrote it.
    hs.get_by_label(&format!("sequence: {}", h.sequence));
    hs.get_by_label(&format!("ack: {}", h.ack));
    hs.get_by_label(&format!("ack bits: {:#010x}", h.ack_bits));
    // Its fate is shown although the click moved the cursor back to its send.
    assert_eq!(hs.state().0.cursor(), t);
    assert!(hs.query_all_by_label_contains("(after the cursor)").next().is_some(), "the outcome stays in sight");
    // The messages it carried are links: the first opens in the Messages tab, selected and in view.
    let detail = PacketDetail::of(&(&hs.state().0.lanes[0]).into(), uid).unwrap();
    let first = detail.carried[0];
    hs.get_by_label_contains(&format!("{} (", message_link_label(first.side, first.id))).click();
    hs.run_steps(40);
    hs.run_steps(40);
    let (state, view) = hs.state();
    assert_eq!(state.settings.tab, ackscope::app::Tab::Messages);
    let tl = view.panels.messages.0.get(0).expect("the timeline was drawn");
    assert_eq!(tl.selected, Some((first.side, first.id)));
    let layout = tl.last_layout.as_ref().unwrap();
    assert!(layout.rows.iter().any(|(k, _)| *k == (first.side, first.id)), "the message's row is in view");
    // ... and back: its send's packet link opens the same packet's detail.
    hs.get_by_label(&packet_link_label(uid)).click();
    hs.run_steps(40);
    hs.run_steps(40);
    let (state, view) = hs.state();
    assert_eq!(state.settings.tab, ackscope::app::Tab::Packets);
    let pv = view.panels.packets.0.get(0).unwrap();
    assert_eq!(pv.detail.as_ref().map(|d| d.row.uid), Some(uid));
    assert!(state.cursor() >= detail.outcome_at(), "the cursor is at or after the packet's outcome");
    hs.get_by_label(&format!("ack bits: {:#010x}", h.ack_bits));
}

#[test]
fn a_reveal_from_a_message_send_opens_the_packet_detail_in_view() {
    let (rec, _) = captured(scenario(Strategy::Glenn, 15.0), 6.0);
    // An early packet, far above the bottom of a long log.
    let (uid, _) = packet_with_messages(&rec, SimTime(500_000));
    let end = rec.packets.end_time();
    let mut hs = window(vec![rec], ackscope::app::Tab::Messages, end);
    hs.run_steps(40);
    hs.state_mut().0.apply_all([AppCommand::Reveal(RevealTarget::Packet { lane: 0, uid }, None)]);
    hs.run_steps(40);
    hs.run_steps(40);
    let (state, view) = hs.state();
    assert_eq!(state.settings.tab, ackscope::app::Tab::Packets);
    let pv = view.panels.packets.0.get(0).unwrap();
    let row = state.lanes[0].packets.row_by_uid(uid, &state.lanes[0].ledger).unwrap();
    assert_eq!(pv.detail.as_ref().map(|d| d.row.uid), Some(uid));
    // The selected row was scrolled into view.
    let label = ackscope::ui::packets_ui::row_text(&row, end);
    let r = hs.get_by_label(&label).rect();
    assert!(r.top() > 0.0 && r.bottom() < 800.0, "{r:?}");
}

#[test]
fn the_ab_packet_log_keeps_the_fate_and_ack_columns() {
    let mut ab = scenario(Strategy::Ue4, 15.0);
    ab.strategy = Strategy::Ue4;
    let (glenn, _) = captured(scenario(Strategy::Glenn, 15.0), 4.0);
    let (ue4, _) = captured(ab, 4.0);
    let cursor = SimTime(4_000_000);
    // Glenn's newest row acked by the cursor, and UE4's newest nakked (glenn has no Naks).
    let settled = |rec: &Recording, nak: bool| {
        let n = rec.packets.sent_by(cursor);
        (0..n).rev().filter_map(|i| rec.packets.row(i, &rec.ledger)).find(|r| {
            let t = if nak { r.nakked_at } else { r.acked_at };
            t.is_some_and(|t| t <= cursor)
        })
    };
    let (acked, nakked) = (settled(&glenn, false).expect("an ack"), settled(&ue4, true).expect("a nak"));
    let mut hs = window(vec![glenn, ue4], ackscope::app::Tab::Packets, cursor);
    hs.run_steps(40);
    // The newest rows of both lanes show their fate and ack/nak within the window.
    for lane in 0..2 {
        let rec = &hs.state().0.lanes[lane];
        let newest = rec.packets.row(rec.packets.sent_by(cursor) - 1, &rec.ledger).unwrap();
        let text = compact_row_text(&newest, cursor);
        let r = hs.get_by_label(&text).rect();
        let fate_at = text.find(&ackscope::ui::packets_ui::fate_short(&newest, cursor)).unwrap();
        let fate_x = r.left() + fate_at as f32 * r.width() / text.chars().count() as f32;
        assert!(fate_x < 1270.0, "lane {lane}: the fate column starts at {fate_x} in {r:?}");
    }
    assert!(compact_row_text(&acked, cursor).contains("ack +"), "{}", compact_row_text(&acked, cursor));
    assert!(compact_row_text(&nakked, cursor).contains("NAK +"), "{}", compact_row_text(&nakked, cursor));
}

#[test]
fn a_chunk_packet_names_its_slice_and_links_to_the_slice_map() {
    let mut s = scenario(Strategy::Chunks, 5.0);
    s.workload.chunk_kib = 64;
    let (rec, _) = captured(s, 3.0);
    // A slice packet of side A (the chunk sender), in a chunk after the first.
    let send = rec
        .packets
        .rows()
        .iter()
        .find(|r| r.contents.slice.is_some_and(|(chunk, slice, _)| chunk > 0 && slice > 3))
        .copied()
        .expect("a slice packet of a later chunk");
    let (chunk, slice, n) = send.contents.slice.unwrap();
    let d = PacketDetail::of(&(&rec).into(), send.uid).unwrap();
    assert_eq!(d.scheme, AckScheme::Slices);
    let lines = d.header_lines();
    assert!(lines.contains(&("chunk id".to_string(), chunk.to_string())), "{lines:?}");
    assert!(lines.contains(&("slice id".to_string(), format!("{slice} of {n}"))), "{lines:?}");
    let want = rec.chunks.chunks().iter().rposition(|c| c.chunk == chunk && c.started_at <= send.time).unwrap();
    let mut hs = window(vec![rec], ackscope::app::Tab::Packets, send.time);
    hs.run_steps(40);
    hs.state_mut().0.apply_all([AppCommand::Reveal(RevealTarget::Packet { lane: 0, uid: send.uid }, None)]);
    hs.run_steps(40);
    hs.get_by_label(&format!("chunk id: {chunk}"));
    let resend = if send.contents.slice_resend { " (resend)" } else { "" };
    let link = format!("slice {slice}/{n} of chunk {chunk}{resend}");
    hs.get_by_role_and_label(egui::accesskit::Role::Link, &link).click();
    hs.run_steps(40);
    let (state, view) = hs.state();
    assert_eq!(state.settings.tab, ackscope::app::Tab::Slices);
    assert_eq!(view.panels.slices.0.get(0).unwrap().selected, Some(want));
}
