//! Timed actions: everything that can happen to a run besides its own traffic, at an instant of
//! virtual time.
//!
//! One type serves two lists. A scenario's `script` holds the steps planned in advance (an outage
//! at 20 s, a burst at 12 s); a recorded session's action log holds what the user did while it ran
//! (a parameter edit, *Send burst*, *Restart*...). A re-run applies both at the same virtual
//! instants, so a recording reproduces. In files a step reads
//! `(at_s: 12, action: burst)`, `(at_s: 5, action: send_chunk(kib: 256))` or, for a link change,
//! `(at_s: 20.0, dir: a_to_b, set: (loss_percent: 100.0))` (the form scenario scripts had first;
//! [`repr`] has every spelling).
//!
//! *Restart* and a *strategy* change mean the same inside one recording: the recording is one
//! continuous virtual timeline, and at that instant both endpoints are rebuilt from the scenario
//! in force (every change so far included) and both links start empty (what was in flight is
//! discarded, as it would mean nothing to the new endpoints); send ids keep counting. The driver
//! reports it as a `ParamChanged` marker named `restart` or `strategy`
//! ([`crate::EventKind::is_restart`]), where folds over events start their per-run state afresh.
//!
//! A *transport* change (`transport(udp)`, `transport(in_process)`) is the window's switch between
//! the in-process simulation and real UDP sockets during a run. It too rebuilds both endpoints at
//! its instant, so that is what the protocol does with it (marker `transport`): the window then
//! carries the same recording on over the other transport, while a re-run, which always
//! simulates, restarts its endpoints there and goes on in-process. A recording therefore re-runs
//! exactly up to its first switch to UDP; what ran over real sockets and clocks is simulated.

mod param;
mod repr;

use serde::{Deserialize, Serialize};

pub use param::{ParamChange, ParamValue};

use crate::event::{Side, SimTime};
use crate::link::{LinkPatch, StepDirection};
use crate::strategy::Strategy;

/// Most KiB one `send_chunk` action queues (16 MiB, as `workload.chunk_kib`).
pub const MAX_CHUNK_KIB: u32 = 16 * 1024;

/// Something done to a running pair of endpoints at an instant.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Sets a scenario parameter by its dotted `--set` name (a `strategy` change rebuilds the
    /// endpoints, as [`Action::Strategy`] does).
    Set(ParamChange),
    /// Queues a workload burst (`workload.burst_messages` reliable messages) on `side`.
    Burst { side: Side },
    /// Queues one large block of `kib` KiB on `side` (chunk and fragment strategies).
    SendChunk { side: Side, kib: u32 },
    /// Changes link settings of one or both directions.
    Link { dir: StepDirection, set: LinkPatch },
    /// Rebuilds both endpoints and links from the scenario in force (see the module doc).
    Restart,
    /// Rebuilds both endpoints and links running this strategy.
    Strategy(Strategy),
    /// The user froze the run's clock (a marker: virtual time does not pass while paused).
    Pause,
    /// The user let the clock run again.
    Resume,
    /// The endpoints went on over another transport from here (rebuilt, links empty: see the
    /// module doc).
    Transport(Transport),
}

/// How a run's endpoints talk: the window's "transport" choice, which a recording's header
/// names (for the start of the run) and a `transport` action changes during it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// Both endpoints and the two-way link in one simulation thread (deterministic).
    #[default]
    InProcess,
    /// Each endpoint on its own thread and UDP socket on 127.0.0.1, the link on each receive side.
    Udp,
}

impl Transport {
    /// The name files and markers use: `in_process` or `udp`.
    pub fn name(self) -> &'static str {
        match self {
            Transport::InProcess => "in_process",
            Transport::Udp => "udp",
        }
    }
}

impl Action {
    /// The action's name as files spell it (`set`, `burst`, `send_chunk`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Action::Set(_) => "set",
            Action::Burst { .. } => "burst",
            Action::SendChunk { .. } => "send_chunk",
            Action::Link { .. } => "link",
            Action::Restart => "restart",
            Action::Strategy(_) => "strategy",
            Action::Pause => "pause",
            Action::Resume => "resume",
            Action::Transport(_) => "transport",
        }
    }

    /// True for the actions that rebuild the endpoints (restart, strategy change, a `set` of
    /// `strategy`, which means the same, and a transport change).
    pub fn rebuilds(&self) -> bool {
        match self {
            Action::Restart | Action::Strategy(_) | Action::Transport(_) => true,
            Action::Set(change) => change.is_strategy(),
            _ => false,
        }
    }

    /// Whether this action concerns the endpoint of `side` (a link change concerns the receiving
    /// end of its direction, which owns that link).
    pub fn concerns(&self, side: Side) -> bool {
        match self {
            Action::Burst { side: s } | Action::SendChunk { side: s, .. } => *s == side,
            Action::Link { dir, .. } => dir.includes(side.other().outgoing()),
            _ => true,
        }
    }
}

impl std::fmt::Display for Action {
    /// One line for logs and messages: `set link.loss_percent=20`, `burst on A`, ...
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Action::Set(change) => write!(f, "set {change}"),
            Action::Burst { side } => write!(f, "burst on {side:?}"),
            Action::SendChunk { side, kib } => write!(f, "send a {kib} KiB chunk on {side:?}"),
            Action::Link { dir, set } => write!(f, "link {dir:?} {set:?}"),
            Action::Restart => write!(f, "restart"),
            Action::Strategy(s) => write!(f, "strategy {}", s.name()),
            Action::Pause => write!(f, "pause"),
            Action::Resume => write!(f, "resume"),
            Action::Transport(t) => write!(f, "transport {}", t.name()),
        }
    }
}

/// An action at an instant of virtual time (a scenario script step or an action-log entry).
///
/// Files write the time as `at_s` (seconds; exact to the microsecond) and also accept `at_us`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "repr::StepIn", into = "repr::StepOut")]
pub struct Step {
    pub at: SimTime,
    pub action: Action,
}

impl Step {
    pub fn new(at: SimTime, action: Action) -> Self {
        Self { at, action }
    }

    /// `action` at `at_s` seconds.
    pub fn at_secs(at_s: f64, action: Action) -> Self {
        Self { at: SimTime::from_secs_f64(at_s), action }
    }

    /// The change of a `set` step.
    pub fn as_set(&self) -> Option<&ParamChange> {
        match &self.action {
            Action::Set(change) => Some(change),
            _ => None,
        }
    }

    /// The direction and patch of a link step.
    pub fn as_link(&self) -> Option<(StepDirection, &LinkPatch)> {
        match &self.action {
            Action::Link { dir, set } => Some((*dir, set)),
            _ => None,
        }
    }
}

impl From<crate::link::LinkStep> for Step {
    fn from(s: crate::link::LinkStep) -> Self {
        Step::at_secs(s.at_s, Action::Link { dir: s.dir, set: s.set })
    }
}

/// Sorts steps by time, keeping the order of steps at one instant (the order they were written
/// or done in).
pub fn sort_steps(steps: &mut [Step]) {
    steps.sort_by_key(|s| s.at);
}

#[cfg(test)]
mod tests;
