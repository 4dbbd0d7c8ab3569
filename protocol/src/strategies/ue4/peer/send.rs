//! The send half of the UE4 connection: workload messages onto channels (`UChannel::SendBunch`),
//! actor channels opened and closed, bunches into the send buffer and packets (`FlushNet`).

use super::super::bunch::{
    bunches_needed, split_into_bunches, ChName, CloseReason, MAX_BUNCH_PAYLOAD_BYTES, MAX_CHANNELS,
    MAX_CONSTRUCTED_BUNCH_BYTES,
};
use super::super::packet::{encode_packet_with, frame_message};
use super::*;

impl Ue4Peer {
    /// One message from the workload: reliable ones go on their actor's channel at once,
    /// unreliable ones wait for `IsNetReady`.
    pub(super) fn send_message(&mut self, now: SimTime, m: MessageRequest, events: &mut Vec<Event>) {
        let side = self.side;
        if self.closed.is_some() {
            self.push(events, now, EventKind::MessageRefused { side, msg: m.id, reason: RefuseReason::Closed });
        } else if m.reliable {
            self.send_reliable(now, m, events);
        } else if m.payload.len() + 3 > MAX_CONSTRUCTED_BUNCH_BYTES {
            self.push(events, now, EventKind::MessageRefused { side, msg: m.id, reason: RefuseReason::TooLarge });
        } else {
            let bytes = m.payload.len() as u32;
            self.push(events, now, EventKind::MessageQueued { side, msg: m.id, bytes, reliable: false });
            self.waiting_unreliable.push_back(m);
        }
    }

    /// `UNetConnection::SendRawBunch`: flushes first when the bunch would not fit.
    fn send_raw_bunch(&mut self, now: SimTime, bunch: Bunch, msgs: Vec<u64>, kind: SendKind, events: &mut Vec<Event>) {
        let bits = bunch.bits_for(self.max_packet_bytes);
        if self.send_buffer_bits + bits > self.bunch_capacity_bits() {
            self.flush_net(now, events);
        }
        self.time_sensitive = true;
        self.send_buffer_bits += bits;
        let mergeable = kind == SendKind::First && !bunch.partial && !bunch.close;
        self.send_buffer.push(Queued { bunch, msgs, kind, mergeable, bits });
    }

    /// The open channel of `actor`, opening one on the lowest free index when it has none.
    fn actor_channel(&mut self, now: SimTime, actor: u32, events: &mut Vec<Event>) -> Option<u32> {
        if let Some(ch) = self.actor_channels.get(&actor) {
            return Some(*ch);
        }
        let free =
            (FIRST_ACTOR_CHANNEL as usize..self.out_channels.len()).find(|i| self.out_channels[*i].instance.is_none());
        let ch = match free {
            Some(i) => i,
            None if self.out_channels.len() < MAX_CHANNELS as usize => {
                self.out_channels.push(OutChannel::new(None, self.config.whole_bunch_resend));
                self.out_channels.len() - 1
            }
            None => return None,
        };
        self.out_channels[ch].instance = Some(OutInstance {
            actor: Some(actor),
            open_pending: true,
            last_used: now,
            ..OutInstance::open_from_start(Ue4ChannelKind::Actor)
        });
        let ch = ch as u32;
        self.actor_channels.insert(actor, ch);
        self.counters.channels_opened += 1;
        let side = self.side;
        self.push(events, now, EventKind::Ue4ChannelOpened { side, channel: ch, kind: Ue4ChannelKind::Actor });
        Some(ch)
    }

