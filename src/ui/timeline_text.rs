//! What the message timeline says in words: send kinds' names, a send's row, a packet's fate at
//! the cursor, and a message's details (the hover card).

use ackscope_protocol::{PacketFate, PacketLedger, SendKind, SimTime};

use crate::model::index::{MessageRecord, SendRecord};

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

pub(super) fn ms_since(t: SimTime, from: SimTime) -> f64 {
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
