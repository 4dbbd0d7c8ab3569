//! Go-to across lanes and clients (issue 25): in an A/B recording, or with several clients, one
//! packet sequence or message id exists in each lane and client. The go-to box (Ctrl+G) says
//! which lane and client it went to, lists the others to pick from, and takes `b seq 40` or
//! `client 2 seq 30` to go to one of them directly.

use crate::common::{lossy_recording, replay_window, Window};
use ackscope::app::Tab;
use ackscope::model::marks::MarkTarget;
use ackscope::model::Recording;
use ackscope_protocol::{Scenario, Side, Simulation, Strategy};
use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;

const SEED: u64 = 2526;

/// Types `text` into the go-to box (reached with Ctrl+G) and presses Enter.
fn go_to(h: &mut Window, text: &str) {
    h.key_press_modifiers(Modifiers::COMMAND, Key::G);
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.run_steps(1);
    h.get_by_role_and_label(Role::TextInput, "Go to").type_text(text);
    h.run_steps(1);
    h.key_press(Key::Enter);
    h.run_steps(6);
}

/// The selection's lane and link uid, when a packet is selected.
fn selected_packet(h: &Window) -> Option<(usize, u64)> {
    match h.state().0.selection()?.target {
        MarkTarget::Packet { lane, uid, .. } => Some((lane, uid)),
        _ => None,
    }
}

/// Uid of the first packet with sequence `seq` in `rec`'s client `client`.
fn uid_of(rec: &Recording, client: u32, seq: u32) -> u64 {
    let c = rec.client(client).expect("client has events");
    (0..c.packets.len()).filter_map(|i| c.packets.row(i, &c.ledger)).find(|r| r.seq == seq).expect("seq sent").uid
}

#[test]
fn in_an_ab_recording_go_to_says_which_lane_it_went_to_and_offers_the_other() {
    let a = lossy_recording(SEED, Strategy::Glenn, 10.0, 4.0);
    let b = lossy_recording(SEED, Strategy::Ue4, 10.0, 4.0);
    let (ua, ub) = (uid_of(&a, 1, 40), uid_of(&b, 1, 40));
    let mut h = replay_window(vec![a, b], Tab::Packets);

    go_to(&mut h, "seq 40");
    assert_eq!(selected_packet(&h), Some((0, ua)), "unqualified: the first lane that has it");
    h.get_by_label_contains("went to lane A (glenn)");
    h.get_by_label("also in 1 more").click();
    h.run_steps(3);
    h.get_by_label("lane B (ue4)").click();
    h.run_steps(6);
    assert_eq!(selected_packet(&h), Some((1, ub)), "picking lane B from the list goes there");
    assert!(h.state().1.panels.selected_packet(1).is_some(), "lane B's row is selected in its log");
    h.get_by_label_contains("went to lane B (ue4)");

    // Named directly: `b seq 40`, `lane 2 seq 40`, and back with `a 40`.
    go_to(&mut h, "a 40");
    assert_eq!(selected_packet(&h), Some((0, ua)));
    go_to(&mut h, "b seq 40");
    assert_eq!(selected_packet(&h), Some((1, ub)));
    go_to(&mut h, "lane 2 seq 40");
    assert_eq!(selected_packet(&h), Some((1, ub)));
    assert!(h.query_by_label("also in 1 more").is_none(), "a named lane lists no others");

    // A message id names its lane the same way.
    go_to(&mut h, "b msg 12");
    assert!(matches!(
        h.state().0.selection().map(|m| m.target),
        Some(MarkTarget::Message { lane: 1, side: Side::A, id: 12 })
    ));
    // A lane that is not shown says so and moves nothing.
    let before = h.state().0.cursor();
    go_to(&mut h, "c seq 40");
    h.get_by_label_contains("no lane C");
    assert_eq!(h.state().0.cursor(), before);
}

/// One lane with two clients: two seeded glenn runs, the second's events named client 2.
fn two_clients() -> Recording {
    let s = Scenario { seed: SEED, strategy: Strategy::Glenn, ..Scenario::default() };
    let mut events = Vec::new();
    for (client, seed) in [(1, SEED), (2, SEED + 1)] {
        let mut sim = Simulation::new(Scenario { seed, ..s.clone() });
        sim.run_for_secs(3.0);
        events.extend(sim.drain_events().map(|mut e| {
            e.client = client;
            e
        }));
    }
    events.sort_by_key(|e| e.time);
    let mut rec = Recording::new(s);
    rec.ingest(events);
    rec
}

#[test]
fn with_several_clients_go_to_names_the_client_and_focuses_the_one_asked_for() {
    let rec = two_clients();
    let (u1, u2) = (uid_of(&rec, 1, 30), uid_of(&rec, 2, 30));
    let mut h = replay_window(vec![rec], Tab::Packets);
    assert_eq!(h.state().0.focus, 1);

    go_to(&mut h, "client 2 seq 30");
    assert_eq!(h.state().0.focus, 2, "the window focuses the client gone to");
    assert_eq!(selected_packet(&h), Some((0, u2)));
    h.get_by_label_contains("went to client 2");

    // Unqualified: the focused client first, the other offered.
    go_to(&mut h, "seq 30");
    assert_eq!(h.state().0.focus, 2);
    assert_eq!(selected_packet(&h), Some((0, u2)));
    h.get_by_label("also in 1 more").click();
    h.run_steps(3);
    h.get_by_label("client 1").click();
    h.run_steps(6);
    assert_eq!(h.state().0.focus, 1);
    assert_eq!(selected_packet(&h), Some((0, u1)));

    go_to(&mut h, "client 9 seq 30");
    h.get_by_label_contains("no client 9");
    assert_eq!(h.state().0.focus, 1);
}
