//! The per-message timeline: one row per message, time on x.
//!
//! Each row shows, as of the cursor: the message's life (a bar from queued to settled), a tick
//! when it was queued, a mark for every send (shape and colour by [`SendKind`]; hollow and struck
//! through when the carrying packet was dropped; a red box when the send was spurious: the receiver already had
//! the message), the ack (cyan tick) and the delivery (green ring). Hover shows the message's
//! details; click selects it and lists the packets that carried it and their fates, each row
//! seeking the cursor to that send.
//!
//! Controls: drag pans time (and rows), ctrl+scroll (or pinch) zooms time around the pointer,
//! scroll moves through rows, "Follow live" keeps the right edge at the cursor. The function
//! draws into whatever area it is given and salts its ids, so two timelines (A/B) can coexist.
//! The canvas itself is drawn by [`super::timeline_canvas`].

use ackscope_protocol::{PacketLedger, SimTime};
use egui::Vec2;

use super::timeline_canvas::canvas_ui;
use super::timeline_marks::legend_ui;
use super::timeline_text::{at_or_before, ms_since};
pub use super::timeline_text::{fate_text, send_kind_name, send_row_label};
use super::timeline_view::{zoom, MAX_SPAN_S, MIN_SPAN_S};
pub use super::timeline_view::{TimelineLayout, TimelineState, FOLLOW_MARGIN};
use crate::app::{AppCommand, Reveal, RevealTarget};
use crate::model::index::MessageIndex;

/// The list of the selected message's sends and their packets' fates.
fn selected_ui(
    ui: &mut egui::Ui,
    index: &MessageIndex,
    ledger: &PacketLedger,
    state: &mut TimelineState,
    cursor: SimTime,
    commands: &mut Vec<AppCommand>,
) {
    let Some(key) = state.selected else { return };
    let Some(m) = index.get(key) else {
        state.selected = None;
        return;
    };
    ui.horizontal(|ui| {
        ui.strong(format!("{:?} #{}", m.side, m.id));
        if ui.small_button("Close").on_hover_text("Clear the selection").clicked() {
            state.selected = None;
        }
    });
    ui.label(format!("{} bytes, {}", m.bytes, if m.reliable { "reliable" } else { "unreliable" }));
    if let Some(mark) = state.mark {
        let point = crate::model::marks::Mark::message(state.lane, m.side, m.id, m.queued_at);
        ui.label(format!("from the mark: {}", mark.delta_to(&point).text()));
    }
    let (lane, key) = (state.lane, m.key());
    let mut seek_to: Option<SimTime> = None;
    let mut seek = |ui: &mut egui::Ui, text: String, t: SimTime| {
        if ui.selectable_label(false, text).on_hover_text("Move the cursor here").clicked() {
            seek_to = Some(t);
        }
    };
    seek(ui, format!("queued {:.3} s", m.queued_at.as_secs_f64()), m.queued_at);
    if m.queued_at > cursor {
        ui.weak("(not yet queued at the cursor)");
    }
    ui.separator();
    ui.label("sends (click to seek):");
    egui::ScrollArea::vertical().max_height((ui.available_height() - 60.0).max(60.0)).auto_shrink([false, true]).show(
        ui,
        |ui| {
            for (i, s) in m.sends.iter().enumerate() {
                if s.time > cursor {
                    ui.weak(format!("#{} later than the cursor", i + 1));
                    continue;
                }
                seek(ui, send_row_label(i + 1, s), s.time);
                let fate = match s.uid {
                    Some(uid) => fate_text(uid, ledger, s.time, cursor),
                    None => "packet not on the wire yet".into(),
                };
                ui.horizontal_wrapped(|ui| {
                    ui.label(egui::RichText::new(format!("    {fate}")).small());
                    if let Some(uid) = s.uid {
                        packet_link_ui(ui, lane, uid, ledger, cursor, commands);
                    }
                });
            }
        },
    );
    ui.separator();
    if let Some(t) = at_or_before(m.acked_at, cursor) {
        seek(ui, format!("acked {:.3} s via seq {}", t.as_secs_f64(), m.acked_seq.unwrap_or(0)), t);
    }
    if let Some(t) = at_or_before(m.delivered_at, cursor) {
        seek(ui, format!("delivered {:.3} s (+{:.0} ms)", t.as_secs_f64(), ms_since(t, m.queued_at)), t);
    }
    if let Some(t) = seek_to {
        commands.push(AppCommand::SeekTo(t));
        // The cursor moves to what was clicked: the window follows it and the row stays in view.
        state.follow_live = true;
        state.scroll_to = Some(key);
    }
}

/// The label of a send's link to its packet's detail (tests find it by this text).
pub fn packet_link_label(uid: u64) -> String {
    format!("packet {uid}")
}

