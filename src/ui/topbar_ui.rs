//! Top bar (run, strategy, A/B, preset, files, replay cursor), status bar, and the banners
//! (first-run hints, dismissible errors).

use ackscope_protocol::{registry, EventKind, SimTime, Strategy};

use super::AppState;
use crate::playback::SPEEDS;
use crate::presets;
use crate::runtime::udp::Transport;

/// The label the registry gives `s`.
fn strategy_label(s: Strategy) -> &'static str {
    registry::info(s).label
}

pub fn top_bar_ui(state: &mut AppState, ui: &mut egui::Ui) {
    ui.horizontal_wrapped(|ui| {
        ui.strong("ackscope");
        ui.separator();
        if ui.button("Restart").on_hover_text("Start the scenario again from time zero (live)").clicked() {
            state.start();
        }
        let running = state.is_running();
        let label = if state.is_paused() { "Resume" } else { "Pause" };
        if ui
            .add_enabled(running, egui::Button::new(label))
            .on_hover_text("Pause or resume virtual time (Space)")
            .clicked()
        {
            let p = state.is_paused();
            state.set_paused(!p);
        }
        if ui
            .add_enabled(running, egui::Button::new("Stop"))
            .on_hover_text("Stop the run and keep what it recorded for replay")
            .clicked()
        {
            state.stop();
        }
        ui.separator();
        let mut strategy = state.scenario.strategy;
        let mut ab = state.ab;
        egui::ComboBox::new("strategy", "strategy")
            .selected_text(strategy_label(strategy))
            .show_ui(ui, |ui| {
                for s in Strategy::all() {
                    ui.selectable_value(&mut strategy, s, strategy_label(s));
                }
            })
            .response
            .on_hover_text("The protocol both endpoints run (restarts the run)");
        let mut ab_on = ab.is_some();
        if ui
            .checkbox(&mut ab_on, "A/B")
            .on_hover_text("Run a second strategy on the identical link trace, side by side")
            .changed()
        {
            ab = if ab_on {
                Some(if strategy == Strategy::Ue4 { Strategy::Glenn } else { Strategy::Ue4 })
            } else {
                None
            };
        }
        if let Some(b) = ab.as_mut() {
            egui::ComboBox::new("strategy_b", "vs").selected_text(strategy_label(*b)).show_ui(ui, |ui| {
                for s in Strategy::all() {
                    ui.selectable_value(b, s, strategy_label(s));
                }
            });
        }
        if strategy != state.scenario.strategy || ab != state.ab {
            state.set_strategy(strategy, ab);
        }
        let mut transport = state.transport;
        egui::ComboBox::new("transport", "transport")
            .selected_text(match transport {
                Transport::InProcess => "in-process",
                Transport::Udp => "UDP loopback",
            })
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut transport, Transport::InProcess, "in-process")
                    .on_hover_text("Both endpoints and the link in one deterministic simulation (re-runs identically)");
                ui.selectable_value(&mut transport, Transport::Udp, "UDP loopback").on_hover_text(
                    "Each endpoint on its own thread and real UDP socket on 127.0.0.1, the link applied on receive",
                );
            });
        if transport != state.transport {
            state.transport = transport;
            state.start();
        }
        ui.separator();
        preset_menu_ui(state, ui);
        ui.separator();
        if ui.button("Open...").on_hover_text("Open a session or scenario file (Ctrl+O)").clicked() {
            state.open_dialog();
        }
        if ui.button("Save...").on_hover_text("Save the recording as a session file (Ctrl+S)").clicked() {
            state.save_dialog();
        }
        ui.menu_button("Recent", |ui| {
            if state.settings.recent.is_empty() {
                ui.label("(none yet)");
            }
            for p in state.settings.recent.clone() {
                if ui.button(p.display().to_string()).clicked() {
                    state.open_path(&p);
                    ui.close();
                }
            }
        });
        let theme = if state.settings.dark { "Light" } else { "Dark" };
        if ui.button(theme).on_hover_text("Switch between dark and light themes").clicked() {
            state.settings.dark = !state.settings.dark;
        }
    });
    ui.horizontal(|ui| cursor_ui(state, ui));
}

fn preset_menu_ui(state: &mut AppState, ui: &mut egui::Ui) {
    ui.menu_button("Link preset", |ui| {
        let mut all = presets::builtin();
        all.extend(state.settings.custom_presets.iter().cloned());
        for p in all {
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
                for (i, dir) in ["a_to_b", "b_to_a"].into_iter().enumerate() {
                    state.set_param(&format!("link.{dir}.latency_ms"), p.latency_ms[i]);
                    state.set_param(&format!("link.{dir}.jitter_ms"), p.jitter_ms);
                    state.set_param(&format!("link.{dir}.loss_percent"), p.loss_percent);
                    state.set_param(&format!("link.{dir}.bandwidth_kbps"), p.bandwidth_kbps[i]);
                    state.set_param(&format!("link.{dir}.burst.p_percent"), 0.0);
                }
                ui.close();
            }
        }
        ui.separator();
        if ui.button("Save current link as preset").clicked() {
            let n = state.settings.custom_presets.len() + 1;
            let l = &state.scenario.link;
            state.settings.custom_presets.push(presets::Preset::from_links(
                &format!("Custom {n}"),
                &l.a_to_b,
                &l.b_to_a,
            ));
            ui.close();
        }
    });
}

