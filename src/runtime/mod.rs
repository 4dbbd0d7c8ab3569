//! Background threads that run the protocol endpoints and the link in real time for the app.
//!
//! The UI talks to a run only through channels: it sends timed [`Action`]s, each for some of the
//! run's lanes ([`Lanes`]), and receives [`Batch`]es of events. Both channels are bounded; the UI never blocks on them (it uses `try_send`/`try_recv`),
//! and the run thread never drops an event: when the UI falls behind, batches wait in the thread's
//! own backlog until there is room, and the run thread requests a repaint whenever it delivers.
//!
//! Each endpoint runs on its own thread ([`threaded_peer`]); this thread owns the link and virtual
//! time between them and sequences every call, so a live run is as deterministic as a headless one.
//! A run has one or two *lanes*: in A/B mode the same scenario runs under two strategies on one
//! thread, stepped to the same virtual time, so both see the identical link trace (the link's
//! draws are keyed by send time) and every difference on screen comes from the strategy.
//! The UI's verbs are the protocol's [`Action`]s themselves (a typed parameter change, a burst, a
//! chunk, a restart, a strategy change, pause and resume): each is applied with
//! [`action::apply_and_record`] at the virtual instant the run thread reached (after everything
//! due then), so it is both in the events and in the lane's action log ([`Batch::actions`]), and a
//! saved session re-runs identically.
//!
//! Every transport here runs the protocol crate's `EndpointDriver` (the in-process one through
//! `Simulation`, UDP one driver per endpoint thread) and owns only sockets, clocks and channels.

pub mod action;
pub mod clock;
pub mod continued;
pub mod endpoint_thread;
pub mod threaded_peer;
pub mod udp;
pub mod udp_truth;
pub mod uid_book;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use ackscope_protocol::{Action, Event, Scenario, SimTime, Simulation, Step};
use crossbeam_channel::{bounded, Receiver, Sender, TrySendError};

/// Which lanes of a run an action is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lanes {
    /// Every lane (a parameter change, a restart, pause and resume, a burst: both strategies of an
    /// A/B run meet the same change at the same instant).
    All,
    /// One lane (0: the first), as a strategy change of one side of an A/B run is.
    One(usize),
}

impl Lanes {
    pub fn includes(self, lane: usize) -> bool {
        match self {
            Lanes::All => true,
            Lanes::One(l) => l == lane,
        }
    }
}

/// Events (and actions) from one lane since the previous batch.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub lane: usize,
    pub events: Vec<Event>,
    /// The actions applied, each at the virtual instant it was applied: the lane's action log.
    pub actions: Vec<Step>,
    /// An action the run refused (bad name or value), to show the user.
    pub error: Option<String>,
}

/// How often the run thread advances virtual time and hands events to the UI.
const TICK: Duration = Duration::from_millis(8);
/// Most virtual time the run thread simulates before it hands events over and reads the
/// window's actions again. A run that cannot keep up with the wall clock (a busy machine, many
/// clients) would otherwise take ever longer steps to reach the wall clock's instant (a step of
/// a minute was seen), with Stop, Pause and every edit waiting for the step to end.
const MAX_STEP_US: u64 = 50_000;
/// Virtual time the run thread steps before it looks for the window's commands again (a
/// normal step is one [`TICK`]; a run behind the wall clock steps up to [`MAX_STEP_US`]).
const SLICE_US: u64 = 8_000;
/// Batches in flight to the UI before the run thread keeps them in its backlog.
const EVENT_CHANNEL_BATCHES: usize = 256;

/// How far a live run has got, as the window needs it to say when it is behind and why.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Progress {
    /// The virtual instant every lane has been run to.
    pub reached: SimTime,
    /// Wall time since the run thread last caught up with the wall clock (0 while paused): a
    /// run whose thread cannot keep up (a loaded machine, too many clients) lags here.
    pub behind_wall: Duration,
    /// Events the run produced that the window has not taken yet (in the channel or the run
    /// thread's backlog).
    pub waiting_events: usize,
}

/// What the run thread shares with the window about its progress (atomics: neither waits).
#[derive(Debug, Default)]
struct SharedProgress {
    reached_us: AtomicU64,
    /// When `reached_us` was the wall clock's instant, in µs since [`epoch`].
    reached_at_us: AtomicU64,
    paused: AtomicBool,
    waiting_events: AtomicUsize,
}

/// One instant all wall readings of progress count from.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn wall_us() -> u64 {
    epoch().elapsed().as_micros() as u64
}

impl SharedProgress {
    fn read(&self) -> Progress {
        let at = self.reached_at_us.load(Ordering::Acquire);
        let behind_us = if self.paused.load(Ordering::Acquire) { 0 } else { wall_us().saturating_sub(at) };
        Progress {
            reached: SimTime(self.reached_us.load(Ordering::Acquire)),
            behind_wall: Duration::from_micros(behind_us),
            waiting_events: self.waiting_events.load(Ordering::Acquire),
        }
    }
}

