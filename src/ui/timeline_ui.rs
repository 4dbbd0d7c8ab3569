//! The per-message timeline: one row per message, time on x.
//!
//! Each row shows, as of the cursor: the message's life (a bar from queued to settled), a tick
//! when it was queued, a mark for every send (shape and colour by [`SendKind`]; hollow when the
//! carrying packet was dropped; a red box when the send was spurious: the receiver already had
//! the message), the ack (cyan tick) and the delivery (green ring). Hover shows the message's
//! details; click selects it and lists the packets that carried it and their fates, each row
//! seeking the cursor to that send.
//!
//! Controls: drag pans time (and rows), ctrl+scroll (or pinch) zooms time around the pointer,
//! scroll moves through rows, "Follow live" keeps the right edge at the cursor. The function
//! draws into whatever area it is given and salts its ids, so two timelines (A/B) can coexist.
//! The canvas itself is drawn by [`super::timeline_canvas`].

use ackscope_protocol::{PacketFate, PacketLedger, SendKind, SimTime};
use egui::{Pos2, Rect, Vec2};

use super::timeline_canvas::{canvas_ui, legend_ui, x_of, MAX_SPAN_S, MIN_SPAN_S};
use crate::app::AppCommand;
use crate::model::index::{MessageFilter, MessageIndex, MessageRecord, MsgKey, SendRecord};

/// Share of the window left free right of the cursor while following.
pub const FOLLOW_MARGIN: f64 = 0.03;

/// What the user chose: filter, time window, selection.
#[derive(Debug, Clone)]
pub struct TimelineState {
    pub filter: MessageFilter,
    /// Keep the right edge of the window at the cursor.
    pub follow_live: bool,
    /// Width of the time window, seconds.
    pub span_s: f64,
    /// Right edge of the window when not following, seconds.
    pub right_s: f64,
    /// Rows scrolled up from the newest (0 shows the newest rows).
    pub rows_from_bottom: f32,
    pub selected: Option<MsgKey>,
    /// Where the last frame drew things (tests and tools use it to aim the pointer).
    pub last_layout: Option<TimelineLayout>,
    pub(super) rows: Vec<usize>,
}

impl Default for TimelineState {
    fn default() -> Self {
        Self {
            filter: MessageFilter::default(),
            follow_live: true,
            span_s: 5.0,
            right_s: 5.0,
            rows_from_bottom: 0.0,
            selected: None,
            last_layout: None,
            rows: Vec::new(),
        }
    }
}

/// The geometry of the last frame.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineLayout {
    /// The rows' area (without the time axis).
    pub rows_rect: Rect,
    pub t0_s: f64,
    pub t1_s: f64,
    pub row_height: f32,
    /// Messages shown, top to bottom, with their row's vertical centre.
    pub rows: Vec<(MsgKey, f32)>,
    /// Messages in the window (more than `rows` when they do not all fit).
    pub rows_in_window: usize,
}

impl TimelineLayout {
    pub fn x_of(&self, t: SimTime) -> f32 {
        x_of(self.rows_rect, self.t0_s, self.t1_s, t.as_secs_f64())
    }

    /// The screen position of `key`'s row at time `t`, when shown.
    pub fn pos_of(&self, key: MsgKey, t: SimTime) -> Option<Pos2> {
        self.rows.iter().find(|(k, _)| *k == key).map(|(_, y)| Pos2::new(self.x_of(t), *y))
    }
}

/// A short name for a send kind.
pub fn send_kind_name(kind: SendKind) -> &'static str {
    match kind {
        SendKind::First => "first",
        SendKind::DelayResend => "delay resend",
        SendKind::NakResend => "Nak resend",
        SendKind::Redundant => "redundant copy",
        SendKind::TimeoutResend => "timeout resend",
    }
}

/// The label of send number `n` (from 1) in the selected message's list (a clickable row).
pub fn send_row_label(n: usize, s: &SendRecord) -> String {
    let spurious = if s.spurious { "  SPURIOUS" } else { "" };
    format!("#{n}  {:.3} s  seq {}  {}{spurious}", s.time.as_secs_f64(), s.seq, send_kind_name(s.kind))
}

fn ms_since(t: SimTime, from: SimTime) -> f64 {
    t.saturating_since(from).as_millis_f64()
}

