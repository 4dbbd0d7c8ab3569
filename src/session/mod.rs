//! Session files: a scenario header, the action log, and the events of one or two lanes (RON).
//!
//! One format serves scenarios and recordings: a scenario file is a session header without
//! events. A recording holds the scenario it started from, every action the user took while it
//! ran ([`Step`]s: parameter changes, bursts, chunks, restarts, strategy changes, pauses, each at
//! its virtual instant), and its events; an A/B recording holds the second lane's strategy,
//! actions and events too. A re-run ([`rerun`]) applies the same actions at the same instants and,
//! for an in-process recording, reproduces the events exactly.
//!
//! Files are written with a trailing FNV-1a checksum over the whole text. A recording (a file
//! with events) without a valid checksum is refused with a message naming the file and what is
//! wrong, so an edited or truncated recording never loads silently; `--no-verify` (or
//! [`Verify::Skip`]) opens a hand-edited one anyway. Hand-written scenario files (no events) may
//! leave the checksum out. Every field is read strictly ([`strict`]): unknown names are refused
//! with the nearest valid one, and every value is checked against the parameter table before a
//! run starts. Saves are atomic: the text goes to a temporary file beside the target, is synced,
//! then renamed over it, so a failed save never damages the previous file.
//!
//! Events are stored as `(dt_us, kind)` pairs with the time as a delta from the previous event,
//! which keeps a recording around 40-50 bytes per event. Version 1 files (whose log held only
//! parameter changes, as `changes`) still load; they are written back as version 2.

mod codec;
mod fast_load;
mod lines;
mod progress;
mod rerun;
pub mod stream;
mod stream_load;
pub mod strict;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ackscope_protocol::{Action, Event, ParamChange, Scenario, SimTime, Step, Strategy};
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

pub use progress::{Phase, Progress};
pub use rerun::{rerun, rerun_all, run_lane};
pub use stream_load::{load_streaming, Loading};

/// Version of the file layout; bumped on incompatible changes. Version 1 is still read.
pub const FORMAT_VERSION: u32 = 2;

/// A parameter change as version 1 files recorded it (their whole action log).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Change {
    pub at_us: u64,
    pub name: String,
    pub value: String,
}

impl From<Change> for Step {
    fn from(c: Change) -> Step {
        Step::new(SimTime(c.at_us), Action::Set(ParamChange::parse(&c.name, &c.value)))
    }
}

/// How a live run's endpoints talk: the header names the transport the run started on (only
/// in-process recordings re-run exactly); a `transport` action in the log changes it during the
/// run. Defined in the protocol beside the action.
pub use ackscope_protocol::Transport;

/// A scenario or a recorded session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    pub format_version: u32,
    /// The version that wrote the file; a hand-written scenario may leave it out.
    #[serde(default)]
    pub app_version: String,
    /// How the recording was made: in-process recordings re-run exactly; a UDP one ran on real
    /// time, so a re-run (always in-process) simulates it instead.
    #[serde(default)]
    pub transport: Transport,
    /// The scenario the run started from (seed, strategy, workload, link, script).
    pub scenario: Scenario,
    /// The user's actions on the first lane, in time order (the scenario's own script apart).
    #[serde(default)]
    pub actions: Vec<Step>,
    /// Version 1's log (parameter changes only): moved into `actions` when loaded, never written.
    #[serde(default, skip_serializing)]
    pub changes: Vec<Change>,
    /// Virtual time the recording covers, in microseconds.
    #[serde(default)]
    pub duration_us: u64,
    #[serde(default, with = "codec")]
    pub events: Vec<Event>,
    /// A/B: the second lane's strategy (the same scenario and link trace otherwise).
    #[serde(default)]
    pub ab: Option<Strategy>,
    /// A/B: the second lane's actions (the first lane's, except strategy changes of its own).
    #[serde(default)]
    pub ab_actions: Vec<Step>,
    /// A/B: the second lane's events.
    #[serde(default, with = "codec")]
    pub ab_events: Vec<Event>,
    /// FNV-1a 64 of the file text with these digits zeroed; absent in hand-written scenarios.
    #[serde(default)]
    pub checksum: Option<String>,
}

impl Session {
    /// Refuses a session whose scenario, script or action logs hold a value the parameter table
    /// refuses ([`crate::params::validate`]), or A/B lanes without the second strategy.
    pub fn validate(&self) -> Result<()> {
        use crate::params::validate::{scenario, steps};
        scenario(&self.scenario)?;
        steps(&self.scenario, &self.actions, "actions")?;
        if let Some(b) = self.ab {
            steps(&Scenario { strategy: b, ..self.scenario.clone() }, &self.ab_actions, "ab_actions")?;
        } else if !self.ab_actions.is_empty() || !self.ab_events.is_empty() {
            bail!("ab_actions or ab_events are given without `ab` (the second lane's strategy)");
        }
        Ok(())
    }

