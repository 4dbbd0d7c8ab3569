//! What views ask of the app. Views push [`AppCommand`]s while drawing; the frame loop applies
//! them at the end of the frame (rerun's `command_sender`), so no view starts a run, opens a file
//! or changes shared state in the middle of another view's drawing.
//!
//! Commands that would throw away a run nobody saved ([`AppCommand::discards_run`]) wait in
//! [`AppState::guard`] until the user picks Save, Discard or Cancel ([`GuardChoice`]).

use std::path::PathBuf;

use ackscope_protocol::{ParamChange, SimTime, Strategy};

use super::paths::PromptKind;
use super::tab::Tab;
use super::tune::TuneSetup;
use super::AppState;
use crate::params::presets::Preset;
use crate::report::export::ExportTargets;
use crate::runtime::udp::Transport;

/// Something a view asks of the app.
#[derive(Debug, Clone, PartialEq)]
pub enum AppCommand {
    /// Restart: rebuild the endpoints now in a live run (recorded), or run a shown recording
    /// again live from time zero with its recorded actions ([`AppState::restart`]).
    Restart,
    /// Re-run the shown recording headless and compare it with the recording
    /// ([`AppState::rerun`]).
    Rerun,
    /// Stop the live run and keep what it recorded for replay.
    Stop,
    /// Pause (true) or resume (false) the live run's virtual time.
    SetPaused(bool),
    /// Run this strategy, and this second one beside it (A/B); restarts the run.
    SetStrategy {
        strategy: Strategy,
        ab: Option<Strategy>,
    },
    /// Run over this transport; restarts the run.
    SetTransport(Transport),
    /// Start a new recording of the conditioning proxy (the transport *proxy*).
    StartProxy(super::ProxyRequest),
    /// Change a scenario parameter, in the scenario and the live run (typed: the controls build
    /// it from their value, and it reaches the run as the same change).
    SetParam(ParamChange),
    /// Set the link to a preset (both directions).
    ApplyPreset(Preset),
    /// Keep the current link as a custom preset.
    SaveLinkPreset,
    /// Ask for a fitted link file (`ackscope fit --out`) in a native dialog, or in the path
    /// field where no dialog can be shown, and load it into the link.
    LoadLinkDialog,
    /// Load this fitted link file into the link, a change per setting it alters.
    LoadLinkFile(PathBuf),
    /// Open a session or scenario file (on a worker thread).
    Open(PathBuf),
    /// Save the recording to a file (on a worker thread).
    Save(PathBuf),
    /// Ask for a file to open, or to save to, in a native dialog (on its own thread), or in
    /// the path field where no dialog can be shown.
    OpenDialog,
    SaveDialog,
    /// Ask for a base name to export to (`NAME-packets.csv`, ...; see `ExportTargets::beside`).
    ExportDialog,
    /// Ask for a second recording to show beside this one in Compare and Summary (a dialog, or
    /// the path field), and read it ([`AppState::compare_with`]); close it again.
    CompareWithDialog,
    CompareWith(PathBuf),
    CloseCompared,
    /// Ask for a path in the window's own path field.
    OpenPrompt(PromptKind),
    /// The path field's answer: open or save there.
    PromptChosen(PathBuf),
    /// Close the path field without a path.
    CancelPrompt,
    /// The user's answer to the discard guard.
    Guard(GuardChoice),
    /// Close the window (asks first when a run is unsaved).
    Quit,
    /// Export every lane's packets, messages and series as CSV files (on a worker thread).
    Export(ExportTargets),
    /// Move the time cursor here (replay; a live run stops following the end).
    SeekTo(SimTime),
    /// Let the cursor follow the newest events again.
    FollowLive,
    /// Show a message, packet or slice in its tab, moving the cursor there first when given
    /// (see [`super::reveal`]).
    Reveal(super::RevealTarget, Option<SimTime>),
    /// Start or stop replay from the cursor.
    TogglePlay,
    /// Move the cursor by this many microseconds (negative: back).
    Step(i64),
    /// Replay speed (a multiple of real time).
    SetSpeed(f64),
    /// Queue a burst of reliable messages on side A.
    Burst,
    /// Queue one large block of the chosen size on side A.
    SendChunk,
    /// Size of the next chunk, KiB.
    SetChunkKib(u32),
    /// Show a message to the user.
    ShowError(String),
    DismissError,
    DismissNotice,
    DismissIntro,
    SetDark(bool),
    /// Set the live limits (minutes of run time, MiB of memory): the run going on and later ones.
    SetLiveLimits {
        window_min: f64,
        max_mib: u64,
    },
    SetTab(Tab),
    /// Show this client in every tab (the Clients table's rows).
    FocusClient(ackscope_protocol::ClientId),
    /// Start a Tune sweep (cancelling one still running).
    TuneRun(TuneSetup),
    /// Stop the Tune sweep's workers now; the points so far stay.
    TuneCancel,
    /// Run Tune point `i` at its first seed as a normal live session; restarts the run.
    TuneOpen(usize),
    /// Copy Tune point `i`'s values to the live run's settings.
    TuneApply(usize),
    /// Set or clear the mark, select, or change the bookmarks ([`super::marks`]).
    Marks(super::MarkCommand),
}

