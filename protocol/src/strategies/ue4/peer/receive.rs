//! The receive half of the UE4 connection: packets in (through the order cache), the notify
//! header's acks and Naks on our own packets, and bunches delivered to channels — with the
//! packet reported lost (bSkipAck) when one of its bunches could not be processed.

use crate::event::{DiscardReason, MalformedReason};
use crate::workload::check_payload;

use super::super::bunch::Bunch;
use super::super::channel::ChannelError;
use super::super::notify::MAX_SEQUENCE_HISTORY_LENGTH;
use super::super::packet::split_messages;
use super::*;

impl Ue4Peer {
    /// Reports on one of our packets (`HandlePacketNotification`): acks release bunches,
    /// Naks put exact copies of still-unacked reliable bunches back in the send buffer.
    fn on_notify(&mut self, now: SimTime, seq: SeqNum, delivered: bool, events: &mut Vec<Event>) {
        let side = self.side;
        let record = std::mem::take(&mut self.sent[seq.get() as usize]);
        self.loss.outcome(now, seq.get() as u32, delivered);
        if delivered {
            self.push(events, now, EventKind::PacketAcked { side, seq: seq.get() as u32 });
            if record.in_use {
                let rtt_ms = now.saturating_since(record.sent_at).as_millis_f64();
                self.rtt.add_sample(rtt_ms);
                self.bw_acked.add_packet(record.bytes);
                if self.reports_rtt {
                    self.push(events, now, EventKind::RttSample { side, rtt_ms: rtt_ms as f32 });
                }
            }
            let mut newly = Vec::new();
            for ch in &record.channels {
                let out = &mut self.out_channels[*ch as usize];
                out.received_ack(seq, &mut newly);
                // A closed channel's index is free once its close bunch (and all before) is acked.
                if out.instance.is_some_and(|i| i.closing) && out.num_out_rec() == 0 {
                    out.instance = None;
                }
            }
            for msg in newly {
                if let Some(left) = self.unacked_pieces.get_mut(&msg) {
                    *left -= 1;
                    if *left == 0 {
                        self.unacked_pieces.remove(&msg);
                        self.push(events, now, EventKind::MessageAcked { side, msg, seq: seq.get() as u32 });
                    }
                }
            }
            for msg in record.unreliable {
                self.push(events, now, EventKind::MessageAcked { side, msg, seq: seq.get() as u32 });
            }
        } else {
            self.counters.naks_received += 1;
            self.push(events, now, EventKind::PacketNakked { side, seq: seq.get() as u32 });
            if self.closed.is_some() {
                return;
            }
            let mut resend = Vec::new();
            for ch in &record.channels {
                self.out_channels[*ch as usize].received_nak(seq, &mut resend);
            }
            self.resend(now, resend, events);
        }
    }

