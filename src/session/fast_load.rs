//! Parsing a session's events on every core, with the event-line parser of [`super::lines`].
//!
//! `ron` parses about 0.7 million events a second on one core, so a 10-million-event session
//! took 14 s. The files ackscope writes have one event per line between an `events:[` line and a
//! `],` line, so the event section is cut into blocks of lines that worker threads parse in
//! parallel, each event's time relative to its block's start; the blocks are then joined in
//! order, each shifted by the sum of the deltas before it. The small rest of the file (scenario,
//! changes, checksum) still goes through `ron`, with the event section left empty.
//!
//! Any surprise (another layout, a line neither parser reads, a time before the start) gives up
//! with `None`, and the caller parses the whole text with `ron`: the fast path never accepts
//! what `ron` refuses, and errors keep `ron`'s messages with their line and column.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

use ackscope_protocol::{Event, EventKind, SimTime};
use anyhow::{anyhow, Result};

use super::codec::Line;
use super::lines::parse_event_line;
use super::{Progress, Session};

/// Bytes of event lines per block a worker takes at a time (also the progress, cancel and
/// streaming granularity): about 22,000 events of 46 bytes.
const BLOCK_BYTES: usize = 1 << 20;
/// Start of the event section as ackscope writes it.
const EVENTS_OPEN: &str = "\nevents:[\n";

/// One parsed block: its events with times relative to the block's start, the sum of its
/// deltas, and the lowest relative time reached (to refuse a time before the run's start).
struct Block {
    events: Vec<Event>,
    sum_us: i64,
    min_us: i64,
}

/// Parses `text` (a whole session file, its checksum already checked); `None` when the text is
/// not laid out as ackscope writes it or anything in it is invalid (then parse it with `ron`),
/// an error only when `progress` was cancelled.
pub(super) fn parse(text: &str, origin: &str, progress: Option<&Arc<Progress>>) -> Option<Result<Session>> {
    let (mut session, section) = split(text)?;
    let mut events = Vec::with_capacity(section.bytes().filter(|&b| b == b'\n').count());
    let ok = parse_section(section, progress, |block| events.extend(block));
    if progress.is_some_and(|p| p.is_cancelled()) {
        return Some(Err(anyhow!("{origin}: cancelled")));
    }
    if !ok {
        return None;
    }
    session.events = events;
    Some(Ok(session))
}

/// The session header (everything but the events, parsed by `ron`) and the event section of
/// `text`; `None` when the text is not laid out as ackscope writes it.
pub(super) fn split(text: &str) -> Option<(Session, &str)> {
    let open = text.find(EVENTS_OPEN)?;
    let start = open + EVENTS_OPEN.len();
    // The section ends at the first line that starts with `]` (event lines start with `(`).
    let end = start + text[start - 1..].find("\n]")?;
    let section = &text[start..end];
    let header_text = format!("{}]{}", &text[..start - 1], &text[end + 1..]);
    let session: Session = crate::params::strict::ron_options().from_str(&header_text).ok()?;
    session.events.is_empty().then_some((session, section))
}

/// Parses the event section's lines on every core and hands the events to `sink` in order, a
/// block at a time as soon as every block before it is parsed (so a caller can show them while
/// the rest is parsed); false when a line is invalid or a time falls before the start (the
/// blocks handed over so far are then not the file's), or when `progress` was cancelled.
pub(super) fn parse_section(section: &str, progress: Option<&Arc<Progress>>, mut sink: impl FnMut(Vec<Event>)) -> bool {
    let blocks = split_blocks(section);
    let next = AtomicUsize::new(0);
    let done = AtomicU64::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8);
    let ok = std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(usize, Option<Block>)>();
        for _ in 0..workers {
            let (tx, blocks, next, done) = (tx.clone(), &blocks, &next, &done);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(block) = blocks.get(i) else { break };
                let cancelled = progress.is_some_and(|p| p.is_cancelled());
                let parsed = if cancelled { None } else { parse_block(block) };
                let failed = parsed.is_none();
                if let Some(p) = progress {
                    p.advance_to(done.fetch_add(block.lines().count() as u64, Ordering::Relaxed));
                }
                if tx.send((i, parsed)).is_err() || failed {
                    // Stop the others too: the whole text goes to `ron` anyway.
                    next.store(blocks.len(), Ordering::Relaxed);
                    break;
                }
            });
        }
        drop(tx);
        // Join the blocks in order as they arrive, so at most the blocks parsed ahead of the
        // next one wait.
        let mut waiting = BTreeMap::new();
        let (mut joined, mut offset_us) = (0, 0i64);
        for (i, block) in rx {
            let Some(block) = block else { return false };
            waiting.insert(i, block);
            while let Some(block) = waiting.remove(&joined) {
                if offset_us + block.min_us < 0 {
                    return false;
                }
                sink(
                    block
                        .events
                        .into_iter()
                        .map(|mut e| {
                            e.time = SimTime((e.time.0 as i64 + offset_us) as u64);
                            e
                        })
                        .collect(),
                );
                offset_us += block.sum_us;
                joined += 1;
            }
        }
        joined == blocks.len()
    });
    ok && !progress.is_some_and(|p| p.is_cancelled())
}