/// Simulations running on a background thread, paced against the wall clock.
pub struct LiveRun {
    /// Dropped to stop the thread (it applies what was sent before, then ends).
    commands: Option<Sender<(Lanes, Action)>>,
    events: Receiver<Batch>,
    thread: Option<std::thread::JoinHandle<VecDeque<Batch>>>,
    progress: Arc<SharedProgress>,
    /// What the run thread still held when it stopped (the window had fallen behind): handed
    /// over after the channel's batches, so stopping loses no event.
    left: std::sync::Mutex<VecDeque<Batch>>,
}

impl LiveRun {
    /// Starts one lane per scenario at time 0; `wake` is called whenever batches are ready.
    pub fn spawn(lanes: Vec<Scenario>, wake: impl Fn() + Send + 'static) -> Self {
        Self::spawn_replaying(lanes.into_iter().map(|s| (s, Vec::new())).collect(), wake)
    }

    /// Starts one lane per scenario at time 0, each applying its recorded `actions` when virtual
    /// time reaches their instants (a recording run again live: the same events as its re-run,
    /// until the user acts). A recorded pause is logged again but does not pause the clock.
    pub fn spawn_replaying(lanes: Vec<(Scenario, Vec<Step>)>, wake: impl Fn() + Send + 'static) -> Self {
        let (cmd_tx, cmd_rx) = bounded::<(Lanes, Action)>(1024);
        let (ev_tx, ev_rx) = bounded::<Batch>(EVENT_CHANNEL_BATCHES);
        let progress = Arc::new(SharedProgress { reached_at_us: AtomicU64::new(wall_us()), ..Default::default() });
        let shared = Arc::clone(&progress);
        let thread = std::thread::Builder::new()
            .name("ackscope-sim".into())
            .spawn(move || run_thread(lanes, cmd_rx, ev_tx, &shared, wake))
            .expect("spawn simulation thread");
        Self { commands: Some(cmd_tx), events: ev_rx, thread: Some(thread), progress, left: Default::default() }
    }

    /// How far the run has got and what waits for the window.
    pub fn progress(&self) -> Progress {
        self.progress.read()
    }

    /// Queues `action` for `lanes` without blocking; false when the run has ended or is flooded.
    pub fn send(&self, lanes: Lanes, action: Action) -> bool {
        self.commands.as_ref().is_some_and(|c| c.try_send((lanes, action)).is_ok())
    }

    /// Every batch available now.
    pub fn try_batches(&self) -> impl Iterator<Item = Batch> + '_ {
        let left = std::iter::from_fn(|| self.left.lock().unwrap_or_else(|e| e.into_inner()).pop_front());
        self.events.try_iter().chain(left).inspect(|b| {
            self.progress.waiting_events.fetch_sub(b.events.len(), Ordering::AcqRel);
        })
    }

    /// True while the thread runs.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Stops the thread and waits for it; the events it had not delivered yet stay to be taken.
    pub fn stop(&mut self) {
        self.commands = None;
        if let Some(t) = self.thread.take() {
            if let Ok(rest) = t.join() {
                self.left.lock().unwrap_or_else(|e| e.into_inner()).extend(rest);
            }
        }
    }
}

impl Drop for LiveRun {
    fn drop(&mut self) {
        self.stop();
    }
}

struct Lane {
    sim: Simulation,
    actions: Vec<Step>,
    error: Option<String>,
    /// Recorded actions still to apply, in time order.
    pending: VecDeque<Step>,
}

impl Lane {
    /// Runs the lane to `now`, applying each pending recorded action at its instant on the way.
    fn run_until(&mut self, now: SimTime) {
        while self.pending.front().is_some_and(|s| s.at <= now) {
            let step = self.pending.pop_front().expect("checked");
            self.sim.run_until(step.at);
            if let Err(e) = action::apply_and_record(&mut self.sim, &mut self.actions, step.action) {
                self.error = Some(format!("recorded action at {:.3} s: {e:#}", step.at.as_secs_f64()));
            }
        }
        self.sim.run_until(now);
    }
}

/// Applies `action` to each of `lanes`, at each lane's current instant, and logs it.
fn apply(lanes: &mut [Lane], which: Lanes, action: &Action) {
    for (_, lane) in lanes.iter_mut().enumerate().filter(|(i, _)| which.includes(*i)) {
        if let Err(e) = action::apply_and_record(&mut lane.sim, &mut lane.actions, action.clone()) {
            lane.error = Some(format!("{e:#}"));
        }
    }
}

