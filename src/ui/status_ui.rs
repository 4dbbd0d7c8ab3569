//! The status bar (mode, times, event counts, file, and a progress bar per file job) and the
//! banners above the tabs (dismissible errors, confirmations such as a finished save, first-run
//! hints).

use crate::app::{AppCommand, AppState};

pub fn status_bar_ui(state: &AppState, ui: &mut egui::Ui) {
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
        let events: usize = state.lanes.iter().map(|l| l.len()).sum();
        let mut strategies: Vec<String> = state.lanes.iter().map(|l| l.info.label()).collect();
        if let Some(l) = state.lanes.first().filter(|l| !l.info.origin.is_simulated()) {
            strategies[0] = format!("{} ({})", strategies[0], l.info.origin.describe());
        }
        let clients = state.lanes.first().map_or(0, |l| l.clients().len());
        if clients > 1 {
            strategies.push(format!("{clients} clients, showing {}", state.lanes[0].info.client(state.focus).label()));
        }
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
        if let Some(text) = state.readback().status() {
            ui.separator();
            if state.readback().reading() {
                ui.add(egui::Spinner::new());
            }
            ui.label(text).on_hover_text(
                "The cursor is before the window a live run keeps in memory: the run around it is read back from its stream file",
            );
        }
        if state.is_rerunning() {
            ui.separator();
            ui.add(egui::Spinner::new());
            ui.label("Re-running...");
        }
        for job in state.file_jobs() {
            ui.separator();
            let bar = egui::ProgressBar::new(job.fraction()).text(job.describe()).desired_width(260.0);
            ui.add(bar).on_hover_text(job.path.display().to_string());
        }
    });
}

pub fn banners_ui(state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    if let Some(e) = &state.error {
        egui::Frame::new().fill(ui.visuals().error_fg_color.gamma_multiply(0.25)).inner_margin(6.0).show(ui, |ui| {
            ui.horizontal(|ui| {
                if ui.button("Dismiss").clicked() {
                    cmds.push(AppCommand::DismissError);
                }
                ui.add(egui::Label::new(egui::RichText::new(e).strong()).wrap());
            });
        });
    }
    if let Some(n) = &state.notice {
        let fill = ui.visuals().selection.bg_fill.gamma_multiply(0.35);
        egui::Frame::new().fill(fill).inner_margin(6.0).show(ui, |ui| {
            ui.horizontal(|ui| {
                if ui.button("OK").clicked() {
                    cmds.push(AppCommand::DismissNotice);
                }
                ui.add(egui::Label::new(egui::RichText::new(n).strong()).wrap());
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
                    cmds.push(AppCommand::DismissIntro);
                }
            });
        });
    }
}
