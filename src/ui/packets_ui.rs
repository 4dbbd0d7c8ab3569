//! The packet log: a virtualised table of every packet sent up to the cursor (time, direction,
//! sequence, size, contents, the link's fate, ack or nak), filterable by direction, fate and
//! contents; clicking a row moves the time cursor to its send.
//!
//! Only the rows in view are laid out (`ScrollArea::show_rows`), and the filtered row list is a
//! cache extended as rows arrive, so a frame costs the same with a thousand or a million packets.

use ackscope_protocol::{Dir, DropReason, PacketLedger, SimTime};
use egui::RichText;

use crate::app::AppCommand;
use crate::model::index::{DirFilter, Fate, FateFilter, FilteredRows, PacketFilter, PacketIndex, PacketRow};

/// What the packet log shows.
#[derive(Debug, Clone, Default)]
pub struct PacketsView {
    pub filter: PacketFilter,
    /// The filtered rows, kept between frames (rebuilt by itself when the filter or the index changes).
    pub filtered: FilteredRows,
    /// The row last clicked (position in [`PacketIndex::rows`]).
    pub selected: Option<u32>,
}

pub fn dir_label(d: Dir) -> &'static str {
    match d {
        Dir::AtoB => "A->B",
        Dir::BtoA => "B->A",
    }
}

fn reason_label(r: DropReason) -> &'static str {
    match r {
        DropReason::Random => "random",
        DropReason::Burst => "burst",
        DropReason::QueueFull => "queue full",
        DropReason::Mtu => "mtu",
    }
}

/// The fate column as known at `cursor`.
pub fn fate_text(r: &PacketRow, cursor: SimTime) -> String {
    let mut s = match r.fate_at(cursor) {
        Fate::InFlight => "in flight".to_string(),
        Fate::Dropped(reason) => format!("dropped ({})", reason_label(reason)),
        Fate::Delivered { delay_us, duplicated } => {
            format!("delivered{} +{:.1} ms", if duplicated { " x2" } else { "" }, delay_us as f64 / 1000.0)
        }
    };
    if r.malformed_at.is_some_and(|t| t <= cursor) {
        s.push_str(" malformed");
    }
    s
}

/// The ack column as known at `cursor`.
pub fn ack_text(r: &PacketRow, cursor: SimTime) -> String {
    let since = |t: SimTime| t.saturating_since(r.time).as_millis_f64();
    match (r.acked_by(cursor), r.nakked_by(cursor)) {
        (Some(a), _) => format!("ack +{:.1} ms", since(a)),
        (None, Some(n)) => format!("nak +{:.1} ms", since(n)),
        (None, None) => "-".to_string(),
    }
}

pub const HEADER: &str =
    "    time s  dir     seq  bytes  contents                            link fate                  ack/nak";

/// One row of the table as text (monospace columns), as known at `cursor`.
pub fn row_text(r: &PacketRow, cursor: SimTime) -> String {
    let mut contents = r.contents.summary();
    if contents.len() > 34 {
        contents.truncate(33);
        contents.push('~');
    }
    format!(
        "{:>10.4}  {}  {:>6}  {:>5}  {:<34}  {:<25}  {}",
        r.time.as_secs_f64(),
        dir_label(r.dir),
        r.seq,
        r.bytes,
        contents,
        fate_text(r, cursor),
        ack_text(r, cursor)
    )
}

const DROPPED_COLOR: egui::Color32 = egui::Color32::from_rgb(235, 110, 100);

