//! The message timeline: its index against real runs' ground truth, and the panel headless.

use crate::common::click_at;

use std::collections::{HashMap, HashSet};

use ackscope::app::AppCommand as UiCommand;
use ackscope::model::index::{MessageFilter, MessageIndex, MsgKey};
use ackscope::ui::timeline_ui::{send_row_label, timeline_ui, TimelineState};
use ackscope_protocol::{Event, EventKind, PacketLedger, Scenario, SendKind, Side, SimTime, Simulation, Strategy};
use egui_kittest::kittest::Queryable;

fn run(strategy: Strategy, loss: f64, secs: f64) -> Vec<Event> {
    let mut s = Scenario { strategy, ..Default::default() };
    for dir in ackscope_protocol::Dir::BOTH {
        s.link.get_mut(dir).loss_percent = loss;
        s.link.get_mut(dir).duplicate_percent = 2.0;
    }
    let mut sim = Simulation::new(s);
    sim.run_for_secs(secs);
    sim.drain_events().collect()
}

/// The message index of a log and the ledger beside it (the packets' fates), as a recording has them.
fn indexed(events: &[Event]) -> (MessageIndex, PacketLedger) {
    let mut ledger = PacketLedger::new();
    ledger.observe(events);
    (MessageIndex::from_events(events), ledger)
}

/// Spurious flags per (message, send number), computed straight from the log: a send is spurious
/// when the peer's application already got the message.
fn spurious_truth(events: &[Event]) -> HashMap<(MsgKey, usize), bool> {
    let mut delivered: HashSet<MsgKey> = HashSet::new();
    let mut queued: HashSet<MsgKey> = HashSet::new();
    let mut n: HashMap<MsgKey, usize> = HashMap::new();
    let mut out = HashMap::new();
    for e in events {
        match e.kind {
            EventKind::MessageQueued { side, msg, .. } => {
                queued.insert((side, msg));
            }
            EventKind::MessageDelivered { side, msg } => {
                delivered.insert((side.other(), msg));
            }
            EventKind::MessageSent { side, msg, .. } if queued.contains(&(side, msg)) => {
                let k = n.entry((side, msg)).or_insert(0);
                out.insert(((side, msg), *k), delivered.contains(&(side, msg)));
                *k += 1;
            }
            _ => {}
        }
    }
    out
}

/// Checks the index (and the ledger beside it) against the log they were built from.
fn check_index(events: &[Event], ix: &MessageIndex, ledger: &PacketLedger) {
    assert!(!ix.is_empty());
    // Every send is tied to the link send of its own packet.
    let mut dropped: HashSet<u64> = HashSet::new();
    let mut delivered: HashSet<u64> = HashSet::new();
    let mut packet_of: HashMap<u64, (Side, u32)> = HashMap::new();
    for e in events {
        match e.kind {
            EventKind::LinkDropped { uid, .. } => {
                dropped.insert(uid);
            }
            EventKind::LinkDelivered { uid, .. } => {
                delivered.insert(uid);
            }
            EventKind::PacketSent { side, seq, uid, .. } => {
                packet_of.insert(uid, (side, seq));
            }
            _ => {}
        }
    }
    let truth = spurious_truth(events);
    let mut checked = 0;
    for m in ix.messages() {
        if let Some(d) = m.delivered_at {
            assert!(d >= m.queued_at, "{:?} delivered before queued", m.key());
            assert!(m.sends.first().is_some_and(|s| s.time <= d), "{:?} delivered before sent", m.key());
        }
        if let Some(a) = m.acked_at {
            assert!(m.sends.first().is_some_and(|s| s.time <= a));
            let seq = m.acked_seq.unwrap();
            assert!(m.sends.iter().any(|s| s.seq == seq), "{:?} acked via a seq it never went in", m.key());
        }
        for (k, s) in m.sends.iter().enumerate() {
            assert!(s.time >= m.queued_at);
            assert_eq!(Some(&s.spurious), truth.get(&(m.key(), k)), "{:?} send {k}", m.key());
            checked += 1;
            let uid = s.uid.unwrap_or_else(|| panic!("{:?} send {k} has no link send", m.key()));
            assert_eq!(packet_of[&uid], (m.side, s.seq));
            let p = ledger.packet(uid).unwrap();
            assert_eq!(p.dropped.is_some(), dropped.contains(&uid));
            assert_eq!(p.delivered_at.is_some(), delivered.contains(&uid));
            assert!(p.sent_at.unwrap() >= s.time);
        }
    }
    assert_eq!(checked, truth.len(), "every send of a queued message is indexed");
    let m = ackscope_protocol::reliable_metrics(events);
    let spurious_reliable =
        ix.messages().iter().filter(|m| m.reliable).flat_map(|m| &m.sends).filter(|s| s.spurious).count() as u64;
    assert!(spurious_reliable <= m.spurious_resends);
}