    /// `UChannel::SendBunch` for a reliable workload message, on its actor's channel.
    fn send_reliable(&mut self, now: SimTime, m: MessageRequest, events: &mut Vec<Event>) {
        let side = self.side;
        let mut framed = Vec::with_capacity(m.payload.len() + 3);
        frame_message(&m.payload, &mut framed);
        if framed.len() > MAX_CONSTRUCTED_BUNCH_BYTES {
            self.push(events, now, EventKind::MessageRefused { side, msg: m.id, reason: RefuseReason::TooLarge });
            return;
        }
        let actor = self.workload.actor_of(m.id);
        let Some(ch) = self.actor_channel(now, actor, events) else {
            // Every channel index is in use: UE4 cannot create the channel either.
            self.push(events, now, EventKind::MessageRefused { side, msg: m.id, reason: RefuseReason::SendQueueFull });
            return;
        };
        let pieces = bunches_needed(framed.len());
        if self.out_channels[ch as usize].overflows_reliable(pieces) {
            self.close(now, RELIABLE_OVERFLOW_REASON.to_string(), true, events);
            self.push(events, now, EventKind::MessageRefused { side, msg: m.id, reason: RefuseReason::Closed });
            return;
        }
        let bytes = m.payload.len() as u32;
        self.push(events, now, EventKind::MessageQueued { side, msg: m.id, bytes, reliable: true });
        self.unacked_pieces.insert(m.id, pieces as u32);
        if let Some(inst) = self.out_channels[ch as usize].instance.as_mut() {
            inst.last_used = now;
        }
        self.send_message_bunches(now, ch, true, m.id, framed, events);
    }

    /// The rest of `UChannel::SendBunch`: merge into the last bunch of the send buffer when it is
    /// on the same channel, equally reliable, whole and stays within one bunch and one packet;
    /// otherwise split if needed, `PrepBunch` reliable ones, and `SendRawBunch`.
    fn send_message_bunches(
        &mut self,
        now: SimTime,
        ch: u32,
        reliable: bool,
        id: u64,
        framed: Vec<u8>,
        events: &mut Vec<Event>,
    ) {
        if self.config.merge_bunches && bunches_needed(framed.len()) == 1 && self.merge(ch, reliable, id, &framed) {
            return;
        }
        let out = &mut self.out_channels[ch as usize];
        let open = out.instance.is_some_and(|i| i.open_pending);
        let name = if ch == CONTROL_CHANNEL { ChName::Control } else { ChName::Actor };
        let mut pieces = split_into_bunches(ch, name, reliable, open, &framed);
        if reliable {
            pieces = out.prep_reliable_group(pieces, vec![id]);
            if let Some(inst) = out.instance.as_mut() {
                inst.open_pending = false;
            }
        }
        for b in pieces {
            self.send_raw_bunch(now, b, vec![id], SendKind::First, events);
        }
    }

    /// Appends the message to the last bunch of the send buffer if it may take it.
    fn merge(&mut self, ch: u32, reliable: bool, id: u64, framed: &[u8]) -> bool {
        let fits_packet = self.send_buffer_bits + framed.len() * 8 <= self.bunch_capacity_bits();
        let max_packet = self.max_packet_bytes;
        let Some(last) = self.send_buffer.last_mut() else { return false };
        if !(fits_packet
            && last.mergeable
            && last.bunch.ch_index == ch
            && last.bunch.reliable == reliable
            && last.bunch.payload.len() + framed.len() <= MAX_BUNCH_PAYLOAD_BYTES)
        {
            return false;
        }
        last.bunch.payload.extend_from_slice(framed);
        last.msgs.push(id);
        let new_bits = last.bunch.bits_for(max_packet);
        self.send_buffer_bits = self.send_buffer_bits + new_bits - last.bits;
        last.bits = new_bits;
        let ch_sequence = last.bunch.ch_sequence;
        if reliable {
            self.out_channels[ch as usize].merge(ch_sequence, framed, id);
        }
        self.counters.bunches_merged += 1;
        self.time_sensitive = true;
        true
    }

