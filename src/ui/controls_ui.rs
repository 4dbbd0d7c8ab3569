//! The left panel: link and send-rate controls that act on the running simulation immediately.

use ackscope_protocol::Dir;

use super::AppState;

/// A slider bound to one value of both link directions.
fn link_slider_ui(
    state: &mut AppState,
    ui: &mut egui::Ui,
    label: &str,
    range: std::ops::RangeInclusive<f64>,
    tip: &str,
    get: impl Fn(&ackscope_protocol::LinkConfig) -> f64,
    set: impl Fn(&mut ackscope_protocol::LinkConfig, f64),
) {
    let mut v = get(state.scenario.link.get(Dir::AtoB));
    let r = ui.add(egui::Slider::new(&mut v, range).text(label)).on_hover_text(tip);
    if r.changed() {
        state.edit_link(|c| set(c, v));
    }
}

pub fn controls_ui(state: &mut AppState, ui: &mut egui::Ui) {
    egui::CollapsingHeader::new("Link (both directions)").default_open(true).show(ui, |ui| {
        link_slider_ui(
            state,
            ui,
            "latency ms",
            0.0..=1000.0,
            "One-way base latency added to every packet (the link's propagation delay).",
            |c| c.latency_ms,
            |c, v| c.latency_ms = v,
        );
        link_slider_ui(
            state,
            ui,
            "jitter ms",
            0.0..=500.0,
            "Random variation of the delay (uniform +/- or normal standard deviation). Large jitter reorders packets.",
            |c| c.jitter_ms,
            |c, v| c.jitter_ms = v,
        );
        link_slider_ui(
            state,
            ui,
            "loss %",
            0.0..=100.0,
            "Independent random packet loss. Watch the sender's loss estimate (from unacked packets) follow it.",
            |c| c.loss_percent,
            |c, v| c.loss_percent = v,
        );
    });
    egui::CollapsingHeader::new("Send rate").default_open(true).show(ui, |ui| {
        let mut pps = state.scenario.send_rate_pps;
        let r = ui
            .add(egui::Slider::new(&mut pps, 1.0..=1000.0).logarithmic(true).text("packets/s"))
            .on_hover_text("Packets each endpoint sends per second; every packet carries acks for the other side's.");
        if r.changed() {
            state.set_send_rate(pps);
        }
    });
    egui::CollapsingHeader::new("Estimates (A, B)").default_open(true).show(ui, |ui| {
        estimates_ui(state, ui);
    });
}

fn estimates_ui(state: &AppState, ui: &mut egui::Ui) {
    let last = |v: &Vec<egui_plot::PlotPoint>| v.last().map_or(0.0, |p| p.y);
    let a = state.store.side(ackscope_protocol::Side::A);
    let b = state.store.side(ackscope_protocol::Side::B);
    egui::Grid::new("estimates").num_columns(3).striped(true).show(ui, |ui| {
        for (name, fa, fb) in [
            ("RTT smoothed ms", last(&a.rtt_smoothed_ms), last(&b.rtt_smoothed_ms)),
            ("RTT display ms", last(&a.rtt_display_ms), last(&b.rtt_display_ms)),
            ("loss est. %", last(&a.loss_estimate_percent), last(&b.loss_estimate_percent)),
            ("loss true %", last(&a.loss_true_percent), last(&b.loss_true_percent)),
            ("sent kbps", last(&a.sent_kbps), last(&b.sent_kbps)),
            ("acked kbps", last(&a.acked_kbps), last(&b.acked_kbps)),
        ] {
            ui.label(name);
            ui.monospace(format!("{fa:8.1}"));
            ui.monospace(format!("{fb:8.1}"));
            ui.end_row();
        }
    });
    if let Some(t) = state.store.true_rtt_ms.last() {
        ui.label(format!("true link RTT: {:.1} ms", t.y));
    }
}
