//! The display filter language: a table of valid and invalid expressions (the invalid ones with
//! the column their error points at and what it says), completion at a cursor, and random
//! strings never panicking the parser, the compiler or completion.

use ackscope::filter::{complete, CandidateKind, Compiled, PacketFacts, RowKind};
use ackscope::model::anomaly::Anomaly;
use ackscope::model::index::MessageRecord;
use proptest::prelude::*;

/// Compiles `text` for the kind named by `kind`; the error's display on failure.
fn compile(kind: RowKind, text: &str) -> Result<(), String> {
    let r = match kind {
        RowKind::Packet => Compiled::<PacketFacts>::new(text).map(drop),
        RowKind::Message => Compiled::<MessageRecord>::new(text).map(drop),
        RowKind::Anomaly => Compiled::<Anomaly>::new(text).map(drop),
    };
    r.map_err(|e| e.to_string())
}

/// The column (from 1) an error points at, and its text.
fn error_of(kind: RowKind, text: &str) -> (usize, String) {
    let r = match kind {
        RowKind::Packet => Compiled::<PacketFacts>::new(text).map(drop),
        RowKind::Message => Compiled::<MessageRecord>::new(text).map(drop),
        RowKind::Anomaly => Compiled::<Anomaly>::new(text).map(drop),
    };
    let e = r.expect_err(text);
    (e.column(), e.to_string())
}

use RowKind::{Anomaly as A, Message as M, Packet as P};

#[test]
fn valid_expressions_compile_for_their_row_kinds() {
    let valid: &[(RowKind, &str)] = &[
        (P, "dropped"),
        (P, "seq > 900 && dropped"),
        (P, "seq>900&&dropped"),
        (P, "  seq >= 0  "),
        (P, "!dropped"),
        (P, "not dropped and acked or nakked"),
        (P, "!(seq < 5 || seq > 10)"),
        (P, "fate == dropped"),
        (P, "fate == DROPPED_burst"),
        (P, "fate != delivered"),
        (P, "fate in {dropped_loss, in_flight}"),
        (P, "fate in {dropped_loss in_flight}"),
        (P, "seq in 100..200"),
        (P, "seq in {1, 5..9, 12}"),
        (P, "seq in 100 .. 200"),
        (P, "dir == a_to_b && side == A"),
        (P, "delay_ms > 49.5"),
        (P, "delay_ms"),
        (P, "time >= 1.25 && time < 2"),
        (P, "acked == true"),
        (P, "nakked != false"),
        (P, "client == 1"),
        (P, "ack > 10 && link_id < 50 && bytes <= 1200"),
        (P, "msgs > 0 && resends >= 1 || resend"),
        (P, "chunk == 0 && slice in 0..10"),
        (P, "seq == -1"),
        (P, "((((dropped))))"),
        (M, "msg.id == 17"),
        (M, "msg.sends > 2 && resend.cause == nak"),
        (M, "resend.cause in {delay, timeout} && !spurious"),
        (M, "latency_ms > 100 && kind == reliable"),
        (M, "refused == send_queue_full || refused"),
        (M, "queue_ms > 5 && spurious_sends >= 1 && deliveries == 1"),
        (A, "kind == stall && wait_ms > 200"),
        (A, "kind == drop && side == b"),
        (A, "kind in {nak, spurious} && seq > 900"),
        (A, "spurious && resend.cause == delay"),
        (A, "fate == dropped_burst"),
    ];
    for (kind, text) in valid {
        if let Err(e) = compile(*kind, text) {
            panic!("{text:?} for {}: {e}", kind.plural());
        }
    }
}

#[test]
fn invalid_expressions_point_at_the_character_with_a_reason() {
    // (kind, text, column from 1, words the message must contain)
    let invalid: &[(RowKind, &str, usize, &[&str])] = &[
        (P, "seqq > 3", 1, &["unknown field `seqq`", "did you mean `seq`?"]),
        (P, "seq > ", 7, &["expected a number or a name", "found the end"]),
        (P, "seq in ", 8, &["expected", "`{`", "range"]),
        (P, "seq in {1, }", 12, &["expected"]),
        (P, "seq in 100..", 13, &["expected a number"]),
        (P, "seq > 900 &&", 13, &["expected", "a field"]),
        (P, "seq > 900 &", 11, &["expected", "&&"]),
        (P, "(seq > 1", 9, &["expected `)`"]),
        (P, "seq > 1)", 8, &["expected", "the end"]),
        (P, "seq 100", 5, &["operator"]),
        (P, "seq > abc", 7, &["expected a number for `seq`", "`abc`"]),
        (P, "fate == dropd", 9, &["`dropd` is not a value of `fate`", "did you mean `dropped`"]),
        (P, "fate > dropped", 6, &["`fate` takes ==, != or in"]),
        (P, "fate == 3", 9, &["`fate` takes a name"]),
        (P, "dropped == 1", 12, &["`dropped` is true or false"]),
        (P, "dropped < true", 9, &["use == or !="]),
        (P, "seq in 200..100", 8, &["empty range"]),
        (P, "fate in 1..2", 9, &["`fate` takes names, not a range"]),
        (P, "latency_ms > 100", 1, &["`latency_ms` does not apply to packets", "messages"]),
        (P, "msg.id == 3", 1, &["does not apply to packets", "messages or anomalies"]),
        (M, "seq > 3", 1, &["`seq` does not apply to messages", "packets or anomalies"]),
        (A, "bytes > 3", 1, &["does not apply to anomalies"]),
        (P, "", 1, &["expected"]),
        (P, "&& dropped", 1, &["expected"]),
        (P, "dropped && in", 12, &["expected"]),
        (P, "dropped @", 9, &["found `@`"]),
        (P, "delay_mss > 1", 1, &["did you mean `delay_ms`?"]),
        (P, "latncy_ms > 1", 1, &["did you mean `latency_ms` (a field of messages)?"]),
        (P, "zzz", 1, &["unknown field `zzz`", "packets have time"]),
        (P, "séq > 1", 2, &["found `é`"]),
        (P, "dir == a_to_b && séq", 19, &["found `é`"]),
    ];
    for (kind, text, col, words) in invalid {
        let (got_col, msg) = error_of(*kind, text);
        assert_eq!(got_col, *col, "{text:?}: {msg}");
        assert!(msg.contains(&format!(" at {col}")), "{text:?}: {msg}");
        for w in *words {
            assert!(msg.contains(w), "{text:?}: {msg:?} lacks {w:?}");
        }
    }
}

