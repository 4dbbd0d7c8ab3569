//! The common event kinds written as text by hand, the rest through [`super::ron_line`].
//!
//! Sixteen kinds make up nearly every event of a recording (packets, link fates, RTT samples,
//! budgets, messages, slices, stats). Their lines are a few fixed pieces of text and numbers, so
//! they are written as exactly that: the text `ron` would write, with the variant, field and
//! enum names spelled out here. A renamed field or a new variant of one of these enums changes
//! what `ron` writes and not this; the tests in `ron_line_tests.rs` compare every kind written
//! here with `ron`'s own output (on every strategy's events and every shipped session) and fail
//! on the first difference, and a kind is written here only while a test exercises it.

use ackscope_protocol::{Dir, DropReason, Event, EventKind, SendKind, Side, StatsSample, FIRST_CLIENT};

use super::ron_line::write_f32;

/// Appends `(dt,Kind(..))` (with `,client` when not the first) for the kinds written by hand;
/// false, with nothing written, for every other kind.
pub(super) fn write(out: &mut String, dt: i64, e: &Event) -> bool {
    use EventKind as K;
    let mut w = Text { out, num: itoa::Buffer::new() };
    let open = |w: &mut Text, kind: &str| {
        w.out.push('(');
        w.int(dt);
        w.out.push(',');
        w.out.push_str(kind);
    };
    match &e.kind {
        K::LinkSent { dir, uid, bytes } => {
            open(&mut w, "LinkSent(dir:");
            w.dir(*dir);
            w.field(",uid:", *uid);
            w.field(",bytes:", *bytes);
        }
        K::LinkDropped { dir, uid, reason } => {
            open(&mut w, "LinkDropped(dir:");
            w.dir(*dir);
            w.field(",uid:", *uid);
            w.out.push_str(",reason:");
            w.out.push_str(drop_reason(*reason));
        }
        K::LinkDelivered { dir, uid, delay_us } => {
            open(&mut w, "LinkDelivered(dir:");
            w.dir(*dir);
            w.field(",uid:", *uid);
            w.field(",delay_us:", *delay_us);
        }
        K::PacketSent { side, seq, bytes, uid } => {
            open(&mut w, "PacketSent(side:");
            w.side(*side);
            w.field(",seq:", *seq);
            w.field(",bytes:", *bytes);
            w.field(",uid:", *uid);
        }
        K::PacketReceived { side, seq, bytes } => {
            open(&mut w, "PacketReceived(side:");
            w.side(*side);
            w.field(",seq:", *seq);
            w.field(",bytes:", *bytes);
        }
        K::PacketAcked { side, seq } => {
            open(&mut w, "PacketAcked(side:");
            w.side(*side);
            w.field(",seq:", *seq);
        }
        K::PacketNakked { side, seq } => {
            open(&mut w, "PacketNakked(side:");
            w.side(*side);
            w.field(",seq:", *seq);
        }
        K::RttSample { side, rtt_ms } => {
            open(&mut w, "RttSample(side:");
            w.side(*side);
            w.float(",rtt_ms:", *rtt_ms);
        }
        K::Stats { side, stats } => {
            open(&mut w, "Stats(side:");
            w.side(*side);
            w.stats(stats);
        }
        K::Budget { side, available_bytes, spent_bytes } => {
            open(&mut w, "Budget(side:");
            w.side(*side);
            w.float(",available_bytes:", *available_bytes);
            w.float(",spent_bytes:", *spent_bytes);
        }
        K::MessageQueued { side, msg, bytes, reliable } => {
            open(&mut w, "MessageQueued(side:");
            w.side(*side);
            w.field(",msg:", *msg);
            w.field(",bytes:", *bytes);
            w.out.push_str(if *reliable { ",reliable:true" } else { ",reliable:false" });
        }
        K::MessageSent { side, msg, seq, kind } => {
            open(&mut w, "MessageSent(side:");
            w.side(*side);
            w.field(",msg:", *msg);
            w.field(",seq:", *seq);
            w.out.push_str(",kind:");
            w.out.push_str(send_kind(*kind));
        }
        K::MessageAcked { side, msg, seq } => {
            open(&mut w, "MessageAcked(side:");
            w.side(*side);
            w.field(",msg:", *msg);
            w.field(",seq:", *seq);
        }
        K::MessageDelivered { side, msg } => {
            open(&mut w, "MessageDelivered(side:");
            w.side(*side);
            w.field(",msg:", *msg);
        }
        K::SliceSent { side, chunk, slice, resend } => {
            open(&mut w, "SliceSent(side:");
            w.side(*side);
            w.field(",chunk:", *chunk);
            w.field(",slice:", *slice);
            w.out.push_str(if *resend { ",resend:true" } else { ",resend:false" });
        }
        K::SliceAcked { side, chunk, slice } | K::SliceReceived { side, chunk, slice } => {
            let acked = matches!(e.kind, K::SliceAcked { .. });
            open(&mut w, if acked { "SliceAcked(side:" } else { "SliceReceived(side:" });
            w.side(*side);
            w.field(",chunk:", *chunk);
            w.field(",slice:", *slice);
        }
        _ => return false,
    }
    w.out.push(')');
    if e.client != FIRST_CLIENT {
        w.out.push(',');
        w.int(e.client);
    }
    w.out.push(')');
    true
}

