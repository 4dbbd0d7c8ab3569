//! The left panel: every setting that acts on the running simulation, grouped, each with a tooltip
//! saying what it does and which seed concept it is. Every edit goes through
//! `AppState::set_param` with the setting's dotted `--set` name, so it is applied live, recorded
//! in the session, and re-applied identically on a re-run.

use ackscope_protocol::{JitterDistribution, Side};
use egui_plot::PlotPoint;

use super::AppState;

/// A slider bound to the dotted parameter `name`.
#[allow(clippy::too_many_arguments)]
fn slider_ui(
    state: &mut AppState,
    ui: &mut egui::Ui,
    label: &str,
    name: &str,
    mut v: f64,
    range: std::ops::RangeInclusive<f64>,
    log: bool,
    tip: &str,
) {
    let r = ui.add(egui::Slider::new(&mut v, range).logarithmic(log).text(label)).on_hover_text(tip);
    if r.changed() {
        state.set_param(name, v);
    }
}

fn checkbox_ui(state: &mut AppState, ui: &mut egui::Ui, label: &str, name: &str, mut v: bool, tip: &str) {
    if ui.checkbox(&mut v, label).on_hover_text(tip).changed() {
        state.set_param(name, v);
    }
}

/// Which link direction the link group edits ("both" keeps them equal).
fn dir_prefix(ui: &mut egui::Ui) -> &'static str {
    let id = egui::Id::unique("link_dir_choice");
    let mut choice: usize = ui.data(|d| d.get_temp(id)).unwrap_or(0);
    ui.horizontal(|ui| {
        ui.selectable_value(&mut choice, 0, "both").on_hover_text("Edit both directions together");
        ui.selectable_value(&mut choice, 1, "A->B").on_hover_text("Edit the A->B direction only");
        ui.selectable_value(&mut choice, 2, "B->A").on_hover_text("Edit the B->A direction only");
    });
    ui.data_mut(|d| d.insert_temp(id, choice));
    ["link", "link.a_to_b", "link.b_to_a"][choice]
}

fn link_ui(state: &mut AppState, ui: &mut egui::Ui) {
    let p = dir_prefix(ui);
    let c = if p == "link.b_to_a" { state.scenario.link.b_to_a } else { state.scenario.link.a_to_b };
    let n = |f: &str| format!("{p}.{f}");
    slider_ui(
        state,
        ui,
        "latency ms",
        &n("latency_ms"),
        c.latency_ms,
        0.0..=1000.0,
        false,
        "One-way base delay added to every packet (propagation + queueing you do not model otherwise).",
    );
    slider_ui(state, ui, "jitter ms", &n("jitter_ms"), c.jitter_ms, 0.0..=500.0, false,
        "Random variation of the delay (uniform half-width or normal standard deviation). Large jitter reorders packets.");
    let mut normal = c.jitter_distribution == JitterDistribution::Normal;
    if ui
        .checkbox(&mut normal, "normal jitter")
        .on_hover_text("Normal instead of uniform jitter (netem's distribution choice)")
        .changed()
    {
        state.set_param(&n("jitter_distribution"), if normal { "normal" } else { "uniform" });
    }
    slider_ui(
        state,
        ui,
        "loss %",
        &n("loss_percent"),
        c.loss_percent,
        0.0..=100.0,
        false,
        "Independent random packet loss. The sender estimates it from packets never acked (Glenn's packet-level acks).",
    );
    slider_ui(
        state,
        ui,
        "burst p %",
        &n("burst.p_percent"),
        c.burst.p_percent,
        0.0..=50.0,
        false,
        "Gilbert-Elliott burst loss: per-packet chance of entering the bad state (0 = off).",
    );
    slider_ui(
        state,
        ui,
        "burst r %",
        &n("burst.r_percent"),
        c.burst.r_percent,
        1.0..=100.0,
        false,
        "Gilbert-Elliott: per-packet chance of leaving the bad state (mean burst = 100/r packets).",
    );
    slider_ui(
        state,
        ui,
        "loss in bad %",
        &n("burst.loss_in_bad_percent"),
        c.burst.loss_in_bad_percent,
        0.0..=100.0,
        false,
        "Gilbert-Elliott: loss while in the bad state.",
    );
    slider_ui(
        state,
        ui,
        "duplicate %",
        &n("duplicate_percent"),
        c.duplicate_percent,
        0.0..=50.0,
        false,
        "Chance the link delivers an extra copy. Receivers must ack and deliver each message exactly once.",
    );
    slider_ui(
        state,
        ui,
        "reorder %",
        &n("reorder_percent"),
        c.reorder_percent,
        0.0..=50.0,
        false,
        "Chance a packet is held back by the reorder delay so later packets overtake it.",
    );
    slider_ui(
        state,
        ui,
        "bandwidth kbps",
        &n("bandwidth_kbps"),
        c.bandwidth_kbps,
        0.0..=10000.0,
        false,
        "Link capacity including 28 bytes IP+UDP per packet, with a bounded queue that tail-drops (0 = unlimited).",
    );
    slider_ui(
        state,
        ui,
        "queue bytes",
        &n("queue_bytes"),
        c.queue_bytes as f64,
        1500.0..=1_000_000.0,
        true,
        "Bytes the bandwidth-limited queue holds before dropping (bufferbloat vs tail drop).",
    );
    slider_ui(
        state,
        ui,
        "MTU bytes",
        &n("mtu_bytes"),
        c.mtu_bytes as f64,
        200.0..=9000.0,
        false,
        "Largest IP packet; larger ones are dropped (why Glenn slices large blocks).",
    );
}

