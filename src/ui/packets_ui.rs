//! The packet log: a virtualised table of every packet of the run (time, direction, sequence,
//! size, contents, the link's fate, ack or nak), filterable by direction, fate and contents and
//! by a display filter ([`super::filter_bar`], ANDed with them);
//! clicking a row selects it and moves the time cursor to its send.
//!
//! The list is never cut at the cursor (issue 25, defect 5): rows sent by the cursor read as known
//! at the cursor, later rows are shaded and read as known now, so a click that moves the cursor
//! back hides nothing and leaves every later row's text as it was.
//!
//! Only the rows in view are laid out (`ScrollArea::show_rows`), and the filtered row list is a
//! cache extended as rows arrive, so a frame costs the same with a thousand or a million packets.

use ackscope_protocol::{Dir, DropReason, PacketLedger, SimTime};
use egui::RichText;

use super::filter_bar::{extra_id, FilteredBy};
use super::packet_detail::PacketDetail;
use crate::app::{AppCommand, MarkCommand, Reveal, RevealSeen, RevealTarget};
use crate::filter::{Matches, PacketFacts};
use crate::model::index::{DirFilter, Fate, FateFilter, FilteredRows, PacketFilter, PacketIndex, PacketRow};
use crate::model::marks::{column_for, delta_header, Mark};
use crate::model::Shown;

/// What the packet log shows.
#[derive(Debug, Default)]
pub struct PacketsView {
    pub filter: PacketFilter,
    /// The display filter (ANDed with [`Self::filter`]) and its matching rows.
    pub expr: FilteredBy<PacketFacts>,
    /// The filtered rows, kept between frames (rebuilt by itself when the filter or the index changes).
    pub filtered: FilteredRows,
    /// The row last clicked (position in [`PacketIndex::rows`]).
    pub selected: Option<u32>,
    /// This lane's position among the shown lanes (for links to other tabs).
    pub lane: usize,
    /// The client whose packets the log shows (set each frame): uids count per client, so a
    /// mark or bookmark on a row names it.
    pub client: ackscope_protocol::ClientId,
    /// The last reveal acted on.
    pub seen: RevealSeen,
    /// Scroll the log to this row next frame (a reveal).
    pub scroll_to: Option<u32>,
    /// The selected packet's detail, kept while the selection stays.
    pub detail: Option<PacketDetail>,
    /// The detail pane was closed for the current selection.
    pub detail_closed: bool,
    /// The selected packet's bytes pane.
    pub bytes: super::bytes::BytesView,
    /// The cursor the log last followed: when the cursor moves by other means (scrubbing,
    /// playback, an anomaly), the log scrolls to its row; a click here sets it so the list stays put.
    pub last_cursor: Option<SimTime>,
    /// The rows (positions among the filtered) laid out last frame.
    pub rows_in_view: std::ops::Range<usize>,
    /// The log's scroll offset last frame, in points.
    pub scroll_y: f32,
    /// Keep this row (position in [`PacketIndex::rows`]) in sight next frame: the row just
    /// clicked, while the detail pane opening under the log shortens it.
    pub keep_in_view: Option<u32>,
    /// The window's mark (set each frame): with one, every row starts with its distance from it.
    pub mark: Option<Mark>,
}

/// The instant later rows are read at: everything the recording knows.
const KNOWN_NOW: SimTime = SimTime(u64::MAX);

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

/// The sender's answer about `r` known at `cursor`: acked (an ack wins over a nak) or nakked,
/// and how long after the send, in ms.
fn answer_at(r: &PacketRow, cursor: SimTime) -> Option<(bool, f64)> {
    let since = |t: SimTime| t.saturating_since(r.time).as_millis_f64();
    match (r.acked_by(cursor), r.nakked_by(cursor)) {
        (Some(a), _) => Some((true, since(a))),
        (None, Some(n)) => Some((false, since(n))),
        (None, None) => None,
    }
}

/// The ack column as known at `cursor`.
pub fn ack_text(r: &PacketRow, cursor: SimTime) -> String {
    match answer_at(r, cursor) {
        Some((acked, ms)) => format!("{} +{ms:.1} ms", if acked { "ack" } else { "nak" }),
        None => "-".to_string(),
    }
}

/// The fate in a few characters, for the compact rows.
pub fn fate_short(r: &PacketRow, cursor: SimTime) -> String {
    match r.fate_at(cursor) {
        Fate::InFlight => "in flight".to_string(),
        Fate::Dropped(reason) => format!("DROP {}", reason_label(reason)),
        Fate::Delivered { delay_us, duplicated } => {
            format!("dlv{} +{:.0}ms", if duplicated { "x2" } else { "" }, delay_us as f64 / 1000.0)
        }
    }
}