/// The hover text of a row: everything known about the packet at `cursor`, in absolute times.
pub fn row_details(r: &PacketRow, cursor: SimTime) -> String {
    let at = |t: Option<SimTime>| {
        t.filter(|&t| t <= cursor).map_or("-".to_string(), |t| format!("{:.4} s", t.as_secs_f64()))
    };
    let mut s = format!(
        "{} seq {} (link send {}), {} bytes, sent at {:.4} s\ncontents: {}\nlink: {}\ndelivered at {}, accepted by {} at {}",
        dir_label(r.dir),
        r.seq,
        r.uid,
        r.bytes,
        r.time.as_secs_f64(),
        r.contents.summary(),
        fate_text(r, cursor),
        at(r.delivered_at),
        match r.dir.receiver() {
            ackscope_protocol::Side::A => "A",
            ackscope_protocol::Side::B => "B",
        },
        at(r.received_at),
    );
    s.push_str(&format!("\nacked at {}, nakked at {}", at(r.acked_at), at(r.nakked_at)));
    if r.malformed_at.is_some_and(|t| t <= cursor) {
        s.push_str("\nrejected as malformed by the receiver");
    }
    s.push_str("\nclick: move the time cursor to this send");
    s
}

fn filters_ui(view: &mut PacketsView, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        let f = &mut view.filter;
        let dir_text = match f.dir {
            DirFilter::Both => "both",
            DirFilter::Only(d) => dir_label(d),
        };
        egui::ComboBox::from_label("direction").selected_text(dir_text).show_ui(ui, |ui| {
            ui.selectable_value(&mut f.dir, DirFilter::Both, "both");
            ui.selectable_value(&mut f.dir, DirFilter::Only(Dir::AtoB), "A->B");
            ui.selectable_value(&mut f.dir, DirFilter::Only(Dir::BtoA), "B->A");
        });
        let fates = [
            (FateFilter::All, "all"),
            (FateFilter::Dropped, "dropped"),
            (FateFilter::Delivered, "delivered"),
            (FateFilter::Duplicated, "duplicated"),
        ];
        let fate_text = fates.iter().find(|(v, _)| *v == f.fate).map_or("all", |(_, t)| t);
        egui::ComboBox::from_label("fate").selected_text(fate_text).show_ui(ui, |ui| {
            for (v, t) in fates {
                ui.selectable_value(&mut f.fate, v, t);
            }
        });
        ui.label("contents");
        ui.add(egui::TextEdit::singleline(&mut f.text).desired_width(160.0).hint_text("e.g. resend, slice"))
            .on_hover_text("Show packets whose contents summary contains this text");
    });
}

/// Draws the log of `index` (its facts read from `ledger`, the recording's) as it was at
/// `cursor`; a click on a row pushes [`AppCommand::SeekTo`] its send time.
pub fn packets_ui(
    index: &PacketIndex,
    ledger: &PacketLedger,
    view: &mut PacketsView,
    cursor: SimTime,
    ui: &mut egui::Ui,
    commands: &mut Vec<AppCommand>,
) {
    filters_ui(view, ui);
    view.filtered.update(index, ledger, &view.filter);
    let count = view.filtered.count_at(index, cursor);
    ui.label(format!("{count} of {} packets sent by the cursor match", index.sent_by(cursor)));
    // A frameless button gets the same padding and height as the rows, so the columns line up
    // and its height is the row height the virtualisation must assume.
    let header =
        ui.add(egui::Button::new(RichText::new(HEADER).monospace().weak()).frame(false).sense(egui::Sense::hover()));
    let row_h = header.rect.height();
    egui::ScrollArea::both().id_salt("packet_log").auto_shrink([false, false]).stick_to_bottom(true).show_rows(
        ui,
        row_h,
        count,
        |ui, range| {
            ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
            for k in range {
                let Some(i) = view.filtered.get(k) else { break };
                let Some(row) = index.row(i as usize, ledger) else { continue };
                let r = &row;
                let mut text = RichText::new(row_text(r, cursor)).monospace();
                if r.dropped.is_some() {
                    text = text.color(DROPPED_COLOR);
                }
                let resp = ui.add(egui::Button::selectable(view.selected == Some(i), text)).on_hover_ui(|ui| {
                    ui.label(row_details(r, cursor));
                });
                if resp.clicked() {
                    view.selected = Some(i);
                    commands.push(AppCommand::SeekTo(r.time));
                }
            }
        },
    );
}
