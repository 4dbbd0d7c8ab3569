//! Everything the window shows and controls, without any drawing: the scenario, the live run,
//! the recordings, the time cursor, file jobs and settings.
//!
//! Views read it and push [`super::AppCommand`]s; the frame loop applies them through the methods
//! here, which tests call directly too. Nothing in this file knows egui, so the whole behaviour
//! of the window is testable without a display.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ackscope_protocol::{Scenario, Side, SimTime, Step, Strategy};

use super::files::{DialogResult, Dialogs, FileJob, Finished, JobKind, Opened};
use super::rerun::RerunJob;
use super::settings::Settings;
use crate::model::{Playback, Recording};
use crate::runtime::udp::{RunHandle, Transport};
use crate::runtime::{Batch, Command, LiveRun};
use crate::session::Session;

/// Everything the window shows and controls.
pub struct AppState {
    /// The scenario as currently configured (live edits included).
    pub scenario: Scenario,
    /// Second strategy in A/B mode (same scenario, same link trace).
    pub ab: Option<Strategy>,
    /// One recording per strategy shown (two in A/B).
    pub lanes: Vec<Recording>,
    live: Option<Box<dyn RunHandle>>,
    /// In-process (deterministic, A/B capable) or real UDP sockets on loopback.
    pub transport: Transport,
    paused: bool,
    pub playback: Playback,
    /// The session file shown or last saved.
    pub file: Option<PathBuf>,
    pub settings: Settings,
    /// A message for the user (bad file, refused change...), dismissible.
    pub error: Option<String>,
    /// Size of the next chunk the "send chunk" button queues.
    pub chunk_kib: u32,
    jobs: Vec<FileJob>,
    dialogs: Dialogs,
    /// A re-run of the shown recording in progress, and how the last one compared.
    rerun: Option<RerunJob>,
    rerun_outcome: Option<String>,
    events_rate: (Instant, usize, f64),
    /// Called from other threads when something arrived (requests a repaint).
    wake: Arc<dyn Fn() + Send + Sync>,
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
            playback: Playback::default(),
            file: None,
            settings: Settings::default(),
            error: None,
            chunk_kib: 64,
            jobs: Vec::new(),
            dialogs: Dialogs::default(),
            rerun: None,
            rerun_outcome: None,
            events_rate: (Instant::now(), 0, 0.0),
            wake: Arc::new(wake),
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

    /// Starts a new recording: a live run of the current scenario from time zero.
    pub fn start(&mut self) {
        self.start_replaying(Vec::new());
    }

    /// [`Self::start`], each lane applying its `logs` entry (a recorded action log) when virtual
    /// time reaches each action's instant: a recording run again live, in-process.
    fn start_replaying(&mut self, logs: Vec<Vec<Step>>) {
        self.stop();
        let scenarios = self.lane_scenarios();
        self.lanes = scenarios.iter().cloned().map(Recording::new).collect();
        for lane in &mut self.lanes {
            lane.transport = self.transport;
        }
        let wake = self.wake.clone();
        self.live = match self.transport {
            _ if logs.iter().any(|l| !l.is_empty()) => {
                for lane in &mut self.lanes {
                    lane.transport = Transport::InProcess;
                }
                let lanes = scenarios.into_iter().zip(logs.into_iter().chain(std::iter::repeat(Vec::new()))).collect();
                Some(Box::new(LiveRun::spawn_replaying(lanes, move || wake())))
            }
            Transport::Udp if scenarios.len() == 1 => {
                match crate::runtime::udp::spawn_run(Transport::Udp, scenarios[0].clone(), move || wake()) {
                    Ok(run) => Some(run),
                    Err(e) => {
                        self.error = Some(format!("UDP transport: {e:#}"));
                        None
                    }
                }
            }
            Transport::Udp => {
                self.error = Some("A/B runs both strategies in-process (one trace, one clock); UDP runs one.".into());
                Some(Box::new(LiveRun::spawn(scenarios, move || wake())))
            }
            Transport::InProcess => Some(Box::new(LiveRun::spawn(scenarios, move || wake()))),
        };
        self.paused = false;
        self.playback = Playback::default();
        self.file = None;
    }

