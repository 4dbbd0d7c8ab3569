//! Session files: a scenario header, every parameter change with its time, and the events (RON).
//!
//! One format serves scenarios and recordings: a scenario file is a session header without
//! events. Files are written with a trailing FNV-1a checksum over the whole text, so a truncated
//! or corrupted recording is refused with a message naming the file and what is wrong instead of
//! loading silently altered data; hand-written scenario files may leave the checksum out. Saves
//! are atomic: the text goes to a temporary file beside the target, is synced, then renamed over
//! it, so a failed save never damages the previous file.
//!
//! Events are stored as `(dt_us, kind)` pairs with the time as a delta from the previous event,
//! which keeps a recording around 40-50 bytes per event.

mod codec;
mod progress;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ackscope_protocol::{Event, Scenario, SimTime, Simulation};
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

pub use progress::{Phase, Progress};

use crate::params::overrides;

/// Version of the file layout; bumped on incompatible changes.
pub const FORMAT_VERSION: u32 = 1;

/// A parameter change applied while a session ran, by dotted `--set` name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub at_us: u64,
    pub name: String,
    pub value: String,
}

/// A scenario or a recorded session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    pub format_version: u32,
    pub app_version: String,
    /// The scenario the run started from (seed, strategy, workload, link, script).
    pub scenario: Scenario,
    /// Live parameter changes in time order (scripted link steps are part of the scenario).
    #[serde(default)]
    pub changes: Vec<Change>,
    /// Virtual time the recording covers, in microseconds.
    #[serde(default)]
    pub duration_us: u64,
    #[serde(default, with = "codec")]
    pub events: Vec<Event>,
    /// FNV-1a 64 of the file text with these digits zeroed; absent in hand-written scenarios.
    #[serde(default)]
    pub checksum: Option<String>,
}

impl Session {
    /// A session header for `scenario` with no events (a scenario file).
    pub fn scenario_only(scenario: Scenario) -> Self {
        Self {
            format_version: FORMAT_VERSION,
            app_version: env!("CARGO_PKG_VERSION").to_string(),
            scenario,
            changes: Vec::new(),
            duration_us: 0,
            events: Vec::new(),
            checksum: None,
        }
    }

    /// True when the file holds a recording, not only a scenario.
    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }
}

/// The same layout as [`Session`], borrowing, so a save writes the events where they are.
#[derive(Serialize)]
struct SessionOut<'a> {
    format_version: u32,
    app_version: &'a str,
    scenario: &'a Scenario,
    changes: &'a [Change],
    duration_us: u64,
    #[serde(serialize_with = "codec::serialize")]
    events: &'a [Event],
    checksum: Option<&'a str>,
}

const CHECKSUM_PLACEHOLDER: &str = "0000000000000000";
const CHECKSUM_KEY: &str = "checksum:Some(\"";
/// Bytes between two progress reports while reading, checking or writing.
const PROGRESS_STEP: usize = 1 << 20;

