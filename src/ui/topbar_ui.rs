//! The top bar: run controls, strategy and A/B, transport, link presets, files, theme; and the
//! time cursor row below it ([`super::cursor_ui`]).

use ackscope_protocol::{registry, Strategy};

use crate::app::{AppCommand, AppState, PromptKind};
use crate::model::Origin;
use crate::params::presets;
use crate::runtime::udp::Transport;

/// The label the registry gives `s`.
fn strategy_label(s: Strategy) -> &'static str {
    registry::info(s).label
}

pub fn top_bar_ui(
    state: &AppState,
    anomalies: &mut super::anomaly_ui::AnomalyView,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) {
    ui.horizontal_wrapped(|ui| {
        ui.strong("ackscope");
        ui.separator();
        let running = state.is_running();
        let restart_tip = if running {
            "Rebuild both endpoints and empty the links now; recorded as an action, the run goes on"
        } else {
            "Run the recording shown again live from time zero, its recorded actions at their instants"
        };
        if ui.button("Restart").on_hover_text(restart_tip).clicked() {
            cmds.push(AppCommand::Restart);
        }
        let label = if state.is_paused() { "Resume" } else { "Pause" };
        if ui
            .add_enabled(running, egui::Button::new(label))
            .on_hover_text("Pause or resume virtual time (Space)")
            .clicked()
        {
            cmds.push(AppCommand::SetPaused(!state.is_paused()));
        }
        if ui
            .add_enabled(running, egui::Button::new("Stop"))
            .on_hover_text("Stop the run and keep what it recorded for replay")
            .clicked()
        {
            cmds.push(AppCommand::Stop);
        }
        let has_events = state.lanes.iter().any(|l| !l.store.is_empty());
        if ui
            .add_enabled(has_events && !state.is_rerunning(), egui::Button::new("Re-run"))
            .on_hover_text(
                "Run the recording again headless from its scenario and action log (every lane) and say \
                 whether the events are identical",
            )
            .on_disabled_hover_text("Needs a recording, and one re-run at a time")
            .clicked()
        {
            cmds.push(AppCommand::Rerun);
        }
        ui.separator();
        strategy_ui(state, ui, cmds);
        transport_ui(state, ui, cmds);
        ui.separator();
        preset_menu_ui(state, ui, cmds);
        ui.separator();
        if ui.button("Open...").on_hover_text("Open a session or scenario file (Ctrl+O)").clicked() {
            cmds.push(AppCommand::OpenDialog);
        }
        if ui.button("Save...").on_hover_text("Save the recording as a session file (Ctrl+S)").clicked() {
            cmds.push(AppCommand::SaveDialog);
        }
        if ui
            .button("Export...")
            .on_hover_text(
                "Write packets, messages and series as CSV files (NAME-packets.csv, ...), or a NAME.pcapng \
                 capture for Wireshark",
            )
            .clicked()
        {
            cmds.push(AppCommand::ExportDialog);
        }
        if ui
            .button("Compare with...")
            .on_hover_text("Open a second saved session beside this one, in the Compare and Summary tabs")
            .clicked()
        {
            cmds.push(AppCommand::CompareWithDialog);
        }
        ui.menu_button("Recent", |ui| {
            if ui.button("Type a path...").on_hover_text("Open a file by typing its path, with completion").clicked() {
                cmds.push(AppCommand::OpenPrompt(PromptKind::Open));
                ui.close();
            }
            ui.separator();
            if state.settings.recent.is_empty() {
                ui.label("(none yet)");
            }
            for p in &state.settings.recent {
                if ui.button(p.display().to_string()).clicked() {
                    cmds.push(AppCommand::Open(p.clone()));
                    ui.close();
                }
            }
        });
        super::settings_ui::settings_menu_ui(state, ui, cmds);
    });
    let rail = ui.horizontal(|ui| super::cursor_ui::cursor_ui(state, anomalies, ui, cmds)).inner;
    super::anomaly_ui::strip_ui(state, anomalies, rail, ui, cmds);
}

/// True when every lane runs the scenario's strategy on endpoints of this process (simulated,
/// or over UDP on loopback), the only lanes a strategy switch applies to.
fn runs_scenario_strategy(state: &AppState) -> bool {
    state.lanes.iter().all(|l| matches!(l.info.origin, Origin::Simulated | Origin::UdpLoopback))
}