/// The ack column in a few characters, for the compact rows.
pub fn ack_short(r: &PacketRow, cursor: SimTime) -> String {
    match answer_at(r, cursor) {
        Some((acked, ms)) => format!("{} +{ms:.0}", if acked { "ack" } else { "NAK" }),
        None => "-".to_string(),
    }
}

pub const COMPACT_HEADER: &str = "  time s   dir    seq  link fate      ack/nak    contents";

/// One row in the compact layout (narrow columns): fate and ack/nak before the contents.
pub fn compact_row_text(r: &PacketRow, cursor: SimTime) -> String {
    format!(
        // The fate column is as wide as its longest text ("dlvx2 +1234ms"), so the contents fit
        // an A/B lane at 1280 px (issue 25, defect 8: "acks on" was cut).
        "{:>8.3}  {}  {:>5}  {:<13}  {:<9}  {}",
        r.time.as_secs_f64(),
        r.dir.label(),
        r.seq,
        fate_short(r, cursor),
        ack_short(r, cursor),
        r.contents.summary()
    )
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
        r.dir.label(),
        r.seq,
        r.bytes,
        contents,
        fate_text(r, cursor),
        ack_text(r, cursor)
    )
}

/// `text` after the delta column `delta` (the mark's distance), when there is a mark.
pub fn with_delta(delta: Option<String>, text: String) -> String {
    match delta {
        Some(d) => format!("{d}  {text}"),
        None => text,
    }
}

/// The row's point: what a click selects and Ctrl+M marks (`client`'s packet).
pub fn row_point(lane: usize, client: ackscope_protocol::ClientId, r: &PacketRow) -> Mark {
    Mark::packet(lane, r.uid, r.dir, r.seq, r.time).of_client(client)
}

/// Dropped rows' colour, readable on the theme's background.
fn dropped_color(ui: &egui::Ui) -> egui::Color32 {
    if ui.visuals().dark_mode {
        egui::Color32::from_rgb(235, 110, 100)
    } else {
        egui::Color32::from_rgb(180, 30, 20)
    }
}