    /// Stops the live run and joins its thread; the recording stays for replay.
    pub fn stop(&mut self) {
        if let Some(mut run) = self.live.take() {
            run.stop();
            let rest: Vec<Batch> = run.try_batches().collect();
            self.ingest(rest);
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
            run.send(if paused { Command::Pause } else { Command::Resume });
            self.paused = paused;
        }
    }

    fn ingest(&mut self, batches: impl IntoIterator<Item = Batch>) -> usize {
        let mut n = 0;
        for b in batches {
            if let Some(lane) = self.lanes.get_mut(b.lane) {
                n += b.events.len();
                lane.actions.extend(b.actions);
                lane.ingest(b.events);
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
        let Some(run) = self.live.take() else { return (0, false) };
        let started = Instant::now();
        let mut n = 0;
        let mut left = false;
        for b in run.try_batches() {
            n += self.ingest([b]);
            if started.elapsed() >= budget {
                left = true;
                break;
            }
        }
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

    /// Events per second arriving from the live run (last second).
    pub fn events_per_second(&self) -> f64 {
        if self.is_running() {
            self.events_rate.2
        } else {
            0.0
        }
    }

    /// Sets a scenario parameter by dotted name, now, in the scenario and the running lanes.
    pub fn set_param(&mut self, name: &str, value: impl ToString) {
        let value = value.to_string();
        if let Err(e) = crate::params::overrides::apply(&mut self.scenario, &format!("{name}={value}")) {
            self.error = Some(format!("{e:#}"));
            return;
        }
        if let Some(run) = &self.live {
            run.send(Command::Set { name: name.to_string(), value });
        }
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
                        run.send(Command::Strategy { lane, strategy: s });
                    }
                }
            }
            _ => self.start(),
        }
    }

    /// *Restart*: in a live run, rebuilds both endpoints and links now on every lane (an action
    /// in the recording, which goes on); on a shown recording, runs it again live from time zero
    /// with its recorded actions at their instants; otherwise starts a new recording.
    pub fn restart(&mut self) {
        match &self.live {
            Some(run) if run.is_running() => {
                run.send(Command::Restart);
            }
            _ => {
                let logs: Vec<Vec<Step>> = self.lanes.iter().map(|l| l.actions.clone()).collect();
                if let Some(first) = self.lanes.first() {
                    self.scenario = first.scenario.clone();
                }
                self.start_replaying(logs);
            }
        }
    }

    /// *Re-run*: runs the shown recording again headless (every lane) from its header and action
    /// log on a worker thread; the result replaces the shown lanes, and [`Self::rerun_outcome`]
    /// says whether it is identical to the recording.
    pub fn rerun(&mut self) {
        self.stop();
        let Some(header) = self.recording_header() else { return };
        let events = self.lanes.iter().map(|l| l.store.shared_events()).collect();
        self.rerun_outcome = Some("Re-running...".into());
        self.rerun = Some(RerunJob::spawn(header, events, self.wake.clone()));
    }

    /// How the last re-run compared with the recording (or that one is running).
    pub fn rerun_outcome(&self) -> Option<&str> {
        self.rerun_outcome.as_deref()
    }

    /// Takes a finished re-run's lanes.
    fn poll_rerun(&mut self) {
        let Some(result) = self.rerun.as_ref().and_then(RerunJob::try_finish) else { return };
        self.rerun = None;
        match result {
            Ok(r) => {
                self.rerun_outcome = Some(r.outcome);
                self.show_opened(Opened::Recording(r.lanes), None);
            }
            Err(e) => {
                self.rerun_outcome = None;
                self.error = Some(format!("re-run: {e:#}"));
            }
        }
    }

    /// The session header of the shown lanes (the first lane's, with the A/B lane's strategy and
    /// actions), without events.
    fn recording_header(&self) -> Option<crate::session::Session> {
        let mut header = self.lanes.first()?.header();
        if let Some(b) = self.lanes.get(1) {
            header.ab = Some(b.scenario.strategy);
            header.ab_actions = b.actions.clone();
            header.duration_us = header.duration_us.max(b.store.end_time().0);
        }
        Some(header)
    }

    /// Queues a burst of reliable messages on side A.
    pub fn burst(&mut self) {
        if let Some(run) = &self.live {
            run.send(Command::Burst(Side::A));
        }
    }

    /// Queues a chunk of `chunk_kib` on side A.
    pub fn send_chunk(&mut self) {
        if let Some(run) = &self.live {
            run.send(Command::SendChunk(Side::A, self.chunk_kib as usize * 1024));
        }
    }

    /// Latest time recorded on any lane.
    pub fn end_time(&self) -> SimTime {
        self.lanes.iter().map(|l| l.store.end_time()).max().unwrap_or(SimTime::ZERO)
    }

    /// The time cursor.
    pub fn cursor(&self) -> SimTime {
        self.playback.cursor(self.end_time())
    }

    /// Starts opening a session or scenario file on a worker thread: once read, a recording is
    /// shown for replay and a scenario is run live. An open still running is given up for this one.
    pub fn open_path(&mut self, path: &Path) {
        for j in self.jobs.iter().filter(|j| j.kind == JobKind::Open) {
            j.cancel();
        }
        self.jobs.retain(|j| j.kind != JobKind::Open);
        self.jobs.push(FileJob::open(path, self.wake.clone()));
    }

    /// Shows a loaded session: a recording for replay (cursor at the start), or a scenario live.
    pub fn show_session(&mut self, s: Session, file: Option<PathBuf>) {
        if s.has_events() {
            let lanes = Recording::lanes_from_session(s, &crate::session::Progress::new()).expect("never cancelled");
            self.show_opened(Opened::Recording(lanes), file);
        } else {
            self.show_opened(Opened::Scenario(Box::new(s)), file);
        }
    }

    fn show_opened(&mut self, opened: Opened, file: Option<PathBuf>) {
        self.stop();
        self.ab = None;
        match opened {
            Opened::Recording(lanes) => {
                self.scenario = lanes[0].scenario.clone();
                self.ab = lanes.get(1).map(|l| l.scenario.strategy);
                self.lanes = lanes;
                self.playback = Playback::default();
                self.playback.seek(SimTime::ZERO);
            }
            Opened::Scenario(s) => {
                self.scenario = s.scenario;
                self.start();
            }
        }
        self.file = file;
    }

    /// Starts saving the recording, every lane, (atomically) to `path` on a worker thread.
    pub fn save_path(&mut self, path: &Path) {
        self.pull_events();
        let Some(header) = self.recording_header() else { return };
        let events = self.lanes.iter().map(|l| l.store.shared_events()).collect();
        let job = FileJob::save(path, header, events, self.wake.clone());
        self.jobs.push(job);
    }

    /// Loads and saves still running, oldest first.
    pub fn file_jobs(&self) -> &[FileJob] {
        &self.jobs
    }

    /// Takes the results of finished file jobs (and re-runs) and the paths chosen in dialogs.
    pub fn poll_files(&mut self) {
        self.poll_rerun();
        while let Some(chosen) = self.dialogs.poll() {
            match chosen {
                DialogResult::Open(p) => self.open_path(&p),
                DialogResult::Save(p) => self.save_path(&p),
            }
        }
        let mut i = 0;
        while i < self.jobs.len() {
            let Some(result) = self.jobs[i].try_finish() else {
                i += 1;
                continue;
            };
            let job = self.jobs.remove(i);
            match result {
                Ok(Finished::Opened(opened)) => {
                    self.remember(&job.path);
                    self.show_opened(opened, Some(job.path));
                }
                Ok(Finished::Saved(_)) => {
                    self.remember(&job.path);
                    self.file = Some(job.path);
                }
                Err(e) => self.error = Some(format!("{e:#}")),
            }
        }
    }

    fn remember(&mut self, path: &Path) {
        let p = path.to_path_buf();
        self.settings.recent.retain(|r| r != &p);
        self.settings.recent.insert(0, p);
        self.settings.recent.truncate(8);
    }

    /// Shows a file dialog on its own thread (a native dialog may block); the answer arrives later.
    pub fn open_dialog(&self) {
        self.dialogs.open();
    }

    pub fn save_dialog(&self) {
        self.dialogs.save();
    }

    /// True while something is moving on its own: a live run that is not paused, a replay
    /// playing, or a file job.
    pub fn is_animating(&self) -> bool {
        (self.is_running() && !self.paused) || self.playback.playing || !self.jobs.is_empty()
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
                JobKind::Save => drop(j.wait(Duration::from_secs(60))),
            }
        }
    }
}