fn kinds(ix: &MessageIndex) -> HashMap<SendKind, usize> {
    let mut k = HashMap::new();
    for s in ix.messages().iter().flat_map(|m| &m.sends) {
        *k.entry(s.kind).or_insert(0) += 1;
    }
    k
}

#[test]
fn glenn_index_matches_the_log() {
    let events = run(Strategy::Glenn, 20.0, 30.0);
    let (ix, ledger) = indexed(&events);
    check_index(&events, &ix, &ledger);
    let k = kinds(&ix);
    eprintln!("{} messages, sends by kind {k:?}", ix.len());
    assert!(k.get(&SendKind::DelayResend).copied().unwrap_or(0) > 0, "{k:?}");
    assert_eq!(k.get(&SendKind::NakResend), None, "{k:?}");
    let spurious = ix.messages().iter().flat_map(|m| &m.sends).filter(|s| s.spurious).count();
    assert!(spurious > 0, "glenn resends some already-delivered messages at 20% loss");
}

#[test]
fn glenn_redundant_copies_are_their_own_kind() {
    let mut s = Scenario::default();
    s.glenn.resend_delay_ms = 0.0;
    s.link.a_to_b.loss_percent = 20.0;
    let mut sim = Simulation::new(s);
    sim.run_for_secs(20.0);
    let events: Vec<Event> = sim.drain_events().collect();
    let (ix, ledger) = indexed(&events);
    check_index(&events, &ix, &ledger);
    let k = kinds(&ix);
    assert!(k.get(&SendKind::Redundant).copied().unwrap_or(0) > 0, "{k:?}");
    assert_eq!(k.get(&SendKind::DelayResend), None, "{k:?}");
}

#[test]
fn ue4_resends_are_nak_triggered() {
    let events = run(Strategy::Ue4, 20.0, 30.0);
    let (ix, ledger) = indexed(&events);
    check_index(&events, &ix, &ledger);
    let k = kinds(&ix);
    eprintln!("{} messages, sends by kind {k:?}", ix.len());
    assert!(k.get(&SendKind::NakResend).copied().unwrap_or(0) > 0, "{k:?}");
    assert_eq!(k.get(&SendKind::DelayResend), None, "{k:?}");
    // Every Nak resend follows a Nak of a packet that carried the message before.
    for m in ix.messages() {
        for (i, s) in m.sends.iter().enumerate().filter(|(_, s)| s.kind == SendKind::NakResend) {
            let nakked_before = m.sends[..i]
                .iter()
                .filter_map(|p| ledger.packet(p.uid?))
                .any(|p| p.nakked_at.is_some_and(|t| t <= s.time));
            assert!(nakked_before, "{:?} Nak resend #{i} without a Nak", m.key());
        }
    }
}

#[test]
fn incremental_ingest_equals_batch_and_visible_rows_match_brute_force() {
    let events = run(Strategy::Glenn, 10.0, 20.0);
    let batch = MessageIndex::from_events(&events);
    let mut inc = MessageIndex::new();
    for chunk in events.chunks(997) {
        inc.ingest_all(chunk);
    }
    assert_eq!(batch.messages(), inc.messages());
    let filters = [
        MessageFilter::default(),
        MessageFilter { side_a: true, side_b: false, reliable: true, unreliable: true },
        MessageFilter { side_a: true, side_b: true, reliable: false, unreliable: true },
    ];
    let mut out = Vec::new();
    for cursor_s in [3.0, 10.0, 20.0] {
        let cursor = SimTime::from_secs_f64(cursor_s);
        for (a, b) in [(0.0, 1.0), (2.0, 2.5), (5.0, 12.0), (0.0, 30.0), (9.9, 10.0)] {
            let (t0, t1) = (SimTime::from_secs_f64(a), SimTime::from_secs_f64(b));
            for f in &filters {
                batch.visible(t0, t1, cursor, f, &mut out);
                let brute: Vec<usize> = (0..batch.len())
                    .filter(|&i| {
                        let m = &batch.messages()[i];
                        f.accepts(m) && m.queued_at <= t1.min(cursor) && m.end_at(cursor) >= t0
                    })
                    .collect();
                assert_eq!(out, brute, "cursor {cursor_s} window {a}-{b} {f:?}");
            }
        }
    }
    // At the cursor, nothing after it is visible and open messages reach the cursor.
    let cursor = SimTime::from_secs_f64(10.0);
    batch.visible(SimTime::ZERO, SimTime::from_secs_f64(20.0), cursor, &MessageFilter::default(), &mut out);
    assert!(!out.is_empty());
    for &i in &out {
        let m = &batch.messages()[i];
        assert!(m.queued_at <= cursor && m.end_at(cursor) <= cursor);
    }
}

