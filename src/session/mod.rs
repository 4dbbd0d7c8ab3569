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
//! which keeps a recording around 40-50 bytes per event. Version 3 adds what a recording of
//! several clients or of another origin than the simulation needs: an event of another client
//! than the first carries it as a third element, and the header may say the lane's `origin`,
//! its `protocol` and its `clients`' names and groups. Versions 1 (whose log held only parameter
//! changes, as `changes`) and 2 still load as they did; everything is written back as version 3
//! (a one-client simulated recording's text differs from version 2's only in the version).
//!
//! A game's own event stream is read and written as JSON lines ([`jsonl`]).

mod codec;
mod event_line;
mod fast_load;
pub mod jsonl;
pub mod jsonl_export;
mod lines;
pub mod payloads;
mod progress;
mod rerun;
mod ron_line;
mod save;
pub mod stream;
pub mod stream_bookmarks;
mod stream_load;
pub mod stream_writer;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ackscope_protocol::{Action, Event, ParamChange, Scenario, SimTime, Step, Strategy};

use crate::lane::{ClientInfo, Origin, Protocol, WireFormat};
use crate::params::strict;
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

pub use progress::{Phase, Progress};
pub use rerun::{rerun, rerun_all, run_lane, run_lane_on};
pub use save::{remove_stale_temps, save, save_with_progress, to_text, write_atomic};
pub use stream_load::{load_streaming, Loading};

/// Version of the file layout; bumped on incompatible changes. Versions 1 and 2 are still read.
pub const FORMAT_VERSION: u32 = 3;

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
    /// The scenario the run started from (seed, strategy, workload, link, script); a lane of
    /// another origin has none (this is then the default, and unused).
    #[serde(default)]
    pub scenario: Scenario,
    /// Where the first lane's events came from, when not from `scenario` in this process
    /// (version 3: a game's event stream, a capture, a proxy, a UDP peer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// What that lane ran, by name (a strategy's, or a game's own protocol), when it has no
    /// scenario to say so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// How that lane's packets are laid out (`reliable_io`, `ue4`, `notify`, `slices`, `opaque`),
    /// when `protocol` is not a strategy that says so: a proxy's decoded protocol (ENet, KCP:
    /// `opaque`; a reliable.io-style header: `reliable_io`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire: Option<String>,
    /// The clients the source named, with their groups (version 3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<ClientInfo>,
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
    /// Named instants the user kept (the window's bookmarks); absent when there are none, so
    /// files without bookmarks read and write exactly as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bookmarks: Vec<Bookmark>,
    /// The exact bytes of the first lane's datagrams, where its source had them (a UDP run, a
    /// proxy, a capture); absent when there are none, so files without them read and write
    /// exactly as before ([`payloads`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub payloads: Vec<payloads::SavedPayload>,
    /// A/B: the exact bytes of the second lane's datagrams, kept as `payloads` keeps the first
    /// lane's (absent when there are none, so every file without them reads and writes as before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ab_payloads: Vec<payloads::SavedPayload>,
    /// FNV-1a 64 of the file text with these digits zeroed; absent in hand-written scenarios.
    #[serde(default)]
    pub checksum: Option<String>,
}

/// A named instant of a recording, optionally on a packet or a message of one lane: the
/// window's bookmarks, kept in the session so they come back with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bookmark {
    pub name: String,
    /// The instant, in microseconds of virtual time.
    pub at_us: u64,
    /// What was selected when it was made, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<BookmarkTarget>,
}

/// What a bookmark points at besides its instant (`lane`: 0 the first lane, 1 the A/B lane).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum BookmarkTarget {
    /// Link send `uid` of `client` (uids count per client: a recording of several clients has
    /// a uid 12 in each). `client` is left out for the first client, so one-client files read
    /// and write as before.
    Packet {
        lane: usize,
        uid: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<ackscope_protocol::ClientId>,
    },
    /// Message `id` sent by `side`.
    Message { lane: usize, side: ackscope_protocol::Side, id: u64 },
}