/// A link opening link send `uid`'s detail in the Packets tab, with the cursor at or after the
/// packet's outcome (so its ack, Nak or delivery shows).
fn packet_link_ui(
    ui: &mut egui::Ui,
    lane: usize,
    uid: u64,
    ledger: &PacketLedger,
    cursor: SimTime,
    commands: &mut Vec<AppCommand>,
) {
    let resp = ui.small_button(packet_link_label(uid)).on_hover_text("Open this packet's detail in the Packets tab");
    if resp.clicked() {
        let outcome = ledger.packet(uid).map(|p| {
            [p.delivered_at, p.received_at, p.acked_at, p.nakked_at].into_iter().flatten().max().unwrap_or(cursor)
        });
        let seek = outcome.filter(|&t| t > cursor);
        commands.push(AppCommand::Reveal(RevealTarget::Packet { lane, uid }, seek));
    }
}

/// Acts on a reveal of one of this lane's messages: selects it, lets the filter show it, and
/// brings its row into view with the window at the cursor.
pub fn take_reveal(index: &MessageIndex, state: &mut TimelineState, reveal: Option<&Reveal>) {
    let Some(RevealTarget::Message { lane, side, id }) = state.seen.take(reveal) else { return };
    let Some(m) = index.get((side, id)).filter(|_| lane == state.lane) else { return };
    let f = &mut state.filter;
    match side {
        ackscope_protocol::Side::A => f.side_a = true,
        ackscope_protocol::Side::B => f.side_b = true,
    }
    if m.reliable {
        f.reliable = true;
    } else {
        f.unreliable = true;
    }
    if let Some(m) = state.expr.active() {
        if index.index_of((side, id)).is_some_and(|i| i < m.rows_checked() && !m.contains(i)) {
            state.expr.bar.clear();
        }
    }
    state.selected = Some((side, id));
    state.follow_live = true;
    state.scroll_to = Some((side, id));
}

/// Draws the message timeline of `index` (its packets' fates read from `ledger`, the
/// recording's) as of `cursor` into the available area.
///
/// `id_salt` keeps two timelines apart (A/B); `label` is shown in the toolbar and names the
/// canvas for accessibility. Clicking a listed send pushes [`AppCommand::SeekTo`].
#[allow(clippy::too_many_arguments)]
pub fn timeline_ui(
    ui: &mut egui::Ui,
    id_salt: impl std::hash::Hash + std::fmt::Debug,
    label: &str,
    index: &MessageIndex,
    ledger: &PacketLedger,
    state: &mut TimelineState,
    cursor: SimTime,
    commands: &mut Vec<AppCommand>,
) {
    ui.push_id(id_salt, |ui| {
        toolbar_ui(ui, label, state, cursor);
        state.expr.bar.ui(ui, "resend.cause == nak || latency_ms > 100");
        if let Some(p) = state.expr.progress_text(index.messages().len()) {
            ui.weak(p);
        }
        legend_ui(ui);
        let avail = ui.available_size();
        let side_w = if state.selected.is_some() { (avail.x * 0.35).clamp(180.0, 340.0) } else { 0.0 };
        ui.horizontal_top(|ui| {
            let canvas_w = (avail.x - side_w - ui.spacing().item_spacing.x).max(100.0);
            canvas_ui(ui, label, index, ledger, state, cursor, Vec2::new(canvas_w, avail.y.max(80.0)));
            if state.selected.is_some() {
                ui.vertical(|ui| {
                    ui.set_width(side_w);
                    selected_ui(ui, index, ledger, state, cursor, commands);
                });
            }
        });
    });
}

fn toolbar_ui(ui: &mut egui::Ui, label: &str, state: &mut TimelineState, cursor: SimTime) {
    ui.horizontal_wrapped(|ui| {
        ui.strong(label);
        ui.separator();
        let f = &mut state.filter;
        ui.checkbox(&mut f.side_a, "from A").on_hover_text("Show messages sent by A");
        ui.checkbox(&mut f.side_b, "from B").on_hover_text("Show messages sent by B");
        ui.checkbox(&mut f.reliable, "reliable");
        ui.checkbox(&mut f.unreliable, "unreliable");
        ui.separator();
        if ui
            .checkbox(&mut state.follow_live, "Follow live")
            .on_hover_text("Keep the right edge of the window at the cursor")
            .changed()
            && !state.follow_live
        {
            state.right_s = cursor.as_secs_f64().max(state.span_s);
        }
        if ui.button("Zoom in").on_hover_text("Halve the time window (or ctrl+scroll)").clicked() {
            zoom(state, 0.5, 1.0);
        }
        if ui.button("Zoom out").on_hover_text("Double the time window (or ctrl+scroll)").clicked() {
            zoom(state, 2.0, 1.0);
        }
        if ui.button("Whole run").on_hover_text("Show everything up to the cursor").clicked() {
            state.span_s = cursor.as_secs_f64().clamp(MIN_SPAN_S, MAX_SPAN_S).max(1.0);
            state.right_s = state.span_s;
            state.span_auto = false;
        }
        if ui
            .add_enabled(!state.span_auto, egui::Button::new("Fit rate"))
            .on_hover_text("Size the window to the message rate again: about as many messages as rows")
            .clicked()
        {
            state.span_auto = true;
        }
        ui.label(format!("window {:.2} s", state.span_s));
    });
}
