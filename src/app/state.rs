//! Everything the window shows and controls, without any drawing: the scenario, the live run,
//! the recordings, the time cursor, file jobs and settings.
//!
//! Views read it and push [`super::AppCommand`]s; the frame loop applies them through the methods
//! here, which tests call directly too. Nothing in this file knows egui, so the whole behaviour
//! of the window is testable without a display.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ackscope_protocol::{Scenario, Side, SimTime, Strategy};

use super::files::{DialogResult, Dialogs, FileJob, Finished, JobKind, Opened};
use super::settings::Settings;
use crate::model::{Playback, Recording};
use crate::report::export::{ExportSummary, ExportTargets};
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
    /// What the latest finished export wrote (files, rows, bytes), for a confirmation.
    pub last_export: Option<ExportSummary>,
    jobs: Vec<FileJob>,
    dialogs: Dialogs,
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
            last_export: None,
            jobs: Vec::new(),
            dialogs: Dialogs::default(),
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

    /// Starts (or restarts) a live run of the current scenario from time zero.
    pub fn start(&mut self) {
        self.stop();
        let scenarios = self.lane_scenarios();
        self.lanes = scenarios.iter().cloned().map(Recording::new).collect();
        let wake = self.wake.clone();
        self.live = match self.transport {
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
                lane.changes.extend(b.changes);
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

    /// Changes the strategy (and the A/B partner); takes effect by restarting the run.
    pub fn set_strategy(&mut self, strategy: Strategy, ab: Option<Strategy>) {
        self.scenario.strategy = strategy;
        self.ab = ab.filter(|b| *b != strategy);
        self.start();
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
            let rec = Recording::from_session(s, &crate::session::Progress::new()).expect("never cancelled");
            self.show_opened(Opened::Recording(Box::new(rec)), file);
        } else {
            self.show_opened(Opened::Scenario(Box::new(s)), file);
        }
    }

    fn show_opened(&mut self, opened: Opened, file: Option<PathBuf>) {
        self.stop();
        self.ab = None;
        match opened {
            Opened::Recording(rec) => {
                self.scenario = rec.scenario.clone();
                self.lanes = vec![*rec];
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

    /// Starts saving the first lane's recording (atomically) to `path` on a worker thread.
    pub fn save_path(&mut self, path: &Path) {
        self.pull_events();
        let Some(lane) = self.lanes.first() else { return };
        let job = FileJob::save(path, lane.header(), lane.store.shared_events(), self.wake.clone());
        self.jobs.push(job);
    }

    /// Starts exporting every lane's tables to `targets` on a worker thread (both lanes of an A/B
    /// run, told apart by the `lane` column); the window's recordings stay as they are.
    pub fn export(&mut self, targets: ExportTargets) {
        self.pull_events();
        let lanes = self.lanes.iter().map(|l| (l.header(), l.store.shared_events())).collect();
        self.jobs.push(FileJob::export(targets, lanes, self.wake.clone()));
    }

    /// Loads and saves still running, oldest first.
    pub fn file_jobs(&self) -> &[FileJob] {
        &self.jobs
    }

    /// Takes the results of finished file jobs and the paths chosen in dialogs.
    pub fn poll_files(&mut self) {
        while let Some(chosen) = self.dialogs.poll() {
            match chosen {
                DialogResult::Open(p) => self.open_path(&p),
                DialogResult::Save(p) => self.save_path(&p),
                DialogResult::Export(p) => self.export(ExportTargets::beside(&p)),
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
                Ok(Finished::Exported(summary)) => self.last_export = Some(summary),
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

    /// Asks for an export's base name, proposing the session file's name.
    pub fn export_dialog(&self) {
        let stem = self.file.as_deref().and_then(Path::file_stem).map(|s| s.to_string_lossy().into_owned());
        self.dialogs.export(stem.as_deref().unwrap_or("session"));
    }

    /// True while something is moving on its own: a live run that is not paused, a replay
    /// playing, or a file job.
    pub fn is_animating(&self) -> bool {
        (self.is_running() && !self.paused) || self.playback.playing || !self.jobs.is_empty()
    }
}

impl Drop for AppState {
    /// Stops the run, gives up opens, and lets saves and exports finish: closing the window right
    /// after *Save* must not lose the file (nor leave its temporary file behind).
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
