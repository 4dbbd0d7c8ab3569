//! The bytes pane: the selected packet's decoded fields, its bytes as hex, and the selected
//! field's bits, each selecting the other (the state is [`super::bytes::BytesView`]).
//!
//! Clicking a field highlights its bytes in the hex grid and its bits in the bit strip below it;
//! clicking a byte selects the narrowest field that covers it. Re-encoded bytes are marked as
//! such in the pane's heading, never passed off as captured ones.

use ackscope_protocol::decode::Field;
use egui::{Color32, RichText, Sense, Vec2};

use super::bytes::{BytesView, PacketBytes, Provenance};

/// What the pane says while the worker re-encodes the packet (tests look for it).
pub const REENCODING: &str = "re-encoding...";

/// Bytes the bit strip shows of a long field (the rest is named, not drawn).
const MAX_BIT_BYTES: usize = 8;

/// The accessible label of byte `i`'s cell (tests click it by this).
pub fn byte_label(i: usize) -> String {
    format!("byte {i}")
}

/// Where a field sits, in bytes when it is whole bytes, else in bits.
pub fn span_text(f: &Field) -> String {
    if f.start_bit.is_multiple_of(8) && f.bits.is_multiple_of(8) {
        let (a, n) = (f.start_bit / 8, f.bits / 8);
        match n {
            0 => format!("empty at byte {a}"),
            1 => format!("byte {a}"),
            _ => format!("bytes {a}-{}", a + n - 1),
        }
    } else {
        format!("bits {}-{}", f.start_bit, f.start_bit + f.bits.max(1) - 1)
    }
}

/// The text of field `f`'s row in the field list (tests click it by this).
pub fn field_row_label(f: &Field) -> String {
    format!("{} = {}   [{}]", f.name, f.value, span_text(f))
}

/// The heading naming where the bytes came from (the tests look for "RE-ENCODED").
pub fn provenance_text(p: &PacketBytes) -> String {
    match p.provenance {
        Provenance::Exact => format!("EXACT  {} bytes as sent, read as {}", p.bytes.len(), p.format),
        Provenance::ReEncoded => format!("RE-ENCODED  {} bytes, read as {}", p.bytes.len(), p.format),
    }
}

/// What the heading's hover says about its provenance.
fn provenance_tip(p: &PacketBytes) -> &'static str {
    match p.provenance {
        Provenance::Exact => "The bytes that went on the wire, kept by the recording.",
        Provenance::ReEncoded => {
            "The recording keeps events, not bytes: these were written again by re-running this lane's endpoints \
             from its scenario and actions, every re-run send checked against the recorded one (instant, sequence, \
             size). tests/app/bytes.rs checks them byte for byte against what the endpoints sent, for every strategy."
        }
    }
}

/// The fill behind highlighted bytes and bits, and the text on it.
fn highlight(ui: &egui::Ui) -> (Color32, Color32) {
    let sel = &ui.visuals().selection;
    (sel.bg_fill, sel.stroke.color)
}

/// Draws the pane for the packet `view` shows.
pub fn bytes_pane_ui(view: &mut BytesView, ui: &mut egui::Ui) {
    ui.strong("Packet bytes");
    if view.poll() {
        ui.label(RichText::new(REENCODING).color(ui.visuals().warn_fg_color)).on_hover_text(
            "This lane keeps events, not bytes: its endpoints are being run again from its scenario and actions, \
             on a thread of their own (the first packet of a long lane takes a moment, every later one is a lookup).",
        );
        ui.spinner();
        ui.ctx().request_repaint_after(std::time::Duration::from_millis(30));
        return;
    }
    let p = match &view.shown {
        None => return,
        Some((_, Err(why))) => {
            ui.label(RichText::new(format!("no bytes to show: {why}")).color(ui.visuals().warn_fg_color));
            return;
        }
        Some((_, Ok(p))) => p.clone(),
    };
    let heading = RichText::new(provenance_text(&p));
    let heading =
        if p.provenance == Provenance::ReEncoded { heading.color(ui.visuals().warn_fg_color) } else { heading };
    ui.label(heading).on_hover_text(provenance_tip(&p));
    if let Some(e) = &p.error {
        ui.label(RichText::new(format!("the decoder stopped: {e}")).color(ui.visuals().error_fg_color));
    }
    // Hex and bits first, so they stay in sight in a short pane; the field list follows.
    if let Some(byte) = hex_ui(&p, view.selected, ui) {
        view.selected = p.field_at_byte(byte);
    }
    match view.selected.filter(|&i| i < p.fields.len()) {
        Some(i) => bits_ui(&p, i, ui),
        None if p.fields.is_empty() => {
            ui.weak("no decoder reads this protocol: the bytes as they were, without fields");
        }
        None => {
            ui.weak("click a field or a byte to see its bits");
        }
    }
    ui.separator();
    fields_ui(view, &p, ui);
}