/// FNV-1a 64 over `parts` in order, reporting the bytes hashed to `progress`.
fn fnv1a(parts: &[&[u8]], progress: Option<&Progress>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut done = 0;
    for p in parts {
        for block in p.chunks(PROGRESS_STEP) {
            for &b in block {
                h ^= b as u64;
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
            done += block.len();
            if let Some(progress) = progress {
                progress.advance_to(done as u64);
            }
        }
    }
    h
}

/// The text layout of session files: one event per line.
fn pretty() -> ron::ser::PrettyConfig {
    ron::ser::PrettyConfig::new()
        .depth_limit(2)
        .indentor(String::new())
        .separator(String::new())
        .struct_names(false)
        .compact_arrays(false)
}

/// Serialises a session to RON text with its checksum filled in.
pub fn to_text(session: &Session) -> Result<String> {
    encode(session, &session.events, None)
}

/// `header` with `events` in place of its own, as RON text with the checksum filled in.
fn encode(header: &Session, events: &[Event], progress: Option<&Arc<Progress>>) -> Result<String> {
    if let Some(p) = progress {
        p.start(Phase::Encoding, events.len() as u64);
    }
    let out = SessionOut {
        format_version: FORMAT_VERSION,
        app_version: &header.app_version,
        scenario: &header.scenario,
        changes: &header.changes,
        duration_us: header.duration_us,
        events,
        checksum: Some(CHECKSUM_PLACEHOLDER),
    };
    let mut text = codec::with_progress(progress.cloned(), || ron::ser::to_string_pretty(&out, pretty()))
        .context("serialising the session")?;
    let at =
        text.rfind(CHECKSUM_KEY).ok_or_else(|| anyhow!("checksum field missing from the output"))? + CHECKSUM_KEY.len();
    let sum = format!("{:016x}", fnv1a(&[text.as_bytes()], None));
    text.replace_range(at..at + 16, &sum);
    Ok(text)
}

/// Parses session text; `origin` names the file in errors.
pub fn from_text(text: &str, origin: &str) -> Result<Session> {
    from_text_with(text, origin, None)
}

/// [`from_text`], reporting the checking and parsing phases to `progress`.
fn from_text_with(text: &str, origin: &str, progress: Option<&Arc<Progress>>) -> Result<Session> {
    check_version(text, origin)?;
    if let Some(key_at) = text.rfind(CHECKSUM_KEY) {
        let at = key_at + CHECKSUM_KEY.len();
        let Some(stored) = text.get(at..at + 16) else { bail!("{origin}: truncated in the checksum") };
        let b = text.as_bytes();
        if let Some(p) = progress {
            p.start(Phase::Checking, b.len() as u64);
        }
        let computed = fnv1a(&[&b[..at], CHECKSUM_PLACEHOLDER.as_bytes(), &b[at + 16..]], progress.map(|p| &**p));
        if u64::from_str_radix(stored, 16).ok() != Some(computed) {
            bail!(
                "{origin}: checksum mismatch (stored {stored}, computed {computed:016x}): the file is corrupted or was edited"
            );
        }
    }
    if let Some(p) = progress {
        // One event per line: the line count bounds the events to parse.
        p.start(Phase::Parsing, text.bytes().filter(|&b| b == b'\n').count() as u64);
    }
    let session: Session = codec::with_progress(progress.cloned(), || ron::from_str(text)).map_err(|e| {
        if progress.is_some_and(|p| p.is_cancelled()) {
            anyhow!("{origin}: cancelled")
        } else {
            anyhow!("{origin}: line {}, column {}: {}", e.span.start.line, e.span.start.col, e.code)
        }
    })?;
    if session.format_version != FORMAT_VERSION {
        bail!(
            "{origin}: format version {} is not supported (this ackscope reads {FORMAT_VERSION})",
            session.format_version
        );
    }
    Ok(session)
}

/// Refuses a wrong version before a full parse (whose errors would be less helpful).
fn check_version(text: &str, origin: &str) -> Result<()> {
    let head: String = text.chars().take(512).collect();
    let Some(i) = head.find("format_version") else {
        bail!("{origin}: not an ackscope session or scenario (no format_version near the start)");
    };
    let digits: String = head[i + "format_version".len()..]
        .trim_start_matches(|c: char| c == ':' || c == '"' || c.is_whitespace())
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    match digits.parse::<u32>() {
        Ok(FORMAT_VERSION) => Ok(()),
        Ok(v) => bail!("{origin}: format version {v} is not supported (this ackscope reads {FORMAT_VERSION})"),
        Err(_) => bail!("{origin}: format_version is not a number"),
    }
}

/// Loads a session or scenario file.
pub fn load(path: &Path) -> Result<Session> {
    load_with(path, None)
}

/// [`load`] on a worker thread: reports each phase to `progress` and stops with an error when
/// it is cancelled.
pub fn load_with_progress(path: &Path, progress: &Arc<Progress>) -> Result<Session> {
    load_with(path, Some(progress))
}

fn load_with(path: &Path, progress: Option<&Arc<Progress>>) -> Result<Session> {
    use std::io::Read;
    let origin = path.display().to_string();
    let mut file = std::fs::File::open(path).with_context(|| format!("{origin}: cannot read"))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if let Some(p) = progress {
        p.start(Phase::Reading, len);
    }
    let mut bytes = Vec::with_capacity(len as usize);
    let mut block = vec![0u8; PROGRESS_STEP];
    loop {
        let n = file.read(&mut block).with_context(|| format!("{origin}: cannot read"))?;
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&block[..n]);
        if let Some(p) = progress {
            p.advance_to(bytes.len() as u64);
            if p.is_cancelled() {
                bail!("{origin}: cancelled");
            }
        }
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| anyhow!("{origin}: not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))?;
    from_text_with(&text, &origin, progress)
}

/// Saves atomically: writes beside `path`, syncs, renames over it.
pub fn save(session: &Session, path: &Path) -> Result<u64> {
    let text = to_text(session)?;
    write_atomic(path, text.as_bytes(), None)?;
    Ok(text.len() as u64)
}

/// [`save`] of `header` with `events` in place of its own, on a worker thread: the events are
/// borrowed, not copied, and each phase is reported to `progress`.
pub fn save_with_progress(header: &Session, events: &[Event], path: &Path, progress: &Arc<Progress>) -> Result<u64> {
    let text = encode(header, events, Some(progress))?;
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
const TEMP_MARK: &str = ".tmp-";

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

/// Applies one recorded change to a running simulation.
pub fn apply_change(sim: &mut Simulation, name: &str, value: &str) -> Result<()> {
    let mut s = sim.scenario().clone();
    overrides::apply(&mut s, &format!("{name}={value}"))?;
    sim.reconfigure(|cur| *cur = s);
    Ok(())
}

/// Applies a change at the simulation's current time and records it, both as a `ParamChanged`
/// event and in `changes`: the one way every live or drain-time change is made, so a re-run from
/// the header repeats it exactly.
pub fn apply_and_record(sim: &mut Simulation, changes: &mut Vec<Change>, name: &str, value: &str) -> Result<()> {
    apply_change(sim, name, value)?;
    sim.record_param_change(name, value);
    changes.push(Change { at_us: sim.now().0, name: name.to_string(), value: value.to_string() });
    Ok(())
}

/// Re-runs a session from its header on virtual time: the same scenario, the same changes at the
/// same instants, for the same duration. For a virtual-time recording the events are identical.
pub fn rerun(session: &Session) -> Result<Vec<Event>> {
    let mut sim = Simulation::new(session.scenario.clone());
    let mut events = Vec::new();
    let mut changes = Vec::new();
    for c in &session.changes {
        sim.run_until(SimTime(c.at_us));
        apply_and_record(&mut sim, &mut changes, &c.name, &c.value)
            .with_context(|| format!("change at {} us", c.at_us))?;
        events.extend(sim.drain_events());
    }
    sim.run_until(SimTime(session.duration_us));
    events.extend(sim.drain_events());
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(ron::ser::to_string_pretty(&owned, pretty()).unwrap() == unsummed, "SessionOut differs from Session");
    }
}
