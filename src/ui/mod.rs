//! The desktop window: a model ([`AppState`]) that owns the runs, the recordings and the time
//! cursor, and `_ui` functions that draw it. Views read the state and ask for changes by pushing
//! [`UiCommand`]s or calling its methods, so tests drive the same methods without a display.

mod controls_ui;
pub mod packets_ui;
mod plots_ui;
mod settings;
pub mod slices_ui;
mod summary_ui;
pub mod timeline_ui;
mod topbar_ui;

use std::path::{Path, PathBuf};

use ackscope_protocol::{Scenario, Side, SimTime, Strategy};

pub use settings::{Launch, Settings, Tab};

use crate::playback::Playback;
use crate::runtime::udp::{RunHandle, Transport};
use crate::runtime::{Batch, Command, LiveRun};
use crate::session::{self, Change, Session};
use crate::store::Store;

/// Something a view asks of the app. Views push commands while drawing; the app applies them at
/// the end of the frame, so no view changes shared state in the middle of another's drawing.
#[derive(Debug, Clone, PartialEq)]
pub enum UiCommand {
    /// Move the time cursor here (replay; a live run stops following the end).
    SeekTo(SimTime),
    /// Let the cursor follow the newest events again.
    FollowLive,
}

/// One strategy's recording: the scenario it started from, its changes, its events and the
/// indexes the panels read, all fed from the same events.
pub struct Lane {
    pub scenario: Scenario,
    pub changes: Vec<Change>,
    pub store: Store,
    pub messages: crate::index::MessageIndex,
    pub timeline: timeline_ui::TimelineState,
    pub chunks: crate::pindex::ChunkIndex,
    pub slices_view: slices_ui::SlicesView,
    pub packets: crate::pindex::PacketIndex,
    pub packets_view: packets_ui::PacketsView,
    /// The Summary tab's metrics, folded over the events up to the cursor.
    pub summary: summary_ui::SummaryCache,
}

impl Lane {
    fn new(scenario: Scenario) -> Self {
        Self {
            scenario,
            changes: Vec::new(),
            store: Store::new(),
            messages: crate::index::MessageIndex::new(),
            timeline: timeline_ui::TimelineState::default(),
            chunks: crate::pindex::ChunkIndex::new(),
            slices_view: slices_ui::SlicesView::default(),
            packets: crate::pindex::PacketIndex::new(),
            packets_view: packets_ui::PacketsView::default(),
            summary: summary_ui::SummaryCache::default(),
        }
    }

    /// Appends events (in time order) to the store and every index.
    pub fn ingest(&mut self, events: Vec<ackscope_protocol::Event>) {
        self.messages.ingest_all(&events);
        for e in &events {
            self.chunks.ingest(e);
            self.packets.ingest(e);
        }
        self.store.ingest(events);
    }

    /// The lane as a session file.
    pub fn to_session(&self) -> Session {
        let mut s = Session::scenario_only(self.scenario.clone());
        s.changes = self.changes.clone();
        s.duration_us = self.store.end_time().0;
        s.events = self.store.events().to_vec();
        s
    }
}

/// Everything the window shows and controls.
pub struct AppState {
    /// The scenario as currently configured (live edits included).
    pub scenario: Scenario,
    /// Second strategy in A/B mode (same scenario, same link trace).
    pub ab: Option<Strategy>,
    pub lanes: Vec<Lane>,
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
    dialogs: (crossbeam_channel::Sender<DialogResult>, crossbeam_channel::Receiver<DialogResult>),
    events_rate: (std::time::Instant, usize, f64),
    /// Called by the run thread when events are ready (requests a repaint).
    wake: std::sync::Arc<dyn Fn() + Send + Sync>,
}

enum DialogResult {
    Open(PathBuf),
    Save(PathBuf),
}

