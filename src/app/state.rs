//! Everything the window shows and controls, without any drawing: the scenario, the live run,
//! the recordings, the time cursor, file jobs and settings.
//!
//! Views read it and push [`super::AppCommand`]s; the frame loop applies them through the methods
//! here, which tests call directly too. Nothing in this file knows egui, so the whole behaviour
//! of the window is testable without a display.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ackscope_protocol::{Action, ClientId, ParamChange, Scenario, Side, SimTime, Step, Strategy, FIRST_CLIENT};

use super::clock::{Clock, SystemClock};
use super::files::{Dialogs, FileJob, JobKind, SavedMark};
use super::live_log::LiveLog;
use super::paths::PromptKind;
use super::rerun::RerunJob;
use super::settings::Settings;
use super::tune::TuneJob;
use super::AppCommand;
use crate::app::lag::INGEST_PIECE_EVENTS;
use crate::model::{Playback, Recording};
use crate::params::Catalog;
use crate::report::export::ExportSummary;
use crate::runtime::udp::Transport;
use crate::runtime::{Batch, Lanes};
use crate::source::{self, EventSource, Spec};

/// Longest wall-time gap between two frames that replay counts. A longer one means the window
/// was not drawn (minimised, hidden, the machine asleep): replay then resumes where it was
/// instead of jumping ahead. Slow frames below it count in full.
pub const MAX_FRAME_GAP: Duration = Duration::from_secs(1);

/// Everything the window shows and controls.
pub struct AppState {
    /// The scenario as currently configured (live edits included).
    pub scenario: Scenario,
    /// Second strategy in A/B mode (same scenario, same link trace).
    pub ab: Option<Strategy>,
    /// One recording per strategy shown (two in A/B).
    pub lanes: Vec<Recording>,
    pub(super) live: Option<Box<dyn EventSource>>,
    /// In-process (deterministic, A/B capable) or real UDP sockets on loopback.
    pub transport: Transport,
    pub(super) paused: bool,
    /// The user acted in this frame (the window sets it from egui's input): work spread over
    /// frames, such as indexing a file that is opening, takes a smaller share of each.
    pub interacting: bool,
    pub playback: Playback,
    /// The session file shown or last saved.
    pub file: Option<PathBuf>,
    pub settings: Settings,
    /// A message for the user (bad file, refused change...), dismissible.
    pub error: Option<String>,
    /// What the latest finished export wrote (files, rows, bytes), for a confirmation.
    pub last_export: Option<ExportSummary>,
    /// Size of the next chunk the "send chunk" button queues.
    pub chunk_kib: u32,
    /// A confirmation for the user (a save finished, files tidied), dismissible.
    pub notice: Option<String>,
    /// The in-window path field is open, asking for a file to open or to save to.
    pub prompt: Option<PromptKind>,
    /// A command that would discard an unsaved run, waiting for Save / Discard / Cancel.
    pub guard: Option<AppCommand>,
    /// Parameters set while no run is live, in order: the next Restart starts with them.
    pub replay_edits: Vec<ParamChange>,
    /// The strategies and parameters the panels offer (the registry and the parameter table;
    /// tests add their own).
    pub catalog: Catalog,
    /// The command the guard holds back until the save it asked for has finished.
    pub(super) after_save: Option<AppCommand>,
    /// What was last saved or opened, and its file; the lanes differ from it when something is
    /// unsaved.
    pub(super) saved: Option<(SavedMark, PathBuf)>,
    /// The window may close (nothing unsaved, or the user chose to discard it).
    pub(super) quit: bool,
    /// A file dialog returned at once with nothing: none can be shown here, use the path field.
    pub(super) dialogs_missing: bool,
    /// A re-run of the shown recording in progress, and how the last one compared.
    pub(super) rerun: Option<RerunJob>,
    pub(super) rerun_outcome: Option<String>,
    pub(super) jobs: Vec<FileJob>,
    pub(super) dialogs: Dialogs,
    events_rate: (Instant, usize, f64),
    clock: Box<dyn Clock>,
    /// Wall time of the last replay step, while replay plays.
    last_tick: Option<Duration>,
    /// The Tune tab's sweep and the points it finished.
    pub tune: TuneJob,
    /// Called from other threads when something arrived (requests a repaint).
    pub(super) wake: Arc<dyn Fn() + Send + Sync>,
    /// The live run's stream files and memory window.
    pub live_log: LiveLog,
    /// The client every panel shows (the Clients tab sets it; client 1 until then).
    pub focus: ClientId,
    /// The latest jump to a message, packet or slice ([`super::reveal`]).
    pub reveal: Option<super::Reveal>,
    /// A trimmed run's past read back from its stream files ([`Self::shown_lanes`]).
    pub(super) readback: super::readback::ReadBack,
    /// How far the window trails its live run, and whether it is catching up ([`super::lag`]).
    pub lag: super::lag::Lag,
    /// A second recording shown beside this one in Compare and Summary ([`super::compare_with`]).
    pub compare_with: super::CompareWith,
    /// The mark and the selection ([`super::marks`]; bookmarks are the first lane's).
    pub marks: crate::model::marks::Marks,
    /// The rest of a batch the window took in part ([`Self::pull_events_capped`]): the first
    /// to be taken in next, counted as waiting.
    pub(super) held: Option<Held>,
}

