//! The chunk slice map and the packet log: their indexes checked against real simulation runs'
//! events (ground truth from the link, replay of the endpoints' reports), and both panels driven
//! headless with egui_kittest.

use std::collections::HashMap;
use std::time::Instant;

use ackscope::app::AppCommand as UiCommand;
use ackscope::model::index::{
    ChunkIndex, DirFilter, Fate, FateFilter, FilteredRows, PacketFilter, PacketIndex, PacketRow, SliceState,
};
use ackscope::ui::packets_ui::{packets_ui, row_text, PacketsView};
use ackscope::ui::slices_ui::{chunk_label, slice_tooltip, slices_ui, SlicesView};
use ackscope_protocol::{
    Dir, Event, EventKind, PacketLedger, Scenario, SendKind, Side, SimTime, Simulation, Strategy, TickPhase,
};
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

const SEED: u64 = 7;

fn run(scenario: Scenario, secs: f64) -> Vec<Event> {
    let mut sim = Simulation::new(scenario);
    sim.run_for_secs(secs);
    sim.drain_events().collect()
}

fn chunk_scenario(strategy: Strategy, loss_percent: f64) -> Scenario {
    let mut s = Scenario { seed: SEED, strategy, ..Scenario::default() };
    s.workload.chunk_kib = 64;
    s.link.a_to_b.loss_percent = loss_percent;
    s.link.b_to_a.loss_percent = loss_percent;
    s
}

fn lossy_packets_scenario(strategy: Strategy) -> Scenario {
    let mut s = Scenario { seed: SEED, strategy, ..Scenario::default() };
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.loss_percent = 10.0;
        l.duplicate_percent = 5.0;
        l.jitter_ms = 20.0;
    }
    s
}

/// Feeds `events` to a ledger and the packet index beside it, one at a time, as a recording does.
fn feed(ledger: &mut PacketLedger, index: &mut PacketIndex, events: &[Event]) {
    for e in events {
        ledger.observe_event(e);
        index.ingest(e, ledger);
    }
}

/// The packet index of `events` and the ledger it reads its facts from.
fn packet_index(events: &[Event]) -> (PacketLedger, PacketIndex) {
    let (mut ledger, mut index) = (PacketLedger::new(), PacketIndex::new());
    feed(&mut ledger, &mut index, events);
    (ledger, index)
}

/// Every row of the log as shown.
fn all_rows(index: &PacketIndex, ledger: &PacketLedger) -> Vec<PacketRow> {
    (0..index.len()).map(|i| index.row(i, ledger).unwrap()).collect()
}

/// Slice states at `t` by replaying every event up to `t` (chunks in start order).
fn replay_slice_states(events: &[Event], t: SimTime) -> Vec<Vec<(SliceState, usize)>> {
    let mut chunks: Vec<Vec<(bool, bool, bool, usize)>> = Vec::new();
    let mut latest: HashMap<(Side, u32), usize> = HashMap::new();
    let mut attempt: HashMap<(Side, u32), usize> = HashMap::new();
    for e in events.iter().take_while(|e| e.time <= t) {
        match e.kind {
            EventKind::ChunkStarted { side, chunk, slices, .. } => {
                latest.insert((side, chunk), chunks.len());
                chunks.push(vec![(false, false, false, 0); slices as usize]);
            }
            EventKind::SliceSent { side, chunk, slice, .. } => chunks[latest[&(side, chunk)]][slice as usize].3 += 1,
            EventKind::SliceReceived { side, chunk, slice } => {
                chunks[latest[&(side.other(), chunk)]][slice as usize].1 = true
            }
            EventKind::SliceAcked { side, chunk, slice } => chunks[latest[&(side, chunk)]][slice as usize].2 = true,
            EventKind::ChunkCompleted { side, chunk, .. } => {
                chunks[latest[&(side, chunk)]].iter_mut().for_each(|s| s.2 = true)
            }
            EventKind::FragmentBlockSent { side, chunk, seq, .. } => {
                attempt.insert((side, seq), latest[&(side, chunk)]);
            }
            EventKind::FragmentReassembled { side, seq } => {
                if let Some(&i) = attempt.get(&(side.other(), seq)) {
                    chunks[i].iter_mut().for_each(|s| s.1 = true)
                }
            }
            _ => {}
        }
    }
    let state = |&(_, received, acked, sends): &(bool, bool, bool, usize)| match () {
        _ if acked => SliceState::Acked,
        _ if received => SliceState::Received,
        _ if sends > 0 => SliceState::InFlight,
        _ => SliceState::NotSent,
    };
    chunks.iter().map(|c| c.iter().map(|s| (state(s), s.3)).collect()).collect()
}

