//! The packet detail pane: one packet's header field by field (the ack bits as a strip of 32
//! cells naming the sequences they ack), the messages or slice it carried as links to their
//! tabs, and its fate and timing with buttons to move the cursor to its send or its outcome.
//!
//! Everything is shown whatever the cursor: a fact later than the cursor is marked "after the
//! cursor" instead of hidden, so moving the cursor to a packet's send does not hide its Nak.

use ackscope_protocol::wire::acked_sequences;
use ackscope_protocol::{Side, SimTime};
use egui::{Color32, RichText, Sense, Stroke, StrokeKind, Vec2};

use super::bytes::BytesView;
use super::packet_detail::{AckScheme, PacketDetail};
use super::timeline_text::send_kind_name;
use crate::app::{AppCommand, RevealTarget};
use crate::model::Shown;

/// The label of a carried message's link (tests find it by this text).
pub fn message_link_label(side: Side, id: u64) -> String {
    format!("message {side:?} #{id}")
}

/// The colour of an acked cell, readable on the theme's background.
fn acked_color(ui: &egui::Ui) -> Color32 {
    if ui.visuals().dark_mode {
        Color32::from_rgb(80, 200, 120)
    } else {
        Color32::from_rgb(20, 125, 55)
    }
}

/// "at 1.2345 s (+50.0 ms)", marked when later than the cursor.
fn when(t: SimTime, sent: SimTime, cursor: SimTime) -> String {
    let later = if t > cursor { "  (after the cursor)" } else { "" };
    format!("at {:.4} s (+{:.1} ms){later}", t.as_secs_f64(), t.saturating_since(sent).as_millis_f64())
}

/// The 32 ack bits as cells, newest (the ack itself) on the left; hover names each sequence.
fn ack_strip_ui(ui: &mut egui::Ui, ack: u32, bits: u32, seq_bits: u32) {
    let cell = ((ui.available_width() - 8.0) / 32.0).clamp(6.0, 14.0);
    let (resp, painter) = ui.allocate_painter(Vec2::new(cell * 32.0, cell + 2.0), Sense::hover());
    let mask = (1u32 << seq_bits) - 1;
    let on = acked_color(ui);
    let off_stroke = Stroke::new(1.0, ui.visuals().weak_text_color());
    for i in 0..32u32 {
        let min = resp.rect.min + Vec2::new(i as f32 * cell, 1.0);
        let r = egui::Rect::from_min_size(min, Vec2::splat(cell - 1.0));
        if bits & (1 << i) != 0 {
            painter.rect_filled(r, 1.0, on);
        } else {
            painter.rect_stroke(r, 1.0, off_stroke, StrokeKind::Inside);
        }
    }
    if let Some(p) = resp.hover_pos() {
        let i = (((p.x - resp.rect.left()) / cell).floor() as u32).min(31);
        let seq = ack.wrapping_sub(i) & mask;
        let state = if bits & (1 << i) != 0 { "acked" } else { "not acked (missing or Nak)" };
        resp.on_hover_text(format!("bit {i}: sequence {seq} {state}"));
    }
}

/// Width from which the bytes pane sits beside the detail rather than under it.
const SIDE_BY_SIDE_W: f32 = 820.0;

/// Draws `detail` (a packet of `rec`, lane `lane`) as of `cursor` with its bytes pane beside or
/// under it; returns false when closed.
pub fn packet_detail_ui(
    detail: &PacketDetail,
    bytes: &mut BytesView,
    rec: &Shown<'_>,
    lane: usize,
    cursor: SimTime,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) -> bool {
    bytes.show(rec, detail.row.uid);
    if ui.available_width() >= SIDE_BY_SIDE_W {
        let mut open = true;
        ui.columns(2, |cols| {
            open = detail_body_ui(detail, lane, cursor, &mut cols[0], cmds);
            super::bytes_ui::bytes_pane_ui(bytes, &mut cols[1]);
        });
        open
    } else {
        let open = detail_body_ui(detail, lane, cursor, ui, cmds);
        ui.separator();
        super::bytes_ui::bytes_pane_ui(bytes, ui);
        open
    }
}