    /// `ReceivedPacket`: hold it in the order cache, ignore it, or process it.
    pub(super) fn received_packet(&mut self, now: SimTime, pkt: DecodedPacket, bytes: usize, events: &mut Vec<Event>) {
        let delta = self.notify.sequence_delta(&pkt.header);
        let side = self.side;
        let seq = pkt.header.seq;
        if delta <= 0 {
            self.counters.packets_out_of_order_dropped += 1;
            // Not newer than the last packet processed (`GetSequenceDelta` is 0): the last one
            // again, or an older one (late, or a copy of an older one: UE4 keeps no record to
            // tell).
            let reason = if seq == self.notify.in_seq() { DiscardReason::Duplicate } else { DiscardReason::Late };
            self.push(events, now, EventKind::PacketDiscarded { side, seq: seq.get() as u32, reason });
            return;
        }
        if self.config.order_cache_enabled
            && !self.flushing_order_cache
            && self.order_cache.should_cache(delta, self.config.order_cache_max_missing)
        {
            match self.order_cache.insert(delta, (pkt, bytes)) {
                Ok(()) => self.counters.packets_cached += 1,
                Err(_) => {
                    self.counters.packets_out_of_order_dropped += 1;
                    let reason = DiscardReason::OrderCacheFull;
                    self.push(events, now, EventKind::PacketDiscarded { side, seq: seq.get() as u32, reason });
                }
            }
            return;
        }
        let mut notified = std::mem::take(&mut self.scratch_notify);
        notified.clear();
        self.notify.update(&pkt.header, |s, d| notified.push((s, d)));
        for (s, d) in notified.drain(..) {
            self.on_notify(now, s, d, events);
        }
        self.scratch_notify = notified;
        self.counters.packets_lost += (delta - 1) as u64;
        self.in_packet_id += delta as u64;
        self.push(events, now, EventKind::PacketReceived { side, seq: seq.get() as u32, bytes: bytes as u32 });
        self.bw_received.add_packet(bytes);
        let mut skip_ack = false;
        for bunch in pkt.bunches {
            if self.closed.is_some() {
                break;
            }
            self.received_bunch(now, bunch, &mut skip_ack, events);
        }
        // "We always call AckSequence even if we are explicitly rejecting the packet as this
        // updates the expected InSeq used to drive future acks."
        self.notify.ack_seq(seq, !skip_ack);
        if skip_ack {
            self.counters.skip_acks += 1;
            self.push(events, now, EventKind::Ue4SkipAck { side, seq: seq.get() as u32 });
        }
        self.time_sensitive = true;
        self.dirty_acks += 1;
        if self.dirty_acks >= MAX_SEQUENCE_HISTORY_LENGTH && self.closed.is_none() {
            self.counters.history_full_flushes += 1;
            self.flush_net(now, events);
        }
    }

    fn received_bunch(&mut self, now: SimTime, bunch: Bunch, skip_ack: &mut bool, events: &mut Vec<Event>) {
        let side = self.side;
        let ch = bunch.ch_index;
        if self.in_channels.len() <= ch as usize {
            // `decode_packet` bounds the index by MAX_CHANNELS.
            self.in_channels.resize_with(ch as usize + 1, InChannel::unused);
        }
        let mut delivered = Vec::new();
        match self.in_channels[ch as usize].received_raw_bunch(now, self.in_packet_id, bunch, &mut delivered) {
            Err(ChannelError::InRecOverflow) => {
                self.close(now, ChannelError::InRecOverflow.to_string(), true, events);
                return;
            }
            Ok(o) => {
                *skip_ack |= o.skip_ack;
                if o.changed {
                    let (depth, blocked_us, kind) = (o.depth as u32, o.blocked_us, kind_of_index(ch));
                    self.push(events, now, EventKind::Ue4InRec { side, depth, blocked_us, channel: ch, kind });
                }
            }
        }
        for payload in delivered {
            if ch == CONTROL_CHANNEL {
                let reason = String::from_utf8_lossy(&payload).into_owned();
                self.close(now, format!("remote closed: {reason}"), false, events);
                return;
            }
            let Ok(messages) = split_messages(&payload) else {
                // A bunch the channel cannot parse is not acked (bSkipAck), as UE4 does for
                // bunches it does not process.
                *skip_ack = true;
                self.counters.corrupt_payloads += 1;
                self.push(events, now, EventKind::Malformed { side, reason: MalformedReason::BadPayload });
                continue;
            };
            for m in messages {
                match check_payload(side.other(), m) {
                    Some(msg) => self.push(events, now, EventKind::MessageDelivered { side, msg }),
                    None => {
                        *skip_ack = true;
                        self.counters.corrupt_payloads += 1;
                        self.push(events, now, EventKind::Malformed { side, reason: MalformedReason::BadPayload });
                    }
                }
            }
        }
    }

    /// `FlushPacketOrderCache`: in order up to the first hole, or everything when `whole`.
    pub(super) fn flush_order_cache(&mut self, now: SimTime, whole: bool, events: &mut Vec<Event>) {
        if self.order_cache.count() == 0 {
            return;
        }
        let whole = whole || self.order_cache.end_is_set();
        self.flushing_order_cache = true;
        while let Some((pkt, bytes)) = self.order_cache.next_to_flush(whole) {
            self.received_packet(now, pkt, bytes, events);
        }
        self.flushing_order_cache = false;
    }
}