fn check_states_against_replay(events: &[Event], index: &ChunkIndex, cursors: &[SimTime]) {
    for &t in cursors {
        let want = replay_slice_states(events, t);
        assert_eq!(index.started_by(t), want.len(), "chunks started by {t:?} (seed {SEED})");
        for (i, slices) in want.iter().enumerate() {
            let c = &index.chunks()[i];
            for (k, &(state, sends)) in slices.iter().enumerate() {
                let s = &c.slices[k];
                assert_eq!(s.state_at(t), state, "chunk #{i} slice {k} at {t:?} (seed {SEED})");
                assert_eq!(s.sends_at(t), sends, "chunk #{i} slice {k} sends at {t:?} (seed {SEED})");
            }
        }
    }
}

#[test]
fn slice_states_at_any_cursor_match_a_replay_of_a_lossy_chunk_run() {
    let events = run(chunk_scenario(Strategy::Chunks, 10.0), 20.0);
    let mut index = ChunkIndex::new();
    index.ingest_all(&events);
    assert_eq!(index.unmatched, 0, "slice events for unknown chunks (seed {SEED})");
    let completed = index.chunks().iter().filter(|c| c.completed_at.is_some()).count();
    assert!(completed >= 2, "only {completed} chunks completed (seed {SEED})");
    let resends: usize = index.chunks().iter().flat_map(|c| &c.slices).map(|s| s.sends.len().saturating_sub(1)).sum();
    assert!(resends > 0, "10% loss must cause resends (seed {SEED})");
    // Several cursors: the start, mid-chunk instants, the end.
    let end = events.last().unwrap().time;
    let mut cursors = vec![SimTime::ZERO, SimTime(end.0 / 7), SimTime(end.0 / 3), SimTime(end.0 / 2), end];
    cursors.push(index.chunks()[1].started_at.plus_micros(300_000));
    check_states_against_replay(&events, &index, &cursors);
    // A partly done chunk really shows every state at once somewhere in the run.
    let mid = index.chunks()[1].started_at.plus_micros(1_000_000);
    let k = index.chunks()[1].counts_at(mid);
    assert!(k.acked > 0 && k.acked < 64, "{k:?} (seed {SEED})");
    // Completion matches what the sender reported, and follows every ack and receipt.
    for e in &events {
        if let EventKind::ChunkCompleted { chunk, elapsed_us, .. } = e.kind {
            let c = index.chunks().iter().rev().find(|c| c.chunk == chunk && c.started_at <= e.time).unwrap();
            assert_eq!(c.completed_at, Some(e.time));
            assert_eq!(c.completed_at.unwrap().saturating_since(c.started_at).0, elapsed_us);
            for s in &c.slices {
                assert!(s.received_at.unwrap() <= s.acked_at.unwrap() && s.acked_at.unwrap() <= e.time);
            }
            assert_eq!(c.progress_at(e.time), 1.0);
            assert_eq!(c.expected_completion_at(e.time), None);
        }
    }
    let c = &index.chunks()[1];
    assert!(c.delivered_at.is_some() && c.delivered_ok == Some(true), "chunk 1 was read intact");
}

#[test]
fn rate_and_expected_completion_follow_the_acks() {
    let events = run(chunk_scenario(Strategy::Chunks, 0.0), 12.0);
    let mut index = ChunkIndex::new();
    index.ingest_all(&events);
    let c = &index.chunks()[1];
    let done = c.completed_at.expect("chunk 1 completes without loss");
    let half = SimTime((c.started_at.0 + done.0) / 2);
    // Without loss the transfer is near-linear, so the half-way extrapolation lands near the end.
    let eta = c.expected_completion_at(half).expect("acks by half-way");
    let err_s = (eta.as_secs_f64() - done.as_secs_f64()).abs();
    assert!(err_s < 0.3 * done.saturating_since(c.started_at).as_secs_f64(), "eta {eta:?} vs done {done:?}");
    // The configured 256 kbps budget (with headers) bounds the payload rate over a second.
    let sent = c.sent_kbps_at(half);
    let acked = c.acked_kbps_at(half);
    assert!((150.0..=256.0).contains(&sent), "sent {sent} kbps");
    assert!((100.0..=300.0).contains(&acked), "acked {acked} kbps");
    assert_eq!(c.acked_kbps_at(c.started_at), 0.0);
}