#[test]
fn the_briefs_examples_read_as_written() {
    assert_eq!(error_of(P, "seqq > 3").1, "unknown field `seqq` at 1: did you mean `seq`?");
    assert_eq!(error_of(P, "seq > x").1, "expected a number for `seq`, not `x` at 7");
}

fn texts(c: &ackscope::filter::Completion) -> Vec<&str> {
    c.candidates.iter().map(|c| c.text.as_str()).collect()
}

#[test]
fn completion_offers_fields_then_operators_then_values() {
    let c = complete(P, "", 0);
    assert!(texts(&c).contains(&"seq") && texts(&c).contains(&"fate") && texts(&c).contains(&"!"), "{c:?}");
    assert!(!texts(&c).contains(&"latency_ms"), "a message field offered for packets");
    let c = complete(P, "de", 2);
    assert_eq!(c.replace, 0..2);
    assert_eq!(texts(&c)[..2], ["delivered", "delay_ms"]);
    let c = complete(P, "seq ", 4);
    assert!(texts(&c).contains(&">") && texts(&c).contains(&"in"), "{c:?}");
    assert!(c.candidates.iter().all(|c| c.kind == CandidateKind::Operator));
    let c = complete(P, "fate == ", 8);
    assert!(texts(&c).contains(&"dropped") && texts(&c).contains(&"in_flight"), "{c:?}");
    let c = complete(P, "fate == dropped_b", 17);
    assert_eq!(texts(&c), ["dropped_burst"]);
    assert_eq!(c.replace, 8..17);
    let (text, cursor) = c.apply("fate == dropped_b", &c.candidates[0]);
    assert_eq!((text.as_str(), cursor), ("fate == dropped_burst ", 22));
    let c = complete(P, "fate == dropped ", 16);
    assert_eq!(texts(&c), ["&&", "||"]);
    let c = complete(M, "resend.cause in {nak, ", 22);
    assert!(texts(&c).contains(&"timeout"), "{c:?}");
    let c = complete(P, "acked == ", 9);
    assert_eq!(texts(&c), ["true", "false"]);
    let c = complete(P, "(seq > 5 ", 9);
    assert!(texts(&c).contains(&")"), "{c:?}");
    let c = complete(A, "kind == st", 10);
    assert_eq!(texts(&c), ["stall"]);
    // The cursor in the middle: what follows it is kept.
    let c = complete(P, "fa && dropped", 2);
    let (text, _) = c.apply("fa && dropped", &c.candidates[0]);
    assert_eq!(text, "fate && dropped");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,40}", cursor in 0usize..48) {
        for kind in RowKind::ALL {
            let _ = compile(kind, &text);
            let _ = complete(kind, &text, cursor);
        }
    }

    #[test]
    fn filter_shaped_text_never_panics_and_errors_point_inside(
        parts in proptest::collection::vec(prop_oneof![
            Just("seq"), Just("fate"), Just("dropped"), Just("msg.id"), Just("=="), Just("!="), Just(">"),
            Just("<="), Just("in"), Just("{"), Just("}"), Just(","), Just(".."), Just("("), Just(")"),
            Just("&&"), Just("||"), Just("!"), Just("12"), Just("-3.5"), Just("nak"), Just("é"), Just(" "),
        ], 0..12),
        cursor in 0usize..64,
    ) {
        let text: String = parts.concat();
        for kind in RowKind::ALL {
            if let Err(e) = compile(kind, &text) {
                let col = e.split(" at ").nth(1).and_then(|s| s.split(':').next()).and_then(|s| s.trim().parse::<usize>().ok());
                let col = col.unwrap_or_else(|| panic!("{text:?}: no column in {e:?}"));
                prop_assert!(col >= 1 && col <= text.chars().count() + 1, "{text:?}: {e}");
            }
            let _ = complete(kind, &text, cursor);
        }
    }
}