/// The answers to "discard the unsaved run?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardChoice {
    /// Save the run first (to its file, or where the user says), then carry on.
    Save,
    /// Carry on without saving.
    Discard,
    /// Do nothing; the run stays.
    Cancel,
}

impl AppCommand {
    /// True for commands that may replace the recording shown (a new run, another file, a
    /// re-run, closing); [`AppState::discards_run`] says whether they do now.
    pub fn discards_run(&self) -> bool {
        matches!(
            self,
            AppCommand::Restart
                | AppCommand::Rerun
                | AppCommand::SetStrategy { .. }
                | AppCommand::SetTransport(_)
                | AppCommand::StartProxy(_)
                | AppCommand::Open(_)
                | AppCommand::TuneOpen(_)
                | AppCommand::Quit
        )
    }
}

impl AppState {
    /// True when `cmd` would replace the recording shown now. In a live run *Restart*, a
    /// strategy change that keeps the number of lanes and a transport change of a single lane
    /// are actions in the recording, which goes on, so they discard nothing.
    pub fn discards_run(&self, cmd: &AppCommand) -> bool {
        let acts_live = self.is_running()
            && match cmd {
                AppCommand::Restart => true,
                AppCommand::SetStrategy { strategy, ab } => ab.filter(|b| b != strategy).is_some() == self.ab.is_some(),
                AppCommand::SetTransport(t) => self.switches_in_place(*t),
                _ => false,
            };
        cmd.discards_run() && !acts_live
    }

    /// Applies one command; one that would discard an unsaved run waits for the guard instead.
    pub fn apply(&mut self, cmd: AppCommand) {
        if self.discards_run(&cmd) && self.has_unsaved() {
            self.guard = Some(cmd);
            return;
        }
        self.apply_unguarded(cmd);
    }

    /// What the guard asks, in a sentence.
    pub fn guard_question(&self) -> Option<String> {
        let cmd = self.guard.as_ref()?;
        let what = match cmd {
            AppCommand::Restart => "Restart starts a new run and discards".to_string(),
            AppCommand::Rerun => "Re-run replaces".to_string(),
            AppCommand::SetStrategy { .. } => "Changing the strategy starts a new run and discards".to_string(),
            AppCommand::SetTransport(_) => "Changing the transport starts a new run and discards".to_string(),
            AppCommand::StartProxy(_) => "Starting the proxy starts a new recording and discards".to_string(),
            AppCommand::Open(p) => format!("Opening {} discards", p.display()),
            AppCommand::TuneOpen(_) => "Running the sweep point starts a new run and discards".to_string(),
            AppCommand::Quit => "Closing the window discards".to_string(),
            _ => "This discards".to_string(),
        };
        let events: usize = self.lanes.iter().map(|l| l.store.len()).sum();
        Some(format!(
            "{what} the run shown ({:.1} s, {events} events), which is not saved.",
            self.end_time().as_secs_f64()
        ))
    }

    fn answer_guard(&mut self, choice: GuardChoice) {
        let Some(cmd) = self.guard.take() else { return };
        match choice {
            GuardChoice::Save => self.save_for_guard(cmd),
            GuardChoice::Discard => self.apply_unguarded(cmd),
            GuardChoice::Cancel => {}
        }
    }