#[test]
fn fragments_baseline_marks_whole_blocks_received_and_acked() {
    let events = run(chunk_scenario(Strategy::Fragments, 1.0), 20.0);
    let mut index = ChunkIndex::new();
    index.ingest_all(&events);
    assert_eq!(index.unmatched, 0, "seed {SEED}");
    let done: Vec<_> = index.chunks().iter().filter(|c| c.completed_at.is_some()).collect();
    assert!(!done.is_empty(), "no block completed at 1% loss (seed {SEED})");
    for c in done {
        assert!(!c.attempts.is_empty());
        let t = c.completed_at.unwrap();
        assert!(c.slices.iter().all(|s| s.state_at(t) == SliceState::Acked));
        // Received all at once, at the reassembly, before the block ack came back.
        let r = c.slices[0].received_at.unwrap();
        assert!(c.slices.iter().all(|s| s.received_at == Some(r)) && r < t);
    }
    let end = events.last().unwrap().time;
    check_states_against_replay(&events, &index, &[SimTime(end.0 / 3), SimTime(end.0 / 2), end]);
}

#[test]
fn packet_fates_match_the_link_and_acks_match_the_endpoints() {
    for strategy in [Strategy::Glenn, Strategy::Ue4] {
        let events = run(lossy_packets_scenario(strategy), 20.0);
        let (ledger, index) = packet_index(&events);
        assert_eq!(index.unmatched, 0, "{strategy:?} (seed {SEED})");
        let mut sent = 0;
        let mut dropped = HashMap::new();
        let mut delivered = HashMap::new();
        let mut dup = HashMap::new();
        let mut last_uid: HashMap<(Side, u32), u64> = HashMap::new();
        let mut acked: HashMap<u64, SimTime> = HashMap::new();
        let mut nakked: HashMap<u64, SimTime> = HashMap::new();
        let mut msgs: HashMap<(Side, SimTime, u32), (u16, u16)> = HashMap::new();
        for e in &events {
            match e.kind {
                EventKind::LinkSent { dir, uid, .. } => {
                    sent += 1;
                    assert_eq!(index.row_by_uid(uid, &ledger).map(|r| r.dir), Some(dir), "uid {uid}");
                }
                EventKind::LinkDropped { uid, reason, .. } => drop(dropped.insert(uid, reason)),
                EventKind::LinkDuplicated { uid, .. } => drop(dup.insert(uid, ())),
                EventKind::LinkDelivered { uid, .. } => drop(delivered.entry(uid).or_insert(e.time)),
                EventKind::PacketSent { side, seq, uid, .. } => drop(last_uid.insert((side, seq), uid)),
                EventKind::PacketAcked { side, seq } => drop(acked.entry(last_uid[&(side, seq)]).or_insert(e.time)),
                EventKind::PacketNakked { side, seq } => drop(nakked.entry(last_uid[&(side, seq)]).or_insert(e.time)),
                EventKind::MessageSent { side, seq, kind, .. } => {
                    let m = msgs.entry((side, e.time, seq)).or_default();
                    m.0 += 1;
                    m.1 += (kind != SendKind::First) as u16;
                }
                _ => {}
            }
        }
        assert_eq!(index.len(), sent);
        assert!(!dropped.is_empty() && !dup.is_empty(), "{strategy:?}: the link must drop and duplicate");
        for r in &all_rows(&index, &ledger) {
            assert_eq!(r.dropped, dropped.get(&r.uid).copied(), "uid {} ({strategy:?}, seed {SEED})", r.uid);
            assert_eq!(r.duplicated, dup.contains_key(&r.uid), "uid {}", r.uid);
            assert_eq!(r.delivered_at, delivered.get(&r.uid).copied(), "uid {}", r.uid);
            assert_eq!(r.acked_at, acked.get(&r.uid).copied(), "uid {} ({strategy:?})", r.uid);
            assert_eq!(r.nakked_at, nakked.get(&r.uid).copied(), "uid {} ({strategy:?})", r.uid);
            let side = r.dir.sender();
            let (n, resends) = msgs.get(&(side, r.time, r.seq)).copied().unwrap_or_default();
            assert_eq!((r.contents.msgs, r.contents.resends), (n, resends), "uid {}", r.uid);
            // State at the cursor: in flight until the delivery instant.
            if let Some(d) = r.delivered_at {
                assert_eq!(r.fate_at(SimTime(d.0 - 1)), Fate::InFlight);
                assert!(matches!(r.fate_at(d), Fate::Delivered { .. }));
                assert_eq!(r.acked_by(r.time), None, "an ack cannot come in the send instant");
            }
        }
        assert!(index.rows().iter().any(|r| r.contents.resends > 0), "{strategy:?}: resends summarised");
        assert!(!acked.is_empty());
        if strategy == Strategy::Ue4 {
            assert!(!nakked.is_empty(), "UE4 reports losses as naks");
        }
        let with_resend = index.rows().iter().find(|r| r.contents.resends > 0).unwrap();
        assert!(with_resend.contents.summary().contains("resend"), "{}", with_resend.contents.summary());
    }
}