    /// A session header for `scenario` with no events (a scenario file).
    pub fn scenario_only(scenario: Scenario) -> Self {
        Self {
            format_version: FORMAT_VERSION,
            app_version: env!("CARGO_PKG_VERSION").to_string(),
            transport: Transport::InProcess,
            scenario,
            actions: Vec::new(),
            changes: Vec::new(),
            duration_us: 0,
            events: Vec::new(),
            ab: None,
            ab_actions: Vec::new(),
            ab_events: Vec::new(),
            checksum: None,
        }
    }

    /// The same session without events (header, action logs, duration), copied.
    pub fn header(&self) -> Session {
        Session {
            format_version: self.format_version,
            app_version: self.app_version.clone(),
            transport: self.transport,
            scenario: self.scenario.clone(),
            actions: self.actions.clone(),
            changes: self.changes.clone(),
            duration_us: self.duration_us,
            events: Vec::new(),
            ab: self.ab,
            ab_actions: self.ab_actions.clone(),
            ab_events: Vec::new(),
            checksum: None,
        }
    }

    /// True when the file holds a recording, not only a scenario.
    pub fn has_events(&self) -> bool {
        !self.events.is_empty() || !self.ab_events.is_empty()
    }

    /// The instant from which the recording ran over real UDP sockets, if it did: 0 when it
    /// started there, else its first `transport(udp)` action. A re-run (always in-process)
    /// reproduces the events before it and simulates the rest.
    pub fn udp_from(&self) -> Option<SimTime> {
        if self.transport == Transport::Udp {
            return Some(SimTime::ZERO);
        }
        self.actions.iter().find(|s| s.action == Action::Transport(Transport::Udp)).map(|s| s.at)
    }

    /// Each lane's scenario and actions: the first lane, then the A/B lane if any.
    pub fn lanes(&self) -> Vec<(Scenario, &[Step])> {
        let mut v = vec![(self.scenario.clone(), &self.actions[..])];
        if let Some(b) = self.ab {
            v.push((Scenario { strategy: b, ..self.scenario.clone() }, &self.ab_actions[..]));
        }
        v
    }
}

/// Whether a load checks the checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// A recording must carry a valid checksum; a scenario file's is checked when present.
    Checksum,
    /// No checksum check (`--no-verify`): for hand-edited recordings.
    Skip,
}

/// The window's `--no-verify`: loads that do not say otherwise skip the check for the rest of
/// the process.
static SKIP_VERIFY: AtomicBool = AtomicBool::new(false);

/// Makes every later [`load`] of this process skip the checksum check (the window's
/// `--no-verify`; the headless commands pass [`Verify`] explicitly).
pub fn skip_verification_from_now_on() {
    SKIP_VERIFY.store(true, Ordering::Relaxed);
}

pub(super) fn default_verify() -> Verify {
    if SKIP_VERIFY.load(Ordering::Relaxed) {
        Verify::Skip
    } else {
        Verify::Checksum
    }
}

/// The same layout as [`Session`], borrowing, so a save writes the events where they are.
#[derive(Serialize)]
struct SessionOut<'a> {
    format_version: u32,
    app_version: &'a str,
    transport: Transport,
    scenario: &'a Scenario,
    actions: &'a [Step],
    duration_us: u64,
    #[serde(serialize_with = "codec::serialize")]
    events: &'a [Event],
    ab: Option<Strategy>,
    ab_actions: &'a [Step],
    #[serde(serialize_with = "codec::serialize")]
    ab_events: &'a [Event],
    checksum: Option<&'a str>,
}

const CHECKSUM_PLACEHOLDER: &str = "0000000000000000";
pub(super) const CHECKSUM_KEY: &str = "checksum:Some(\"";
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

/// The text layout of session files: one event (and one action) per line.
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
    encode(session, [&session.events, &session.ab_events], None)
}

