//! The left panel: every setting that acts on the running simulation, grouped. Each control takes
//! its label, range and tooltip from the parameter table ([`crate::params::PARAMS`]) under its
//! dotted `--set` name, and an edit is pushed as [`AppCommand::SetParam`] once the user lets go
//! ([`super::edit`]), so it is applied live, recorded in the session, and re-applied
//! identically on a re-run.
//!
//! Live, the panel shows the values in force now. In replay it shows the values in force at the
//! cursor: the recording's scenario with every change recorded up to the cursor (live edits and
//! scripted link steps alike, as `ParamChanged` events). Edits made in replay cannot change the
//! recording; they set up the next Restart, which the panel says, listing them.

use ackscope_protocol::{JitterDistribution, Scenario, Side};

use super::edit::Preview;
use crate::app::{AppCommand, AppState};
use crate::model::{Recording, Sample};
use crate::params::{self, Kind};

/// Which link direction the link group edits ("both" keeps them equal).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LinkDir {
    #[default]
    Both,
    AtoB,
    BtoA,
}

impl LinkDir {
    /// The dotted prefix of the link parameters this choice edits.
    fn prefix(self) -> &'static str {
        match self {
            LinkDir::Both => "link",
            LinkDir::AtoB => "link.a_to_b",
            LinkDir::BtoA => "link.b_to_a",
        }
    }
}

/// The left panel's own state.
#[derive(Debug, Default)]
pub struct ControlsView {
    pub link_dir: LinkDir,
    /// The value a control shows while it is being changed.
    pub preview: Preview,
    /// The values in force at the cursor in replay, and what they were computed for.
    at_cursor: Option<(AtKey, Scenario)>,
}

/// What the values at the cursor depend on: the recording, the changes up to the cursor, and
/// the edits made since.
type AtKey = (u64, usize, usize);

/// Where a control's change goes: the commands, and the preview of a change not yet let go.
struct Ctl<'a> {
    cmds: &'a mut Vec<AppCommand>,
    preview: &'a mut Preview,
}

impl Ctl<'_> {
    fn set(&mut self, name: &str, value: impl ToString) {
        self.cmds.push(AppCommand::SetParam { name: name.to_string(), value: value.to_string() });
    }

    /// A slider for the number parameter `name` showing `v`; commits once on release.
    fn slider_ui(&mut self, ui: &mut egui::Ui, name: &str, model: f64) {
        let p = params::get(name);
        let Kind::Number { min, max, integer, log } = p.kind else { panic!("'{name}' is not a number") };
        let mut v = self.preview.shown(name, model);
        let mut slider =
            egui::Slider::new(&mut v, min..=max).logarithmic(log).text(p.label).update_while_editing(false);
        if integer {
            slider = slider.integer();
        }
        let r = ui.add(slider).on_hover_text(p.tip);
        if let Some(v) = self.preview.commit_on_release(ui, &r, name, v, model) {
            self.set(name, v);
        }
    }

    /// A checkbox for the true/false parameter `name` showing `v` (a click is one change).
    fn checkbox_ui(&mut self, ui: &mut egui::Ui, name: &str, mut v: bool) {
        let p = params::get(name);
        if ui.checkbox(&mut v, p.label).on_hover_text(p.tip).changed() {
            self.set(name, v);
        }
    }
}

/// The values in force at the cursor of `lane`: its scenario, every change recorded up to the
/// cursor, then `edits`; cached in `slot` until one of those moves.
fn values_at<'a>(
    lane: &Recording,
    cursor_s: f64,
    edits: &[(String, String)],
    slot: &'a mut Option<(AtKey, Scenario)>,
) -> &'a Scenario {
    let changes = &lane.store.changes;
    let upto = changes.partition_point(|(t, _)| *t <= cursor_s);
    let key = (lane.id(), upto, edits.len());
    if slot.as_ref().is_none_or(|(k, _)| *k != key) {
        let mut s = lane.scenario_at(cursor_s).unwrap_or_default();
        for (name, value) in edits {
            let _ = params::overrides::apply(&mut s, &format!("{name}={value}"));
        }
        *slot = Some((key, s));
    }
    &slot.as_ref().expect("just filled").1
}