#[test]
fn slice_packets_are_summarised_with_their_slice() {
    let events = run(chunk_scenario(Strategy::Chunks, 5.0), 6.0);
    let (ledger, index) = packet_index(&events);
    let mut last_slice: [Option<(SimTime, u32, u32)>; 2] = [None, None];
    let mut checked = 0;
    for e in &events {
        match e.kind {
            EventKind::SliceSent { side, chunk, slice, .. } => last_slice[side.index()] = Some((e.time, chunk, slice)),
            EventKind::PacketSent { side, uid, .. } => {
                let want = last_slice[side.index()].take().filter(|s| s.0 == e.time).map(|(_, c, s)| (c, s, 64));
                assert_eq!(index.row_by_uid(uid, &ledger).unwrap().contents.slice, want, "uid {uid}");
                checked += want.is_some() as usize;
            }
            _ => {}
        }
    }
    assert!(checked > 100, "{checked}");
    let r = index.rows().iter().find(|r| r.contents.slice.is_some()).unwrap();
    assert!(r.contents.summary().starts_with("slice "), "{}", r.contents.summary());
    assert!(r.contents.summary().contains("/64 of chunk"), "{}", r.contents.summary());
}

#[test]
fn filtered_rows_grow_incrementally_and_match_a_full_filter() {
    let events = run(lossy_packets_scenario(Strategy::Glenn), 20.0);
    let filter = PacketFilter { dir: DirFilter::Only(Dir::AtoB), fate: FateFilter::Dropped, text: String::new() };
    let (mut ledger, mut index) = (PacketLedger::new(), PacketIndex::new());
    let mut cache = FilteredRows::default();
    for batch in events.chunks(997) {
        feed(&mut ledger, &mut index, batch);
        cache.update(&index, &ledger, &filter);
    }
    let want: Vec<u32> = (all_rows(&index, &ledger).iter().enumerate())
        .filter(|(_, r)| r.dir == Dir::AtoB && r.dropped.is_some())
        .map(|(i, _)| i as u32)
        .collect();
    let got: Vec<u32> = (0..cache.len()).map(|k| cache.get(k).unwrap()).collect();
    assert_eq!(got, want);
    assert_eq!(cache.rebuilds, 1, "an unchanged filter must not rebuild");
    // At a cursor, only rows sent by then.
    let t = SimTime(10_000_000);
    let n = want.iter().filter(|&&i| index.rows()[i as usize].time <= t).count();
    assert_eq!(cache.count_at(&index, t), n);
    // Text filter on contents.
    let f2 = PacketFilter { text: "RESEND".into(), ..PacketFilter::default() };
    cache.update(&index, &ledger, &f2);
    assert_eq!(cache.rebuilds, 2);
    let n2 = index.rows().iter().filter(|r| r.contents.resends > 0).count();
    assert_eq!(cache.len(), n2);
    // A new run's index replaces the rows, whatever the filter.
    let fresh = PacketIndex::new();
    cache.update(&fresh, &PacketLedger::new(), &f2);
    assert_eq!((cache.len(), cache.rebuilds), (0, 3));
}