/// The hover text of a row: everything known about the packet at `cursor`, in absolute times.
pub fn row_details(r: &PacketRow, cursor: SimTime) -> String {
    let at = |t: Option<SimTime>| {
        t.filter(|&t| t <= cursor).map_or("-".to_string(), |t| format!("{:.4} s", t.as_secs_f64()))
    };
    let mut s = format!(
        "{} seq {} (link send {}), {} bytes, sent at {:.4} s\ncontents: {}\nlink: {}\ndelivered at {}, accepted by {} at {}",
        r.dir.label(),
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
    s.push_str("\nclick: select it (its detail opens below) and move the time cursor to its send");
    s.push_str("\nright-click: mark it (Ctrl+M) or bookmark it (Ctrl+B)");
    s
}

fn filters_ui(view: &mut PacketsView, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        let f = &mut view.filter;
        let dir_text = match f.dir {
            DirFilter::Both => "both",
            DirFilter::Only(d) => d.label(),
        };
        // Each label before its box, as the contents field and every other form reads.
        let label = ui.label("direction").id;
        let combo = egui::ComboBox::from_id_salt("packets direction").selected_text(dir_text).show_ui(ui, |ui| {
            ui.selectable_value(&mut f.dir, DirFilter::Both, "both");
            ui.selectable_value(&mut f.dir, DirFilter::Only(Dir::AtoB), "A->B");
            ui.selectable_value(&mut f.dir, DirFilter::Only(Dir::BtoA), "B->A");
        });
        combo.response.labelled_by(label);
        let fates = [
            (FateFilter::All, "all"),
            (FateFilter::Dropped, "dropped"),
            (FateFilter::Delivered, "delivered"),
            (FateFilter::Duplicated, "duplicated"),
        ];
        let fate_text = fates.iter().find(|(v, _)| *v == f.fate).map_or("all", |(_, t)| t);
        let label = ui.label("fate").id;
        let combo = egui::ComboBox::from_id_salt("packets fate").selected_text(fate_text).show_ui(ui, |ui| {
            for (v, t) in fates {
                ui.selectable_value(&mut f.fate, v, t);
            }
        });
        combo.response.labelled_by(label);
        let label = ui.label("contents").id;
        ui.add(egui::TextEdit::singleline(&mut f.text).desired_width(160.0).hint_text("e.g. resend, slice"))
            .labelled_by(label)
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
    let rows = match view.expr.active() {
        Some(m) => Rows::Expr(m),
        None => {
            view.filtered.update(index, ledger, &view.filter);
            Rows::Plain(&view.filtered)
        }
    };
    let count = rows.count_at(index, cursor);
    let total = rows.len();
    let by_filter = view.expr.bar.applied().map_or(String::new(), |f| format!(" `{f}`"));
    // The build's progress on the same line: a line of its own would move the log down for the
    // frames it takes and back up after.
    ui.horizontal_wrapped(|ui| {
        ui.label(format!(
            "{total} packets match{by_filter}, {count} of them sent by the cursor (later ones shaded); {} sent in all by the cursor",
            index.sent_by(cursor)
        ));
        if let Some(p) = view.expr.progress_text(index.len()) {
            ui.weak(p).on_hover_text(format!("{} of {} rows checked", view.expr.matches.rows_checked(), index.len()));
        }
    });
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let mark = view.mark;
    let headed = |h: &str| with_delta(mark.as_ref().map(delta_header), h.to_string());
    let full_w = ui.painter().layout_no_wrap(headed(HEADER), font, egui::Color32::WHITE).size().x;
    let compact = ui.available_width() < full_w + 16.0;
    let (header_text, text_of): (&str, fn(&PacketRow, SimTime) -> String) =
        if compact { (COMPACT_HEADER, compact_row_text) } else { (HEADER, row_text) };
    let header_text = headed(header_text);
    // A frameless button gets the same padding and height as the rows, so the columns line up
    // and its height is the row height the virtualisation must assume.
    let header = ui
        .add(egui::Button::new(RichText::new(header_text).monospace().weak()).frame(false).sense(egui::Sense::hover()));
    let row_h = header.rect.height();
    let pitch = row_h + ui.spacing().item_spacing.y;
    let moved = view.last_cursor.replace(cursor) != Some(cursor);
    let target = view.scroll_to.take();
    // At the end (a live run, a replay at its end) the log sticks to the bottom as rows arrive;
    // a reveal or a cursor moved elsewhere scrolls to its row instead.
    let at_end = count == total;
    let mut area = egui::ScrollArea::both()
        .id_salt("packet_log")
        .auto_shrink([false, false])
        .stick_to_bottom(target.is_none() && at_end);
    if let Some(target) = target {
        if let Some(k) = rows.position_of(total, target) {
            area = area.vertical_scroll_offset((k as f32 - 3.0).max(0.0) * pitch);
        }
    } else if let Some(k) = view.keep_in_view.take().and_then(|i| rows.position_of(total, i)) {
        // The least scroll that shows the row whole.
        let (top, view_h) = (k as f32 * pitch, ui.available_height());
        let y = view.scroll_y.min(top).max(top + row_h - view_h).max(0.0);
        area = area.vertical_scroll_offset(y);
    } else if moved && !at_end && !view.rows_in_view.contains(&count.saturating_sub(1)) {
        // The cursor's row, out of sight, in the middle of the view.
        let view_h = ui.available_height();
        area = area.vertical_scroll_offset((count.saturating_sub(1) as f32 * pitch - view_h / 2.0).max(0.0));
    }
    let later_color = ui.visuals().weak_text_color();
    let out = area.show_rows(ui, row_h, total, |ui, range| {
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
        view.rows_in_view = range.clone();
        for k in range {
            let Some(i) = rows.get(k) else { break };
            let Some(row) = index.row(i as usize, ledger) else { continue };
            let r = &row;
            let later = r.time > cursor;
            let point = row_point(view.lane, view.client, r);
            let marked = mark == Some(point);
            let line =
                with_delta(column_for(mark.as_ref(), &point), text_of(r, if later { KNOWN_NOW } else { cursor }));
            let mut text = RichText::new(line).monospace();
            if marked {
                text = text.strong();
            }
            if later {
                text = text.color(later_color);
            } else if r.dropped.is_some() {
                text = text.color(dropped_color(ui));
            }
            let resp = ui.add(egui::Button::selectable(view.selected == Some(i), text)).on_hover_ui(|ui| {
                if later {
                    ui.label("sent after the cursor: shown as known now");
                }
                ui.label(row_details(r, if later { KNOWN_NOW } else { cursor }));
            });
            if resp.clicked() {
                view.selected = Some(i);
                view.detail_closed = false;
                // The click moves the cursor here: the log stays where the user clicked.
                view.last_cursor = Some(r.time);
                view.keep_in_view = Some(i);
                commands.push(AppCommand::SeekTo(r.time));
                commands.push(AppCommand::Marks(MarkCommand::Select(point)));
            }
            super::marks_ui::row_menu(&resp, point, marked, commands);
        }
    });
    view.scroll_y = out.state.clamped_offset().y;
}

/// The rows the log lists: the checkboxes' cache, or the display filter's (which includes them).
#[derive(Clone, Copy)]
enum Rows<'a> {
    Plain(&'a FilteredRows),
    Expr(&'a Matches<PacketFacts>),
}

impl Rows<'_> {
    fn len(self) -> usize {
        match self {
            Rows::Plain(f) => f.len(),
            Rows::Expr(m) => m.count(),
        }
    }

    fn get(self, k: usize) -> Option<u32> {
        match self {
            Rows::Plain(f) => f.get(k),
            Rows::Expr(m) => m.get(k),
        }
    }

    /// Listed rows sent at or before `t`.
    fn count_at(self, index: &PacketIndex, t: SimTime) -> usize {
        match self {
            Rows::Plain(f) => f.count_at(index, t),
            Rows::Expr(m) => m.count_below(index.sent_by(t)),
        }
    }

    /// Where row `i` of the index sits among the `total` listed rows (they ascend).
    fn position_of(self, total: usize, i: u32) -> Option<usize> {
        if let Rows::Expr(m) = self {
            return m.contains(i as usize).then(|| m.count_below(i as usize));
        }
        let (mut lo, mut hi) = (0, total);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.get(mid)?.cmp(&i) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }
}

/// Acts on a reveal of one of this lane's packets: selects its row, makes it pass the filter and
/// scrolls the log to it.
fn take_reveal(index: &PacketIndex, ledger: &PacketLedger, view: &mut PacketsView, reveal: Option<&Reveal>) {
    let Some(RevealTarget::Packet { lane, uid }) = view.seen.take(reveal) else { return };
    if lane != view.lane {
        return;
    }
    let rows = index.rows();
    let Some(i) = rows.binary_search_by_key(&uid, |r| r.uid).ok().or_else(|| rows.iter().position(|r| r.uid == uid))
    else {
        return;
    };
    if index.row(i, ledger).is_some_and(|r| !view.filter.matches(&r)) {
        view.filter = PacketFilter::default();
    }
    if view.expr.active().is_some_and(|m| i < m.rows_checked() && !m.contains(i)) {
        view.expr.bar.clear();
    }
    view.selected = Some(i as u32);
    view.detail_closed = false;
    view.scroll_to = Some(i as u32);
}

/// The Packets tab of one lane: the log, and under it the selected packet's detail.
pub fn packets_panel_ui(
    rec: &Shown<'_>,
    view: &mut PacketsView,
    cursor: SimTime,
    reveal: Option<&Reveal>,
    ui: &mut egui::Ui,
    commands: &mut Vec<AppCommand>,
) {
    take_reveal(&rec.packets, &rec.ledger, view, reveal);
    view.expr.bar.ui(ui, "seq > 900 && dropped");
    let pf = view.filter.clone();
    let test = move |r: &PacketFacts| pf.matches(&r.row);
    let extra = (!view.filter.is_all()).then(|| (extra_id(&view.filter), &test as &dyn Fn(&PacketFacts) -> bool));
    view.expr.update(*rec, extra);
    let uid =
        view.selected.filter(|_| !view.detail_closed).and_then(|i| rec.packets.rows().get(i as usize)).map(|r| r.uid);
    if view.detail.as_ref().map(|d| d.row.uid) != uid {
        view.detail = uid.and_then(|u| PacketDetail::of(rec, u));
    } else if let Some(d) = view.detail.as_mut() {
        // A live run learns the packet's fate after it was selected: refresh the ledger's facts
        // (the header and the carried messages are settled at its send).
        if let Some(row) = rec.packets.row_by_uid(d.row.uid, &rec.ledger) {
            d.row = row;
        }
    }
    let Some(detail) = view.detail.clone() else {
        packets_ui(&rec.packets, &rec.ledger, view, cursor, ui, commands);
        return;
    };
    let avail = ui.available_size();
    let detail_h = (avail.y * 0.45).clamp(160.0, 380.0);
    ui.allocate_ui(egui::vec2(avail.x, (avail.y - detail_h).max(120.0)), |ui| {
        packets_ui(&rec.packets, &rec.ledger, view, cursor, ui, commands);
    });
    ui.separator();
    egui::ScrollArea::vertical().id_salt("packet_detail").auto_shrink([false, false]).show(ui, |ui| {
        if !super::packet_detail_ui::packet_detail_ui(&detail, &mut view.bytes, rec, view.lane, cursor, ui, commands) {
            view.detail_closed = true;
        }
    });
}
