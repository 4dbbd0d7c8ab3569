//! The anomaly list: its index checked against seeded simulations' ground truth (the ledger's
//! drops, the Compare tab's spurious resends and head-of-line waits), its filtered view, and the
//! list, the prev / next buttons and the strip under the scrubber driven headless with egui_kittest.

use crate::common::{click_at, window_harness};

use ackscope::app::{AppState, Tab};
use ackscope::model::anomaly::{AnomalyClass, AnomalyKind, Target, CLASSES};
use ackscope::model::anomaly_filter::{AnomalyFilter, FilteredAnomalies};
use ackscope::model::compare::LaneFigures;
use ackscope::model::Recording;
use ackscope::ui::WindowView;
use ackscope_protocol::{Dir, DropReason, EventKind, Scenario, SimTime, Simulation, Strategy};
use egui_kittest::kittest::{NodeT, Queryable};
use egui_kittest::Harness;

const SEED: u64 = 11;

/// A recording of `scenario` run for `secs`, fed in uneven batches as a live run is.
fn record(scenario: Scenario, secs: f64) -> Recording {
    let mut sim = Simulation::new(scenario.clone());
    sim.run_for_secs(secs);
    let events: Vec<_> = sim.drain_events().collect();
    let mut rec = Recording::new(scenario);
    for batch in events.chunks(997) {
        rec.ingest(batch.to_vec());
    }
    rec
}

fn lossy(strategy: Strategy, loss_percent: f64) -> Scenario {
    let mut s = Scenario { seed: SEED, strategy, ..Scenario::default() };
    for d in Dir::BOTH {
        s.link.get_mut(d).loss_percent = loss_percent;
    }
    s
}

/// A link that drops for every reason: random and burst loss both ways, a narrow queue A->B,
/// a small MTU B->A.
fn every_drop_reason() -> Scenario {
    let mut s = lossy(Strategy::Glenn, 8.0);
    for d in Dir::BOTH {
        let l = s.link.get_mut(d);
        l.burst.p_percent = 1.0;
        l.burst.r_percent = 10.0;
        l.burst.loss_in_bad_percent = 80.0;
    }
    s.link.a_to_b.bandwidth_kbps = 30.0;
    s.link.a_to_b.queue_bytes = 600;
    s.link.b_to_a.mtu_bytes = 90;
    s
}

fn class_count(rec: &Recording, class: AnomalyClass) -> usize {
    rec.anomalies.list().iter().filter(|a| a.kind.class() == class).count()
}

#[test]
fn drops_match_the_ledger_per_reason_and_name_their_packet() {
    let rec = record(every_drop_reason(), 20.0);
    let reasons = [
        (DropReason::Random, AnomalyClass::DropLoss),
        (DropReason::Burst, AnomalyClass::DropBurst),
        (DropReason::QueueFull, AnomalyClass::DropQueue),
        (DropReason::Mtu, AnomalyClass::DropMtu),
    ];
    for (reason, class) in reasons {
        let truth = rec.ledger.packets().filter(|p| p.dropped == Some(reason)).count();
        assert!(truth > 5, "seed {SEED}: only {truth} {reason:?} drops; the scenario should make them");
        assert_eq!(class_count(&rec, class), truth, "seed {SEED}: {reason:?}");
    }
    for a in rec.anomalies.list() {
        if let AnomalyKind::Drop { reason, seq } = a.kind {
            let Target::Packet(uid) = a.target else { panic!("a drop without its packet: {a:?}") };
            let p = rec.ledger.packet(uid).unwrap();
            assert_eq!((p.dropped, p.dir.map(|d| d.sender()), p.seq), (Some(reason), Some(a.side), seq), "uid {uid}");
            assert_eq!(p.sent_at, Some(a.time), "uid {uid}: a drop is listed at its send");
        }
    }
    // Time order, so the list and the strip can binary search.
    assert!(rec.anomalies.list().windows(2).all(|w| w[0].time <= w[1].time));
}

#[test]
fn every_nak_is_listed_with_the_send_it_names() {
    let rec = record(lossy(Strategy::Ue4, 10.0), 20.0);
    let naks = rec.store.events().iter().filter(|e| matches!(e.kind, EventKind::PacketNakked { .. })).count();
    assert!(naks > 10, "seed {SEED}: {naks} naks");
    assert_eq!(class_count(&rec, AnomalyClass::Nak), naks);
    for a in rec.anomalies.list().iter().filter(|a| a.kind.class() == AnomalyClass::Nak) {
        let Target::Packet(uid) = a.target else { panic!("a nak without its packet: {a:?}") };
        let p = rec.ledger.packet(uid).unwrap();
        assert!(
            p.nakked_at.is_some_and(|t| t <= a.time),
            "uid {uid} nakked at {:?}, listed at {:?}",
            p.nakked_at,
            a.time
        );
    }
}