// ----- panels, headless -----

struct PacketPanel {
    ledger: PacketLedger,
    index: PacketIndex,
    view: PacketsView,
    cursor: SimTime,
    cmds: Vec<UiCommand>,
}

fn packet_harness(state: PacketPanel) -> Harness<'static, PacketPanel> {
    Harness::builder().with_size(egui::vec2(1200.0, 800.0)).build_ui_state(
        |ui, s: &mut PacketPanel| packets_ui(&s.index, &s.ledger, &mut s.view, s.cursor, ui, &mut s.cmds),
        state,
    )
}

fn packet_panel(scenario: Scenario, secs: f64) -> PacketPanel {
    let events = run(scenario, secs);
    let (ledger, index) = packet_index(&events);
    let cursor = index.end_time();
    PacketPanel { ledger, index, view: first_client_view(), cursor, cmds: Vec::new() }
}

#[test]
fn clicking_a_packet_row_seeks_to_its_send() {
    let mut p = packet_panel(lossy_packets_scenario(Strategy::Glenn), 3.0);
    // A cursor early in the run: a handful of rows, all in view; later rows are hidden.
    p.cursor = p.index.rows()[9].time;
    let target = p.index.row(4, &p.ledger).unwrap();
    let hidden = row_text(&p.index.row(40, &p.ledger).unwrap(), p.index.end_time());
    let mut h = packet_harness(p);
    h.run();
    assert!(h.query_by_label(&hidden).is_none(), "rows after the cursor are hidden");
    let label = row_text(&target, h.state().cursor);
    // Rows are laid out one per slot at a fixed pitch (what the virtualisation assumes), and line
    // up with the header.
    let r4 = h.get_by_label(&label).rect();
    let row = |k: usize| h.state().index.row(k, &h.state().ledger).unwrap();
    let r5 = h.get_by_label(&row_text(&row(5), h.state().cursor)).rect();
    let r6 = h.get_by_label(&row_text(&row(6), h.state().cursor)).rect();
    assert!(
        r5.top() >= r4.bottom() && (r6.top() - r5.top() - (r5.top() - r4.top())).abs() < 0.5,
        "{r4:?} {r5:?} {r6:?}"
    );
    let header = h.get_by_label(ackscope::ui::packets_ui::HEADER).rect();
    assert!((header.left() - r4.left()).abs() < 0.5, "header {header:?} row {r4:?}");
    // The header is measured for the row height the virtualisation assumes: rows must be as tall.
    assert!((header.height() - r4.height()).abs() < 0.01, "header {header:?} row {r4:?}");
    h.get_by_label(&label).click();
    h.run();
    // The click also selects the packet for the marks (Ctrl+M marks it; the status bar gives its
    // distance from the mark).
    let point = ackscope::model::marks::Mark::packet(0, target.uid, target.dir, target.seq, target.time);
    let select = UiCommand::Marks(ackscope::app::MarkCommand::Select(point));
    assert_eq!(h.state().cmds, vec![UiCommand::SeekTo(target.time), select]);
    assert_eq!(h.state().view.selected, Some(4));
}

