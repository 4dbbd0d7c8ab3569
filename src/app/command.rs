//! What views ask of the app. Views push [`AppCommand`]s while drawing; the frame loop applies
//! them at the end of the frame (rerun's `command_sender`), so no view starts a run, opens a file
//! or changes shared state in the middle of another view's drawing.

use std::path::PathBuf;

use ackscope_protocol::{SimTime, Strategy};

use super::AppState;
use crate::params::presets::Preset;
use crate::report::export::ExportTargets;
use crate::runtime::udp::Transport;
use crate::ui::Tab;

/// Something a view asks of the app.
#[derive(Debug, Clone, PartialEq)]
pub enum AppCommand {
    /// Start the scenario again from time zero (live).
    Restart,
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
    /// Set a scenario parameter by dotted `--set` name, in the scenario and the live run.
    SetParam {
        name: String,
        value: String,
    },
    /// Set the link to a preset (both directions).
    ApplyPreset(Preset),
    /// Keep the current link as a custom preset.
    SaveLinkPreset,
    /// Open a session or scenario file (on a worker thread).
    Open(PathBuf),
    /// Save the recording to a file (on a worker thread).
    Save(PathBuf),
    /// Export every lane's packets, messages and series as CSV files (on a worker thread).
    Export(ExportTargets),
    /// Ask for a file to open, or to save to, in a native dialog (on its own thread).
    OpenDialog,
    SaveDialog,
    /// Ask for a base name to export to (`NAME-packets.csv`, ...; see `ExportTargets::beside`).
    ExportDialog,
    /// Move the time cursor here (replay; a live run stops following the end).
    SeekTo(SimTime),
    /// Let the cursor follow the newest events again.
    FollowLive,
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
    DismissIntro,
    SetDark(bool),
    SetTab(Tab),
}

impl AppState {
    /// Applies one command.
    pub fn apply(&mut self, cmd: AppCommand) {
        let end = self.end_time();
        match cmd {
            AppCommand::Restart => self.start(),
            AppCommand::Stop => self.stop(),
            AppCommand::SetPaused(p) => self.set_paused(p),
            AppCommand::SetStrategy { strategy, ab } => self.set_strategy(strategy, ab),
            AppCommand::SetTransport(t) => {
                self.transport = t;
                self.start();
            }
            AppCommand::SetParam { name, value } => self.set_param(&name, value),
            AppCommand::ApplyPreset(p) => {
                for (i, dir) in ["a_to_b", "b_to_a"].into_iter().enumerate() {
                    self.set_param(&format!("link.{dir}.latency_ms"), p.latency_ms[i]);
                    self.set_param(&format!("link.{dir}.jitter_ms"), p.jitter_ms);
                    self.set_param(&format!("link.{dir}.loss_percent"), p.loss_percent);
                    self.set_param(&format!("link.{dir}.bandwidth_kbps"), p.bandwidth_kbps[i]);
                    self.set_param(&format!("link.{dir}.burst.p_percent"), 0.0);
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
            AppCommand::OpenDialog => self.open_dialog(),
            AppCommand::SaveDialog => self.save_dialog(),
            AppCommand::Export(targets) => self.export(targets),
            AppCommand::ExportDialog => self.export_dialog(),
            AppCommand::SeekTo(t) => self.playback.seek(t),
            AppCommand::FollowLive => self.playback.follow_live(),
            AppCommand::TogglePlay => self.playback.toggle_play(end),
            AppCommand::Step(delta_us) => self.playback.step(delta_us, end),
            AppCommand::SetSpeed(s) => self.playback.speed = s,
            AppCommand::Burst => self.burst(),
            AppCommand::SendChunk => self.send_chunk(),
            AppCommand::SetChunkKib(k) => self.chunk_kib = k,
            AppCommand::ShowError(e) => self.error = Some(e),
            AppCommand::DismissError => self.error = None,
            AppCommand::DismissIntro => self.settings.intro_dismissed = true,
            AppCommand::SetDark(d) => self.settings.dark = d,
            AppCommand::SetTab(t) => self.settings.tab = t,
        }
    }

    /// Applies commands in the order they were pushed.
    pub fn apply_all(&mut self, cmds: impl IntoIterator<Item = AppCommand>) {
        for c in cmds {
            self.apply(c);
        }
    }
}