/// `header` with `lanes` (the first lane's events, then the A/B lane's) in place of its own, as
/// RON text with the checksum filled in.
fn encode(header: &Session, lanes: [&[Event]; 2], progress: Option<&Arc<Progress>>) -> Result<String> {
    if let Some(p) = progress {
        p.start(Phase::Encoding, (lanes[0].len() + lanes[1].len()) as u64);
    }
    let out = SessionOut {
        format_version: FORMAT_VERSION,
        app_version: &header.app_version,
        transport: header.transport,
        scenario: &header.scenario,
        actions: &header.actions,
        duration_us: header.duration_us,
        events: lanes[0],
        ab: header.ab,
        ab_actions: &header.ab_actions,
        ab_events: lanes[1],
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

/// Parses session text, checking the checksum; `origin` names the file in errors.
pub fn from_text(text: &str, origin: &str) -> Result<Session> {
    from_text_with(text, origin, None, default_verify())
}

/// [`from_text`] with the checksum check as `verify` says.
pub fn from_text_verified(text: &str, origin: &str, verify: Verify) -> Result<Session> {
    from_text_with(text, origin, None, verify)
}

/// Checks the stored checksum against the text; `Ok(false)` when the file has none.
pub(super) fn check_sum(text: &str, origin: &str, progress: Option<&Arc<Progress>>) -> Result<bool> {
    let Some(key_at) = text.rfind(CHECKSUM_KEY) else { return Ok(false) };
    let at = key_at + CHECKSUM_KEY.len();
    let Some(stored) = text.get(at..at + 16) else { bail!("{origin}: truncated in the checksum") };
    let b = text.as_bytes();
    if let Some(p) = progress {
        p.start(Phase::Checking, b.len() as u64);
    }
    let computed = fnv1a(&[&b[..at], CHECKSUM_PLACEHOLDER.as_bytes(), &b[at + 16..]], progress.map(|p| &**p));
    if u64::from_str_radix(stored, 16).ok() != Some(computed) {
        bail!(
            "{origin}: checksum mismatch (stored {stored}, computed {computed:016x}): the file is corrupted or was \
             edited (--no-verify opens it anyway)"
        );
    }
    Ok(true)
}

/// [`from_text`], reporting the checking and parsing phases to `progress`.
pub(super) fn from_text_with(
    text: &str,
    origin: &str,
    progress: Option<&Arc<Progress>>,
    verify: Verify,
) -> Result<Session> {
    let version = check_version(text, origin)?;
    let summed = match verify {
        Verify::Checksum => check_sum(text, origin, progress)?,
        Verify::Skip => false,
    };
    if let Some(p) = progress {
        // One event per line: the line count bounds the events to parse.
        p.start(Phase::Parsing, text.bytes().filter(|&b| b == b'\n').count() as u64);
    }
    let fast = fast_load::parse(text, origin, progress).transpose()?;
    let session: Session = match fast {
        Some(s) => s,
        None => codec::with_progress(progress.cloned(), || strict::ron_options().from_str(text)).map_err(|e| {
            if progress.is_some_and(|p| p.is_cancelled()) {
                anyhow!("{origin}: cancelled")
            } else {
                anyhow!("{origin}: {}", strict::describe(text, &e))
            }
        })?,
    };
    let mut session = session;
    let has_events = session.has_events();
    finish_header_of(&mut session, origin, version, verify, summed, has_events)?;
    Ok(session)
}

/// Checks and completes a parsed session's header (its events may be parsed apart: `has_events`
/// says whether it has any): a recording without a checksum is refused unless `verify` skips
/// it, version 1's change log becomes the action log, and every value is validated.
pub(super) fn finish_header_of(
    session: &mut Session,
    origin: &str,
    version: u32,
    verify: Verify,
    summed: bool,
    has_events: bool,
) -> Result<()> {
    if verify == Verify::Checksum && !summed && (has_events || session.checksum.is_some()) {
        bail!(
            "{origin}: the recording has no checksum line (it was edited or cut short), so it cannot be verified; \
             --no-verify opens it anyway"
        );
    }
    if session.format_version != version {
        bail!("{origin}: format_version {} is not where it is expected (at the start)", session.format_version);
    }
    if version == 1 {
        session.actions = std::mem::take(&mut session.changes).into_iter().map(Step::from).collect();
        session.format_version = FORMAT_VERSION;
    } else if !session.changes.is_empty() {
        bail!("{origin}: `changes` is how version 1 files wrote the action log; version {version} writes `actions`");
    }
    session.validate().map_err(|e| anyhow!("{origin}: {e}"))
}

/// Refuses a version this build cannot read before a full parse (whose errors would be less
/// helpful); returns the version.
pub(super) fn check_version(text: &str, origin: &str) -> Result<u32> {
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
        Ok(v @ (1 | FORMAT_VERSION)) => Ok(v),
        Ok(v) => bail!("{origin}: format version {v} is not supported (this ackscope reads 1 and {FORMAT_VERSION})"),
        Err(_) => bail!("{origin}: format_version is not a number"),
    }
}

/// Loads a session or scenario file (checking its checksum unless this process was told not to:
/// [`skip_verification_from_now_on`]).
pub fn load(path: &Path) -> Result<Session> {
    load_with(path, None, default_verify())
}

/// [`load`] with the checksum check as `verify` says (`run`/`summary --no-verify`).
pub fn load_verified(path: &Path, verify: Verify) -> Result<Session> {
    load_with(path, None, verify)
}

/// [`load`] on a worker thread: reports each phase to `progress` and stops with an error when
/// it is cancelled.
pub fn load_with_progress(path: &Path, progress: &Arc<Progress>) -> Result<Session> {
    load_with(path, Some(progress), default_verify())
}

fn load_with(path: &Path, progress: Option<&Arc<Progress>>, verify: Verify) -> Result<Session> {
    let origin = path.display().to_string();
    let text = read_text(path, &origin, progress)?;
    from_text_with(&text, &origin, progress, verify)
}

/// The file's text, read in blocks so `progress` sees it grow and can cancel it.
pub(super) fn read_text(path: &Path, origin: &str, progress: Option<&Arc<Progress>>) -> Result<String> {
    use std::io::Read;
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
    String::from_utf8(bytes).map_err(|e| anyhow!("{origin}: not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

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
        assert!(owned.changes.is_empty(), "version 1's field is never written");
        assert!(ron::ser::to_string_pretty(&owned, pretty()).unwrap() == unsummed, "SessionOut differs from Session");
    }
}