#[test]
fn the_fate_and_text_filters_reduce_the_rows() {
    let p = packet_panel(lossy_packets_scenario(Strategy::Glenn), 10.0);
    let mut h = packet_harness(p);
    h.run();
    let all = h.state().view.filtered.count_at(&h.state().index, h.state().cursor);
    assert_eq!(all, h.state().index.len());
    // The log sticks to the newest row, entirely on screen.
    let s = h.state();
    let last = h.get_by_label(&row_text(&s.index.row(s.index.len() - 1, &s.ledger).unwrap(), s.cursor)).rect();
    assert!(last.bottom() <= 800.0 && last.top() > 100.0, "{last:?}");
    h.get_by_role_and_label(Role::ComboBox, "fate").click();
    h.run();
    h.get_by_label("dropped").click();
    h.run();
    let s = h.state();
    assert_eq!(s.view.filter.fate, FateFilter::Dropped);
    let dropped = s.view.filtered.count_at(&s.index, s.cursor);
    assert!(dropped > 0 && dropped < all / 4, "{dropped} of {all}");
    let row = |k: usize| s.index.row(s.view.filtered.get(k).unwrap() as usize, &s.ledger).unwrap();
    assert!((0..dropped).all(|k| row(k).dropped.is_some()));
    // The log sticks to the newest rows: the last dropped packet is on screen.
    let dropped_row = &row(dropped - 1);
    assert!(h.query_by_label(&row_text(dropped_row, s.cursor)).is_some());
    // Narrow further by contents.
    h.get_by_role(Role::TextInput).click();
    h.run();
    h.get_by_role(Role::TextInput).type_text("resend");
    h.run();
    let s = h.state();
    assert_eq!(s.view.filter.text, "resend");
    let n = s.view.filtered.count_at(&s.index, s.cursor);
    assert!(n < dropped, "{n} of {dropped}");
    assert!((0..n).all(|k| s.index.rows()[s.view.filtered.get(k).unwrap() as usize].contents.resends > 0));
}

struct SlicePanel {
    index: ChunkIndex,
    view: SlicesView,
    cursor: SimTime,
    cmds: Vec<UiCommand>,
}

fn slice_harness(state: SlicePanel) -> Harness<'static, SlicePanel> {
    Harness::builder()
        .with_size(egui::vec2(1200.0, 800.0))
        .build_ui_state(|ui, s: &mut SlicePanel| slices_ui(&s.index, &mut s.view, s.cursor, ui, &mut s.cmds), state)
}

#[test]
fn the_chunk_selector_and_slice_hover_work_headless() {
    let events = run(chunk_scenario(Strategy::Chunks, 10.0), 12.0);
    let mut index = ChunkIndex::new();
    index.ingest_all(&events);
    assert!(index.len() >= 3);
    let cursor = index.chunks()[2].started_at.plus_micros(500_000);
    let labels: Vec<String> = (0..3).map(|i| chunk_label(i, &index.chunks()[i])).collect();
    let mut h = slice_harness(SlicePanel { index, view: SlicesView::default(), cursor, cmds: Vec::new() });
    h.run();
    assert_eq!(h.state().view.shown(&h.state().index, cursor), Some(2), "follows the newest chunk");
    h.get_by_role_and_label(Role::ComboBox, "chunk").click();
    h.run();
    h.get_by_label(&labels[1]).click();
    h.run();
    assert_eq!(h.state().view.selected, Some(1));
    h.get_by_label("previous").click();
    h.run();
    assert_eq!(h.state().view.selected, Some(0));
    // Chunk 0 was done by then: the summary says when.
    assert!(h.query_by_label_contains("completed at").is_some());
    // Hovering the first square shows its sends.
    let grid = h.get_by_label("slice grid").rect();
    h.hover_at(grid.min + egui::vec2(4.0, 4.0));
    h.run();
    let s = h.state();
    let want = slice_tooltip(&s.index.chunks()[0].slices[0], 0, cursor);
    assert!(want.starts_with("slice 0: sent "), "{want}");
    assert!(h.query_by_label(&want).is_some(), "tooltip {want:?} not shown");
    // Clicking it moves the cursor to its ack.
    let pos = grid.min + egui::vec2(4.0, 4.0);
    for pressed in [true, false] {
        let button = egui::PointerButton::Primary;
        h.event(egui::Event::PointerButton { pos, button, pressed, modifiers: egui::Modifiers::NONE });
    }
    h.run();
    let acked = h.state().index.chunks()[0].slices[0].acked_at.unwrap();
    assert!(h.state().cmds.contains(&UiCommand::SeekTo(acked)), "{:?}", h.state().cmds);
}

