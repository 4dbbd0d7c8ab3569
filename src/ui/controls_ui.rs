//! The left panel: every setting that acts on the running simulation, grouped. Each control takes
//! its label, range and tooltip from the parameter table ([`crate::params::PARAMS`]) under its
//! dotted `--set` name, and an edit is pushed as [`AppCommand::SetParam`], so it is applied live,
//! recorded in the session, and re-applied identically on a re-run.

use ackscope_protocol::{JitterDistribution, Side};

use crate::app::{AppCommand, AppState};
use crate::model::Sample;
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
}

fn set(cmds: &mut Vec<AppCommand>, name: &str, value: impl ToString) {
    cmds.push(AppCommand::SetParam { name: name.to_string(), value: value.to_string() });
}

/// A slider for the number parameter `name` showing `v`.
fn slider_ui(ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>, name: &str, mut v: f64) {
    let p = params::get(name);
    let Kind::Number { min, max, integer, log } = p.kind else { panic!("'{name}' is not a number") };
    let mut slider = egui::Slider::new(&mut v, min..=max).logarithmic(log).text(p.label);
    if integer {
        slider = slider.integer();
    }
    if ui.add(slider).on_hover_text(p.tip).changed() {
        set(cmds, name, v);
    }
}

/// A checkbox for the true/false parameter `name` showing `v`.
fn checkbox_ui(ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>, name: &str, mut v: bool) {
    let p = params::get(name);
    if ui.checkbox(&mut v, p.label).on_hover_text(p.tip).changed() {
        set(cmds, name, v);
    }
}

fn link_ui(state: &AppState, view: &mut ControlsView, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    ui.horizontal(|ui| {
        let d = &mut view.link_dir;
        ui.selectable_value(d, LinkDir::Both, "both").on_hover_text("Edit both directions together");
        ui.selectable_value(d, LinkDir::AtoB, "A->B").on_hover_text("Edit the A->B direction only");
        ui.selectable_value(d, LinkDir::BtoA, "B->A").on_hover_text("Edit the B->A direction only");
    });
    let p = view.link_dir.prefix();
    let c = if view.link_dir == LinkDir::BtoA { state.scenario.link.b_to_a } else { state.scenario.link.a_to_b };
    let n = |f: &str| format!("{p}.{f}");
    slider_ui(ui, cmds, &n("latency_ms"), c.latency_ms);
    slider_ui(ui, cmds, &n("jitter_ms"), c.jitter_ms);
    let jitter = params::get("link.jitter_distribution");
    let mut normal = c.jitter_distribution == JitterDistribution::Normal;
    if ui.checkbox(&mut normal, jitter.label).on_hover_text(jitter.tip).changed() {
        set(cmds, &n("jitter_distribution"), if normal { "normal" } else { "uniform" });
    }
    slider_ui(ui, cmds, &n("loss_percent"), c.loss_percent);
    slider_ui(ui, cmds, &n("burst.p_percent"), c.burst.p_percent);
    slider_ui(ui, cmds, &n("burst.r_percent"), c.burst.r_percent);
    slider_ui(ui, cmds, &n("burst.loss_in_bad_percent"), c.burst.loss_in_bad_percent);
    slider_ui(ui, cmds, &n("duplicate_percent"), c.duplicate_percent);
    slider_ui(ui, cmds, &n("reorder_percent"), c.reorder_percent);
    slider_ui(ui, cmds, &n("bandwidth_kbps"), c.bandwidth_kbps);
    slider_ui(ui, cmds, &n("queue_bytes"), c.queue_bytes as f64);
    slider_ui(ui, cmds, &n("mtu_bytes"), c.mtu_bytes as f64);
}

fn strategy_ui(state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    let s = &state.scenario;
    ui.label("Glenn reliable-ordered messages");
    slider_ui(ui, cmds, "glenn.resend_delay_ms", s.glenn.resend_delay_ms);
    checkbox_ui(ui, cmds, "glenn.rtt_resend", s.glenn.rtt_resend);
    slider_ui(ui, cmds, "glenn.packet_budget_bytes", s.glenn.packet_budget_bytes as f64);
    slider_ui(ui, cmds, "glenn.max_messages_per_packet", s.glenn.max_messages_per_packet as f64);
    ui.separator();
    ui.label("UE4 bunches");
    slider_ui(ui, cmds, "ue4.net_speed_bytes_per_sec", s.ue4.net_speed_bytes_per_sec);
    ui.separator();
    ui.label("Delivery notification / rellikt");
    slider_ui(ui, cmds, "dnm.timeout_ms", s.dnm.timeout_ms);
    slider_ui(ui, cmds, "rellikt.loss_timeout_ms", s.rellikt.loss_timeout_ms);
}