impl AppState {
    /// A window state; `wake` is called from the run thread when new events arrive.
    pub fn new(scenario: Scenario, wake: impl Fn() + Send + Sync + 'static) -> Self {
        Self {
            lanes: vec![Lane::new(scenario.clone())],
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
            dialogs: crossbeam_channel::bounded(4),
            events_rate: (std::time::Instant::now(), 0, 0.0),
            wake: std::sync::Arc::new(wake),
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
        self.lanes = scenarios.iter().cloned().map(Lane::new).collect();
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
            self.ingest(run.try_batches().collect());
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

    fn ingest(&mut self, batches: Vec<Batch>) -> usize {
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

    /// Moves every available event batch from the run into the lanes' stores.
    pub fn pull_events(&mut self) -> usize {
        let Some(run) = &self.live else { return 0 };
        let batches: Vec<Batch> = run.try_batches().collect();
        let n = self.ingest(batches);
        let (since, count, rate) = &mut self.events_rate;
        *count += n;
        let dt = since.elapsed().as_secs_f64();
        if dt >= 1.0 {
            *rate = *count as f64 / dt;
            *count = 0;
            *since = std::time::Instant::now();
        }
        n
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
        if let Err(e) = crate::overrides::apply(&mut self.scenario, &format!("{name}={value}")) {
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

    /// Opens a session or scenario file: a recording is shown for replay, a scenario is run live.
    pub fn open_path(&mut self, path: &Path) {
        match session::load(path) {
            Ok(s) => {
                self.remember(path);
                self.show_session(s, Some(path.to_path_buf()));
            }
            Err(e) => self.error = Some(format!("{e:#}")),
        }
    }

    /// Shows a loaded session: a recording for replay (cursor at the start), or a scenario live.
    pub fn show_session(&mut self, s: Session, file: Option<PathBuf>) {
        self.stop();
        self.scenario = s.scenario.clone();
        self.ab = None;
        if s.has_events() {
            let mut lane = Lane::new(s.scenario);
            lane.changes = s.changes;
            lane.ingest(s.events);
            self.lanes = vec![lane];
            self.playback = Playback::default();
            self.playback.seek(SimTime::ZERO);
        } else {
            self.start();
        }
        self.file = file;
    }

    /// Saves the first lane's recording (atomically) to `path`.
    pub fn save_path(&mut self, path: &Path) {
        self.pull_events();
        let Some(lane) = self.lanes.first() else { return };
        match session::save(&lane.to_session(), path) {
            Ok(_) => {
                self.remember(path);
                self.file = Some(path.to_path_buf());
            }
            Err(e) => self.error = Some(format!("{e:#}")),
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
        let tx = self.dialogs.0.clone();
        std::thread::spawn(move || {
            if let Some(p) = rfd::FileDialog::new().add_filter("ackscope session", &["ron"]).pick_file() {
                let _ = tx.send(DialogResult::Open(p));
            }
        });
    }

    pub fn save_dialog(&self) {
        let tx = self.dialogs.0.clone();
        std::thread::spawn(move || {
            if let Some(p) =
                rfd::FileDialog::new().add_filter("ackscope session", &["ron"]).set_file_name("session.ron").save_file()
            {
                let _ = tx.send(DialogResult::Save(p));
            }
        });
    }

    fn poll_dialogs(&mut self) {
        while let Ok(r) = self.dialogs.1.try_recv() {
            match r {
                DialogResult::Open(p) => self.open_path(&p),
                DialogResult::Save(p) => self.save_path(&p),
            }
        }
    }

    fn apply_commands(&mut self, cmds: Vec<UiCommand>) {
        for c in cmds {
            match c {
                UiCommand::SeekTo(t) => self.playback.seek(t),
                UiCommand::FollowLive => self.playback.follow_live(),
            }
        }
    }

    /// Draws the whole window into `ui` (also used headless by tests).
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        self.pull_events();
        self.poll_dialogs();
        let dt = ui.ctx().input(|i| i.stable_dt as f64).min(0.25);
        let end = self.end_time();
        self.playback.advance(dt, end);
        let dropped: Vec<PathBuf> = ui.ctx().input(|i| {
            i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).filter(|p| !p.as_os_str().is_empty()).collect()
        });
        if let Some(p) = dropped.first() {
            self.open_path(p);
        }
        self.keyboard(ui.ctx());
        ui.ctx().set_theme(if self.settings.dark { egui::Theme::Dark } else { egui::Theme::Light });

        let mut cmds = Vec::new();
        egui::Panel::top("top_bar").show(ui, |ui| topbar_ui::top_bar_ui(self, ui));
        egui::Panel::bottom("status_bar").show(ui, |ui| topbar_ui::status_bar_ui(self, ui));
        egui::Panel::left("controls").default_size(300.0).show(ui, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| controls_ui::controls_ui(self, ui));
        });
        egui::CentralPanel::default_margins().show(ui, |ui| {
            topbar_ui::banners_ui(self, ui);
            ui.horizontal(|ui| {
                for (tab, name) in [
                    (Tab::Overview, "Overview"),
                    (Tab::Messages, "Messages"),
                    (Tab::Slices, "Slices"),
                    (Tab::Packets, "Packets"),
                    (Tab::Summary, "Summary"),
                ] {
                    ui.selectable_value(&mut self.settings.tab, tab, name);
                }
            });
            ui.separator();
            let cursor = self.cursor();
            match self.settings.tab {
                Tab::Overview => plots_ui::overview_ui(&self.lanes, cursor, ui, &mut cmds),
                Tab::Summary => summary_ui::summary_ui(&mut self.lanes, cursor, ui),
                Tab::Messages => {
                    let n = self.lanes.len();
                    ui.columns(n, |cols| {
                        for (lane, col) in self.lanes.iter_mut().zip(cols.iter_mut()) {
                            let name = lane.scenario.strategy.name();
                            timeline_ui::timeline_ui(
                                col,
                                ("timeline", name),
                                name,
                                &lane.messages,
                                &mut lane.timeline,
                                cursor,
                                &mut cmds,
                            );
                        }
                    });
                }
                Tab::Slices => {
                    let n = self.lanes.len();
                    ui.columns(n, |cols| {
                        for (lane, col) in self.lanes.iter_mut().zip(cols.iter_mut()) {
                            col.push_id(lane.scenario.strategy.name(), |ui| {
                                ui.strong(lane.scenario.strategy.name());
                                slices_ui::slices_ui(&lane.chunks, &mut lane.slices_view, cursor, ui, &mut cmds);
                            });
                        }
                    });
                }
                Tab::Packets => {
                    let n = self.lanes.len();
                    ui.columns(n, |cols| {
                        for (lane, col) in self.lanes.iter_mut().zip(cols.iter_mut()) {
                            col.push_id(lane.scenario.strategy.name(), |ui| {
                                ui.strong(lane.scenario.strategy.name());
                                packets_ui::packets_ui(&lane.packets, &mut lane.packets_view, cursor, ui, &mut cmds);
                            });
                        }
                    });
                }
            }
        });
        self.apply_commands(cmds);
        if (self.is_running() && !self.paused) || self.playback.playing {
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(33));
        }
    }

    fn keyboard(&mut self, ctx: &egui::Context) {
        use egui::{Key, KeyboardShortcut, Modifiers};
        if ctx.egui_wants_keyboard_input() {
            return;
        }
        let end = self.end_time();
        let step_us = (self.scenario.stats_interval_ms.max(1.0) * 1000.0) as i64;
        let (open, save) = ctx.input_mut(|i| {
            (
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::O)),
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::S)),
            )
        });
        if open {
            self.open_dialog();
        }
        if save {
            self.save_dialog();
        }
        ctx.input(|i| {
            if i.key_pressed(Key::Space) {
                if self.is_running() && self.playback.follow {
                    self.set_paused(!self.paused);
                } else {
                    self.playback.toggle_play(end);
                }
            }
            if i.key_pressed(Key::ArrowLeft) {
                self.playback.step(-step_us, end);
            }
            if i.key_pressed(Key::ArrowRight) {
                self.playback.step(step_us, end);
            }
            if i.key_pressed(Key::Home) {
                self.playback.seek(SimTime::ZERO);
            }
            if i.key_pressed(Key::End) {
                self.playback.follow_live();
            }
        });
    }
}

impl Drop for AppState {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The eframe application around [`AppState`].
pub struct AckscopeApp {
    pub state: AppState,
}

impl AckscopeApp {
    /// Starts on `scenario` live, or opens `path` (a session to replay or a scenario to run).
    pub fn new(cc: &eframe::CreationContext<'_>, scenario: Scenario, launch: Launch) -> Self {
        let ctx = cc.egui_ctx.clone();
        let mut state = AppState::new(scenario, move || ctx.request_repaint());
        if let Some(settings) = cc.storage.and_then(|s| eframe::get_value::<Settings>(s, eframe::APP_KEY)) {
            state.settings = settings;
        }
        if let Some(t) = launch.tab {
            state.settings.tab = t;
        }
        if launch.no_intro {
            state.settings.intro_dismissed = true;
        }
        state.ab = launch.ab.filter(|b| *b != state.scenario.strategy);
        match launch.path {
            Some(p) => state.open_path(&p),
            None => state.start(),
        }
        Self { state }
    }
}

impl eframe::App for AckscopeApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.state.ui(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, &self.state.settings);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.state.stop();
    }
}
