//! "Go to": a message id, a packet sequence or an instant, typed in the status bar's box
//! (Ctrl+G), as Wireshark's Go to packet. The text is read here and resolved against every lane
//! shown and every client of each; the window then moves the cursor there and selects the row.
//!
//! What it reads (case does not matter):
//! - `seq 120`, `seq a 120` / `seq b 120` (the side that sent it), or a bare `120`: the first
//!   packet with that sequence;
//! - `msg 42`, `id 42`, `msg b 42`: message 42 sent by A (or by B when A has none, or as said);
//! - `1.5 s`, `1500 ms`, `t 1.5`, `1.5`: that instant.
//!
//! Any of them may start with where to look: `lane b` (or just `b`, or `lane 2`: lanes are
//! lettered and numbered in the order shown) and `client 7`, e.g. `b seq 900`, `client 7 msg 42`,
//! `lane a client 3 1.5 s`. In an A/B recording, or with many clients, one sequence or message id
//! is found in each lane and client: without a qualifier the go-to lands in the focused client of
//! the first lane that has it, says where it went, and lists the other places to pick from.

use ackscope_protocol::{ClientId, Dir, Side, SimTime};

use crate::app::{AppCommand, MarkCommand, RevealTarget, Tab};
use crate::model::marks::Mark;
use crate::model::{Connection, Recording};

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

/// A go-to and where to look: a lane (by position among those shown) and a client, when said.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Query {
    pub lane: Option<usize>,
    pub client: Option<ClientId>,
    pub goto: GoTo,
}

/// What to type, for errors and the box's hint.
pub const GOTO_HINT: &str = "seq 120, msg 42, 1.5 s, b seq 120, client 7 seq 900";

/// The letter lane `i` goes by in go-to (`A`, `B`, ...).
pub fn lane_letter(i: usize) -> char {
    (b'A' + (i % 26) as u8) as char
}

fn side_word(w: &str) -> Option<Side> {
    match w {
        "a" | "a->b" => Some(Side::A),
        "b" | "b->a" => Some(Side::B),
        _ => None,
    }
}