fn run_thread(
    scenarios: Vec<(Scenario, Vec<Step>)>,
    commands: Receiver<(Lanes, Action)>,
    events: Sender<Batch>,
    progress: &SharedProgress,
    wake: impl Fn(),
) -> VecDeque<Batch> {
    let mut lanes: Vec<Lane> = scenarios
        .into_iter()
        .map(|(mut s, mut log)| {
            log.sort_by_key(|step| step.at);
            let pending = log.into();
            // The trace link.trace names is read here, on the run's thread.
            let error = crate::fit::links::resolve(&mut s).err().map(|e| format!("{e:#}"));
            Lane { sim: threaded_peer::threaded_simulation(s), actions: Vec::new(), error, pending }
        })
        .collect();
    let mut paused = false;
    // Virtual time = sim_base + (wall now - wall_base) while running.
    let mut wall_base = Instant::now();
    let mut sim_base = SimTime::ZERO;
    let mut backlog: VecDeque<Batch> = VecDeque::new();
    let mut reached = SimTime::ZERO;
    let mut behind = false;
    loop {
        // Behind the wall clock, the next step starts at once.
        let first = match commands.recv_timeout(if behind { Duration::ZERO } else { TICK }) {
            Ok(cmd) => Some(cmd),
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => None,
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return backlog,
        };
        // Virtual time first, so a change lands at the instant the user made it.
        let asked_at = wall_us();
        let wall_now = if paused { sim_base } else { sim_base.plus_micros(wall_base.elapsed().as_micros() as u64) };
        let target = wall_now.min(reached.plus_micros(MAX_STEP_US)).max(reached);
        // In slices, looking for the window's commands after each: a command that comes while
        // the step runs stops it there, so a pause lands where the run was when the user
        // paused, not after the rest of a step that a saturated machine draws out to half a
        // second of wall time (0.5-0.66 s was seen at 1000 packets/s).
        let mut cmds: Vec<(Lanes, Action)> = first.into_iter().collect();
        let mut now = reached;
        while now < target {
            now = now.plus_micros(SLICE_US).min(target);
            for lane in &mut lanes {
                lane.run_until(now);
            }
            let before = cmds.len();
            cmds.extend(commands.try_iter());
            if cmds.len() > before {
                break;
            }
        }
        behind = now < wall_now;
        reached = now;
        // Reached `now`, the wall clock's instant at `asked_at` less what the step left for the
        // next: the window reads how far the wall clock has gone on since.
        progress.reached_us.store(now.0, Ordering::Release);
        progress.reached_at_us.store(asked_at.saturating_sub(wall_now.0.saturating_sub(now.0)), Ordering::Release);
        cmds.extend(commands.try_iter());
        for (which, action) in cmds {
            // Pause and resume freeze and restart the run's clock, once for every lane.
            match action {
                Action::Pause if !paused => {
                    paused = true;
                    progress.paused.store(true, Ordering::Release);
                    sim_base = now;
                }
                Action::Resume if paused => {
                    paused = false;
                    progress.paused.store(false, Ordering::Release);
                    wall_base = Instant::now();
                    sim_base = now;
                }
                Action::Pause | Action::Resume => continue,
                _ => {}
            }
            apply(&mut lanes, which, &action);
        }
        for (i, lane) in lanes.iter_mut().enumerate() {
            let events: Vec<Event> = lane.sim.drain_events().collect();
            let actions = std::mem::take(&mut lane.actions);
            let error = lane.error.take();
            if !events.is_empty() || !actions.is_empty() || error.is_some() {
                progress.waiting_events.fetch_add(events.len(), Ordering::AcqRel);
                backlog.push_back(Batch { lane: i, events, actions, error });
            }
        }
        let mut delivered = false;
        while let Some(batch) = backlog.pop_front() {
            match events.try_send(batch) {
                Ok(()) => delivered = true,
                Err(TrySendError::Full(batch)) => {
                    backlog.push_front(batch);
                    break;
                }
                Err(TrySendError::Disconnected(_)) => return backlog,
            }
        }
        if delivered {
            wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackscope_protocol::ParamChange;

    #[test]
    fn live_run_produces_events_records_changes_and_stops_cleanly() {
        let mut run = LiveRun::spawn(vec![Scenario::default(), Scenario::default()], || {});
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut n = [0usize; 2];
        let mut changes = Vec::new();
        let change = ParamChange::parse("link.loss_percent", "20");
        assert!(run.send(Lanes::All, Action::Set(change.clone())));
        while (n[0] < 200 || n[1] < 200 || changes.is_empty()) && Instant::now() < deadline {
            for b in run.try_batches() {
                n[b.lane] += b.events.len();
                changes.extend(b.actions);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(n[0] >= 200 && n[1] >= 200, "{n:?}");
        assert_eq!(changes.len(), 2, "one recorded change per lane: {changes:?}");
        assert!(changes.iter().all(|c| c.as_set() == Some(&change)));
        run.stop();
        assert!(!run.is_running());
    }
}