#[test]
fn spurious_resends_and_stalls_agree_with_the_compare_figures() {
    for strategy in [Strategy::Glenn, Strategy::Ue4] {
        let rec = record(lossy(strategy, 15.0), 30.0);
        let end = rec.store.end_time();
        let figures = LaneFigures::compute((&rec).into(), end);
        let spurious = class_count(&rec, AnomalyClass::Spurious) as u64;
        assert_eq!(spurious, figures.totals.spurious, "{strategy:?} seed {SEED}");
        let stalls: Vec<(SimTime, u32, u64)> = rec
            .anomalies
            .list()
            .iter()
            .filter_map(|a| match a.kind {
                AnomalyKind::Stall { messages, wait_us } => Some((a.time, messages, wait_us)),
                _ => None,
            })
            .collect();
        assert!(!stalls.is_empty(), "{strategy:?}: no head-of-line stall at 15 % loss");
        let longest_ms = stalls.iter().map(|s| s.2).max().unwrap() as f64 / 1000.0;
        assert!((longest_ms - figures.totals.hol_max_ms).abs() < 0.01, "{strategy:?}: {longest_ms} vs {figures:?}");
        // One entry per instant and receiver: the messages released together.
        let mut keys: Vec<_> = rec
            .anomalies
            .list()
            .iter()
            .filter(|a| a.kind.class() == AnomalyClass::Stall)
            .map(|a| (a.time, a.side))
            .collect();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n, "{strategy:?}: one stall entry per instant and side");
    }
    assert_eq!(class_count(&record(lossy(Strategy::Glenn, 0.0), 10.0), AnomalyClass::DropLoss), 0);
}

#[test]
fn a_live_run_extends_the_list_as_a_whole_log_would_build_it() {
    let s = lossy(Strategy::Ue4, 15.0);
    let mut sim = Simulation::new(s.clone());
    sim.run_for_secs(15.0);
    let events: Vec<_> = sim.drain_events().collect();
    let mut whole = Recording::new(s.clone());
    whole.ingest(events.clone());
    // A live run: small batches, a filtered view updated between them as a frame would.
    let mut live = Recording::new(s);
    let mut f = FilteredAnomalies::default();
    let filter = AnomalyFilter { stall_min_ms: 10.0, ..AnomalyFilter::default() };
    for batch in events.chunks(61) {
        live.ingest(batch.to_vec());
        f.update(&live.anomalies, &filter);
    }
    assert_eq!(live.anomalies.list(), whole.anomalies.list(), "seed {SEED}");
    assert_eq!(f.len(), whole.anomalies.len());
    assert_eq!(f.rebuilds, 1, "the cache was extended, never rebuilt");
}

#[test]
fn the_filtered_view_follows_its_filter_and_finds_neighbours() {
    let rec = record(lossy(Strategy::Glenn, 15.0), 20.0);
    let all = rec.anomalies.len();
    let mut f = FilteredAnomalies::default();
    let mut filter = AnomalyFilter { stall_min_ms: 10.0, ..AnomalyFilter::default() };
    f.update(&rec.anomalies, &filter);
    assert_eq!(f.len(), all, "the widest filter shows everything");
    let drops = class_count(&rec, AnomalyClass::DropLoss);
    filter.classes[AnomalyClass::DropLoss.index()] = false;
    f.update(&rec.anomalies, &filter);
    assert_eq!(f.len(), all - drops);
    filter.solo(AnomalyClass::Stall);
    f.update(&rec.anomalies, &filter);
    let stalls_10 = f.len();
    filter.stall_min_ms = 100.0;
    f.update(&rec.anomalies, &filter);
    assert!(f.len() < stalls_10 && !f.is_empty(), "{} of {stalls_10} stalls of 100 ms or more", f.len());
    let rebuilds = f.rebuilds;
    f.update(&rec.anomalies, &filter);
    assert_eq!(f.rebuilds, rebuilds, "an unchanged filter keeps its cache");
    // Neighbours of an instant.
    let mid = SimTime(rec.store.end_time().0 / 2);
    let (prev, next) = (f.prev_before(mid).unwrap(), f.next_after(mid).unwrap());
    assert!(f.time(prev).unwrap() < mid && f.time(next).unwrap() > mid);
    assert_eq!(next, prev + 1 + (f.time(prev + 1) == Some(mid)) as usize);
    // Column counts add up to the matches, and a column holds what falls in it.
    let mut cols = Vec::new();
    f.column_counts(SimTime::ZERO, rec.store.end_time().plus_micros(1), 300, &mut cols);
    let total: u32 = cols.iter().map(|c| c.iter().sum::<u32>()).sum();
    assert_eq!(total as usize, f.len());
    assert_eq!(cols.iter().map(|c| c[AnomalyClass::Stall.index()]).sum::<u32>() as usize, f.len());
    assert!(cols.iter().all(|c| (0..CLASSES).all(|k| k == AnomalyClass::Stall.index() || c[k] == 0)));
}