fn link_ui(s: &Scenario, dir: &mut LinkDir, ui: &mut egui::Ui, ctl: &mut Ctl) {
    ui.horizontal(|ui| {
        ui.selectable_value(dir, LinkDir::Both, "both").on_hover_text("Edit both directions together");
        ui.selectable_value(dir, LinkDir::AtoB, "A->B").on_hover_text("Edit the A->B direction only");
        ui.selectable_value(dir, LinkDir::BtoA, "B->A").on_hover_text("Edit the B->A direction only");
    });
    let p = dir.prefix();
    let c = if *dir == LinkDir::BtoA { s.link.b_to_a } else { s.link.a_to_b };
    let n = |f: &str| format!("{p}.{f}");
    ctl.slider_ui(ui, &n("latency_ms"), c.latency_ms);
    ctl.slider_ui(ui, &n("jitter_ms"), c.jitter_ms);
    let jitter = params::get("link.jitter_distribution");
    let mut normal = c.jitter_distribution == JitterDistribution::Normal;
    if ui.checkbox(&mut normal, jitter.label).on_hover_text(jitter.tip).changed() {
        ctl.set(&n("jitter_distribution"), if normal { "normal" } else { "uniform" });
    }
    ctl.slider_ui(ui, &n("loss_percent"), c.loss_percent);
    ctl.slider_ui(ui, &n("burst.p_percent"), c.burst.p_percent);
    ctl.slider_ui(ui, &n("burst.r_percent"), c.burst.r_percent);
    ctl.slider_ui(ui, &n("burst.loss_in_bad_percent"), c.burst.loss_in_bad_percent);
    ctl.slider_ui(ui, &n("duplicate_percent"), c.duplicate_percent);
    ctl.slider_ui(ui, &n("reorder_percent"), c.reorder_percent);
    ctl.slider_ui(ui, &n("bandwidth_kbps"), c.bandwidth_kbps);
    ctl.slider_ui(ui, &n("queue_bytes"), c.queue_bytes as f64);
    ctl.slider_ui(ui, &n("mtu_bytes"), c.mtu_bytes as f64);
}

fn strategy_ui(s: &Scenario, ui: &mut egui::Ui, ctl: &mut Ctl) {
    ui.label("Glenn reliable-ordered messages");
    ctl.slider_ui(ui, "glenn.resend_delay_ms", s.glenn.resend_delay_ms);
    ctl.checkbox_ui(ui, "glenn.rtt_resend", s.glenn.rtt_resend);
    ctl.slider_ui(ui, "glenn.packet_budget_bytes", s.glenn.packet_budget_bytes as f64);
    ctl.slider_ui(ui, "glenn.max_messages_per_packet", s.glenn.max_messages_per_packet as f64);
    ui.separator();
    ui.label("UE4 bunches");
    ctl.slider_ui(ui, "ue4.net_speed_bytes_per_sec", s.ue4.net_speed_bytes_per_sec);
    ui.separator();
    ui.label("Delivery notification / rellikt");
    ctl.slider_ui(ui, "dnm.timeout_ms", s.dnm.timeout_ms);
    ctl.slider_ui(ui, "rellikt.loss_timeout_ms", s.rellikt.loss_timeout_ms);
}

fn workload_ui(state: &AppState, s: &Scenario, ui: &mut egui::Ui, ctl: &mut Ctl) {
    let w = &s.workload;
    ctl.slider_ui(ui, "workload.snapshot_rate_hz", w.snapshot_rate_hz);
    ctl.slider_ui(ui, "workload.snapshot_bytes", w.snapshot_bytes as f64);
    ctl.slider_ui(ui, "workload.reliable_rate_hz", w.reliable_rate_hz);
    ctl.slider_ui(ui, "workload.reliable_max_bytes", w.reliable_max_bytes as f64);
    let c = &s.chunk;
    ui.label("Large blocks (Chunks / Fragments strategies)");
    ctl.slider_ui(ui, "chunk.bandwidth_kbps", c.bandwidth_kbps);
    ctl.slider_ui(ui, "chunk.resend_delay_ms", c.resend_delay_ms);
    ctl.checkbox_ui(ui, "chunk.rtt_resend", c.rtt_resend);
    let live = state.is_live();
    let why = "Only while a run is live (Restart to start one)";
    ui.horizontal(|ui| {
        if ui
            .add_enabled(live, egui::Button::new("Send burst"))
            .on_hover_text("Queue a burst of reliable messages on A (exercises the send queue and receive window)")
            .on_disabled_hover_text(why)
            .clicked()
        {
            ctl.cmds.push(AppCommand::Burst);
        }
        let model = state.chunk_kib as f64;
        let mut kib = ctl.preview.shown("chunk_kib", model);
        let r = ui.add(
            egui::DragValue::new(&mut kib)
                .range(1.0..=256.0)
                .max_decimals(0)
                .suffix(" KiB")
                .update_while_editing(false),
        );
        if let Some(k) = ctl.preview.commit_on_release(ui, &r, "chunk_kib", kib, model) {
            ctl.cmds.push(AppCommand::SetChunkKib(k.round() as u32));
        }
        if ui
            .add_enabled(live, egui::Button::new("Send chunk"))
            .on_hover_text("Queue one large block on A (Chunks / Fragments strategies)")
            .on_disabled_hover_text(why)
            .clicked()
        {
            ctl.cmds.push(AppCommand::SendChunk);
        }
    });
}

