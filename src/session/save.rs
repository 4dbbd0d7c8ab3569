//! Writing session files: the borrowing encoder (a save writes the events where they are, on a
//! worker thread), the checksum filled in, and atomic replacement of the target.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ackscope_protocol::{Event, Scenario, Step, Strategy};
use anyhow::{anyhow, bail, Context, Result};
use serde::Serialize;

use super::payloads::SavedPayload;
use super::{
    codec, event_line, fnv1a, ron_line, Bookmark, Phase, Progress, Session, Transport, CHECKSUM_KEY,
    CHECKSUM_PLACEHOLDER,
};
use super::{FORMAT_VERSION, PROGRESS_STEP};
use crate::lane::{ClientInfo, Origin};

/// The same layout as [`Session`], borrowing, so a save writes the events where they are.
#[derive(Serialize)]
struct SessionOut<'a> {
    format_version: u32,
    app_version: &'a str,
    transport: Transport,
    scenario: &'a Scenario,
    #[serde(skip_serializing_if = "Option::is_none")]
    origin: Option<&'a Origin>,
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wire: Option<&'a str>,
    #[serde(skip_serializing_if = "<[ClientInfo]>::is_empty")]
    clients: &'a [ClientInfo],
    actions: &'a [Step],
    duration_us: u64,
    /// Empty when [`encode`] writes the lines itself.
    #[serde(serialize_with = "codec::serialize")]
    events: &'a [Event],
    ab: Option<Strategy>,
    ab_actions: &'a [Step],
    #[serde(serialize_with = "codec::serialize")]
    ab_events: &'a [Event],
    #[serde(skip_serializing_if = "<[Bookmark]>::is_empty")]
    bookmarks: &'a [Bookmark],
    #[serde(skip_serializing_if = "<[SavedPayload]>::is_empty")]
    payloads: &'a [SavedPayload],
    #[serde(skip_serializing_if = "<[SavedPayload]>::is_empty")]
    ab_payloads: &'a [SavedPayload],
    checksum: Option<&'a str>,
}

/// The text layout of session files: one event (and one action) per line.
pub(super) fn pretty() -> ron::ser::PrettyConfig {
    ron::ser::PrettyConfig::new()
        .depth_limit(2)
        .indentor(String::new())
        .separator(String::new())
        .struct_names(false)
        .compact_arrays(false)
}

/// Serialises a session to RON text with its checksum filled in.
pub fn to_text(session: &Session) -> Result<String> {
    encode(session, [&session.events, &session.ab_events], None)
}

/// `header` with `lanes` (the first lane's events, then the A/B lane's) in place of its own, as
/// RON text with the checksum filled in.
///
/// `ron` writes everything but the events (the header is small); the event lines, nearly all of
/// the file, are written by [`ron_line`] into the places `ron` left empty, exactly as `ron` would
/// have written them (its tests compare the two byte for byte).
fn encode(header: &Session, lanes: [&[Event]; 2], progress: Option<&Arc<Progress>>) -> Result<String> {
    if let Some(p) = progress {
        p.start(Phase::Encoding, (lanes[0].len() + lanes[1].len()) as u64);
    }
    let out = session_out(header, [&[], &[]]);
    let head = ron::ser::to_string_pretty(&out, pretty()).context("serialising the session")?;
    let slot =
        |key: &str| head.find(key).map(|at| at + key.len()).ok_or_else(|| anyhow!("{key} missing from the output"));
    let (events_at, ab_at) = (slot("\nevents:[")?, slot("\nab_events:[")?);
    let mut text = String::with_capacity(head.len() + LINE_BYTES_GUESS * (lanes[0].len() + lanes[1].len()));
    text.push_str(&head[..events_at]);
    write_lines(&mut text, lanes[0], progress, 0)?;
    text.push_str(&head[events_at..ab_at]);
    write_lines(&mut text, lanes[1], progress, lanes[0].len())?;
    text.push_str(&head[ab_at..]);
    let at =
        text.rfind(CHECKSUM_KEY).ok_or_else(|| anyhow!("checksum field missing from the output"))? + CHECKSUM_KEY.len();
    let sum = format!("{:016x}", fnv1a(&[text.as_bytes()], None));
    text.replace_range(at..at + 16, &sum);
    Ok(text)
}