struct Text<'a> {
    out: &'a mut String,
    num: itoa::Buffer,
}

impl Text<'_> {
    fn int(&mut self, v: impl itoa::Integer) {
        self.out.push_str(self.num.format(v));
    }
    fn field(&mut self, name: &str, v: impl itoa::Integer) {
        self.out.push_str(name);
        self.int(v);
    }
    fn float(&mut self, name: &str, v: f32) {
        self.out.push_str(name);
        write_f32(self.out, v);
    }
    fn side(&mut self, side: Side) {
        self.out.push_str(match side {
            Side::A => "A",
            Side::B => "B",
        });
    }
    fn dir(&mut self, dir: Dir) {
        self.out.push_str(match dir {
            Dir::AtoB => "AtoB",
            Dir::BtoA => "BtoA",
        });
    }
    fn stats(&mut self, s: &StatsSample) {
        let StatsSample {
            rtt_ms,
            rtt_display_ms,
            rtt_min_ms,
            rtt_max_ms,
            jitter_ms,
            loss_percent,
            no_loss_verdict,
            sent_kbps,
            received_kbps,
            acked_kbps,
        } = *s;
        self.float(",stats:(rtt_ms:", rtt_ms);
        self.float(",rtt_display_ms:", rtt_display_ms);
        self.float(",rtt_min_ms:", rtt_min_ms);
        self.float(",rtt_max_ms:", rtt_max_ms);
        self.float(",jitter_ms:", jitter_ms);
        self.float(",loss_percent:", loss_percent);
        // Written only when true, as serde's `skip_serializing_if` does.
        if no_loss_verdict {
            self.out.push_str(",no_loss_verdict:true");
        }
        self.float(",sent_kbps:", sent_kbps);
        self.float(",received_kbps:", received_kbps);
        self.float(",acked_kbps:", acked_kbps);
        self.out.push(')');
    }
}

fn drop_reason(r: DropReason) -> &'static str {
    match r {
        DropReason::Random => "Random",
        DropReason::Burst => "Burst",
        DropReason::QueueFull => "QueueFull",
        DropReason::Mtu => "Mtu",
    }
}

fn send_kind(k: SendKind) -> &'static str {
    match k {
        SendKind::First => "First",
        SendKind::DelayResend => "DelayResend",
        SendKind::Redundant => "Redundant",
        SendKind::NakResend => "NakResend",
        SendKind::TimeoutResend => "TimeoutResend",
    }
}