    /// Closes every actor channel whose actor sent nothing for `channel_close_s`
    /// (`UChannel::Close`: a reliable, unmergeable bunch with bClose).
    pub(super) fn close_idle_channels(&mut self, now: SimTime, events: &mut Vec<Event>) {
        let close_s = self.config.channel_close_s;
        if close_s.is_nan() || close_s <= 0.0 {
            return;
        }
        let idle: Vec<(u32, u32)> = self
            .actor_channels
            .iter()
            .filter(|(_, ch)| {
                self.out_channels[**ch as usize]
                    .instance
                    .is_some_and(|i| now.saturating_since(i.last_used).as_secs_f64() >= close_s)
            })
            .map(|(a, ch)| (*a, *ch))
            .collect();
        for (actor, ch) in idle {
            if self.closed.is_some() {
                return;
            }
            if self.out_channels[ch as usize].overflows_reliable_with(1, true) {
                self.close(now, RELIABLE_OVERFLOW_REASON.to_string(), true, events);
                return;
            }
            self.actor_channels.remove(&actor);
            let out = &mut self.out_channels[ch as usize];
            if let Some(inst) = out.instance.as_mut() {
                inst.closing = true;
            }
            let close = Bunch {
                close: true,
                close_reason: CloseReason::Relevancy,
                reliable: true,
                ch_index: ch,
                ch_name: ChName::Actor,
                ..Default::default()
            };
            let bunch = out.prep_reliable(close, Vec::new());
            self.counters.channels_closed += 1;
            let side = self.side;
            self.push(events, now, EventKind::Ue4ChannelClosed { side, channel: ch, kind: Ue4ChannelKind::Actor });
            self.send_raw_bunch(now, bunch, Vec::new(), SendKind::First, events);
        }
    }

    /// Replication of the snapshot channel waits while `bPausedUntilReliableACK` holds.
    fn snapshots_paused(&mut self) -> bool {
        let out = &mut self.out_channels[SNAPSHOT_CHANNEL as usize];
        let pending = out.num_out_rec() > 0;
        match out.instance.as_mut() {
            Some(i) if i.paused_until_reliable_ack => {
                i.paused_until_reliable_ack = pending;
                pending
            }
            _ => false,
        }
    }

    /// An unreliable message goes out only while `IsNetReady`; otherwise the newest ones wait.
    /// One split into at least `partial_bunch_reliable_threshold` pieces goes reliably.
    pub(super) fn send_waiting_unreliable(&mut self, now: SimTime, events: &mut Vec<Event>) {
        while !self.waiting_unreliable.is_empty()
            && self.throttle.is_net_ready(self.send_buffer_bits as i64)
            && !self.snapshots_paused()
        {
            let Some(m) = self.waiting_unreliable.pop_front() else { break };
            let mut framed = Vec::with_capacity(m.payload.len() + 3);
            frame_message(&m.payload, &mut framed);
            let pieces = bunches_needed(framed.len());
            let threshold = self.config.partial_bunch_reliable_threshold as usize;
            let out = &mut self.out_channels[SNAPSHOT_CHANNEL as usize];
            let reliable = threshold > 0 && pieces >= threshold && !out.overflows_reliable(pieces);
            if reliable {
                if let Some(i) = out.instance.as_mut() {
                    i.paused_until_reliable_ack = true;
                }
                self.counters.unreliable_made_reliable += 1;
                self.unacked_pieces.insert(m.id, pieces as u32);
            }
            self.send_message_bunches(now, SNAPSHOT_CHANNEL, reliable, m.id, framed, events);
        }
        let keep = self.config.max_waiting_unreliable as usize;
        while self.waiting_unreliable.len() > keep {
            if let Some(old) = self.waiting_unreliable.pop_front() {
                self.counters.unreliable_dropped_saturated += 1;
                let side = self.side;
                self.push(
                    events,
                    now,
                    EventKind::MessageRefused { side, msg: old.id, reason: RefuseReason::SendQueueFull },
                );
            }
        }
    }

    /// Puts Nak'ed bunches back in the send buffer (exact copies, same `ChSequence`).
    pub(super) fn resend(&mut self, now: SimTime, resend: Vec<(Bunch, Vec<u64>)>, events: &mut Vec<Event>) {
        for (bunch, msgs) in resend {
            self.counters.bunches_resent += 1;
            self.send_raw_bunch(now, bunch, msgs, SendKind::NakResend, events);
        }
    }