fn strategy_ui(state: &mut AppState, ui: &mut egui::Ui) {
    let s = state.scenario.clone();
    ui.label("Glenn reliable-ordered messages");
    slider_ui(state, ui, "resend delay ms", "glenn.resend_delay_ms", s.glenn.resend_delay_ms, 0.0..=1000.0, false,
        "Glenn: an unacked message is included again once this long has passed since it was last sent. 0 = in every packet until acked (pure redundancy).");
    checkbox_ui(
        state,
        ui,
        "resend delay = RTT x 1.25",
        "glenn.rtt_resend",
        s.glenn.rtt_resend,
        "Adaptive redundancy: derive the resend delay from the measured RTT instead of the fixed value.",
    );
    slider_ui(
        state,
        ui,
        "packet budget bytes",
        "glenn.packet_budget_bytes",
        s.glenn.packet_budget_bytes as f64,
        64.0..=8192.0,
        true,
        "Glenn: bytes of messages one packet may carry; oldest unacked messages are packed first.",
    );
    slider_ui(
        state,
        ui,
        "max messages / packet",
        "glenn.max_messages_per_packet",
        s.glenn.max_messages_per_packet as f64,
        1.0..=256.0,
        true,
        "Glenn: most messages one packet carries.",
    );
    ui.separator();
    ui.label("UE4 bunches");
    slider_ui(state, ui, "net speed B/s", "ue4.net_speed_bytes_per_sec", s.ue4.net_speed_bytes_per_sec, 0.0..=200_000.0, false,
        "UE4 CurrentNetSpeed: the QueuedBits throttle's budget (0 = unthrottled). Saturated, unreliable bunches wait or drop.");
    ui.separator();
    ui.label("Delivery notification / rellikt");
    slider_ui(
        state,
        ui,
        "dnm timeout ms",
        "dnm.timeout_ms",
        s.dnm.timeout_ms,
        100.0..=5000.0,
        true,
        "Delivery notification manager: in-flight packets unacked this long are delivery failures.",
    );
    slider_ui(
        state,
        ui,
        "rellikt loss ms",
        "rellikt.loss_timeout_ms",
        s.rellikt.loss_timeout_ms,
        100.0..=5000.0,
        true,
        "rellikt: a packet not acked within this time counts as lost.",
    );
}