/// In replay: what the panel shows, and where edits go.
fn replay_note_ui(state: &AppState, ui: &mut egui::Ui) {
    egui::Frame::new().fill(ui.visuals().faint_bg_color).inner_margin(6.0).corner_radius(4.0).show(ui, |ui| {
        ui.set_width(ui.available_width());
        ui.label(egui::RichText::new("Replay (read-only)").strong());
        ui.label(format!("Values in force at the cursor, {:.2} s.", state.cursor().as_secs_f64()));
        if state.replay_edits.is_empty() {
            ui.weak("Edits here do not change the recording: they set up the next Restart.");
        } else {
            let edits: Vec<String> = state.replay_edits.iter().map(|(n, v)| format!("{n}={v}")).collect();
            ui.label(
                egui::RichText::new(format!("For the next Restart: {}", edits.join(", ")))
                    .color(ui.visuals().warn_fg_color),
            );
        }
    });
}

pub fn controls_ui(state: &AppState, view: &mut ControlsView, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    let shown: Scenario = match state.lanes.first() {
        Some(lane) if !state.is_live() && lane.scenario.is_some() => {
            replay_note_ui(state, ui);
            values_at(lane, state.cursor().as_secs_f64(), &state.replay_edits, &mut view.at_cursor).clone()
        }
        _ => state.scenario.clone(),
    };
    let s = &shown;
    let mut ctl = Ctl { cmds, preview: &mut view.preview };
    let dir = &mut view.link_dir;
    egui::CollapsingHeader::new("Link").default_open(true).show(ui, |ui| link_ui(s, dir, ui, &mut ctl));
    egui::CollapsingHeader::new("Send rate and flow control").default_open(true).show(ui, |ui| {
        ctl.slider_ui(ui, "send_rate_pps", s.send_rate_pps);
        ctl.checkbox_ui(ui, "flow.enabled", s.flow.enabled);
        ctl.slider_ui(ui, "flow.rtt_threshold_ms", s.flow.rtt_threshold_ms);
    });
    egui::CollapsingHeader::new("Strategy parameters").default_open(false).show(ui, |ui| strategy_ui(s, ui, &mut ctl));
    egui::CollapsingHeader::new("Workload").default_open(true).show(ui, |ui| workload_ui(state, s, ui, &mut ctl));
}

/// The estimates at the cursor, pinned under the scrolling controls so they stay visible at
/// 1280x800 (at the end of the controls they were cut off below the workload sliders): one
/// summary line per lane, and on opening, every estimate in a grid (a column per lane and side).
/// Closed by default so the controls above keep their room.
pub fn estimates_ui(state: &AppState, ui: &mut egui::Ui) {
    let cursor = state.cursor().as_secs_f64();
    let lanes = state.shown_lanes();
    let at = |v: &Vec<Sample>| {
        let n = v.partition_point(|p| p.t_s <= cursor);
        if n == 0 {
            0.0
        } else {
            v[n - 1].y
        }
    };
    let resp = egui::CollapsingHeader::new("Estimates at the cursor").default_open(false).show(ui, |ui| {
        egui::Grid::new("estimates").num_columns(1 + 2 * lanes.len()).striped(true).spacing([6.0, 1.0]).show(
            ui,
            |ui| {
                ui.label("");
                for lane in lanes {
                    let name = lane.info.label();
                    ui.label(egui::RichText::new(format!("{name} A")).small().strong());
                    ui.label(egui::RichText::new("B").small().strong());
                }
                ui.end_row();
                type Get = fn(&crate::model::Recording, Side) -> &Vec<Sample>;
                let rows: [(&str, Get); 6] = [
                    ("RTT smoothed ms", |l, s| &l.store.side(s).rtt_smoothed_ms),
                    ("RTT display ms", |l, s| &l.store.side(s).rtt_display_ms),
                    ("loss est. %", |l, s| &l.store.side(s).loss_estimate_percent),
                    ("loss true %", |l, s| &l.store.side(s).loss_true_percent),
                    ("sent kbps", |l, s| &l.store.side(s).sent_kbps),
                    ("acked kbps", |l, s| &l.store.side(s).acked_kbps),
                ];
                for (name, get) in rows {
                    ui.label(egui::RichText::new(name).small());
                    for lane in lanes {
                        ui.monospace(format!("{:.1}", at(get(lane, Side::A))));
                        ui.monospace(format!("{:.1}", at(get(lane, Side::B))));
                    }
                    ui.end_row();
                }
                ui.label(egui::RichText::new("true link RTT ms").small());
                for lane in lanes {
                    ui.monospace(format!("{:.1}", at(&lane.store.true_rtt_ms)));
                    ui.label("");
                }
                ui.end_row();
            },
        );
    });
    if resp.body_returned.is_none() {
        for lane in lanes {
            let a = lane.store.side(Side::A);
            let line = format!(
                "{}: RTT {:.1} ms, loss {:.1} %, sent {:.1} kbps",
                lane.info.label(),
                at(&a.rtt_smoothed_ms),
                at(&a.loss_estimate_percent),
                at(&a.sent_kbps)
            );
            ui.label(egui::RichText::new(line).small()).on_hover_text("Side A; open for both sides and more");
        }
    }
}