fn workload_ui(state: &AppState, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    let w = &state.scenario.workload;
    slider_ui(ui, cmds, "workload.snapshot_rate_hz", w.snapshot_rate_hz);
    slider_ui(ui, cmds, "workload.snapshot_bytes", w.snapshot_bytes as f64);
    slider_ui(ui, cmds, "workload.reliable_rate_hz", w.reliable_rate_hz);
    slider_ui(ui, cmds, "workload.reliable_max_bytes", w.reliable_max_bytes as f64);
    let c = &state.scenario.chunk;
    ui.label("Large blocks (Chunks / Fragments strategies)");
    slider_ui(ui, cmds, "chunk.bandwidth_kbps", c.bandwidth_kbps);
    slider_ui(ui, cmds, "chunk.resend_delay_ms", c.resend_delay_ms);
    checkbox_ui(ui, cmds, "chunk.rtt_resend", c.rtt_resend);
    ui.horizontal(|ui| {
        if ui
            .button("Send burst")
            .on_hover_text("Queue a burst of reliable messages on A (exercises the send queue and receive window)")
            .clicked()
        {
            cmds.push(AppCommand::Burst);
        }
        let mut kib = state.chunk_kib;
        if ui.add(egui::DragValue::new(&mut kib).range(1..=256).suffix(" KiB")).changed() {
            cmds.push(AppCommand::SetChunkKib(kib));
        }
        if ui.button("Send chunk").on_hover_text("Queue one large block on A (Chunks / Fragments strategies)").clicked()
        {
            cmds.push(AppCommand::SendChunk);
        }
    });
}

pub fn controls_ui(state: &AppState, view: &mut ControlsView, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    egui::CollapsingHeader::new("Link").default_open(true).show(ui, |ui| link_ui(state, view, ui, cmds));
    egui::CollapsingHeader::new("Send rate and flow control").default_open(true).show(ui, |ui| {
        let s = &state.scenario;
        slider_ui(ui, cmds, "send_rate_pps", s.send_rate_pps);
        checkbox_ui(ui, cmds, "flow.enabled", s.flow.enabled);
        slider_ui(ui, cmds, "flow.rtt_threshold_ms", s.flow.rtt_threshold_ms);
    });
    egui::CollapsingHeader::new("Strategy parameters").default_open(false).show(ui, |ui| strategy_ui(state, ui, cmds));
    egui::CollapsingHeader::new("Workload").default_open(true).show(ui, |ui| workload_ui(state, ui, cmds));
    egui::CollapsingHeader::new("Estimates at the cursor (A, B)")
        .default_open(true)
        .show(ui, |ui| estimates_ui(state, ui));
}

fn estimates_ui(state: &AppState, ui: &mut egui::Ui) {
    let cursor = state.cursor().as_secs_f64();
    let at = |v: &Vec<Sample>| {
        let n = v.partition_point(|p| p.t_s <= cursor);
        if n == 0 {
            0.0
        } else {
            v[n - 1].y
        }
    };
    for lane in &state.lanes {
        let a = lane.store.side(Side::A);
        let b = lane.store.side(Side::B);
        ui.label(egui::RichText::new(lane.scenario.strategy.name()).strong());
        egui::Grid::new(("estimates", lane.scenario.strategy.name())).num_columns(3).striped(true).show(ui, |ui| {
            for (name, fa, fb) in [
                ("RTT smoothed ms", at(&a.rtt_smoothed_ms), at(&b.rtt_smoothed_ms)),
                ("RTT display ms", at(&a.rtt_display_ms), at(&b.rtt_display_ms)),
                ("loss est. %", at(&a.loss_estimate_percent), at(&b.loss_estimate_percent)),
                ("loss true %", at(&a.loss_true_percent), at(&b.loss_true_percent)),
                ("sent kbps", at(&a.sent_kbps), at(&b.sent_kbps)),
                ("acked kbps", at(&a.acked_kbps), at(&b.acked_kbps)),
            ] {
                ui.label(name);
                ui.monospace(format!("{fa:8.1}"));
                ui.monospace(format!("{fb:8.1}"));
                ui.end_row();
            }
        });
        ui.label(format!("true link RTT: {:.1} ms", at(&lane.store.true_rtt_ms)));
    }
}