/// The window around a recording of Glenn at 15 % loss, with the view state reachable.
fn window() -> Harness<'static, (AppState, WindowView)> {
    let run = ackscope::report::run(&lossy(Strategy::Glenn, 15.0), 20.0);
    let mut state = AppState::new(Scenario::default(), || {});
    state.show_session(run.session, None);
    state.settings.tab = Tab::Anomalies;
    let mut h = window_harness(state);
    h.run_steps(2);
    h
}

/// The matches of the window's anomaly filter in lane 0.
fn shown(h: &mut Harness<'static, (AppState, WindowView)>) -> usize {
    let (state, view) = h.state_mut();
    view.panels.anomalies.update(&state.focused_lanes())[0].1.filtered.len()
}

#[test]
fn toggling_a_kind_in_the_list_hides_it_everywhere() {
    let mut h = window();
    let before = shown(&mut h);
    let spurious = class_count(&h.state().0.lanes[0], AnomalyClass::Spurious);
    assert!(spurious > 0 && before > spurious);
    h.get_by_label(&format!("spurious {spurious}")).click();
    h.run_steps(2);
    assert!(!h.state().1.panels.anomalies.filter.shows(AnomalyClass::Spurious));
    assert_eq!(shown(&mut h), before - spurious, "hiding spurious resends takes them out of the list");
    assert!(h.query_by_label(&format!("spurious {spurious}")).is_some(), "the toggle still counts them");
    h.get_by_label("All kinds").click();
    h.run_steps(2);
    assert_eq!(shown(&mut h), before);
}

#[test]
fn prev_and_next_move_the_cursor_to_the_neighbouring_anomalies() {
    let mut h = window();
    let mid = SimTime(h.state().0.end_time().0 / 2);
    h.state_mut().0.playback.seek(mid);
    h.run_steps(2);
    let list: Vec<_> = h.state().0.lanes[0].anomalies.list().to_vec();
    let filter = h.state().1.panels.anomalies.filter;
    let times: Vec<SimTime> = list.iter().filter(|a| filter.matches(a)).map(|a| a.time).collect();
    let next = *times.iter().find(|&&t| t > mid).unwrap();
    h.get_by_label("Next >").click();
    h.run_steps(2);
    assert_eq!(h.state().0.cursor(), next, "next goes to the first anomaly after {mid:?}");
    h.get_by_label("Next >").click();
    h.run_steps(2);
    let after = *times.iter().find(|&&t| t > next).unwrap();
    assert_eq!(h.state().0.cursor(), after);
    h.get_by_label("< Prev").click();
    h.run_steps(2);
    assert_eq!(h.state().0.cursor(), next, "prev comes back");
    let prev = *times.iter().rev().find(|&&t| t < next).unwrap();
    h.get_by_label("< Prev").click();
    h.run_steps(2);
    assert_eq!(h.state().0.cursor(), prev);
    // The anomaly landed on is selected where its tab can show it.
    let (lane, row) = h.state().1.panels.anomalies.selected.expect("selected");
    let a = list[row as usize];
    assert_eq!((lane, a.time), (0, prev));
    match a.target {
        Target::Packet(uid) => {
            let i = h.state().1.panels.selected_packet(0).expect("the packet log selects it") as usize;
            assert_eq!(h.state().0.lanes[0].packets.rows()[i].uid, uid);
        }
        Target::Message(key) => assert_eq!(h.state().1.panels.selected_message(0), Some(key)),
        Target::Nothing => {}
    }
}