/// What the link and the sender knew of link send `uid` (a send's packet) by `cursor`, from the
/// recording's ledger.
pub fn fate_text(uid: u64, ledger: &PacketLedger, sent_at: SimTime, cursor: SimTime) -> String {
    let Some(p) = ledger.packet(uid) else { return "packet not on the wire yet".into() };
    let mut parts = Vec::new();
    match ledger.fate_at(uid, cursor) {
        PacketFate::Dropped(reason) => parts.push(format!("dropped ({reason:?})")),
        PacketFate::Delivered { delay_us, .. } => {
            let mut s = format!("delivered after {:.1} ms", delay_us as f64 / 1000.0);
            if p.duplicates > 0 {
                s += &format!(", duplicated ({} copies delivered)", p.copies_delivered);
            }
            parts.push(s);
        }
        // The link decides on send: sent after the cursor, its packet was still on its way.
        PacketFate::InFlight | PacketFate::Unknown => parts.push("in flight".into()),
    }
    if let Some(t) = p.acked_at.filter(|t| *t <= cursor) {
        parts.push(format!("acked at {:.3} s (+{:.0} ms)", t.as_secs_f64(), ms_since(t, sent_at)));
    }
    if let Some(t) = p.nakked_at.filter(|t| *t <= cursor) {
        parts.push(format!("nakked at {:.3} s (+{:.0} ms)", t.as_secs_f64(), ms_since(t, sent_at)));
    }
    format!("link send {uid} ({} B): {}", p.bytes, parts.join("; "))
}

pub(super) fn at_or_before(t: Option<SimTime>, cursor: SimTime) -> Option<SimTime> {
    t.filter(|t| *t <= cursor)
}

pub(super) fn message_details_ui(ui: &mut egui::Ui, m: &MessageRecord, cursor: SimTime) {
    let side = format!("{:?}", m.side);
    ui.strong(format!("message {} #{}", side, m.id));
    ui.label(format!("{} bytes, {}", m.bytes, if m.reliable { "reliable" } else { "unreliable" }));
    ui.label(format!("queued {:.3} s", m.queued_at.as_secs_f64()));
    let sends: Vec<_> = m.sends_by(cursor).collect();
    let spurious = sends.iter().filter(|s| s.spurious).count();
    ui.label(format!("{} send(s), {} spurious", sends.len(), spurious));
    for (i, s) in sends.iter().enumerate().take(12) {
        ui.label(format!(
            "  #{} {:.3} s (+{:.0} ms) seq {} {}{}",
            i + 1,
            s.time.as_secs_f64(),
            ms_since(s.time, m.queued_at),
            s.seq,
            send_kind_name(s.kind),
            if s.spurious { " SPURIOUS" } else { "" }
        ));
    }
    if sends.len() > 12 {
        ui.label(format!("  ... {} more", sends.len() - 12));
    }
    match at_or_before(m.acked_at, cursor) {
        Some(t) => ui.label(format!(
            "acked {:.3} s (+{:.0} ms) via seq {}",
            t.as_secs_f64(),
            ms_since(t, m.queued_at),
            m.acked_seq.unwrap_or(0)
        )),
        None => ui.label("not acked"),
    };
    match at_or_before(m.delivered_at, cursor) {
        Some(t) => ui.label(format!("delivered {:.3} s (+{:.0} ms)", t.as_secs_f64(), ms_since(t, m.queued_at))),
        None => ui.label("not delivered"),
    };
    if let Some((t, r)) = m.refused.filter(|r| r.0 <= cursor) {
        ui.label(format!("refused {:.3} s ({r:?})", t.as_secs_f64()));
    }
}

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
    let mut seek = |ui: &mut egui::Ui, text: String, t: SimTime| {
        if ui.selectable_label(false, text).on_hover_text("Move the cursor here").clicked() {
            commands.push(AppCommand::SeekTo(t));
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
                ui.label(egui::RichText::new(format!("    {fate}")).small());
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
        }
        ui.label(format!("window {:.2} s", state.span_s));
    });
}

/// Scales the window by `factor` keeping the time at fraction `anchor` (0 left, 1 right) fixed.
pub(super) fn zoom(state: &mut TimelineState, factor: f64, anchor: f64) {
    let new_span = (state.span_s * factor).clamp(MIN_SPAN_S, MAX_SPAN_S);
    if !state.follow_live {
        let left = state.right_s - state.span_s;
        let t = left + anchor * state.span_s;
        state.right_s = t + (1.0 - anchor) * new_span;
    }
    state.span_s = new_span;
}