/// `header` with `lanes` as the borrowing layout `ron` writes.
fn session_out<'a>(header: &'a Session, lanes: [&'a [Event]; 2]) -> SessionOut<'a> {
    SessionOut {
        format_version: FORMAT_VERSION,
        app_version: &header.app_version,
        transport: header.transport,
        scenario: &header.scenario,
        origin: header.origin.as_ref(),
        protocol: header.protocol.as_deref(),
        wire: header.wire.as_deref(),
        clients: &header.clients,
        actions: &header.actions,
        duration_us: header.duration_us,
        events: lanes[0],
        ab: header.ab,
        ab_actions: &header.ab_actions,
        ab_events: lanes[1],
        bookmarks: &header.bookmarks,
        payloads: &header.payloads,
        ab_payloads: &header.ab_payloads,
        checksum: Some(CHECKSUM_PLACEHOLDER),
    }
}

/// [`to_text`] with every event written by `ron` (as it was before [`ron_line`]): the reference
/// the fast writer is checked against.
#[cfg(test)]
pub(super) fn to_text_by_ron(session: &Session) -> Result<String> {
    let out = session_out(session, [&session.events, &session.ab_events]);
    let mut text = ron::ser::to_string_pretty(&out, pretty())?;
    let at = text.rfind(CHECKSUM_KEY).ok_or_else(|| anyhow!("no checksum"))? + CHECKSUM_KEY.len();
    let sum = format!("{:016x}", fnv1a(&[text.as_bytes()], None));
    text.replace_range(at..at + 16, &sum);
    Ok(text)
}

/// Bytes of an event line, about (for the first allocation; recorded sessions average 46-50).
const LINE_BYTES_GUESS: usize = 50;

/// Writes `events` as the lines of an event list whose `[` ends `text` (nothing when empty, as
/// `ron` writes `[]`); `done` events were written before, for progress.
fn write_lines(text: &mut String, events: &[Event], progress: Option<&Arc<Progress>>, done: usize) -> Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    text.push('\n');
    let mut writer = ron_line::LineWriter::default();
    let mut prev = 0i64;
    for (i, e) in events.iter().enumerate() {
        if i % REPORT_EVERY == 0 {
            if let Some(p) = progress {
                p.advance_to((done + i) as u64);
                if p.is_cancelled() {
                    bail!("cancelled");
                }
            }
        }
        let t = e.time.0 as i64;
        if !event_line::write(text, t - prev, e) {
            write_line(&mut writer, text, &codec::Line::of(t - prev, e))?;
        }
        text.push_str(",\n");
        prev = t;
    }
    Ok(())
}

/// Appends one event line to `text` as `ron` writes it.
pub(super) fn write_line(
    writer: &mut ron_line::LineWriter,
    text: &mut String,
    line: &codec::Line<&ackscope_protocol::EventKind>,
) -> Result<()> {
    let mark = text.len();
    if writer.write(text, line).is_err() {
        // Something only `ron` knows how to write (see `ron_line`): let it.
        text.truncate(mark);
        text.push_str(&ron::ser::to_string(line).context("serialising an event")?);
    }
    Ok(())
}

/// Events between two progress reports (and cancel checks).
const REPORT_EVERY: usize = 8192;

/// Saves atomically: writes beside `path`, syncs, renames over it.
pub fn save(session: &Session, path: &Path) -> Result<u64> {
    let text = to_text(session)?;
    write_atomic(path, text.as_bytes(), None)?;
    Ok(text.len() as u64)
}

/// [`save`] of `header` with `lanes`' events (the first lane's, then the A/B lane's) in place of
/// its own, on a worker thread: the events are borrowed, not copied, and each phase is reported
/// to `progress`.
pub fn save_with_progress(
    header: &Session,
    lanes: [&[Event]; 2],
    path: &Path,
    progress: &Arc<Progress>,
) -> Result<u64> {
    let text = encode(header, lanes, Some(progress))?;
    write_atomic(path, text.as_bytes(), Some(progress))?;
    Ok(text.len() as u64)
}