fn workload_ui(state: &mut AppState, ui: &mut egui::Ui) {
    let w = state.scenario.workload;
    slider_ui(
        state,
        ui,
        "snapshots /s",
        "workload.snapshot_rate_hz",
        w.snapshot_rate_hz,
        0.0..=120.0,
        false,
        "Unreliable state snapshots each side sends per second (sent once, may be lost).",
    );
    slider_ui(
        state,
        ui,
        "snapshot bytes",
        "workload.snapshot_bytes",
        w.snapshot_bytes as f64,
        8.0..=1000.0,
        true,
        "Size of each snapshot.",
    );
    slider_ui(
        state,
        ui,
        "reliable events /s",
        "workload.reliable_rate_hz",
        w.reliable_rate_hz,
        0.0..=200.0,
        false,
        "Reliable events per second (Poisson), delivered in order exactly once.",
    );
    slider_ui(
        state,
        ui,
        "event max bytes",
        "workload.reliable_max_bytes",
        w.reliable_max_bytes as f64,
        8.0..=1000.0,
        true,
        "Reliable event sizes are drawn between the minimum (8) and this.",
    );
    let c = state.scenario.chunk;
    ui.label("Large blocks (Chunks / Fragments strategies)");
    slider_ui(
        state,
        ui,
        "chunk target kbps",
        "chunk.bandwidth_kbps",
        c.bandwidth_kbps,
        16.0..=10000.0,
        true,
        "Glenn's chunk sender: the byte budget accumulated per tick from this bandwidth (headers counted).",
    );
    slider_ui(
        state,
        ui,
        "slice resend ms",
        "chunk.resend_delay_ms",
        c.resend_delay_ms,
        0.0..=1000.0,
        false,
        "Glenn's chunk sender: a slice is sent again at most this often until acked.",
    );
    checkbox_ui(
        state,
        ui,
        "slice resend = RTT x 1.25",
        "chunk.rtt_resend",
        c.rtt_resend,
        "Derive the per-slice resend delay from the measured RTT (the large-blocks seed's suggestion).",
    );
    ui.horizontal(|ui| {
        if ui
            .button("Send burst")
            .on_hover_text("Queue a burst of reliable messages on A (exercises the send queue and receive window)")
            .clicked()
        {
            state.burst();
        }
        ui.add(egui::DragValue::new(&mut state.chunk_kib).range(1..=256).suffix(" KiB"));
        if ui.button("Send chunk").on_hover_text("Queue one large block on A (Chunks / Fragments strategies)").clicked()
        {
            state.send_chunk();
        }
    });
}

pub fn controls_ui(state: &mut AppState, ui: &mut egui::Ui) {
    egui::CollapsingHeader::new("Link").default_open(true).show(ui, |ui| link_ui(state, ui));
    egui::CollapsingHeader::new("Send rate and flow control").default_open(true).show(ui, |ui| {
        let s = state.scenario.clone();
        slider_ui(state, ui, "packets/s", "send_rate_pps", s.send_rate_pps, 1.0..=1000.0, true,
            "Packets each endpoint sends per second; every packet carries acks for the other side's.");
        checkbox_ui(state, ui, "rellikt flow control", "flow.enabled", s.flow.enabled,
            "rellikt's good/bad switch: RTT above the threshold drops to the bad rate; penalty time doubles on a quick relapse.");
        slider_ui(state, ui, "RTT threshold ms", "flow.rtt_threshold_ms", s.flow.rtt_threshold_ms, 10.0..=1000.0, false,
            "Flow control: RTT above this is 'bad' (rellikt: 250 ms).");
    });
    egui::CollapsingHeader::new("Strategy parameters").default_open(false).show(ui, |ui| strategy_ui(state, ui));
    egui::CollapsingHeader::new("Workload").default_open(true).show(ui, |ui| workload_ui(state, ui));
    egui::CollapsingHeader::new("Estimates at the cursor (A, B)")
        .default_open(true)
        .show(ui, |ui| estimates_ui(state, ui));
}

fn estimates_ui(state: &AppState, ui: &mut egui::Ui) {
    let cursor = state.cursor().as_secs_f64();
    let at = |v: &Vec<PlotPoint>| {
        let n = v.partition_point(|p| p.x <= cursor);
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