/// The detail itself: header, ack bits, what it carried, its fate.
fn detail_body_ui(
    detail: &PacketDetail,
    lane: usize,
    cursor: SimTime,
    ui: &mut egui::Ui,
    cmds: &mut Vec<AppCommand>,
) -> bool {
    let r = &detail.row;
    let mut open = true;
    ui.horizontal_wrapped(|ui| {
        ui.strong(format!("packet {} seq {}", r.dir.label(), r.seq));
        ui.weak(format!("link send {}, {} bytes", r.uid, r.bytes));
        if ui.small_button("Close").on_hover_text("Close the packet detail").clicked() {
            open = false;
        }
    });
    ui.weak("header (rebuilt from the recorded events):");
    for (name, value) in detail.header_lines() {
        ui.monospace(format!("{name}: {value}"));
    }
    if let (Some(w), true) = (detail.ack, detail.scheme != AckScheme::Slices) {
        ack_strip_ui(ui, w.ack, w.bits, detail.scheme.seq_bits());
        let acked: Vec<String> =
            acked_sequences(w.ack, w.bits, detail.scheme.seq_bits()).map(|s| s.to_string()).collect();
        // Body size, not small: the list is what names the cells (issue 25, defect 8).
        ui.label(RichText::new(format!("acks {}", acked.join(" "))).monospace())
            .on_hover_text("The sequences this header tells the peer it received (bit 0 = the ack field itself)");
        if detail.scheme == AckScheme::Ue4 {
            for (k, c) in detail.carried.iter().enumerate() {
                ui.monospace(format!(
                    "bunch {k}: {}, {}, message {:?} #{}",
                    if c.reliable { "bReliable" } else { "unreliable" },
                    send_kind_name(c.kind),
                    c.side,
                    c.id
                ));
            }
            ui.weak("(channel index and ChSequence are not in the recording)");
        }
    }
    ui.separator();
    carried_ui(detail, lane, cursor, ui, cmds);
    ui.separator();
    fate_ui(detail, cursor, ui, cmds);
    open
}

/// The messages or slice the packet carried, each a link to its tab.
fn carried_ui(detail: &PacketDetail, lane: usize, cursor: SimTime, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    let r = &detail.row;
    // A message shows from its queueing on: bring the cursor to the packet if it is earlier.
    let seek = (cursor < r.time).then_some(r.time);
    if detail.carried.is_empty() && r.contents.slice.is_none() {
        ui.label("carried no messages (acks only)");
    }
    if !detail.carried.is_empty() {
        ui.label(format!("carried {} message(s):", detail.carried.len()));
    }
    ui.horizontal_wrapped(|ui| {
        for c in &detail.carried {
            let mut text = format!("{} ({})", message_link_label(c.side, c.id), send_kind_name(c.kind));
            if c.spurious {
                text.push_str(" spurious");
            }
            let resp = ui.link(text).on_hover_text("Show this message in the Messages tab");
            if resp.clicked() {
                cmds.push(AppCommand::Reveal(RevealTarget::Message { lane, side: c.side, id: c.id }, seek));
            }
        }
    });
    if let Some((chunk, slice, n)) = r.contents.slice {
        let text =
            format!("slice {slice}/{n} of chunk {chunk}{}", if r.contents.slice_resend { " (resend)" } else { "" });
        if ui.link(text).on_hover_text("Show this chunk's slices in the Slices tab").clicked() {
            let target = RevealTarget::Slice { lane, side: r.dir.sender(), chunk, slice, at: r.time };
            cmds.push(AppCommand::Reveal(target, seek));
        }
    }
}

/// The link's verdict and the sender's conclusion, with their times.
fn fate_ui(detail: &PacketDetail, cursor: SimTime, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    let r = &detail.row;
    ui.label(format!("sent at {:.4} s", r.time.as_secs_f64()));
    let link = match (r.dropped, r.delivered_at) {
        (Some(reason), _) => format!("link: dropped ({reason:?})"),
        (None, Some(t)) => {
            format!("link: delivered {}{}", when(t, r.time, cursor), if r.duplicated { ", duplicated" } else { "" })
        }
        (None, None) => "link: still in flight at the end of the recording".into(),
    };
    let dropped = r.dropped.is_some();
    let color = if dropped { ui.visuals().error_fg_color } else { ui.visuals().text_color() };
    ui.label(RichText::new(link).color(color));
    if let Some(t) = r.malformed_at {
        ui.label(format!("rejected as malformed {}", when(t, r.time, cursor)));
    }
    match (r.acked_at, r.nakked_at) {
        (Some(t), _) => ui.label(format!("sender: acked {}", when(t, r.time, cursor))),
        (None, Some(t)) => ui.label(format!("sender: nakked {}", when(t, r.time, cursor))),
        (None, None) => ui.label("sender: no ack or nak"),
    };
    ui.horizontal(|ui| {
        if ui.button("Seek to send").on_hover_text("Move the time cursor to this packet's send").clicked() {
            cmds.push(AppCommand::SeekTo(r.time));
        }
        let outcome = detail.outcome_at();
        if outcome > r.time
            && ui
                .button("Seek to outcome")
                .on_hover_text("Move the time cursor to its last ack, nak or delivery")
                .clicked()
        {
            cmds.push(AppCommand::SeekTo(outcome));
        }
    });
}
