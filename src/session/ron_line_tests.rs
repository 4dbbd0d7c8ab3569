//! The fast event-line writer against `ron` itself: every shipped session byte for byte, events
//! of every strategy with a client beside the first, and generated values at the edges of the
//! number and string formats.

use std::path::Path;

use ackscope_protocol::{Event, EventKind, Scenario, Side, SimTime, StatsSample, Strategy as Protocol};
use proptest::prelude::*;

use super::write;
use crate::session;
use crate::session::codec::Line;

fn line_by_ron(dt: i64, e: &Event) -> String {
    ron::ser::to_string(&Line::of(dt, e)).unwrap()
}

/// The line as the session writer writes it: by hand for the common kinds, else through
/// [`write`]. Both paths are checked against `ron` (the serde path on every kind).
fn line_fast(dt: i64, e: &Event) -> String {
    let mut serde_path = String::new();
    write(&mut serde_path, &Line::of(dt, e)).unwrap();
    let mut by_hand = String::new();
    if crate::session::event_line::write(&mut by_hand, dt, e) {
        assert_eq!(by_hand, serde_path, "the hand-written line differs from the serde path");
    }
    serde_path
}

/// The kinds `event_line` writes by hand (a test fails if one is not exercised).
const BY_HAND: [&str; 17] = [
    "LinkSent",
    "LinkDropped",
    "LinkDelivered",
    "PacketSent",
    "PacketReceived",
    "PacketAcked",
    "PacketNakked",
    "RttSample",
    "Stats",
    "Budget",
    "MessageQueued",
    "MessageSent",
    "MessageAcked",
    "MessageDelivered",
    "SliceSent",
    "SliceAcked",
    "SliceReceived",
];

fn kind_name(e: &Event) -> String {
    format!("{:?}", e.kind).split(['(', ' ', '{']).next().unwrap().to_string()
}

#[test]
fn every_shipped_session_is_written_byte_for_byte_as_ron_writes_it() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
    let mut events = 0;
    let mut hand_kinds = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let s = session::load(&path).unwrap();
        for (i, e) in s.events.iter().enumerate() {
            let by_hand = {
                let mut out = String::new();
                crate::session::event_line::write(&mut out, 0, e).then_some(out)
            };
            if let Some(line) = by_hand {
                assert_eq!(line, line_by_ron(0, e), "{}: event {i}", path.display());
                hand_kinds.insert(kind_name(e));
            }
        }
        let fast = session::to_text(&s).unwrap();
        let ronly = session::save::to_text_by_ron(&s).unwrap();
        assert!(fast == ronly, "{}: the fast writer differs from ron", path.display());
        events += s.events.len() + s.ab_events.len();
    }
    assert!(events > 50_000, "only {events} events in the shipped sessions");
    let missing: Vec<_> = BY_HAND.iter().filter(|k| !hand_kinds.contains(**k)).collect();
    assert!(missing.is_empty(), "kinds written by hand but in no shipped session: {missing:?}");
}

#[test]
fn events_of_every_strategy_and_of_other_clients_are_written_as_ron_writes_them() {
    let mut kinds = std::collections::BTreeSet::new();
    for strategy in Protocol::all() {
        let scenario = Scenario { strategy, ..Scenario::default() };
        let (_, events, _) = session::run_lane(&scenario, &[], SimTime::from_secs_f64(3.0)).unwrap();
        assert!(!events.is_empty());
        for (i, e) in events.iter().enumerate() {
            let mut e = e.clone();
            if i % 3 == 0 {
                e.client = i as u32;
            }
            let dt = (i as i64 * 7919) % 100_000 - 50;
            assert_eq!(line_fast(dt, &e), line_by_ron(dt, &e), "{strategy:?} event {i}");
            kinds.insert(kind_name(&e));
        }
    }
    assert!(kinds.len() >= 16, "only {} kinds of event exercised: {kinds:?}", kinds.len());
}

fn stats_of(v: [f32; 9]) -> StatsSample {
    StatsSample {
        rtt_ms: v[0],
        rtt_display_ms: v[1],
        rtt_min_ms: v[2],
        rtt_max_ms: v[3],
        jitter_ms: v[4],
        loss_percent: v[5],
        // Both forms (the field is written only when true), from one of the generated floats.
        no_loss_verdict: v[5].is_sign_negative(),
        sent_kbps: v[6],
        received_kbps: v[7],
        acked_kbps: v[8],
    }
}

/// Floats from every part of the format: whole, tiny, huge, negative zero, infinities, NaNs.
fn any_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<f32>(),
        (-1e6f32..1e6).prop_map(|v| v.round()),
        (-1e17f32..1e17).prop_map(|v| v.round()),
        Just(0.0),
        Just(-0.0),
        Just(f32::INFINITY),
        Just(f32::NEG_INFINITY),
        Just(f32::NAN),
        Just(-f32::NAN),
        Just(1e15),
        Just(1e16),
        Just(999_999_900_000_000.0),
        Just(1e-7),
        Just(16_777_215.0),
        Just(16_777_216.0),
        Just(16_777_218.0),
        Just(0.1),
    ]
}

proptest! {
    #[test]
    fn generated_numbers_and_strings_are_written_as_ron_writes_them(
        dt in any::<i64>(),
        client in any::<u32>(),
        floats in proptest::array::uniform9(any_f32()),
        rtt in any_f32(),
        name in any::<String>(),
        value in "\\PC*|[\"'\\\\\t\n\r\u{0}\u{7f}\u{200b}é]*",
    ) {
        let events = [
            EventKind::Stats { side: Side::A, stats: stats_of(floats) },
            EventKind::RttSample { side: Side::B, rtt_ms: rtt },
            EventKind::ParamChanged { name, value },
        ];
        for kind in events {
            let e = Event::for_client(SimTime(0), client, kind);
            prop_assert_eq!(line_fast(dt, &e), line_by_ron(dt, &e));
        }
    }
}