fn strategy_ui(state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    if !runs_scenario_strategy(state) {
        // A proxy, a capture, a stream or a peer recording runs what its lanes say (ENet, KCP, a
        // game's own protocol), not the scenario's strategy: name that, and offer no switch.
        let label = state.lanes.iter().map(|l| l.info.label()).collect::<Vec<_>>().join(" | ");
        let origins = state.lanes.iter().map(|l| l.info.origin.describe()).collect::<Vec<_>>().join("; ");
        ui.label(egui::RichText::new(label).strong()).on_hover_text(format!(
            "Protocol of the recording ({origins}): read from its traffic, not chosen here. Choose a \
             transport to run a scenario's strategy instead"
        ));
        return;
    }
    let mut strategy = state.scenario.strategy;
    let mut ab = state.ab;
    // Unlabelled (its selection names the strategy; the hover says what it is), so the top bar
    // keeps to one row at 1280 px.
    egui::ComboBox::from_id_salt("strategy")
        .selected_text(strategy_label(strategy))
        .show_ui(ui, |ui| {
            for s in Strategy::all() {
                ui.selectable_value(&mut strategy, s, strategy_label(s));
            }
        })
        .response
        .on_hover_text(
            "Strategy: the protocol both endpoints run (in a live run: new endpoints now, recorded as an action)",
        );
    let mut ab_on = ab.is_some();
    if ui
        .checkbox(&mut ab_on, "A/B")
        .on_hover_text("Run a second strategy on the identical link trace, side by side")
        .changed()
    {
        ab = if ab_on { Some(if strategy == Strategy::Ue4 { Strategy::Glenn } else { Strategy::Ue4 }) } else { None };
    }
    if let Some(b) = ab.as_mut() {
        egui::ComboBox::new("strategy_b", "vs").selected_text(strategy_label(*b)).show_ui(ui, |ui| {
            for s in Strategy::all() {
                ui.selectable_value(b, s, strategy_label(s));
            }
        });
    }
    if strategy != state.scenario.strategy || ab != state.ab {
        cmds.push(AppCommand::SetStrategy { strategy, ab });
    }
}

fn transport_ui(state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    use super::proxy_form_ui::{proxy_form_ui, proxy_running, ProxyForm};
    let transport = state.transport;
    let proxied = proxy_running(state);
    // No "transport" label beside it: its choices name themselves, and the top bar then fits one
    // row at 1280 px wide.
    egui::ComboBox::from_id_salt("transport")
        .selected_text(match transport {
            _ if proxied => "proxy",
            Transport::InProcess => "in-process",
            Transport::Udp => "UDP loopback",
        })
        .show_ui(ui, |ui| {
            let sim = ui
                .selectable_label(!proxied && transport == Transport::InProcess, "in-process")
                .on_hover_text("Both endpoints and the link in one deterministic simulation (re-runs identically)");
            let udp = ui.selectable_label(!proxied && transport == Transport::Udp, "UDP loopback").on_hover_text(
                "Each endpoint on its own thread and real UDP socket on 127.0.0.1, the link applied on receive",
            );
            // From a proxy, either choice starts a run of the scenario again (even the same transport).
            for (clicked, t) in [(sim.clicked(), Transport::InProcess), (udp.clicked(), Transport::Udp)] {
                if clicked && (proxied || t != transport) {
                    cmds.push(AppCommand::SetTransport(t));
                }
            }
            if ui
                .selectable_label(proxied, "proxy...")
                .on_hover_text("A conditioning proxy between real game clients and a real server: listen and forward addresses, decoder")
                .clicked()
            {
                ProxyForm { open: true, ..ProxyForm::load(ui.ctx()) }.store(ui.ctx());
            }
        })
        .response
        .on_hover_text(
            "Transport: in-process simulation, or real UDP sockets on loopback. Changed during a live run, the \
             run goes on over the other transport in the same recording (an action in its log; a re-run \
             simulates what ran over UDP)",
        );
    proxy_form_ui(ui.ctx(), cmds);
}

fn preset_menu_ui(state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    ui.menu_button("Link preset", |ui| {
        for p in presets::builtin().iter().chain(&state.settings.custom_presets) {
            let tip = format!(
                "one-way {:.0}/{:.0} ms, jitter {:.0} ms, loss {:.0} %, bandwidth {}",
                p.latency_ms[0],
                p.latency_ms[1],
                p.jitter_ms,
                p.loss_percent,
                if p.bandwidth_kbps[0] > 0.0 {
                    format!("{:.0}/{:.0} kbps", p.bandwidth_kbps[0], p.bandwidth_kbps[1])
                } else {
                    "unlimited".into()
                }
            );
            if ui.button(&p.name).on_hover_text(tip).clicked() {
                cmds.push(AppCommand::ApplyPreset(p.clone()));
                ui.close();
            }
        }
        ui.separator();
        if ui.button("Save current link as preset").clicked() {
            cmds.push(AppCommand::SaveLinkPreset);
            ui.close();
        }
    });
}