/// A batch taken in part: its events from `from` on are still to be taken in.
///
/// Pieces are copied out of it, each of them alone: cut off with `split_off`, every piece copied
/// the whole rest of the batch again, so a batch of seconds of events (a run thread that was
/// starved) cost the square of its length in copies, in the frames that were already behind.
pub(super) struct Held {
    batch: Batch,
    from: usize,
}

impl Held {
    fn new(batch: Batch) -> Self {
        Self { batch, from: 0 }
    }

    /// Events still to be taken in.
    fn waiting(&self) -> usize {
        self.batch.events.len() - self.from
    }

    /// The next piece of at most `room` events, and the rest if any. The actions and any error
    /// go with the last piece: they came after its events.
    fn piece(mut self, room: usize) -> (Batch, Option<Held>) {
        if self.waiting() <= room {
            self.batch.events.drain(..self.from);
            return (self.batch, None);
        }
        let to = self.from + room;
        let events = self.batch.events[self.from..to].to_vec();
        let piece = Batch { lane: self.batch.lane, events, actions: Vec::new(), error: None };
        self.from = to;
        (piece, Some(self))
    }
}

impl AppState {
    /// A window state; `wake` is called from the run and file threads when results arrive.
    pub fn new(scenario: Scenario, wake: impl Fn() + Send + Sync + 'static) -> Self {
        Self {
            lanes: vec![Recording::new(scenario.clone())],
            scenario,
            ab: None,
            live: None,
            transport: Transport::InProcess,
            paused: false,
            interacting: false,
            playback: Playback::default(),
            file: None,
            settings: Settings::default(),
            error: None,
            last_export: None,
            chunk_kib: 64,
            notice: None,
            prompt: None,
            guard: None,
            replay_edits: Vec::new(),
            catalog: Catalog::builtin(),
            after_save: None,
            saved: None,
            quit: false,
            dialogs_missing: false,
            jobs: Vec::new(),
            dialogs: Dialogs::default(),
            rerun: None,
            rerun_outcome: None,
            events_rate: (Instant::now(), 0, 0.0),
            clock: Box::new(SystemClock::default()),
            last_tick: None,
            tune: TuneJob::default(),
            wake: Arc::new(wake),
            live_log: LiveLog::new(LiveLog::default_dir()),
            focus: FIRST_CLIENT,
            held: None,
            reveal: None,
            readback: Default::default(),
            lag: Default::default(),
            compare_with: Default::default(),
            marks: Default::default(),
        }
    }

    /// The scenarios of each lane for the current strategy selection.
    fn lane_scenarios(&self) -> Vec<Scenario> {
        let mut v = vec![self.scenario.clone()];
        if let Some(b) = self.ab {
            v.push(Scenario { strategy: b, ..self.scenario.clone() });
        }
        v
    }

    /// Runs Tune point `i` (its strategy and values, the sweep's first seed) as a normal live
    /// session, and shows it in the Overview.
    pub(super) fn tune_open(&mut self, i: usize) {
        let Some(scenario) = self.tune.scenario_of(i) else { return };
        self.scenario = scenario;
        self.ab = None;
        self.settings.tab = super::Tab::Overview;
        self.start();
    }