struct Panel {
    index: MessageIndex,
    ledger: PacketLedger,
    tl: TimelineState,
    cursor: SimTime,
    commands: Vec<UiCommand>,
}

#[test]
fn panel_selects_a_message_and_seeks_to_a_send() {
    let events = run(Strategy::Glenn, 20.0, 12.0);
    let (index, ledger) = indexed(&events);
    let cursor = index.end_time();
    let state = Panel { index, ledger, tl: TimelineState::default(), cursor, commands: Vec::new() };
    let mut h = egui_kittest::Harness::builder().with_size(egui::vec2(1200.0, 800.0)).build_ui_state(
        |ui, s: &mut Panel| {
            timeline_ui(ui, "glenn_tl", "glenn", &s.index, &s.ledger, &mut s.tl, s.cursor, &mut s.commands)
        },
        state,
    );
    h.run();
    h.get_by_label("glenn message timeline");
    let layout = h.state().tl.last_layout.clone().expect("drawn");
    assert!(!layout.rows.is_empty());
    assert!(layout.t1_s >= cursor.as_secs_f64() && (layout.t1_s - layout.t0_s - 5.0).abs() < 1e-9);
    // A resent message in the window, on screen.
    let key = layout
        .rows
        .iter()
        .map(|(k, _)| *k)
        .find(|k| h.state().index.get(*k).unwrap().sends.len() > 1)
        .expect("a resent message in view");
    let m = h.state().index.get(key).unwrap().clone();
    let t = SimTime::from_secs_f64((m.queued_at.as_secs_f64()).max(layout.t0_s + 0.01));
    let pos = layout.pos_of(key, t).unwrap();

    // Hover shows the details.
    h.hover_at(pos);
    h.run();
    h.get_by_label(&format!("message {:?} #{}", key.0, key.1));

    click_at(&h, pos);
    h.run();
    assert_eq!(h.state().tl.selected, Some(key));

    // The side list: every send is a row; clicking one seeks there.
    let second = m.sends[1];
    h.get_by_label(&send_row_label(2, &second)).click();
    h.run();
    assert_eq!(h.state().commands, vec![UiCommand::SeekTo(second.time)]);
    h.get_by_label(&format!("queued {:.3} s", m.queued_at.as_secs_f64())).click();
    h.run();
    assert_eq!(h.state().commands.last(), Some(&UiCommand::SeekTo(m.queued_at)));

    // Dragging pans back in time and stops following.
    let c = layout.rows_rect.center();
    h.drag_at(c);
    h.run();
    h.hover_at(c + egui::vec2(200.0, 0.0));
    h.run();
    h.drop_at(c + egui::vec2(200.0, 0.0));
    h.run();
    let tl = &h.state().tl;
    assert!(!tl.follow_live);
    assert!(tl.right_s < cursor.as_secs_f64() - 0.5, "{}", tl.right_s);

    // Close clears the selection.
    h.get_by_label("Close").click();
    h.run();
    assert_eq!(h.state().tl.selected, None);
}