/// A lane named by letter (`a`..`h`, not `t`, which starts a time) or 1-based number.
fn lane_word(w: &str, numbers: bool) -> Option<usize> {
    match w.as_bytes() {
        [c @ b'a'..=b'h'] => Some((c - b'a') as usize),
        _ if numbers => w.parse::<usize>().ok().filter(|&n| n >= 1).map(|n| n - 1),
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

/// Reads a go-to with where to look; the error says what was wrong and what is read.
pub fn parse(text: &str) -> Result<Query, String> {
    let lower = text.trim().to_ascii_lowercase();
    let mut words: &[&str] = &lower.split_whitespace().collect::<Vec<_>>();
    let (mut lane, mut client) = (None, None);
    loop {
        match words {
            ["lane", w, rest @ ..] => {
                lane = Some(
                    lane_word(w, true)
                        .ok_or_else(|| format!("`lane {w}`: a lane is a letter or a number (lane b, lane 2)"))?,
                );
                words = rest;
            }
            ["client", w, rest @ ..] => {
                client = Some(number(w, "client id")?);
                words = rest;
            }
            // A lone lane letter before more words: `b seq 120`, `b 120`.
            [w, rest @ ..] if lane.is_none() && !rest.is_empty() && lane_word(w, false).is_some() => {
                lane = lane_word(w, false);
                words = rest;
            }
            _ => break,
        }
    }
    let goto = parse_goto(words, text)?;
    Ok(Query { lane, client, goto })
}

fn parse_goto(words: &[&str], text: &str) -> Result<GoTo, String> {
    let bad = || Err(format!("cannot read `{}`: type {GOTO_HINT}", text.trim()));
    match words {
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

/// One place a go-to can land: where, in words, and the commands that go there.
#[derive(Debug, Clone)]
pub struct Place {
    /// `lane B (ue4)`, `client 7 (alice)`, `lane A (glenn), client 2`: empty when the recording
    /// has one lane and one client (there is nowhere else it could be).
    pub label: String,
    pub cmds: Vec<AppCommand>,
}

/// Where a go-to lands: the first place (the focused client of the first lane that has it), and
/// every other place that has it too, to pick from.
#[derive(Debug, Clone)]
pub struct Found {
    pub place: Place,
    pub others: Vec<Place>,
}

/// Names a lane and client as go-to reads them back (`lane B (ue4), client 7 (alice)`), leaving
/// out what there is only one of.
fn place_label(lanes: &[Recording], lane: usize, client: ClientId) -> String {
    let rec = &lanes[lane];
    let mut parts = Vec::new();
    if lanes.len() > 1 {
        parts.push(format!("lane {} ({})", lane_letter(lane), rec.info.label()));
    }
    if rec.clients().len() > 1 {
        let name = rec.info.client(client).name;
        parts.push(if name.is_empty() { format!("client {client}") } else { format!("client {client} ({name})") });
    }
    parts.join(", ")
}

/// The connections to search, in the order a match is preferred: lane order, and in each lane the
/// focused client first, then the others by id.
fn search_order(lanes: &[Recording], q: &Query, focus: ClientId) -> Result<Vec<(usize, ClientId)>, String> {
    if let Some(l) = q.lane.filter(|&l| l >= lanes.len()) {
        let shown = lanes.len();
        return Err(format!(
            "no lane {} (lane {}): {shown} lane{} shown",
            lane_letter(l),
            l + 1,
            if shown == 1 { " is" } else { "s are" }
        ));
    }
    let mut out = Vec::new();
    for (i, rec) in lanes.iter().enumerate().filter(|(i, _)| q.lane.is_none_or(|l| l == *i)) {
        let mut ids: Vec<ClientId> = rec.clients().iter().map(|c| c.client).collect();
        ids.sort_by_key(|&c| (c != focus, c));
        match q.client {
            Some(c) if ids.contains(&c) => out.push((i, c)),
            Some(_) => {}
            None if ids.is_empty() => out.push((i, focus)),
            None => out.extend(ids.into_iter().map(|c| (i, c))),
        }
    }
    if out.is_empty() {
        let c = q.client.unwrap_or(focus);
        let lane = q.lane.map_or(String::new(), |l| format!(" in lane {}", lane_letter(l)));
        return Err(format!("no client {c}{lane}"));
    }
    Ok(out)
}

/// Where a go-to lands among `lanes` (those shown) of a run ending at `end`, the window focused
/// on client `focus`: the commands that move the cursor there, focus its client and select it;
/// or why there is nothing.
pub fn resolve(q: Query, lanes: &[Recording], focus: ClientId, end: SimTime, tab: Tab) -> Result<Found, String> {
    if lanes.is_empty() {
        return Err("no recording is shown".into());
    }
    let order = search_order(lanes, &q, focus)?;
    // Always said (not only when it changes), so a place picked later still focuses its client.
    let focus_cmd = |lane: usize, c: ClientId| lanes[lane].client(c).is_some().then_some(AppCommand::FocusClient(c));
    let select = |m: Mark| AppCommand::Marks(MarkCommand::Select(m));
    let conn = |lane: usize, c: ClientId| -> &Connection { lanes[lane].client_or_primary(c) };
    let mut places = Vec::new();
    for &(lane, client) in &order {
        let c = conn(lane, client);
        let cmds: Option<Vec<AppCommand>> = match q.goto {
            GoTo::Seq { side, seq } => {
                let dir = side.map(|s| if s == Side::A { Dir::AtoB } else { Dir::BtoA });
                (0..c.packets.len())
                    .filter_map(|i| c.packets.row(i, &c.ledger))
                    .find(|r| r.seq == seq && dir.is_none_or(|d| d == r.dir))
                    .map(|r| {
                        vec![
                            AppCommand::Reveal(RevealTarget::Packet { lane, uid: r.uid }, Some(r.time)),
                            select(Mark::packet(lane, r.uid, r.dir, r.seq, r.time).of_client(c.client)),
                        ]
                    })
            }
            GoTo::Message { side, id } => {
                let sides = side.map_or(vec![Side::A, Side::B], |s| vec![s]);
                sides.iter().find_map(|&s| c.messages.get((s, id))).map(|m| {
                    vec![
                        AppCommand::Reveal(RevealTarget::Message { lane, side: m.side, id }, Some(m.queued_at)),
                        select(Mark::message(lane, m.side, id, m.queued_at)),
                    ]
                })
            }
            GoTo::Time(t) if t > end => {
                return Err(format!(
                    "{:.4} s is past the end of the recording ({:.4} s)",
                    t.as_secs_f64(),
                    end.as_secs_f64()
                ));
            }
            GoTo::Time(t) => {
                // In the packet log, the row at the cursor is selected: the last one sent by then.
                let sent = c.packets.sent_by(t);
                let row = sent.checked_sub(1).and_then(|i| c.packets.row(i, &c.ledger));
                let mut cmds = vec![AppCommand::SeekTo(t)];
                match row.filter(|_| tab == Tab::Packets) {
                    Some(r) => cmds.extend([
                        AppCommand::Reveal(RevealTarget::Packet { lane, uid: r.uid }, Some(t)),
                        select(Mark::packet(lane, r.uid, r.dir, r.seq, r.time).of_client(c.client)),
                    ]),
                    None => cmds.push(select(Mark::instant(t))),
                }
                Some(cmds)
            }
        };
        if let Some(cmds) = cmds {
            let cmds = focus_cmd(lane, client).into_iter().chain(cmds).collect();
            places.push(Place { label: place_label(lanes, lane, client), cmds });
            // An instant is in every lane and client: the first one said is where it goes.
            if matches!(q.goto, GoTo::Time(_)) {
                break;
            }
        }
    }
    let mut places = places.into_iter();
    let Some(place) = places.next() else {
        let what = match q.goto {
            GoTo::Seq { side, seq } => format!("no packet with seq {seq}{}", sent_by(side)),
            GoTo::Message { side, id } => format!("no message #{id}{}", sent_by(side)),
            GoTo::Time(_) => "nothing there".into(),
        };
        let lanes_said = order.iter().map(|&(l, _)| l).collect::<std::collections::BTreeSet<_>>();
        let clients = order.len();
        let in_what = match (lanes_said.len(), clients) {
            (1, 1) => format!("in {}", lanes[order[0].0].info.label()),
            (1, n) => format!("in {} ({n} clients searched)", lanes[order[0].0].info.label()),
            (l, n) => format!("in {l} lanes ({n} connections searched)"),
        };
        return Err(format!("{what} {in_what}"));
    };
    Ok(Found { place, others: places.collect() })
}

fn sent_by(side: Option<Side>) -> String {
    side.map_or(String::new(), |s| format!(" sent by {s:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(goto: GoTo) -> Result<Query, String> {
        Ok(Query { lane: None, client: None, goto })
    }

    #[test]
    fn go_to_reads_sequences_ids_and_times() {
        assert_eq!(parse("seq 120"), plain(GoTo::Seq { side: None, seq: 120 }));
        assert_eq!(parse(" 120 "), plain(GoTo::Seq { side: None, seq: 120 }));
        assert_eq!(parse("SEQ b 7"), plain(GoTo::Seq { side: Some(Side::B), seq: 7 }));
        assert_eq!(parse("msg 42"), plain(GoTo::Message { side: None, id: 42 }));
        assert_eq!(parse("id a 42"), plain(GoTo::Message { side: Some(Side::A), id: 42 }));
        assert_eq!(parse("1.5 s"), plain(GoTo::Time(SimTime(1_500_000))));
        assert_eq!(parse("1.5"), plain(GoTo::Time(SimTime(1_500_000))));
        assert_eq!(parse("1500ms"), plain(GoTo::Time(SimTime(1_500_000))));
        assert_eq!(parse("t 2"), plain(GoTo::Time(SimTime(2_000_000))));
        assert_eq!(parse("250 ms"), plain(GoTo::Time(SimTime(250_000))));
        for bad in [
            "",
            "seq",
            "seq -1",
            "seq x 3",
            "msg 1.5",
            "-2 s",
            "NaN",
            "inf s",
            "hello",
            "1 parsec",
            "seq 99999999999",
            "lane",
            "lane z 3",
            "lane 0 seq 3",
            "client x seq 3",
            "client 3",
            "b",
            "b b 3",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} was read as {:?}", parse(bad));
        }
    }

    #[test]
    fn go_to_reads_the_lane_and_client_before_the_target() {
        let seq = GoTo::Seq { side: None, seq: 1234 };
        assert_eq!(parse("B 1234"), Ok(Query { lane: Some(1), client: None, goto: seq }));
        assert_eq!(parse("lane 2 seq 1234"), Ok(Query { lane: Some(1), client: None, goto: seq }));
        assert_eq!(parse("client 7 seq 1234"), Ok(Query { lane: None, client: Some(7), goto: seq }));
        assert_eq!(
            parse("a client 3 msg b 9"),
            Ok(Query { lane: Some(0), client: Some(3), goto: GoTo::Message { side: Some(Side::B), id: 9 } })
        );
        // After the kind word, a and b are still the sending side, as before.
        assert_eq!(parse("seq b 7"), plain(GoTo::Seq { side: Some(Side::B), seq: 7 }));
        assert_eq!(parse("t 1.5"), plain(GoTo::Time(SimTime(1_500_000))));
    }
}