    /// Shows `target` in its tab (after moving the cursor to `seek`, when given).
    pub(super) fn reveal_target(&mut self, target: super::RevealTarget, seek: Option<SimTime>) {
        if let Some(t) = seek {
            self.playback.seek(t);
        }
        self.settings.tab = target.tab();
        let serial = self.reveal.map_or(1, |r| r.serial + 1);
        self.reveal = Some(super::Reveal { serial, target });
    }

    /// Starts a new recording: a live run of the current scenario from time zero.
    pub fn start(&mut self) {
        self.start_replaying(Vec::new());
    }

    /// [`Self::start`], each lane applying its `logs` entry (a recorded action log) when virtual
    /// time reaches each action's instant: a recording run again live, in-process.
    fn start_replaying(&mut self, logs: Vec<Vec<Step>>) {
        let scenarios = self.lane_scenarios();
        // A recorded log re-runs in-process (a `transport` action in it restarts there); A/B
        // runs both strategies in-process (one trace, one clock).
        let replaying = logs.iter().any(|l| !l.is_empty());
        if self.transport == Transport::Udp && scenarios.len() > 1 && !replaying {
            self.error = Some("A/B runs both strategies in-process (one trace, one clock); UDP runs one.".into());
        }
        let spec = match self.transport {
            Transport::Udp if !replaying && scenarios.len() == 1 => Spec::UdpLoopback(Box::new(scenarios[0].clone())),
            _ => {
                let logs = logs.into_iter().chain(std::iter::repeat(Vec::new()));
                Spec::Simulated(scenarios.into_iter().zip(logs).collect())
            }
        };
        self.start_source(spec);
    }

    /// Starts a new recording from `spec`, the one place the window starts a source: the lanes
    /// it will fill (each described by its origin), the source, and the stream files that keep
    /// the whole run.
    pub fn start_source(&mut self, spec: Spec) {
        self.stop();
        self.transport = match spec {
            Spec::UdpLoopback(_) => Transport::Udp,
            _ => Transport::InProcess,
        };
        self.lanes = match &spec {
            Spec::Simulated(lanes) => lanes.iter().map(|(s, _)| Recording::new(s.clone())).collect(),
            Spec::UdpLoopback(s) => {
                vec![Recording::of(crate::model::LaneInfo::of_scenario(s, true), Some((**s).clone()))]
            }
            Spec::EventStream { .. } => source::stream::lanes_of(&spec),
            Spec::Capture { .. } => source::capture::lanes_of(&spec),
            Spec::Proxy(cfg) => vec![source::proxy::lane_of(cfg)],
        };
        for lane in &mut self.lanes {
            lane.transport = self.transport;
        }
        let wake = self.wake.clone();
        let what = match &spec {
            Spec::Simulated(_) => "simulation",
            Spec::UdpLoopback(_) => "UDP transport",
            Spec::EventStream { .. } => "event stream",
            Spec::Capture { .. } => "capture",
            Spec::Proxy(_) => "proxy",
        };
        self.live = match source::start(spec, move || wake()) {
            Ok(run) => Some(run),
            Err(e) => {
                self.error = Some(format!("{what}: {e:#}"));
                None
            }
        };
        if let Some(run) = &self.live {
            for (i, lane) in self.lanes.iter_mut().enumerate() {
                lane.payloads = run.payloads(i);
                if let Some(p) = &lane.payloads {
                    p.set_limits(self.settings.live_limits());
                }
            }
        }
        if self.live.is_some() {
            self.live_log.limits = self.settings.live_limits();
            if let Err(e) = self.live_log.start(&self.lanes) {
                self.error = Some(format!("streaming the run to disk: {e:#}"));
            }
        }
        self.paused = false;
        self.lag.reset();
        self.playback = Playback::default();
        self.file = None;
        self.saved = None;
        self.replay_edits.clear();
    }

    /// Stops the live run and joins its thread; the recording stays for replay.
    pub fn stop(&mut self) {
        if let Some(mut run) = self.live.take() {
            run.stop();
            let rest: Vec<Batch> = run.try_batches().collect();
            self.ingest(rest);
            self.live_log.finish_at(self.end_time().0);
        }
    }