#[test]
fn two_timelines_coexist_and_the_cursor_hides_the_future() {
    let glenn = indexed(&run(Strategy::Glenn, 10.0, 8.0));
    let ue4 = indexed(&run(Strategy::Ue4, 10.0, 8.0));
    let cursor = SimTime::from_secs_f64(4.0);
    let state = (glenn, ue4, TimelineState::default(), TimelineState::default(), Vec::new());
    type Ab =
        ((MessageIndex, PacketLedger), (MessageIndex, PacketLedger), TimelineState, TimelineState, Vec<UiCommand>);
    let mut h = egui_kittest::Harness::builder().with_size(egui::vec2(1600.0, 800.0)).build_ui_state(
        |ui, s: &mut Ab| {
            ui.columns(2, |cols| {
                timeline_ui(&mut cols[0], "a", "glenn", &s.0 .0, &s.0 .1, &mut s.2, cursor, &mut s.4);
                timeline_ui(&mut cols[1], "b", "ue4", &s.1 .0, &s.1 .1, &mut s.3, cursor, &mut s.4);
            });
        },
        state,
    );
    h.run();
    h.get_by_label("glenn message timeline");
    h.get_by_label("ue4 message timeline");
    for ((ix, _), tl) in [(&h.state().0, &h.state().2), (&h.state().1, &h.state().3)] {
        let layout = tl.last_layout.as_ref().unwrap();
        assert!(!layout.rows.is_empty());
        assert!(
            (layout.t1_s - 5.0 * (1.0 + ackscope::ui::timeline_ui::FOLLOW_MARGIN)).abs() < 1e-9,
            "window starts at 0 until the cursor passes its width"
        );
        for (k, _) in &layout.rows {
            assert!(ix.get(*k).unwrap().queued_at <= cursor);
        }
    }
}

/// Figures: `cargo test --test app timeline::frame_cost_with_a_million_events -- --ignored --nocapture`.
#[test]
#[ignore = "figures; slow in debug builds"]
fn frame_cost_with_a_million_events() {
    let mut s = Scenario::default();
    for dir in ackscope_protocol::Dir::BOTH {
        s.link.get_mut(dir).loss_percent = 10.0;
    }
    let mut sim = Simulation::new(s);
    let mut events = Vec::new();
    while events.len() < 1_000_000 {
        sim.run_for_secs(10.0);
        events.extend(sim.drain_events());
    }
    let t = std::time::Instant::now();
    let index = MessageIndex::from_events(&events);
    let ingest = t.elapsed();
    let mut ledger = PacketLedger::new();
    ledger.observe(&events);
    let cursor = index.end_time();
    eprintln!(
        "{} events over {:.0} s, {} messages: ingest {:.0} ms ({:.0} ns/event)",
        events.len(),
        cursor.as_secs_f64(),
        index.len(),
        ingest.as_secs_f64() * 1e3,
        ingest.as_secs_f64() * 1e9 / events.len() as f64
    );
    let mut out = Vec::new();
    for span in [5.0, 60.0, cursor.as_secs_f64()] {
        let t0 = SimTime::from_secs_f64(cursor.as_secs_f64() - span);
        let t = std::time::Instant::now();
        for _ in 0..100 {
            index.visible(t0, cursor, cursor, &MessageFilter::default(), &mut out);
        }
        eprintln!("visible() over {span:.0} s: {} rows, {:.1} us", out.len(), t.elapsed().as_secs_f64() * 1e4);
    }
    let state = Panel { index, ledger, tl: TimelineState::default(), cursor, commands: Vec::new() };
    let mut h = egui_kittest::Harness::builder().with_size(egui::vec2(1200.0, 800.0)).build_ui_state(
        |ui, s: &mut Panel| timeline_ui(ui, "tl", "glenn", &s.index, &s.ledger, &mut s.tl, s.cursor, &mut s.commands),
        state,
    );
    h.run();
    for span in [5.0, 60.0, cursor.as_secs_f64()] {
        h.state_mut().tl.span_s = span;
        h.step();
        let t = std::time::Instant::now();
        for _ in 0..20 {
            h.step();
        }
        let rows = h.state().tl.last_layout.as_ref().map_or(0, |l| l.rows.len());
        eprintln!("frame over {span:.0} s: {rows} rows drawn, {:.2} ms", t.elapsed().as_secs_f64() * 1e3 / 20.0);
    }
}

/// A timeline panel of a 12 s glenn run at 20 % loss, cursor at the end.
fn glenn_panel() -> egui_kittest::Harness<'static, Panel> {
    let events = run(Strategy::Glenn, 20.0, 12.0);
    let (index, ledger) = indexed(&events);
    let cursor = index.end_time();
    let state = Panel { index, ledger, tl: TimelineState::default(), cursor, commands: Vec::new() };
    egui_kittest::Harness::builder().with_size(egui::vec2(1200.0, 800.0)).build_ui_state(
        |ui, s: &mut Panel| timeline_ui(ui, "tl", "glenn", &s.index, &s.ledger, &mut s.tl, s.cursor, &mut s.commands),
        state,
    )
}