#[test]
fn clicking_the_strip_jumps_to_the_nearest_anomaly_and_selects_its_packet() {
    let mut h = window();
    // Only drops, so the target is a packet.
    h.state_mut().1.panels.anomalies.filter.solo(AnomalyClass::DropLoss);
    h.state_mut().0.playback.seek(SimTime::ZERO);
    h.run_steps(2);
    let (rect, rail) = h.state().1.panels.anomalies.last_strip.expect("the strip was drawn");
    let end = h.state().0.end_time();
    let x = rail.min + rail.span() * 0.7;
    click_at(&h, egui::pos2(x, rect.center().y));
    h.run_steps(2);
    let t = SimTime((((x - rail.min) / rail.span()) as f64 * end.0 as f64) as u64);
    let filter = h.state().1.panels.anomalies.filter;
    let nearest = h.state().0.lanes[0]
        .anomalies
        .list()
        .iter()
        .filter(|a| filter.matches(a))
        .min_by_key(|a| a.time.0.abs_diff(t.0))
        .unwrap()
        .time;
    let cursor = h.state().0.cursor();
    assert_eq!(cursor, nearest, "the click at {t:?} lands on the nearest drop");
    assert!(cursor.0.abs_diff(t.0) < end.0 / 50, "{cursor:?} is near {t:?}");
    let i = h.state().1.panels.selected_packet(0).expect("the packet log selects the drop") as usize;
    let uid = h.state().0.lanes[0].packets.rows()[i].uid;
    assert_eq!(h.state().0.lanes[0].ledger.packet(uid).unwrap().dropped, Some(DropReason::Random));
    // Drawing again with nothing changed reuses the strip's counts.
    let computed = |h: &mut Harness<'static, (AppState, WindowView)>| {
        let (state, view) = h.state_mut();
        view.panels.anomalies.update(&state.focused_lanes())[0].1.strip.computed
    };
    let before = computed(&mut h);
    h.run_steps(3);
    assert_eq!(computed(&mut h), before, "the strip's counts are kept while nothing changes");
}

/// The label of the middle one of the list's rows on screen whose text has `kind` and `word`
/// (rows at the edges may be clipped by the scroll area, out of the pointer's reach).
fn middle_row(h: &Harness<'static, (AppState, WindowView)>, kind: &str, word: &str) -> Option<String> {
    let labels: Vec<String> = h
        .get_all_by_label_contains(kind)
        .filter_map(|n| n.accesskit_node().label().filter(|l| l.contains(word)))
        .collect();
    labels.get(labels.len() / 2).cloned()
}

#[test]
fn clicking_a_row_jumps_there_and_selects_what_its_tab_then_shows() {
    let mut h = window();
    let third = SimTime(h.state().0.end_time().0 / 3);
    h.state_mut().0.playback.seek(third);
    h.run_steps(2);
    // The list scrolled to the cursor: a drop row near it is on screen.
    let label = middle_row(&h, "drop: loss", "seq");
    let label = label.expect("a drop row is shown");
    let t: f64 = label.split_whitespace().next().unwrap().parse().unwrap();
    h.get_by_label(&label).click();
    h.run_steps(2);
    let cursor = h.state().0.cursor();
    assert!((cursor.as_secs_f64() - t).abs() < 0.001, "{cursor:?} is the row's {t} s");
    assert!(cursor.0.abs_diff(third.0) < 5_000_000, "the row was near the cursor");
    let (_, row) = h.state().1.panels.anomalies.selected.expect("the row is selected");
    let Target::Packet(uid) = h.state().0.lanes[0].anomalies.list()[row as usize].target else {
        panic!("a drop names its packet")
    };
    let i = h.state().1.panels.selected_packet(0).expect("selected in the packet log") as usize;
    assert_eq!(h.state().0.lanes[0].packets.rows()[i].uid, uid);
    assert_eq!(h.state().0.settings.tab, Tab::Anomalies, "a single click stays in the list");
    h.get_by_label("Show its packet").click();
    h.run_steps(2);
    assert_eq!(h.state().0.settings.tab, Tab::Packets, "the button opens the Packets tab");
    h.state_mut().0.settings.tab = Tab::Anomalies;
    h.run_steps(2);
    // A spurious resend selects its message, which the button opens in the Messages tab.
    let label = middle_row(&h, "spurious ", "msg");
    let label = label.expect("a spurious resend row is shown");
    h.get_by_label(&label).click();
    h.run_steps(2);
    h.get_by_label("Show its message").click();
    h.run_steps(2);
    assert_eq!(h.state().0.settings.tab, Tab::Messages);
    let (_, row) = h.state().1.panels.anomalies.selected.unwrap();
    let Target::Message(key) = h.state().0.lanes[0].anomalies.list()[row as usize].target else {
        panic!("a resend names its message")
    };
    assert_eq!(h.state().1.panels.selected_message(0), Some(key));
}