    pub fn is_running(&self) -> bool {
        self.live.as_ref().is_some_and(|r| r.is_running())
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    pub fn set_paused(&mut self, paused: bool) {
        if let Some(run) = &self.live {
            run.send(Lanes::All, if paused { Action::Pause } else { Action::Resume });
            self.paused = paused;
            // The view stops where the user saw it, not after the events queued meanwhile.
            if paused {
                let end = self.end_time();
                self.playback.hold_at(end);
            } else {
                self.playback.release_hold();
            }
        }
    }

    /// Takes `batches` into the lanes, after the rest of a batch taken in part (so a stop or a
    /// change of transport keeps every event, in order).
    pub(super) fn ingest(&mut self, batches: impl IntoIterator<Item = Batch>) -> usize {
        let mut n = 0;
        let held = self.held.take().map(|h| h.piece(usize::MAX).0);
        for b in held.into_iter().chain(batches) {
            if let Some(lane) = self.lanes.get_mut(b.lane) {
                n += b.events.len();
                if let Err(e) = self.live_log.ingest(b.lane, lane, b.events, b.actions) {
                    self.error = Some(format!("streaming the run to disk: {e:#}"));
                }
            }
            if let Some(e) = b.error {
                self.error = Some(e);
            }
        }
        n
    }

    /// Moves every available event batch from the run into the lanes' recordings.
    pub fn pull_events(&mut self) -> usize {
        self.pull_events_within(Duration::MAX).0
    }

    /// Moves event batches from the run into the recordings until `budget` is spent: the events
    /// moved, and whether batches were left waiting for the next frame.
    pub fn pull_events_within(&mut self, budget: Duration) -> (usize, bool) {
        self.pull_events_capped(budget, usize::MAX)
    }

    /// [`Self::pull_events_within`], taking at most `max_events` events. A batch is taken in
    /// pieces of at most [`INGEST_PIECE_EVENTS`], the budget checked after each, and the rest of
    /// one cut short is kept to be taken in first next time: a run thread that was starved and
    /// delivers seconds of events in one batch neither holds one frame for all of it nor lets the
    /// window jump level with the run in one frame without saying it was behind.
    pub fn pull_events_capped(&mut self, budget: Duration, max_events: usize) -> (usize, bool) {
        let Some(run) = self.live.take() else { return (0, false) };
        for (lane, info) in run.take_clients() {
            if let Some(l) = self.lanes.get_mut(lane) {
                l.info.name_client(info);
            }
        }
        if let Some((lane, protocol)) = run.take_protocol() {
            if let Some(l) = self.lanes.get_mut(lane) {
                l.info.switch_to(ackscope_protocol::SimTime::ZERO, protocol);
            }
        }
        let started = Instant::now();
        let mut n = 0;
        let mut left = false;
        let mut next = self.held.take();
        let mut batches = run.try_batches();
        while let Some(h) = next.take().or_else(|| batches.next().map(Held::new)) {
            let room = max_events.saturating_sub(n).clamp(1, INGEST_PIECE_EVENTS);
            let (b, rest) = h.piece(room);
            next = rest;
            n += self.ingest([b]);
            if started.elapsed() >= budget || n >= max_events {
                left = true;
                break;
            }
        }
        drop(batches);
        left |= next.is_some();
        self.held = next;
        self.live = Some(run);
        let (since, count, rate) = &mut self.events_rate;
        *count += n;
        let dt = since.elapsed().as_secs_f64();
        if dt >= 1.0 {
            *rate = *count as f64 / dt;
            *count = 0;
            *since = Instant::now();
        }
        (n, left)
    }

    /// Measures how far the window trails the live run ([`Self::lag`]).
    pub fn update_lag(&mut self) {
        let held = self.held.as_ref().map_or(0, Held::waiting);
        let progress = self.live.as_ref().and_then(|r| r.progress()).map(|mut p| {
            p.waiting_events += held;
            p
        });
        let shown = self.end_time();
        self.lag.update(progress, shown);
    }

    /// Events per second arriving from the live run (last second).
    pub fn events_per_second(&self) -> f64 {
        if self.is_running() {
            self.events_rate.2
        } else {
            0.0
        }
    }

    /// Applies a parameter change now, to the scenario and the running lanes (the same typed
    /// change: the run applies it at the instant it reached and logs it). With no live run it
    /// sets up the next Restart (kept in [`Self::replay_edits`]). A refused change is shown and
    /// goes nowhere.
    pub fn set_param(&mut self, change: ParamChange) {
        let before = self.live.as_ref().map(|_| self.scenario.clone());
        if let Err(e) = crate::params::apply(&mut self.scenario, &change) {
            self.error = Some(format!("{e:#}"));
            return;
        }
        match &self.live {
            Some(run) => {
                // A source that refuses it (a proxy: not a link setting) says why; it then
                // changes nothing, in the run or in the scenario.
                if let Err(e) = run.try_send(Lanes::All, Action::Set(change)) {
                    self.error = Some(e);
                    self.scenario = before.expect("live");
                }
            }
            None => self.replay_edits.push(change),
        }
    }

    /// True while a run is live (its thread running), false in replay.
    pub fn is_live(&self) -> bool {
        self.live.is_some()
    }

    /// Changes the strategy (and the A/B partner). In a live run with the same number of lanes
    /// it is an action at the current instant on each lane whose strategy changes (its endpoints
    /// are rebuilt; the recording goes on); turning A/B on or off, or with no live run, it starts
    /// a new recording.
    pub fn set_strategy(&mut self, strategy: Strategy, ab: Option<Strategy>) {
        let ab = ab.filter(|b| *b != strategy);
        let lanes_stay = self.ab.is_some() == ab.is_some();
        let was = [Some(self.scenario.strategy), self.ab];
        self.scenario.strategy = strategy;
        self.ab = ab;
        match &self.live {
            Some(run) if lanes_stay && run.is_running() => {
                for (lane, (now, before)) in [Some(strategy), ab].into_iter().zip(was).enumerate() {
                    if let (Some(s), true) = (now, now != before) {
                        run.send(Lanes::One(lane), Action::Strategy(s));
                    }
                }
            }
            _ => self.start(),
        }
    }

    /// *Restart*: in a live run, rebuilds both endpoints and links now on every lane (an action
    /// in the recording, which goes on); on a shown recording, runs it again live from time zero
    /// with its recorded actions at their instants, starting from its scenario with the edits
    /// made in replay ([`Self::replay_edits`]); otherwise starts a new recording.
    pub fn restart(&mut self) {
        match &self.live {
            Some(run) if run.is_running() => {
                run.send(Lanes::All, Action::Restart);
            }
            _ => {
                let logs: Vec<Vec<Step>> = self.lanes.iter().map(|l| l.actions.clone()).collect();
                if let Some(scenario) = self.lanes.first().and_then(|l| l.scenario.clone()) {
                    // The recording's own start, then what was edited in replay (each already
                    // checked when it was made): the recorded actions follow at their instants.
                    self.scenario = scenario;
                    for change in &self.replay_edits {
                        let _ = crate::params::apply(&mut self.scenario, change);
                    }
                }
                self.start_replaying(logs);
            }
        }
    }

    /// Queues a burst of reliable messages on side A.
    pub fn burst(&mut self) {
        if let Some(run) = &self.live {
            run.send(Lanes::All, Action::Burst { side: Side::A });
        }
    }

    /// Queues a chunk of `chunk_kib` on side A.
    pub fn send_chunk(&mut self) {
        if let Some(run) = &self.live {
            run.send(Lanes::All, Action::SendChunk { side: Side::A, kib: self.chunk_kib.max(1) });
        }
    }

    /// Latest time recorded on any lane.
    pub fn end_time(&self) -> SimTime {
        self.lanes.iter().map(|l| l.end_time()).max().unwrap_or(SimTime::ZERO)
    }

    /// The time cursor.
    pub fn cursor(&self) -> SimTime {
        self.playback.cursor(self.end_time())
    }

    /// Uses `clock` for replay's wall time instead of the system's (tests move it by hand).
    pub fn set_clock(&mut self, clock: impl Clock + 'static) {
        self.clock = Box::new(clock);
        self.last_tick = None;
    }

    /// Moves a playing replay by the wall time since the last step times the speed. The first
    /// step after play starts (or after a gap over [`MAX_FRAME_GAP`]) only starts measuring.
    pub fn advance_playback(&mut self) {
        if !self.playback.is_replaying() {
            self.last_tick = None;
            return;
        }
        let now = self.clock.now();
        let wall = self.last_tick.map_or(Duration::ZERO, |t| now.saturating_sub(t));
        self.last_tick = Some(now);
        if wall <= MAX_FRAME_GAP {
            let end = self.end_time();
            self.playback.advance_by(wall, end);
        }
    }

    /// Starts or stops replay; wall time counts from now.
    pub fn toggle_play(&mut self) {
        let end = self.end_time();
        self.playback.toggle_play(end);
        self.last_tick = self.playback.is_replaying().then(|| self.clock.now());
    }

    /// Each lane's recording and its events now.
    pub(super) fn mark(&self) -> SavedMark {
        SavedMark(self.lanes.iter().map(|l| (l.id(), l.len())).collect(), self.bookmarks().to_vec())
    }

    /// True when the lanes hold events that were neither saved nor opened from a file.
    pub fn has_unsaved(&self) -> bool {
        self.lanes.iter().any(|l| !l.is_empty()) && self.saved.as_ref().map(|(m, _)| m) != Some(&self.mark())
    }

    /// The file the run shown was last saved to or opened from.
    pub fn saved_path(&self) -> Option<&std::path::Path> {
        self.saved.as_ref().map(|(_, p)| p.as_path())
    }

    /// True once a file dialog came back at once with nothing: the path field is used instead.
    pub fn dialogs_missing(&self) -> bool {
        self.dialogs_missing
    }

    /// True once the window may close (see [`AppCommand::Quit`]).
    pub fn quit_requested(&self) -> bool {
        self.quit
    }

    /// True while something is moving on its own: a live run that is not paused, a replay
    /// playing, or a file job.
    pub fn is_animating(&self) -> bool {
        (self.is_running() && !self.paused) || self.playback.playing || !self.jobs.is_empty() || self.tune.running()
    }
}

impl Drop for AppState {
    /// Stops the run, gives up opens, and lets saves finish: closing the window right after
    /// *Save* must not lose the file (nor leave its temporary file behind).
    fn drop(&mut self) {
        self.stop();
        for j in &self.jobs {
            match j.kind {
                JobKind::Open => j.cancel(),
                JobKind::Save | JobKind::Export => drop(j.wait(Duration::from_secs(60))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use ackscope_protocol::{Action, Event, EventKind, Side, SimTime, Step};

    use super::{Batch, Held};

    #[test]
    fn a_held_batch_comes_out_in_pieces_in_order_with_its_actions_and_error_last() {
        let events: Vec<Event> = (0..600u32)
            .map(|i| Event::new(SimTime(u64::from(i)), EventKind::PacketAcked { side: Side::A, seq: i }))
            .collect();
        let batch = Batch {
            lane: 1,
            events: events.clone(),
            actions: vec![Step::new(SimTime(600), Action::Pause)],
            error: Some("refused".into()),
        };
        let (mut pieces, mut rest) = (Vec::new(), Some(Held::new(batch)));
        while let Some(h) = rest {
            assert_eq!(h.waiting(), 600 - pieces.iter().map(|p: &Batch| p.events.len()).sum::<usize>());
            let (piece, r) = h.piece(256);
            pieces.push(piece);
            rest = r;
        }
        let sizes: Vec<usize> = pieces.iter().map(|p| p.events.len()).collect();
        assert_eq!(sizes, [256, 256, 88]);
        assert!(pieces.iter().all(|p| p.lane == 1));
        assert!(pieces[..2].iter().all(|p| p.actions.is_empty() && p.error.is_none()));
        assert_eq!(pieces[2].actions.len(), 1);
        assert_eq!(pieces[2].error.as_deref(), Some("refused"));
        let joined: Vec<Event> = pieces.into_iter().flat_map(|p| p.events).collect();
        assert!(joined == events);
        // The rest of one taken in part, in one go (a stop hands it over whole).
        let (first, rest) =
            Held::new(Batch { lane: 0, events: events.clone(), actions: Vec::new(), error: None }).piece(100);
        let (whole, none) = rest.unwrap().piece(usize::MAX);
        assert!(none.is_none());
        assert!(first.events[..] == events[..100] && whole.events[..] == events[100..]);
    }
}