#[test]
fn seeking_to_an_early_send_keeps_the_selected_message_in_view() {
    let mut h = glenn_panel();
    h.run();
    // A resent message queued early, while the window (not following) shows the last seconds.
    let m = h.state().index.messages().iter().find(|m| m.sends.len() > 1 && m.queued_at < SimTime(3_000_000)).cloned();
    let m = m.expect("an early resent message");
    let end = h.state().cursor.as_secs_f64();
    let tl = &mut h.state_mut().tl;
    tl.selected = Some(m.key());
    tl.follow_live = false;
    tl.right_s = end;
    h.run();
    let second = m.sends[1];
    h.get_by_label(&send_row_label(2, &second)).click();
    h.run();
    assert_eq!(h.state().commands.last(), Some(&UiCommand::SeekTo(second.time)));
    // The app moves the cursor; the timeline shows the message's row around it.
    h.state_mut().cursor = second.time;
    h.run();
    h.run();
    let layout = h.state().tl.last_layout.clone().unwrap();
    assert!(layout.rows_in_window > 0, "no messages in this window");
    assert!(layout.t0_s <= second.time.as_secs_f64() && second.time.as_secs_f64() <= layout.t1_s);
    assert!(layout.rows.iter().any(|(k, _)| *k == m.key()), "the selected row is in view");
}

#[test]
fn rows_are_as_tall_as_their_id_labels_and_the_legend_names_sides_and_drops() {
    let mut h = glenn_panel();
    // A long window: far more messages than rows fit.
    h.state_mut().tl.span_s = 12.0;
    h.run();
    let layout = h.state().tl.last_layout.clone().unwrap();
    assert!(layout.rows_in_window > layout.rows.len(), "{} in window", layout.rows_in_window);
    assert!(layout.row_height >= 14.0, "rows {} px high", layout.row_height);
    // Ids sit in a gutter left of the time area, clear of the first-send marks.
    assert!(layout.rows_rect.left() >= 50.0, "{:?}", layout.rows_rect);
    for label in ["sent by A", "sent by B", "copy dropped (hollow, struck)", "first", "Nak resend", "delivered"] {
        h.get_by_label(label);
    }
}

type Window = egui_kittest::Harness<'static, (ackscope::app::AppState, ackscope::ui::WindowView)>;

/// The whole window replaying a 12 s glenn vs ue4 run at 10 % loss on the Messages tab, the
/// cursor at the end.
fn ab_window() -> Window {
    let lane = |strategy| {
        let mut s = Scenario { seed: 4, strategy, ..Scenario::default() };
        for d in ackscope_protocol::Dir::BOTH {
            s.link.get_mut(d).loss_percent = 10.0;
        }
        let mut sim = Simulation::new(s.clone());
        sim.run_for_secs(12.0);
        let mut rec = ackscope::model::Recording::new(s);
        rec.ingest(sim.drain_events().collect());
        rec
    };
    let lanes = vec![lane(Strategy::Glenn), lane(Strategy::Ue4)];
    let mut state = ackscope::app::AppState::new(lanes[0].scenario.clone().unwrap_or_default(), || {});
    state.settings.intro_dismissed = true;
    state.lanes = lanes;
    state.settings.tab = ackscope::app::Tab::Messages;
    let end = state.end_time();
    state.playback.seek(end);
    let mut h = egui_kittest::Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, s: &mut (ackscope::app::AppState, ackscope::ui::WindowView)| {
            ackscope::window::frame_ui(&mut s.0, &mut s.1, ui)
        },
        (state, ackscope::ui::WindowView::default()),
    );
    h.run_steps(5);
    h
}

/// Lane `k`'s timeline state.
fn lane_tl(h: &Window, k: usize) -> &TimelineState {
    h.state().1.panels.messages.0.get(k).expect("the lane's timeline was drawn")
}

#[test]
fn the_default_window_fits_the_message_rate_so_a_message_life_reads_without_zooming() {
    let h = ab_window();
    let cursor = h.state().0.cursor();
    for k in 0..2 {
        let lay = lane_tl(&h, k).last_layout.clone().unwrap();
        let index = &h.state().0.lanes[k].messages;
        // Each delivered message's life (queued to delivered) as drawn, in pixels.
        let mut widths: Vec<f32> = lay
            .rows
            .iter()
            .filter_map(|(key, _)| index.get(*key))
            .filter_map(|m| Some(lay.x_of(m.delivered_at.filter(|t| *t <= cursor)?) - lay.x_of(m.queued_at)))
            .collect();
        assert!(
            widths.len() >= 5,
            "lane {k}: {} delivered rows drawn of {:?}",
            widths.len(),
            (lay.rows.len(), lay.t0_s, lay.t1_s)
        );
        widths.sort_by(f32::total_cmp);
        let median = widths[widths.len() / 2];
        // At the old fixed 5 s window a 100 ms life took 8 px of an A/B column.
        assert!(median >= 20.0, "lane {k}: a typical life is {median:.1} px wide over {:.2} s", lay.t1_s - lay.t0_s);
        // The window still lists most of what it holds: about as many messages as rows.
        assert!(
            lay.rows_in_window <= lay.rows.len() * 2,
            "lane {k}: {} in window, {} rows",
            lay.rows_in_window,
            lay.rows.len()
        );
    }
}