/// The section cut into blocks of about [`BLOCK_BYTES`] of whole lines.
///
/// Cut by size, looking only near each cut for the line's end: counting every line first was
/// a pass over the whole text before the first block could be parsed (and shown).
fn split_blocks(section: &str) -> Vec<&str> {
    let mut blocks = Vec::with_capacity(section.len() / BLOCK_BYTES + 1);
    let mut rest = section;
    while !rest.is_empty() {
        let cut = match rest.as_bytes().get(BLOCK_BYTES..) {
            // Just after a newline: always a character boundary.
            Some(tail) => tail.iter().position(|&b| b == b'\n').map_or(rest.len(), |i| BLOCK_BYTES + i + 1),
            None => rest.len(),
        };
        blocks.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    blocks
}

/// Parses a block's event lines; `None` when a line is invalid.
fn parse_block(block: &str) -> Option<Block> {
    let mut events = Vec::with_capacity(block.len() / 32);
    let (mut t, mut min_us) = (0i64, 0i64);
    for line in block.lines() {
        let Line(dt, kind, client) = parse_line(line)?;
        t = t.checked_add(dt)?;
        min_us = min_us.min(t);
        events.push(Event::for_client(SimTime(t as u64), client, kind));
    }
    Some(Block { events, sum_us: t, min_us })
}

/// One event line, by the fast parser or else by `ron` (comments, escapes, unusual spacing).
fn parse_line(line: &str) -> Option<Line<EventKind>> {
    parse_event_line(line).ok().or_else(|| {
        let trimmed = line.trim_end();
        ron::from_str(trimmed.strip_suffix(',').unwrap_or(trimmed)).ok()
    })
}

#[cfg(test)]
mod tests {
    use ackscope_protocol::{Dir, Scenario, Side, Simulation, Strategy};

    use super::*;
    use crate::session::{from_text, to_text};

    /// What `ron` alone makes of `text`, with the loader's options (implicit `Some`: a recorded
    /// action's optional fields are written bare).
    fn by_ron(text: &str) -> Session {
        crate::params::strict::ron_options().from_str(text).unwrap()
    }

    #[test]
    fn the_fast_parse_equals_ron_on_every_shipped_session() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
        let mut recordings = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            match parse(&text, "test", None) {
                Some(fast) => {
                    let fast = fast.unwrap();
                    assert!(fast == by_ron(&text), "{}", path.display());
                    recordings += 1;
                }
                None => assert!(by_ron(&text).events.is_empty(), "{}: fast path not taken", path.display()),
            }
        }
        assert!(recordings >= 5, "{recordings} recordings");
    }

    #[test]
    fn the_fast_parse_equals_ron_on_random_runs_and_odd_events() {
        for (i, strategy) in Strategy::all().enumerate() {
            let seed = 100 + i as u64;
            let mut s = Scenario { seed, strategy, ..Scenario::default() };
            for d in Dir::BOTH {
                let l = s.link.get_mut(d);
                l.loss_percent = 20.0;
                l.duplicate_percent = 5.0;
                l.jitter_ms = 30.0;
            }
            s.workload.chunk_kib = 64;
            let mut sim = Simulation::new(s.clone());
            sim.run_for_secs(20.0);
            let mut session = Session::scenario_only(s);
            session.events = sim.drain_events().collect();
            // Strings that need escapes, and times far from zero, go through `ron` line by line.
            let t = session.events.last().map_or(SimTime(0), |e| e.time);
            for (name, value) in [("a\"b\\c\nd", "ü \t x"), ("plain", "")] {
                let kind = EventKind::ParamChanged { name: name.into(), value: value.into() };
                session.events.push(Event::new(t, kind));
            }
            let reason = "Outgoing \"reliable\" buffer overflow".to_string();
            session
                .events
                .push(Event::new(SimTime(u64::MAX / 4), EventKind::ConnectionClosed { side: Side::B, reason }));
            let text = to_text(&session).unwrap();
            let fast = parse(&text, "test", None).expect("fast path taken").unwrap();
            assert!(fast.events.len() > 2_000, "{strategy:?}: {} events", fast.events.len());
            assert!(fast == by_ron(&text), "{strategy:?} seed {seed}");
            assert!(from_text(&text, "test").unwrap() == fast, "{strategy:?} seed {seed}");
        }
    }

    #[test]
    fn a_bad_event_line_leaves_the_error_to_ron() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/recorded-glenn.ron");
        let text = std::fs::read_to_string(path).unwrap();
        let bad = text.replacen("PacketSent(side:B,seq:1,", "PacketSent(side:C,seq:1,", 1);
        assert!(bad != text);
        assert!(parse(&bad, "test", None).is_none());
        let negative = text.replacen("\n(7581,", "\n(-7581,", 1);
        assert!(negative != text);
        assert!(parse(&negative, "test", None).is_none(), "a time before the start is refused");
        let spaced = text.replacen("\n(7581,", "\n  ( 7581 , ", 1).replacen("(0,Stats(", "(0, // a comment\nStats(", 1);
        let fast = parse(&spaced, "test", None);
        assert!(fast.is_none() || fast.unwrap().unwrap() == by_ron(&spaced));
    }
}