/// The decoded fields, each a selectable row.
fn fields_ui(view: &mut BytesView, p: &PacketBytes, ui: &mut egui::Ui) {
    for (i, f) in p.fields.iter().enumerate() {
        let on = view.selected == Some(i);
        let text = RichText::new(field_row_label(f)).monospace();
        if ui.add(egui::Button::selectable(on, text)).on_hover_text("Highlight this field's bytes and bits").clicked() {
            view.selected = if on { None } else { Some(i) };
        }
    }
}

/// The hex grid: offset, 16 bytes a row (8 when narrow) and their ASCII when there is room;
/// returns the byte clicked.
fn hex_ui(p: &PacketBytes, selected: Option<usize>, ui: &mut egui::Ui) -> Option<usize> {
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let char_w = ui.painter().layout_no_wrap("0".into(), font.clone(), Color32::WHITE).size().x;
    let row_h = ui.text_style_height(&egui::TextStyle::Monospace) + 2.0;
    let cell_w = char_w * 2.6;
    // 16 bytes a row with their ASCII when that fits, else 16 without it, else 8 with it.
    let fits = |n: f32, ascii: bool| char_w * 6.0 + cell_w * n + if ascii { char_w * (n + 1.0) } else { 0.0 };
    let w = ui.available_width();
    let (per_row, ascii) = if w >= fits(16.0, true) {
        (16, true)
    } else if w >= fits(16.0, false) {
        (16, false)
    } else {
        (8, true)
    };
    let lit = selected.map(|i| p.field_bytes(i)).unwrap_or(0..0);
    let (fill, on_fill) = highlight(ui);
    let text_color = ui.visuals().text_color();
    let weak = ui.visuals().weak_text_color();
    let mut clicked = None;
    for (r, chunk) in p.bytes.chunks(per_row).enumerate() {
        ui.horizontal(|ui| {
            ui.spacing_mut().item_spacing.x = 0.0;
            ui.label(RichText::new(format!("{:04x}  ", r * per_row)).monospace().color(weak));
            for (k, &b) in chunk.iter().enumerate() {
                let i = r * per_row + k;
                let (rect, resp) = ui.allocate_exact_size(Vec2::new(cell_w, row_h), Sense::click());
                let on = lit.contains(&i);
                if on {
                    ui.painter().rect_filled(rect, 2.0, fill);
                }
                let color = if on { on_fill } else { text_color };
                ui.painter().text(rect.center(), egui::Align2::CENTER_CENTER, format!("{b:02x}"), font.clone(), color);
                resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, byte_label(i)));
                let field = p.field_at_byte(i).map(|f| p.fields[f].name.as_str()).unwrap_or("no field");
                let resp = resp.on_hover_text(format!("byte {i} = {b:#04x} = {b:08b} ({field})"));
                if resp.clicked() {
                    clicked = Some(i);
                }
            }
            if ascii {
                ui.add_space((per_row - chunk.len()) as f32 * cell_w + char_w);
                let text: String =
                    chunk.iter().map(|&b| if b.is_ascii_graphic() || b == b' ' { b as char } else { '.' }).collect();
                ui.label(RichText::new(text).monospace().color(weak));
            }
        });
    }
    clicked
}

/// The selected field's bytes as bits, its own bits highlighted (bit 7 first in each byte).
fn bits_ui(p: &PacketBytes, i: usize, ui: &mut egui::Ui) {
    let f = &p.fields[i];
    let range = p.field_bytes(i);
    let shown = range.start..range.end.min(range.start + MAX_BIT_BYTES);
    ui.label(format!(
        "{}: {} bit{} from bit {}{}",
        f.name,
        f.bits,
        if f.bits == 1 { "" } else { "s" },
        f.start_bit,
        if p.lsb_first && (!f.start_bit.is_multiple_of(8) || !f.bits.is_multiple_of(8)) {
            " (packed from each byte's lowest bit)"
        } else {
            ""
        }
    ));
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let (fill, on_fill) = highlight(ui);
    let weak = ui.visuals().weak_text_color();
    ui.horizontal_wrapped(|ui| {
        for byte in shown.clone() {
            let b = p.bytes[byte];
            ui.label(RichText::new(format!("{byte}:")).monospace().color(weak));
            let char_w = ui.painter().layout_no_wrap("0".into(), font.clone(), Color32::WHITE).size().x;
            let h = ui.text_style_height(&egui::TextStyle::Monospace) + 2.0;
            let (rect, _) = ui.allocate_exact_size(Vec2::new(char_w * 8.0 + 4.0, h), Sense::hover());
            for bit in 0..8u32 {
                let x = rect.left() + 2.0 + bit as f32 * char_w;
                let cell = egui::Rect::from_min_size(egui::pos2(x, rect.top()), Vec2::new(char_w, h));
                let on = p.bit_in_field(i, byte, bit);
                if on {
                    ui.painter().rect_filled(cell, 1.0, fill);
                }
                let v = (b >> (7 - bit)) & 1;
                let color = if on { on_fill } else { weak };
                ui.painter().text(cell.center(), egui::Align2::CENTER_CENTER, v.to_string(), font.clone(), color);
            }
        }
        if shown.end < range.end {
            ui.label(format!("... {} more bytes", range.end - shown.end));
        }
    });
}