#[test]
fn ab_lanes_zoom_and_pan_together() {
    let mut h = ab_window();
    let span = lane_tl(&h, 0).span_s;
    assert_eq!(lane_tl(&h, 1).span_s, span);
    // Zoom in on A: B's window halves too.
    h.get_all_by_label("Zoom in").next().expect("lane A's Zoom in").click();
    h.run_steps(3);
    for k in 0..2 {
        assert!((lane_tl(&h, k).span_s - span / 2.0).abs() < 1e-9, "lane {k}: {}", lane_tl(&h, k).span_s);
    }
    // Zoom out on B: A follows.
    h.get_all_by_label("Zoom out").nth(1).expect("lane B's Zoom out").click();
    h.run_steps(3);
    for k in 0..2 {
        assert!((lane_tl(&h, k).span_s - span).abs() < 1e-9, "lane {k}: {}", lane_tl(&h, k).span_s);
    }
    // Drag B's canvas to the right (earlier times): both lanes stop following and show the same times.
    let rect = lane_tl(&h, 1).last_layout.as_ref().unwrap().rows_rect;
    let from = rect.center();
    h.drag_at(from);
    h.run();
    h.hover_at(from + egui::vec2(120.0, 0.0));
    h.run();
    h.drop_at(from + egui::vec2(120.0, 0.0));
    h.run_steps(3);
    let (a, b) = (lane_tl(&h, 0).last_layout.clone().unwrap(), lane_tl(&h, 1).last_layout.clone().unwrap());
    assert!(!lane_tl(&h, 0).follow_live && !lane_tl(&h, 1).follow_live);
    assert!(
        (a.t0_s - b.t0_s).abs() < 1e-9 && (a.t1_s - b.t1_s).abs() < 1e-9,
        "A {:?} B {:?}",
        (a.t0_s, a.t1_s),
        (b.t0_s, b.t1_s)
    );
    assert!(b.t1_s < h.state().0.cursor().as_secs_f64(), "the drag moved the window back");
}

#[test]
fn the_hover_card_keeps_clear_of_the_pointer_row_and_the_cursor_line() {
    let mut h = ab_window();
    let cursor = h.state().0.cursor();
    let lay = lane_tl(&h, 0).last_layout.clone().unwrap();
    let cx = lay.x_of(cursor);
    // The newest rows, near the cursor at the bottom right, then one near the top.
    for (key, y) in [lay.rows[lay.rows.len() - 2], lay.rows[1]] {
        let m = h.state().0.lanes[0].messages.get(key).unwrap().clone();
        let x = lay.x_of(m.queued_at).max(lay.rows_rect.left() + 4.0);
        let p = egui::pos2(x, y);
        h.hover_at(p);
        h.run_steps(3);
        let card = h.get_by_label(&format!("message {:?} #{}", m.side, m.id)).rect();
        let card = card.expand2(egui::vec2(0.0, 0.0));
        let row = egui::Rect::from_x_y_ranges(
            lay.rows_rect.x_range(),
            (y - lay.row_height / 2.0)..=(y + lay.row_height / 2.0),
        );
        // The card's frame reaches a little beyond its first label: judge its column and rows.
        let frame = h.state().1.panels.messages.0.get(0).unwrap().detail_size.expect("a card was shown");
        let card_rect = egui::Rect::from_min_size(card.min - egui::vec2(8.0, 8.0), frame);
        assert!(!card_rect.intersects(row), "the card {card_rect:?} covers the hovered row {row:?}");
        assert!(
            !(card_rect.left()..=card_rect.right()).contains(&cx),
            "the card {card_rect:?} covers the cursor at x {cx}"
        );
        assert!(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1280.0, 800.0)).contains_rect(card_rect));
    }
}
