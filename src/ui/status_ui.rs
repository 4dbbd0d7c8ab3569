//! The status bar (mode, times, event counts, file, and a progress bar per file job), the
//! notices (dismissible errors, confirmations such as a finished save) and the first-run hints
//! above the tabs.
//!
//! Errors and notices float over the bottom right of the tab's area instead of taking a row above
//! the tabs: a banner that arrives pushed the tab bar and every control under it down ~35 px, so
//! the click the user was about to make landed on the wrong control (issue 25, defect 6).

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
        ui.label(format!(
            "{mode} | t = {:.2} s (cursor {:.2} s) | {events} events | {:.0} events/s | {}",
            state.end_time().as_secs_f64(),
            state.cursor().as_secs_f64(),
            state.events_per_second(),
            run_text(state),
        ));
        if let Some(lag) = state.lag.describe() {
            ui.separator();
            let color = if state.lag.catching_up || state.lag.run_behind >= crate::app::lag::RUN_BEHIND_SHOWN {
                ui.visuals().warn_fg_color
            } else {
                ui.visuals().weak_text_color()
            };
            ui.label(egui::RichText::new(lag).color(color));
        }
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

/// What the status bar says the run is: its lanes ("glenn", A/B "glenn vs ue4", a lane not
/// simulated with its origin), then with several clients how many (each, in A/B) and which one
/// the views show: "glenn, 8 clients, showing client 3".
pub fn run_text(state: &AppState) -> String {
    let mut lanes: Vec<String> = state.lanes.iter().map(|l| l.info.label()).collect();
    if let Some(l) = state.lanes.first().filter(|l| !l.info.origin.is_simulated()) {
        lanes[0] = format!("{} ({})", lanes[0], l.info.origin.describe());
    }
    let mut out = lanes.join(" vs ");
    let clients = state.lanes.first().map_or(0, |l| l.clients().len());
    if clients > 1 {
        let each = if state.lanes.len() > 1 { " each" } else { "" };
        let shown = state.lanes[0].info.client(state.focus).label();
        out.push_str(&format!(", {clients} clients{each}, showing {shown}"));
    }
    out
}

/// In place of the tab's views while the window catches up with a live run it fell behind:
/// how far behind, and that no event is lost meanwhile.
pub fn catching_up_ui(state: &AppState, ui: &mut egui::Ui) {
    ui.add_space(24.0);
    ui.vertical_centered(|ui| {
        ui.heading("Catching up with the run");
        ui.label(format!(
            "The window is {:.1} s of run time behind ({} events waiting). It takes them in without drawing \
             the views, and draws again once it has caught up. No event is dropped.",
            state.lag.window_behind.as_secs_f64(),
            state.lag.waiting_events
        ));
        ui.weak("Pause the run to catch up sooner.");
    });
}

/// Widest a notice grows before its text wraps, in points.
const NOTICE_MAX_W: f32 = 520.0;

/// The error and the notice, stacked in one overlay anchored at the bottom right of `area` (the
/// tabs' panel): nothing under them moves when they come or go.
pub fn notices_ui(state: &AppState, area: egui::Rect, ctx: &egui::Context, cmds: &mut Vec<AppCommand>) {
    if state.error.is_none() && state.notice.is_none() {
        return;
    }
    let margin = 8.0;
    egui::Area::new(egui::Id::unique("notices"))
        .order(egui::Order::Foreground)
        .pivot(egui::Align2::RIGHT_BOTTOM)
        .fixed_pos(area.right_bottom() - egui::vec2(margin, margin))
        .constrain_to(area)
        .show(ctx, |ui| {
            ui.set_max_width(NOTICE_MAX_W.min(area.width() - 2.0 * margin));
            let shadow = ui.visuals().popup_shadow;
            let base = ui.visuals().window_fill;
            let stroke = ui.visuals().window_stroke;
            // An opaque card (the theme's window fill under the tint), so the tab's content under it
            // does not show through the text.
            let card = |tint: egui::Color32| {
                egui::Frame::new()
                    .fill(blend(base, tint))
                    .stroke(stroke)
                    .shadow(shadow)
                    .corner_radius(6.0)
                    .inner_margin(8.0)
                    .outer_margin(egui::Margin { bottom: 4, ..Default::default() })
            };
            if let Some(e) = &state.error {
                card(ui.visuals().error_fg_color).show(ui, |ui| {
                    ui.horizontal(|ui| {
                        if ui.button("Dismiss").clicked() {
                            cmds.push(AppCommand::DismissError);
                        }
                        ui.add(egui::Label::new(egui::RichText::new(e).strong()).wrap());
                    });
                });
            }
            if let Some(n) = &state.notice {
                card(ui.visuals().selection.bg_fill).show(ui, |ui| {
                    ui.horizontal(|ui| {
                        if ui.button("OK").clicked() {
                            cmds.push(AppCommand::DismissNotice);
                        }
                        ui.add(egui::Label::new(egui::RichText::new(n).strong()).wrap());
                    });
                });
            }
        });
}

/// `tint` laid over `base` at a quarter strength, opaque.
fn blend(base: egui::Color32, tint: egui::Color32) -> egui::Color32 {
    let mix = |b: u8, t: u8| ((b as u16 * 3 + t as u16) / 4) as u8;
    egui::Color32::from_rgb(mix(base.r(), tint.r()), mix(base.g(), tint.g()), mix(base.b(), tint.b()))
}

/// The first-run hints above the tabs (until dismissed).
pub fn banners_ui(state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
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