    /// `FlushNet`: turns the send buffer into as many packets as it needs (one when empty but
    /// acks are dirty or the keep-alive is due).
    pub(super) fn flush_net(&mut self, now: SimTime, events: &mut Vec<Event>) {
        if self.send_buffer.is_empty() && self.dirty_acks == 0 && !self.keepalive_due(now) {
            self.time_sensitive = false;
            return;
        }
        let cap = self.bunch_capacity_bits();
        loop {
            if self.notify.is_sequence_window_full() {
                self.counters.window_full_stalls += 1;
                return;
            }
            let mut bits = 0;
            let mut n = 0;
            while n < self.send_buffer.len() && (n == 0 || bits + self.send_buffer[n].bits <= cap) {
                bits += self.send_buffer[n].bits;
                n += 1;
            }
            self.send_buffer_bits -= bits;
            let group: Vec<Queued> = self.send_buffer.drain(..n).collect();
            self.write_packet(now, group, events);
            if self.send_buffer.is_empty() {
                break;
            }
        }
        self.time_sensitive = false;
        self.dirty_acks = 0;
        self.last_send = Some(now);
    }

    fn write_packet(&mut self, now: SimTime, group: Vec<Queued>, events: &mut Vec<Event>) {
        let header = self.notify.header_for_next_packet();
        let capacity = MAX_NOTIFY_HEADER_BYTES + 2 + group.iter().map(|q| q.bits).sum::<usize>().div_ceil(8);
        let bytes = match encode_packet_with(&header, group.iter().map(|q| &q.bunch), capacity, self.max_packet_bytes) {
            Ok(b) => b,
            Err(_) => {
                // Cannot happen: capacity is an upper bound. Count it rather than panic.
                self.counters.encode_failures += 1;
                return;
            }
        };
        let seq = header.seq;
        self.notify.commit_and_increment_out_seq();
        let side = self.side;
        let mut record = SentPacket { in_use: true, sent_at: now, bytes: bytes.len(), ..Default::default() };
        for q in &group {
            if q.bunch.reliable {
                self.out_channels[q.bunch.ch_index as usize].set_packet_id(q.bunch.ch_sequence, seq);
                if !record.channels.contains(&q.bunch.ch_index) {
                    record.channels.push(q.bunch.ch_index);
                }
            } else if !q.bunch.partial {
                record.unreliable.extend_from_slice(&q.msgs);
            }
            for &msg in &q.msgs {
                self.push(events, now, EventKind::MessageSent { side, msg, seq: seq.get() as u32, kind: q.kind });
            }
        }
        self.sent[seq.get() as usize] = record;
        self.loss.sent(now, seq.get() as u32);
        self.counters.packets_sent += 1;
        self.throttle.on_packet_sent(bytes.len());
        self.spent_bytes += (bytes.len() + crate::link::IP_UDP_OVERHEAD_BYTES as usize) as u64;
        self.bw_sent.add_packet(bytes.len());
        self.ready.push_back((seq.get() as u32, bytes));
    }

    /// Closes the connection; with `tell_remote`, first sends the reason on the control channel
    /// and flushes (UE4: `NMT_Failure`, `FlushNet(true)`, `Close()`).
    pub(super) fn close(&mut self, now: SimTime, reason: String, tell_remote: bool, events: &mut Vec<Event>) {
        if self.closed.is_some() {
            return;
        }
        if tell_remote {
            let b = split_into_bunches(CONTROL_CHANNEL, ChName::Control, true, false, reason.as_bytes()).remove(0);
            let bunch = self.out_channels[CONTROL_CHANNEL as usize].prep_reliable(b, Vec::new());
            self.send_raw_bunch(now, bunch, Vec::new(), SendKind::First, events);
            self.flush_net(now, events);
        }
        let side = self.side;
        self.push(events, now, EventKind::ConnectionClosed { side, reason: reason.clone() });
        self.closed = Some(reason);
        for m in std::mem::take(&mut self.waiting_unreliable) {
            self.push(events, now, EventKind::MessageRefused { side, msg: m.id, reason: RefuseReason::Closed });
        }
        self.send_buffer.clear();
        self.send_buffer_bits = 0;
    }
}
