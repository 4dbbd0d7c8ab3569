//! Saving a live run's stream file with the window's bookmarks (and its datagrams' bytes) in it.
//!
//! A live run longer than the memory window is saved by copying its stream file
//! ([`super::stream`]), which has every event but not the bookmarks set in the window. The copy
//! made here is the stream file line for line up to the end of its events, then its trailer
//! with a `bookmarks` field added, and a `payloads` field when the run kept its datagrams' bytes
//! ([`super::payloads`]; a UDP run's, held in the window) (RON fields may come in any order, and `bookmarks` is the
//! session's optional field, so the result reads as any saved session does) and the checksum
//! computed again over the whole text. It is read and written a line at a time, never whole in
//! memory, into a temporary file beside the target that is synced and renamed over it, as every
//! save is.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use serde::Serialize;

use super::payloads::SavedPayload;
use super::save::pretty;
use super::{Bookmark, CHECKSUM_KEY, CHECKSUM_PLACEHOLDER};

const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv_more(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Copies the stream file `source` to `path` atomically with `bookmarks` and `payloads` in it (a
/// plain copy when there are neither; the source's own payloads are kept when `payloads` is
/// empty): the size written.
pub fn copy_with_bookmarks(
    source: &Path,
    path: &Path,
    bookmarks: &[Bookmark],
    payloads: &[SavedPayload],
) -> Result<u64> {
    if bookmarks.is_empty() && payloads.is_empty() {
        return super::stream::copy_atomic(source, path);
    }
    super::stream::replace_atomic(path, |tmp, origin| {
        let file = File::create(tmp).with_context(|| format!("{origin}: cannot create"))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let bytes = write_with_bookmarks(source, &mut out, bookmarks, payloads)?;
        let file = out.into_inner().map_err(|e| anyhow!("{origin}: write failed: {}", e.error()))?;
        file.sync_all().with_context(|| format!("{origin}: sync failed"))?;
        Ok(bytes)
    })
}

/// Writes `source` to `out` with `bookmarks` in its trailer: the bytes written.
fn write_with_bookmarks(
    source: &Path,
    out: &mut impl Write,
    bookmarks: &[Bookmark],
    payloads: &[SavedPayload],
) -> Result<u64> {
    let from = source.display().to_string();
    let file = File::open(source).with_context(|| format!("{from}: cannot read"))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let (mut hash, mut written, mut line) = (FNV_START, 0u64, String::new());
    let mut in_events = false;
    // Up to and including the line that closes the events (`],`): copied as it is.
    loop {
        line.clear();
        if reader.read_line(&mut line).with_context(|| format!("{from}: cannot read"))? == 0 {
            bail!("{from}: not a stream file (its events are not closed: a run still being written or cut short)");
        }
        out.write_all(line.as_bytes()).with_context(|| format!("{from}: write failed"))?;
        hash = fnv_more(hash, line.as_bytes());
        written += line.len() as u64;
        if line == "events:[\n" {
            in_events = true;
        } else if in_events && line.starts_with(']') {
            break;
        }
    }
    let mut rest = String::new();
    reader.read_to_string(&mut rest).with_context(|| format!("{from}: cannot read"))?;
    let tail = trailer_with(&rest, bookmarks, payloads)
        .ok_or_else(|| anyhow!("{from}: its trailer is not as ackscope writes it"))?;
    let at = tail.rfind(CHECKSUM_KEY).ok_or_else(|| anyhow!("{from}: checksum missing"))? + CHECKSUM_KEY.len();
    let mut tail = tail;
    let sum = format!("{:016x}", fnv_more(hash, tail.as_bytes()));
    tail.replace_range(at..at + CHECKSUM_PLACEHOLDER.len(), &sum);
    out.write_all(tail.as_bytes()).with_context(|| format!("{from}: write failed"))?;
    Ok(written + tail.len() as u64)
}

/// The trailer `rest` (the fields after the events, one a line at the top level) with any
/// `bookmarks` field it had replaced by `bookmarks`, its `payloads` by `payloads` when there are
/// any, and its checksum the placeholder.
fn trailer_with(rest: &str, bookmarks: &[Bookmark], payloads: &[SavedPayload]) -> Option<String> {
    #[derive(Serialize)]
    struct Field<'a> {
        #[serde(skip_serializing_if = "<[Bookmark]>::is_empty")]
        bookmarks: &'a [Bookmark],
        #[serde(skip_serializing_if = "<[SavedPayload]>::is_empty")]
        payloads: &'a [SavedPayload],
    }
    let text = ron::ser::to_string_pretty(&Field { bookmarks, payloads }, pretty()).ok()?;
    let field = text.strip_prefix("(\n")?.strip_suffix(')')?;
    let key_at = rest.rfind(CHECKSUM_KEY)?;
    let mut kept = String::with_capacity(rest.len() + field.len());
    // Top-level fields start at column 0; a multi-line one ends at its `],` line.
    let mut skipping = false;
    for l in rest[..key_at].split_inclusive('\n') {
        if skipping {
            skipping = !l.starts_with(']');
            continue;
        }
        if l.starts_with("bookmarks:") || (!payloads.is_empty() && l.starts_with("payloads:")) {
            skipping = !l.trim_end().ends_with("],");
            continue;
        }
        kept.push_str(l);
    }
    let after = &rest[key_at + CHECKSUM_KEY.len()..];
    let close = after.get(CHECKSUM_PLACEHOLDER.len()..)?;
    Some(format!("{kept}{field}{CHECKSUM_KEY}{CHECKSUM_PLACEHOLDER}{close}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::stream::SessionStream;
    use crate::session::{BookmarkTarget, Session};
    use ackscope_protocol::{Scenario, Simulation};

    #[test]
    fn a_stream_copied_with_bookmarks_loads_verified_with_them_and_every_event() {
        let dir = std::env::temp_dir().join(format!("ackscope-stream-bookmarks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (src, dst) = (dir.join("live.ron"), dir.join("saved.ron"));
        let scenario = Scenario::default();
        let mut sim = Simulation::new(scenario.clone());
        sim.run_for_secs(1.0);
        let events: Vec<_> = sim.drain_events().collect();
        let header = Session::scenario_only(scenario);
        let mut stream = SessionStream::create(&src, &header).unwrap();
        stream.append(&events, &[]).unwrap();
        stream.finish().unwrap();
        let marks = vec![
            Bookmark { name: "loss burst".into(), at_us: 250_000, target: None },
            Bookmark {
                name: "b".into(),
                at_us: 700_000,
                target: Some(BookmarkTarget::Packet { lane: 0, uid: 12, client: None }),
            },
        ];
        copy_with_bookmarks(&src, &dst, &marks, &[]).unwrap();
        let back = crate::session::load_verified(&dst, crate::session::Verify::Checksum).unwrap();
        assert_eq!(back.bookmarks, marks);
        assert_eq!(back.events, events);
        // Again over the copy: the bookmarks are replaced, not doubled.
        let again = dir.join("again.ron");
        copy_with_bookmarks(&dst, &again, &marks[..1], &[]).unwrap();
        let back = crate::session::load_verified(&again, crate::session::Verify::Checksum).unwrap();
        assert_eq!(back.bookmarks, marks[..1]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