/// Picks events for "jump to next event of a kind".
type EventFilter = fn(&EventKind) -> bool;

fn cursor_ui(state: &mut AppState, ui: &mut egui::Ui) {
    let end = state.end_time();
    let mut t = state.cursor().as_secs_f64();
    let play = if state.playback.playing { "Pause replay" } else { "Play" };
    if ui.button(play).on_hover_text("Replay from the cursor at the chosen speed (Space)").clicked() {
        state.playback.toggle_play(end);
    }
    egui::ComboBox::new("speed", "speed").selected_text(format!("{}x", state.playback.speed)).width(60.0).show_ui(
        ui,
        |ui| {
            for s in SPEEDS {
                ui.selectable_value(&mut state.playback.speed, s, format!("{s}x"));
            }
        },
    );
    let follow = state.playback.follow;
    if ui
        .add_enabled(!follow, egui::Button::new("Follow live"))
        .on_hover_text("Let the cursor follow the newest events (End)")
        .clicked()
    {
        state.playback.follow_live();
    }
    let w = (ui.available_width() - 330.0).max(120.0);
    ui.spacing_mut().slider_width = w;
    let r = ui
        .add(egui::Slider::new(&mut t, 0.0..=end.as_secs_f64().max(0.001)).text("time cursor s").fixed_decimals(2))
        .on_hover_text("Scrub: every panel shows the state at the cursor (arrows step, Home/End)");
    // Only a user's drag, click or keys move the cursor: the slider also reports a change when it
    // rounds the value to its decimals, which must not stop a live view from following.
    if r.changed() && (r.dragged() || r.clicked() || r.has_focus()) {
        state.playback.seek(SimTime::from_secs_f64(t));
    }
    ui.menu_button("Next event", |ui| {
        let kinds: [(&str, EventFilter); 5] = [
            ("Link drop", |k| matches!(k, EventKind::LinkDropped { .. })),
            ("Nak / loss report", |k| matches!(k, EventKind::PacketNakked { .. })),
            (
                "Message resend",
                |k| matches!(k, EventKind::MessageSent { kind, .. } if *kind != ackscope_protocol::SendKind::First),
            ),
            ("Parameter change", |k| matches!(k, EventKind::ParamChanged { .. })),
            ("Malformed packet", |k| matches!(k, EventKind::Malformed { .. })),
        ];
        for (name, pred) in kinds {
            if ui.button(name).clicked() {
                let c = state.cursor();
                let next = state.lanes.iter().filter_map(|l| l.store.next_event_after(c, pred)).min();
                match next {
                    Some(t) => state.playback.seek(t),
                    None => state.error = Some(format!("no {name} after {:.2} s", c.as_secs_f64())),
                }
                ui.close();
            }
        }
    });
}

pub fn status_bar_ui(state: &mut AppState, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        let mode = if !state.is_running() {
            if state.file.is_some() {
                "replay"
            } else {
                "stopped"
            }
        } else if state.is_paused() {
            "paused"
        } else {
            "live"
        };
        let events: usize = state.lanes.iter().map(|l| l.store.len()).sum();
        let strategies: Vec<&str> = state.lanes.iter().map(|l| l.scenario.strategy.name()).collect();
        ui.label(format!(
            "{mode} | t = {:.2} s (cursor {:.2} s) | {events} events | {:.0} events/s | display skipped 0 | {}",
            state.end_time().as_secs_f64(),
            state.cursor().as_secs_f64(),
            state.events_per_second(),
            strategies.join(" vs "),
        ));
        if let Some(f) = &state.file {
            ui.separator();
            ui.label(f.display().to_string());
        }
    });
}

pub fn banners_ui(state: &mut AppState, ui: &mut egui::Ui) {
    if let Some(e) = state.error.clone() {
        egui::Frame::new().fill(ui.visuals().error_fg_color.gamma_multiply(0.25)).inner_margin(6.0).show(ui, |ui| {
            ui.horizontal(|ui| {
                if ui.button("Dismiss").clicked() {
                    state.error = None;
                }
                ui.add(egui::Label::new(egui::RichText::new(e).strong()).wrap());
            });
        });
    }
    if !state.settings.intro_dismissed {
        egui::Frame::new().fill(ui.visuals().faint_bg_color).inner_margin(6.0).show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.vertical(|ui| {
                    ui.label("1. Raise loss to 20 % on the left and watch the sender's loss estimate chase the true loss.");
                    ui.label("2. Tick A/B (Glenn vs UE4) and open the Messages tab: delay-triggered copies vs Nak-triggered resends on one trace.");
                    ui.label("3. Pick 'Chunks', press 'Send chunk' and watch the slice map fill; Stop, then scrub the time cursor.");
                });
                if ui.button("Got it").clicked() {
                    state.settings.intro_dismissed = true;
                }
            });
        });
    }
}