    /// Applies one command without asking (the user already answered the guard).
    pub(super) fn apply_unguarded(&mut self, cmd: AppCommand) {
        let end = self.end_time();
        match cmd {
            AppCommand::Restart => self.restart(),
            AppCommand::Rerun => self.rerun(),
            AppCommand::Stop => self.stop(),
            AppCommand::SetPaused(p) => self.set_paused(p),
            AppCommand::SetStrategy { strategy, ab } => self.set_strategy(strategy, ab),
            AppCommand::SetTransport(t) => self.set_transport(t),
            AppCommand::StartProxy(r) => self.start_proxy(&r),
            AppCommand::SetParam(change) => self.set_param(change),
            AppCommand::ApplyPreset(p) => {
                for (i, dir) in ["a_to_b", "b_to_a"].into_iter().enumerate() {
                    let set = |field: &str, v: f64| ParamChange::new(&format!("link.{dir}.{field}"), v);
                    self.set_param(set("latency_ms", p.latency_ms[i]));
                    self.set_param(set("jitter_ms", p.jitter_ms));
                    self.set_param(set("loss_percent", p.loss_percent));
                    self.set_param(set("bandwidth_kbps", p.bandwidth_kbps[i]));
                    self.set_param(set("burst.p_percent", 0.0));
                }
            }
            AppCommand::SaveLinkPreset => {
                let n = self.settings.custom_presets.len() + 1;
                let l = &self.scenario.link;
                let p = Preset::from_links(&format!("Custom {n}"), &l.a_to_b, &l.b_to_a);
                self.settings.custom_presets.push(p);
            }
            AppCommand::Open(p) => self.open_path(&p),
            AppCommand::Save(p) => self.save_path(&p),
            AppCommand::LoadLinkDialog => self.link_file_dialog(),
            AppCommand::LoadLinkFile(path) => self.load_link_file(&path),
            AppCommand::OpenDialog => self.open_dialog(),
            AppCommand::CompareWithDialog => self.ask_path(PromptKind::CompareWith),
            AppCommand::CompareWith(p) => self.compare_with(&p),
            AppCommand::CloseCompared => self.close_compared(),
            AppCommand::SaveDialog => self.save_dialog(),
            AppCommand::ExportDialog => self.export_dialog(),
            AppCommand::OpenPrompt(kind) => self.prompt = Some(kind),
            AppCommand::PromptChosen(p) => self.prompt_chosen(p),
            AppCommand::CancelPrompt => self.prompt_cancelled(),
            AppCommand::Guard(choice) => self.answer_guard(choice),
            AppCommand::Quit => self.quit = true,
            AppCommand::Export(targets) => self.export(targets),
            AppCommand::SeekTo(t) => self.playback.seek(t),
            AppCommand::FollowLive => self.playback.follow_live(),
            AppCommand::Reveal(target, seek) => self.reveal_target(target, seek),
            AppCommand::TogglePlay => self.toggle_play(),
            AppCommand::Step(delta_us) => self.playback.step(delta_us, end),
            AppCommand::SetSpeed(s) => self.playback.speed = s,
            AppCommand::Burst => self.burst(),
            AppCommand::SendChunk => self.send_chunk(),
            AppCommand::SetChunkKib(k) => self.chunk_kib = k,
            AppCommand::ShowError(e) => self.error = Some(e),
            AppCommand::DismissError => self.error = None,
            AppCommand::DismissNotice => self.notice = None,
            AppCommand::DismissIntro => self.settings.intro_dismissed = true,
            AppCommand::SetDark(d) => self.settings.dark = d,
            AppCommand::SetLiveLimits { window_min, max_mib } => {
                self.settings.live_window_min = window_min;
                self.settings.live_max_mib = max_mib;
                self.live_log.limits = self.settings.live_limits();
            }
            AppCommand::SetTab(t) => self.settings.tab = t,
            AppCommand::FocusClient(c) => self.focus = c,
            AppCommand::TuneRun(setup) => {
                let wake = self.wake.clone();
                self.tune.start(&self.scenario, setup, wake);
            }
            AppCommand::TuneCancel => self.tune.cancel(),
            AppCommand::TuneOpen(i) => self.tune_open(i),
            AppCommand::Marks(m) => self.apply_mark(m),
            AppCommand::TuneApply(i) => {
                // A point's values are the sweep's text (`--vary` values, read at that edge).
                let values = self.tune.points.get(i).map(|p| p.values.clone()).unwrap_or_default();
                for (name, value) in values {
                    self.set_param(ParamChange::parse(&name, &value));
                }
            }
        }
    }

    /// Applies commands in the order they were pushed.
    pub fn apply_all(&mut self, cmds: impl IntoIterator<Item = AppCommand>) {
        for c in cmds {
            self.apply(c);
        }
    }
}