/// Writes `bytes` to a temporary file beside `path` and renames it into place; first removes
/// what interrupted saves left in that directory ([`remove_stale_temps`]).
pub fn write_atomic(path: &Path, bytes: &[u8], progress: Option<&Progress>) -> Result<()> {
    use std::io::Write;
    let origin = path.display().to_string();
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| anyhow!("{origin}: not a file name"))?.to_string_lossy();
    remove_stale_temps(dir);
    let tmp: PathBuf = dir.join(format!(".{name}{TEMP_MARK}{}", std::process::id()));
    if let Some(p) = progress {
        p.start(Phase::Writing, bytes.len() as u64);
    }
    let result = (|| -> Result<()> {
        let mut f =
            std::fs::File::create(&tmp).with_context(|| format!("{origin}: cannot create {}", tmp.display()))?;
        let mut done = 0;
        for block in bytes.chunks(PROGRESS_STEP) {
            f.write_all(block).with_context(|| format!("{origin}: write failed"))?;
            done += block.len();
            if let Some(p) = progress {
                p.advance_to(done as u64);
            }
        }
        f.sync_all().with_context(|| format!("{origin}: sync failed"))?;
        std::fs::rename(&tmp, path).with_context(|| format!("{origin}: cannot replace the file"))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Between a session's name and the saving process's id in a temporary file's name.
pub(super) const TEMP_MARK: &str = ".tmp-";

/// Removes the temporary files interrupted session saves left in `dir`
/// (`.NAME.ron.tmp-PID`, see [`write_atomic`]) whose process no longer runs; the files removed.
///
/// A save killed between writing and renaming leaves its temporary file behind, as large as the
/// session. Files of a process still running are kept (it may be saving right now), including
/// this process's own. Whether a process runs is read from `/proc`; where there is none, only
/// files untouched for a day are taken as abandoned. Errors are ignored: this is tidying up.
pub fn remove_stale_temps(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = stale_temp_pid(&name) else { continue };
        if pid == std::process::id() || process_may_run(pid, &e.path()) {
            continue;
        }
        if std::fs::remove_file(e.path()).is_ok() {
            removed.push(e.path());
        }
    }
    removed.sort();
    removed
}

/// The process id in a session save's temporary file name (`.NAME.ron.tmp-PID`).
fn stale_temp_pid(name: &str) -> Option<u32> {
    let (stem, pid) = name.rsplit_once(TEMP_MARK)?;
    if !name.starts_with('.') || !stem.ends_with(".ron") || stem.len() <= ".ron".len() + 1 {
        return None;
    }
    pid.bytes().all(|b| b.is_ascii_digit()).then(|| pid.parse().ok()).flatten()
}

/// True unless process `pid` is known to have ended (see [`remove_stale_temps`]).
fn process_may_run(pid: u32, file: &Path) -> bool {
    let proc = Path::new("/proc");
    if proc.join("self").exists() {
        return proc.join(pid.to_string()).exists();
    }
    let day = std::time::Duration::from_secs(24 * 3600);
    let age = std::fs::metadata(file).and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
    age.is_none_or(|a| a < day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::load;

    #[test]
    #[cfg(unix)]
    fn stale_temporary_files_of_ended_processes_are_removed() {
        let dir = std::env::temp_dir().join(format!("ackscope-temps-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // A process that has ended: a child we waited for (its id is not reused this quickly).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let me = std::process::id();
        let parent = std::os::unix::process::parent_id();
        let names = [
            format!(".run.ron.tmp-{dead}"),
            format!(".run.ron.tmp-{me}"),
            format!(".other.ron.tmp-{parent}"),
            format!("run.ron.tmp-{dead}"),
            format!(".notes.txt.tmp-{dead}"),
            ".run.ron.tmp-12x".to_string(),
        ];
        for n in &names {
            std::fs::write(dir.join(n), "partial").unwrap();
        }
        assert_eq!(remove_stale_temps(&dir), [dir.join(&names[0])]);
        let left: Vec<String> = names[1..].to_vec();
        for n in &left {
            assert!(dir.join(n).exists(), "{n} was removed");
        }
        // A save cleans its target's directory too.
        std::fs::write(dir.join(&names[0]), "partial").unwrap();
        write_atomic(&dir.join("run.ron"), b"saved", None).unwrap();
        assert!(!dir.join(&names[0]).exists(), "the save left the stale file");
        assert_eq!(std::fs::read(dir.join("run.ron")).unwrap(), b"saved");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_borrowing_encoder_writes_what_the_session_type_would() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/recorded-ue4.ron");
        let s = load(&path).unwrap();
        let text = to_text(&s).unwrap();
        let at = text.rfind(CHECKSUM_KEY).unwrap() + CHECKSUM_KEY.len();
        let unsummed = format!("{}{CHECKSUM_PLACEHOLDER}{}", &text[..at], &text[at + 16..]);
        let owned = Session { checksum: Some(CHECKSUM_PLACEHOLDER.into()), ..s };
        assert!(owned.changes.is_empty(), "version 1's field is never written");
        assert!(ron::ser::to_string_pretty(&owned, pretty()).unwrap() == unsummed, "SessionOut differs from Session");
    }
}