impl Session {
    /// Refuses a session whose scenario, script or action logs hold a value the parameter table
    /// refuses ([`crate::params::validate`]), or A/B lanes without the second strategy.
    pub fn validate(&self) -> Result<()> {
        use crate::params::validate::{scenario, steps};
        if !self.is_simulated() {
            if self.ab.is_some() || !self.ab_events.is_empty() {
                bail!("an A/B lane needs a simulated first lane (this one's origin is {})", self.origin_text());
            }
            return Ok(());
        }
        scenario(&self.scenario)?;
        steps(&self.scenario, &self.actions, "actions")?;
        if let Some(b) = self.ab {
            steps(&Scenario { strategy: b, ..self.scenario.clone() }, &self.ab_actions, "ab_actions")?;
        } else if !self.ab_actions.is_empty() || !self.ab_events.is_empty() || !self.ab_payloads.is_empty() {
            bail!("ab_actions, ab_events or ab_payloads are given without `ab` (the second lane's strategy)");
        }
        Ok(())
    }

    fn origin_text(&self) -> String {
        self.origin.as_ref().map_or_else(|| "simulated".into(), Origin::describe)
    }

    /// A session header for `scenario` with no events (a scenario file).
    pub fn scenario_only(scenario: Scenario) -> Self {
        Self {
            format_version: FORMAT_VERSION,
            app_version: env!("CARGO_PKG_VERSION").to_string(),
            transport: Transport::InProcess,
            scenario,
            origin: None,
            protocol: None,
            wire: None,
            clients: Vec::new(),
            actions: Vec::new(),
            changes: Vec::new(),
            duration_us: 0,
            events: Vec::new(),
            ab: None,
            ab_actions: Vec::new(),
            ab_events: Vec::new(),
            bookmarks: Vec::new(),
            payloads: Vec::new(),
            ab_payloads: Vec::new(),
            checksum: None,
        }
    }

    /// The same session without events (header, action logs, duration), copied; without the
    /// datagrams' bytes too, which describe those events.
    pub fn header(&self) -> Session {
        Session {
            format_version: self.format_version,
            app_version: self.app_version.clone(),
            transport: self.transport,
            scenario: self.scenario.clone(),
            origin: self.origin.clone(),
            protocol: self.protocol.clone(),
            wire: self.wire.clone(),
            clients: self.clients.clone(),
            actions: self.actions.clone(),
            changes: self.changes.clone(),
            duration_us: self.duration_us,
            events: Vec::new(),
            ab: self.ab,
            ab_actions: self.ab_actions.clone(),
            ab_events: Vec::new(),
            bookmarks: self.bookmarks.clone(),
            // The bytes belong to these events: a re-run or a rewrite that takes this header
            // brings events of its own.
            payloads: Vec::new(),
            ab_payloads: Vec::new(),
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

    /// True when the first lane was simulated from the scenario (in this process, or its
    /// endpoints over UDP): only such a recording can be re-run.
    pub fn is_simulated(&self) -> bool {
        self.origin.as_ref().is_none_or(|o| matches!(o, Origin::Simulated | Origin::UdpLoopback))
    }

    /// What the first lane ran first: the stream's protocol, or the scenario's strategy.
    pub fn protocol(&self) -> Protocol {
        match (&self.protocol, self.is_simulated()) {
            (Some(name), false) => Protocol::named(name, self.wire.as_deref().and_then(WireFormat::parse)),
            _ => Protocol::of(self.scenario.strategy),
        }
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

pub(super) const CHECKSUM_PLACEHOLDER: &str = "0000000000000000";
pub(super) const CHECKSUM_KEY: &str = "checksum:Some(\"";
/// Bytes between two progress reports while reading, checking or writing.
pub(super) const PROGRESS_STEP: usize = 1 << 20;

/// FNV-1a 64 over `parts` in order, reporting the bytes hashed to `progress`.
pub(super) fn fnv1a(parts: &[&[u8]], progress: Option<&Progress>) -> u64 {
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
    if version < 3 && (session.origin.is_some() || session.protocol.is_some() || !session.clients.is_empty()) {
        bail!("{origin}: `origin`, `protocol` and `clients` are version 3 fields (this file says version {version})");
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
        Ok(v @ (1 | 2 | FORMAT_VERSION)) => Ok(v),
        Ok(v) => bail!("{origin}: format version {v} is not supported (this ackscope reads 1 to {FORMAT_VERSION})"),
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
