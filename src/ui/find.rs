//! "Go to": a message id, a packet sequence or an instant, typed in the status bar's box
//! (Ctrl+G), as Wireshark's Go to packet. The text is read here and resolved against the first
//! lane shown; the window then moves the cursor there and selects the row.
//!
//! What it reads (case does not matter):
//! - `seq 120`, `seq a 120` / `seq b 120` (the side that sent it), or a bare `120`: the first
//!   packet with that sequence;
//! - `msg 42`, `id 42`, `msg b 42`: message 42 sent by A (or by B when A has none, or as said);
//! - `1.5 s`, `1500 ms`, `t 1.5`, `1.5`: that instant.

use ackscope_protocol::{Dir, Side, SimTime};

use crate::app::{AppCommand, MarkCommand, RevealTarget, Tab};
use crate::model::marks::Mark;
use crate::model::Shown;

/// What a go-to asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GoTo {
    /// A packet by sequence, sent by `side` if given.
    Seq { side: Option<Side>, seq: u32 },
    /// A message by id, sent by `side` if given.
    Message { side: Option<Side>, id: u64 },
    /// An instant, in microseconds.
    Time(SimTime),
}

/// What to type, for errors and the box's hint.
pub const GOTO_HINT: &str = "seq 120, msg 42 or 1.5 s";

fn side_word(w: &str) -> Option<Side> {
    match w {
        "a" | "a->b" => Some(Side::A),
        "b" | "b->a" => Some(Side::B),
        _ => None,
    }
}

/// Seconds from `text` ("1.5", "1500ms", "1.5s"), when it reads as a time.
fn seconds(text: &str, unit: Option<&str>) -> Option<Result<f64, String>> {
    let (num, unit) = match unit {
        Some(u) => (text, u),
        None if text.ends_with("ms") => (&text[..text.len() - 2], "ms"),
        None if text.ends_with('s') => (&text[..text.len() - 1], "s"),
        None => (text, "s"),
    };
    let scale = match unit {
        "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" => 1e-6,
        _ => return None,
    };
    let v: f64 = num.parse().ok()?;
    if !v.is_finite() || v < 0.0 {
        return Some(Err(format!("`{text}`: a time is a number of seconds, 0 or more")));
    }
    Some(Ok(v * scale))
}

fn number<T: std::str::FromStr>(w: &str, what: &str) -> Result<T, String> {
    w.parse().map_err(|_| format!("`{w}` is not a {what} (a whole number, 0 or more)"))
}

/// Reads a go-to; the error says what was wrong and what is read.
pub fn parse(text: &str) -> Result<GoTo, String> {
    let lower = text.trim().to_ascii_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let bad = || Err(format!("cannot read `{}`: type {GOTO_HINT}", text.trim()));
    match words.as_slice() {
        [] => Err(format!("type {GOTO_HINT}")),
        ["seq", n] => Ok(GoTo::Seq { side: None, seq: number(n, "sequence")? }),
        ["seq", s, n] => match side_word(s) {
            Some(side) => Ok(GoTo::Seq { side: Some(side), seq: number(n, "sequence")? }),
            None => Err(format!("`{s}`: the side is a or b (seq a 120)")),
        },
        ["msg" | "id" | "message", n] => Ok(GoTo::Message { side: None, id: number(n, "message id")? }),
        ["msg" | "id" | "message", s, n] => match side_word(s) {
            Some(side) => Ok(GoTo::Message { side: Some(side), id: number(n, "message id")? }),
            None => Err(format!("`{s}`: the side is a or b (msg b 42)")),
        },
        ["t" | "time", v] => time(v, None).unwrap_or_else(bad),
        ["t" | "time", v, u] | [v, u] => time(v, Some(u)).unwrap_or_else(bad),
        [w] if w.bytes().all(|b| b.is_ascii_digit()) => Ok(GoTo::Seq { side: None, seq: number(w, "sequence")? }),
        [w] => time(w, None).unwrap_or_else(bad),
        _ => bad(),
    }
}

fn time(v: &str, unit: Option<&str>) -> Option<Result<GoTo, String>> {
    Some(seconds(v, unit)?.map(|s| GoTo::Time(SimTime::from_secs_f64(s))))
}