#[test]
fn the_slice_map_renders_an_empty_index_and_a_cursor_before_any_chunk() {
    let mut h = slice_harness(SlicePanel {
        index: ChunkIndex::new(),
        view: SlicesView::default(),
        cursor: SimTime::ZERO,
        cmds: Vec::new(),
    });
    h.run();
    assert!(h.query_by_label_contains("No chunks yet").is_some());
    let events = run(Scenario { tick_phase: TickPhase::Lockstep, ..chunk_scenario(Strategy::Chunks, 10.0) }, 3.0);
    h.state_mut().index.ingest_all(&events);
    h.state_mut().cursor = SimTime::ZERO;
    h.run();
    // The first chunk starts on the first tick, at time zero.
    assert!(h.query_by_label_contains("0/64 acked").is_some());
}

/// Prints the cost of packet-log frames with about a million events ingested (not a timed
/// assertion: the machine is shared). Run with `--nocapture` to see the figures.
#[test]
fn packet_log_frame_cost_with_a_million_events() {
    let mut s = Scenario { seed: SEED, send_rate_pps: 500.0, ..Scenario::default() };
    s.link.a_to_b.loss_percent = 5.0;
    s.link.b_to_a.loss_percent = 5.0;
    let mut sim = Simulation::new(s);
    let (mut ledger, mut index) = (PacketLedger::new(), PacketIndex::new());
    let (mut n, mut ingest_s) = (0usize, 0.0);
    while n < 1_000_000 {
        sim.run_for_secs(5.0);
        let batch: Vec<Event> = sim.drain_events().collect();
        n += batch.len();
        let t0 = Instant::now();
        feed(&mut ledger, &mut index, &batch);
        ingest_s += t0.elapsed().as_secs_f64();
    }
    let rows = index.len();
    let cursor = index.end_time();
    // Building the harness runs the first frame, which builds the row list.
    let t0 = Instant::now();
    let mut h = packet_harness(PacketPanel { ledger, index, view: first_client_view(), cursor, cmds: Vec::new() });
    let first = t0.elapsed();
    let frames = 30;
    let t0 = Instant::now();
    for _ in 0..frames {
        h.step();
    }
    let steady = t0.elapsed() / frames;
    h.state_mut().view.filter.text = "resend".into();
    let t0 = Instant::now();
    h.step();
    let refilter = t0.elapsed();
    let t0 = Instant::now();
    for _ in 0..frames {
        h.state_mut().cursor = SimTime(h.state().cursor.0.saturating_sub(1_000_000));
        h.step();
    }
    let scrub = t0.elapsed() / frames;
    println!(
        "packet log, {n} events ({rows} packet rows): ingest (ledger and index) {:.1} ns/event; harness build + \
         first frame {first:?} (builds the row list); steady frame {steady:?}; text-filter change frame \
         {refilter:?}; scrubbing frame {scrub:?}; {} bytes per row in the index (the facts are the ledger's)",
        ingest_s * 1e9 / n as f64,
        std::mem::size_of::<ackscope::model::index::PacketSend>()
    );
    assert!(!h.state().view.filtered.is_empty());
}

/// Prints the cost of slice-map frames for a 4096-slice chunk in flight (not a timed assertion).
#[test]
fn slice_map_frame_cost_with_a_4096_slice_chunk() {
    let mut s = chunk_scenario(Strategy::Chunks, 10.0);
    s.workload.chunk_kib = 4096;
    s.chunk.max_slices = 4096;
    s.chunk.bandwidth_kbps = 20_000.0;
    let events = run(s, 2.0);
    let mut index = ChunkIndex::new();
    index.ingest_all(&events);
    let c = &index.chunks()[0];
    assert_eq!(c.num_slices(), 4096);
    let cursor = index.chunks()[0].started_at.plus_micros(1_500_000);
    let k = c.counts_at(cursor);
    assert!(k.acked > 0 && k.not_sent + k.in_flight + k.received > 0, "{k:?}");
    let mut h = slice_harness(SlicePanel { index, view: SlicesView::default(), cursor, cmds: Vec::new() });
    let frames = 30;
    let t0 = Instant::now();
    for _ in 0..frames {
        h.step();
    }
    println!("slice map, 4096 slices, {} events: frame {:?}", events.len(), t0.elapsed() / frames);
}

/// The log's view as the Packets tab sets it each frame for a one-client lane (`tabs.rs`): the
/// client whose packets it shows is the first (a mark names it).
fn first_client_view() -> PacketsView {
    PacketsView { client: ackscope_protocol::FIRST_CLIENT, ..PacketsView::default() }
}