/// Where a go-to lands in `lane` (lane 0 of the shown lanes) of a run ending at `end`: the
/// commands that move the cursor there and select it, or why there is nothing.
pub fn resolve(goto: GoTo, lanes: &[Shown<'_>], end: SimTime, tab: Tab) -> Result<Vec<AppCommand>, String> {
    const LANE: usize = 0;
    let rec = lanes.first().ok_or("no recording is shown")?;
    let select = |m: Mark| AppCommand::Marks(MarkCommand::Select(m));
    match goto {
        GoTo::Seq { side, seq } => {
            let dir = side.map(|s| if s == Side::A { Dir::AtoB } else { Dir::BtoA });
            let found = (0..rec.packets.len())
                .filter_map(|i| rec.packets.row(i, &rec.ledger))
                .find(|r| r.seq == seq && dir.is_none_or(|d| d == r.dir));
            let r = found.ok_or_else(|| {
                let from = side.map_or(String::new(), |s| format!(" sent by {s:?}"));
                format!("no packet with seq {seq}{from} in {}", rec.label())
            })?;
            Ok(vec![
                AppCommand::Reveal(RevealTarget::Packet { lane: LANE, uid: r.uid }, Some(r.time)),
                select(Mark::packet(LANE, r.uid, r.dir, r.seq, r.time)),
            ])
        }
        GoTo::Message { side, id } => {
            let sides = match side {
                Some(s) => vec![s],
                None => vec![Side::A, Side::B],
            };
            let m = sides.iter().find_map(|&s| rec.messages.get((s, id))).ok_or_else(|| {
                let from = side.map_or(String::new(), |s| format!(" sent by {s:?}"));
                format!("no message #{id}{from} in {}", rec.label())
            })?;
            Ok(vec![
                AppCommand::Reveal(RevealTarget::Message { lane: LANE, side: m.side, id }, Some(m.queued_at)),
                select(Mark::message(LANE, m.side, id, m.queued_at)),
            ])
        }
        GoTo::Time(t) if t > end => {
            Err(format!("{:.4} s is past the end of the recording ({:.4} s)", t.as_secs_f64(), end.as_secs_f64()))
        }
        GoTo::Time(t) => {
            // In the packet log, the row at the cursor is selected: the last one sent by then.
            let sent = rec.packets.sent_by(t);
            let row = sent.checked_sub(1).and_then(|i| rec.packets.row(i, &rec.ledger));
            let mut cmds = vec![AppCommand::SeekTo(t)];
            match row.filter(|_| tab == Tab::Packets) {
                Some(r) => cmds.extend([
                    AppCommand::Reveal(RevealTarget::Packet { lane: LANE, uid: r.uid }, Some(t)),
                    select(Mark::packet(LANE, r.uid, r.dir, r.seq, r.time)),
                ]),
                None => cmds.push(select(Mark::instant(t))),
            }
            Ok(cmds)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_to_reads_sequences_ids_and_times() {
        assert_eq!(parse("seq 120"), Ok(GoTo::Seq { side: None, seq: 120 }));
        assert_eq!(parse(" 120 "), Ok(GoTo::Seq { side: None, seq: 120 }));
        assert_eq!(parse("SEQ b 7"), Ok(GoTo::Seq { side: Some(Side::B), seq: 7 }));
        assert_eq!(parse("msg 42"), Ok(GoTo::Message { side: None, id: 42 }));
        assert_eq!(parse("id a 42"), Ok(GoTo::Message { side: Some(Side::A), id: 42 }));
        assert_eq!(parse("1.5 s"), Ok(GoTo::Time(SimTime(1_500_000))));
        assert_eq!(parse("1.5"), Ok(GoTo::Time(SimTime(1_500_000))));
        assert_eq!(parse("1500ms"), Ok(GoTo::Time(SimTime(1_500_000))));
        assert_eq!(parse("t 2"), Ok(GoTo::Time(SimTime(2_000_000))));
        assert_eq!(parse("250 ms"), Ok(GoTo::Time(SimTime(250_000))));
        for bad in
            ["", "seq", "seq -1", "seq x 3", "msg 1.5", "-2 s", "NaN", "inf s", "hello", "1 parsec", "seq 99999999999"]
        {
            assert!(parse(bad).is_err(), "{bad:?} was read as {:?}", parse(bad));
        }
    }
}
