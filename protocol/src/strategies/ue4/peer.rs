//! The UE4-style connection as a [`Peer`]: workload messages become bunches on channels, bunches
//! are merged into packets, packets carry the notify header, and reliable bunches are resent only
//! when a packet that carried them is reported lost (Nak).
//!
//! Call order inside one instant follows UE4's frame: received packets are processed (or held in
//! the order cache) as they arrive; [`Peer::on_tick`] is `UNetConnection::Tick` — flush the order
//! cache (end of `TickDispatch`), pay the throttle, let the game produce its messages, then
//! `FlushNet` if something is time-sensitive or the keep-alive is due. Packets are built at the
//! moment UE4 would flush them (including the immediate flush when 256 acks are dirty during
//! receive) and handed to the driver at its next [`Peer::poll_send`], because the driver only
//! puts packets on the link at send ticks.
//!
//! There is no retransmission timer anywhere. If the Nak for a packet is lost with the packet
//! that carried it, the sender only learns of it from the next packet's history — or, past 256
//! packets, by treating everything beyond the history as lost.

use std::collections::{BTreeMap, VecDeque};

use crate::event::{Event, EventKind, MalformedReason, RefuseReason, SendKind, Side, SimTime, StatsSample};
use crate::peer::{Peer, PeerCommand};
use crate::reliability::loss::LossJudge;
use crate::reliability::stats::{self, BandwidthMeter, RttEstimator, StatsConfig};
use crate::workload::{check_payload, MessageRequest, Workload, WorkloadConfig};

use super::bunch::{
    bunches_needed, decode_packet, encode_packet, frame_message, split_into_bunches, split_messages, Bunch,
    DecodedPacket, CONTROL_CHANNEL, MAX_BUNCH_PAYLOAD_BYTES, MAX_CHANNELS, MAX_CONSTRUCTED_BUNCH_BYTES,
    MIN_PACKET_BYTES,
};
use super::channel::{ChannelError, InChannel, OutChannel};
use super::notify::{PacketNotify, MAX_NOTIFY_HEADER_BYTES, MAX_SEQUENCE_HISTORY_LENGTH};
use super::order_cache::PacketOrderCache;
use super::sequence::SeqNum;
use super::throttle::Throttle;
use super::{Ue4Config, Ue4Counters, RELIABLE_CHANNEL, UNRELIABLE_CHANNEL};

mod receive;

/// The reason UE4 gives when a channel would hold more than `RELIABLE_BUFFER` unacked bunches.
pub const RELIABLE_OVERFLOW_REASON: &str = "Outgoing reliable buffer overflow";
/// The reason given when nothing arrived for `connection_timeout_ms`.
pub const TIMEOUT_REASON: &str = "Connection timed out";

/// A bunch waiting in the send buffer.
#[derive(Debug, Clone)]
struct Queued {
    bunch: Bunch,
    msgs: Vec<u64>,
    kind: SendKind,
    /// A fresh whole bunch later messages of its channel may be merged into.
    mergeable: bool,
}

/// What a sent packet carried, kept until the remote reports on it.
#[derive(Debug, Clone, Default)]
struct SentPacket {
    in_use: bool,
    sent_at: SimTime,
    bytes: usize,
    /// Channels with reliable bunches in it (UE4's channel record).
    channels: Vec<u8>,
    /// Whole unreliable messages in it.
    unreliable: Vec<u64>,
}

/// A UE4-style endpoint.
#[derive(Debug, Clone)]
pub struct Ue4Peer {
    side: Side,
    config: Ue4Config,
    workload: Workload,
    notify: PacketNotify,
    order_cache: PacketOrderCache<(DecodedPacket, usize)>,
    flushing_order_cache: bool,
    out_channels: Vec<OutChannel>,
    in_channels: Vec<InChannel>,
    throttle: Throttle,
    send_buffer: Vec<Queued>,
    ready: VecDeque<(u32, Vec<u8>)>,
    time_sensitive: bool,
    dirty_acks: usize,
    last_send: Option<SimTime>,
    /// Last time a well-formed packet arrived (or the first tick).
    last_receive: Option<SimTime>,
    sent: Vec<SentPacket>,
    /// Running id of the last packet processed (`InPacketId`), never wrapping.
    in_packet_id: u64,
    waiting_unreliable: VecDeque<MessageRequest>,
    /// Reliable messages whose bunches are not all acked yet: pieces left.
    unacked_pieces: BTreeMap<u64, u32>,
    closed: Option<String>,
    counters: Ue4Counters,
    spent_bytes: u64,
    rtt: RttEstimator,
    /// Loss verdicts: from notifications, or lost when none came within the judging window.
    loss: LossJudge,
    bw_sent: BandwidthMeter,
    bw_received: BandwidthMeter,
    bw_acked: BandwidthMeter,
    stats_config: StatsConfig,
    scratch_notify: Vec<(SeqNum, bool)>,
}

impl Ue4Peer {
    /// An endpoint for `side` generating `workload` from `seed`.
    pub fn new(side: Side, config: Ue4Config, workload: WorkloadConfig, seed: u64) -> Self {
        let first = SeqNum::new(config.initial_packet_seq);
        let stats_config = StatsConfig::default();
        Self {
            side,
            workload: Workload::new(side, workload, seed),
            notify: PacketNotify::new(first.minus(1), first),
            order_cache: PacketOrderCache::new(config.order_cache_capacity as usize),
            flushing_order_cache: false,
            out_channels: vec![OutChannel::default(); MAX_CHANNELS as usize],
            in_channels: vec![InChannel::default(); MAX_CHANNELS as usize],
            throttle: Throttle::new(config.net_speed_bytes_per_sec, config.desired_tick_rate_hz),
            send_buffer: Vec::new(),
            ready: VecDeque::new(),
            time_sensitive: false,
            dirty_acks: 0,
            last_send: None,
            last_receive: None,
            sent: vec![SentPacket::default(); SeqNum::SPACE as usize],
            in_packet_id: 0,
            waiting_unreliable: VecDeque::new(),
            unacked_pieces: BTreeMap::new(),
            closed: None,
            counters: Ue4Counters::default(),
            spent_bytes: 0,
            rtt: RttEstimator::new(stats_config),
            loss: LossJudge::reporting_every_packet(SeqNum::BITS, stats_config.loss_window),
            bw_sent: BandwidthMeter::default(),
            bw_received: BandwidthMeter::default(),
            bw_acked: BandwidthMeter::default(),
            stats_config,
            config,
            scratch_notify: Vec::new(),
        }
    }

    pub fn counters(&self) -> Ue4Counters {
        let mut c = self.counters;
        for ch in &self.in_channels {
            c.max_inrec_depth = c.max_inrec_depth.max(ch.counters.max_inrec_depth as u64);
            c.max_inrec_wait_us = c.max_inrec_wait_us.max(ch.counters.max_inrec_wait_us);
            c.total_inrec_wait_us += ch.counters.total_inrec_wait_us;
            c.duplicate_bunches += ch.counters.duplicate_bunches;
            c.partial_discarded += ch.counters.partial_discarded + ch.counters.too_large_discarded;
        }
        c.max_out_rec = c.max_out_rec.max(self.out_channels.iter().map(|o| o.num_out_rec() as u64).max().unwrap_or(0));
        c
    }

    /// Why the connection closed, if it did.
    pub fn closed_reason(&self) -> Option<&str> {
        self.closed.as_deref()
    }

    pub fn net_speed_bytes_per_sec(&self) -> f64 {
        self.throttle.net_speed_bytes_per_sec()
    }

    /// Changes `CurrentNetSpeed` from now on.
    pub fn set_net_speed(&mut self, bytes_per_sec: f64) {
        self.config.net_speed_bytes_per_sec = bytes_per_sec;
        self.throttle.set_net_speed(bytes_per_sec);
    }

    pub fn workload_mut(&mut self) -> &mut Workload {
        &mut self.workload
    }

    /// Unacked reliable bunches on the message channel (`NumOutRec`).
    pub fn num_out_rec(&self) -> usize {
        self.out_channels[RELIABLE_CHANNEL as usize].num_out_rec()
    }

    fn push(&self, events: &mut Vec<Event>, now: SimTime, kind: EventKind) {
        events.push(Event { time: now, kind });
    }

    fn keepalive_due(&self, now: SimTime) -> bool {
        self.last_send.is_none_or(|t| now.saturating_since(t).as_millis_f64() > self.config.keepalive_ms)
    }

    /// Bits a packet may spend on bunches, after the worst-case notify header and stop bit.
    fn bunch_capacity_bits(&self) -> usize {
        let bytes = (self.config.max_packet_bytes as usize).max(MIN_PACKET_BYTES);
        (bytes - MAX_NOTIFY_HEADER_BYTES) * 8 - 8
    }

    fn send_buffer_bits(&self) -> usize {
        self.send_buffer.iter().map(|q| q.bunch.max_bits()).sum()
    }

    /// `UNetConnection::SendRawBunch`: flushes first when the bunch would not fit.
    fn send_raw_bunch(&mut self, now: SimTime, q: Queued, events: &mut Vec<Event>) {
        if self.send_buffer_bits() + q.bunch.max_bits() > self.bunch_capacity_bits() {
            self.flush_net(now, events);
        }
        self.time_sensitive = true;
        self.send_buffer.push(q);
    }

    /// `UChannel::SendBunch` for a reliable workload message.
    fn send_reliable(&mut self, now: SimTime, m: MessageRequest, events: &mut Vec<Event>) {
        let side = self.side;
        if self.closed.is_some() {
            self.push(events, now, EventKind::MessageRefused { side, msg: m.id, reason: RefuseReason::Closed });
            return;
        }
        let mut framed = Vec::with_capacity(m.payload.len() + 3);
        frame_message(&m.payload, &mut framed);
        if framed.len() > MAX_CONSTRUCTED_BUNCH_BYTES {
            self.push(events, now, EventKind::MessageRefused { side, msg: m.id, reason: RefuseReason::TooLarge });
            return;
        }
        let pieces = bunches_needed(framed.len());
        if self.out_channels[RELIABLE_CHANNEL as usize].overflows_reliable(pieces) {
            self.close(now, RELIABLE_OVERFLOW_REASON.to_string(), true, events);
            self.push(events, now, EventKind::MessageRefused { side, msg: m.id, reason: RefuseReason::Closed });
            return;
        }
        self.push(
            events,
            now,
            EventKind::MessageQueued { side, msg: m.id, bytes: m.payload.len() as u32, reliable: true },
        );
        self.unacked_pieces.insert(m.id, pieces as u32);
        self.send_message_bunches(now, RELIABLE_CHANNEL, true, m.id, framed, events);
    }

    /// The rest of `UChannel::SendBunch`: merge into the last bunch of the send buffer when it is
    /// on the same channel, equally reliable, whole and stays within one bunch and one packet;
    /// otherwise split if needed, `PrepBunch` reliable ones, and `SendRawBunch`.
    fn send_message_bunches(
        &mut self,
        now: SimTime,
        channel: u8,
        reliable: bool,
        id: u64,
        framed: Vec<u8>,
        events: &mut Vec<Event>,
    ) {
        if self.config.merge_bunches && bunches_needed(framed.len()) == 1 {
            let fits_packet = self.send_buffer_bits() + framed.len() * 8 <= self.bunch_capacity_bits();
            if let Some(last) = self.send_buffer.last_mut() {
                if fits_packet
                    && last.mergeable
                    && last.bunch.channel == channel
                    && last.bunch.reliable == reliable
                    && last.bunch.payload.len() + framed.len() <= MAX_BUNCH_PAYLOAD_BYTES
                {
                    last.bunch.payload.extend_from_slice(&framed);
                    last.msgs.push(id);
                    let ch_sequence = last.bunch.ch_sequence;
                    if reliable {
                        self.out_channels[channel as usize].merge(ch_sequence, &framed, id);
                    }
                    self.counters.bunches_merged += 1;
                    self.time_sensitive = true;
                    return;
                }
            }
        }
        for b in split_into_bunches(channel, reliable, &framed) {
            let mergeable = !b.partial;
            let bunch = if reliable { self.out_channels[channel as usize].prep_reliable(b, vec![id]) } else { b };
            self.send_raw_bunch(now, Queued { bunch, msgs: vec![id], kind: SendKind::First, mergeable }, events);
        }
    }

    /// An unreliable message goes out only while `IsNetReady`; otherwise the newest ones wait.
    fn send_waiting_unreliable(&mut self, now: SimTime, events: &mut Vec<Event>) {
        while !self.waiting_unreliable.is_empty() && self.throttle.is_net_ready(self.send_buffer_bits() as i64) {
            let Some(m) = self.waiting_unreliable.pop_front() else { break };
            let mut framed = Vec::with_capacity(m.payload.len() + 3);
            frame_message(&m.payload, &mut framed);
            self.send_message_bunches(now, UNRELIABLE_CHANNEL, false, m.id, framed, events);
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

    /// `FlushNet`: turns the send buffer into as many packets as it needs (one when empty but
    /// acks are dirty or the keep-alive is due).
    fn flush_net(&mut self, now: SimTime, events: &mut Vec<Event>) {
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
            while n < self.send_buffer.len() && (n == 0 || bits + self.send_buffer[n].bunch.max_bits() <= cap) {
                bits += self.send_buffer[n].bunch.max_bits();
                n += 1;
            }
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
        let capacity =
            MAX_NOTIFY_HEADER_BYTES + 2 + group.iter().map(|q| q.bunch.max_bits()).sum::<usize>().div_ceil(8);
        let bytes = match encode_packet(&header, group.iter().map(|q| &q.bunch), capacity) {
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
                self.out_channels[q.bunch.channel as usize].set_packet_id(q.bunch.ch_sequence, seq);
                if !record.channels.contains(&q.bunch.channel) {
                    record.channels.push(q.bunch.channel);
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
    fn close(&mut self, now: SimTime, reason: String, tell_remote: bool, events: &mut Vec<Event>) {
        if self.closed.is_some() {
            return;
        }
        if tell_remote {
            let b = split_into_bunches(CONTROL_CHANNEL, true, reason.as_bytes()).remove(0);
            let bunch = self.out_channels[CONTROL_CHANNEL as usize].prep_reliable(b, Vec::new());
            let q = Queued { bunch, msgs: Vec::new(), kind: SendKind::First, mergeable: false };
            self.send_raw_bunch(now, q, events);
            self.flush_net(now, events);
        }
        let side = self.side;
        self.push(events, now, EventKind::ConnectionClosed { side, reason: reason.clone() });
        self.closed = Some(reason);
        for m in std::mem::take(&mut self.waiting_unreliable) {
            self.push(events, now, EventKind::MessageRefused { side, msg: m.id, reason: RefuseReason::Closed });
        }
        self.send_buffer.clear();
    }
}

impl Peer for Ue4Peer {
    fn command(&mut self, _now: SimTime, command: PeerCommand) {
        match command {
            PeerCommand::Reconfigure(live) => {
                self.workload.set_config(live.workload);
                if let Some(c) = live.own::<Ue4Config>() {
                    if c.net_speed_bytes_per_sec != self.config.net_speed_bytes_per_sec {
                        self.set_net_speed(c.net_speed_bytes_per_sec);
                    }
                }
            }
            PeerCommand::Burst => self.workload.burst(),
            PeerCommand::SendChunk { .. } | PeerCommand::TargetKbps(_) => {}
        }
    }

    /// Reliable bunches sent and not yet acked; a closed connection has nothing left to drain.
    fn unacked_reliable(&self) -> usize {
        if self.closed.is_some() {
            0
        } else {
            self.num_out_rec()
        }
    }

    fn on_tick(&mut self, now: SimTime, events: &mut Vec<Event>) {
        let side = self.side;
        if self.closed.is_none() {
            // End of the receive "frame": whatever the cache still holds is processed now and
            // the holes before it count as lost.
            self.flush_order_cache(now, true, events);
        }
        let heard = *self.last_receive.get_or_insert(now);
        let timeout_ms = self.config.connection_timeout_ms;
        if timeout_ms > 0.0 && self.closed.is_none() && now.saturating_since(heard).as_millis_f64() > timeout_ms {
            self.close(now, TIMEOUT_REASON.to_string(), true, events);
        }
        self.throttle.tick(now);
        let available_bytes = self.throttle.available_bytes();
        let mut msgs = Vec::new();
        self.workload.poll(now, &mut msgs);
        for m in msgs {
            if self.closed.is_some() {
                self.push(events, now, EventKind::MessageRefused { side, msg: m.id, reason: RefuseReason::Closed });
            } else if m.reliable {
                self.send_reliable(now, m, events);
            } else if m.payload.len() + 3 > MAX_CONSTRUCTED_BUNCH_BYTES {
                self.push(events, now, EventKind::MessageRefused { side, msg: m.id, reason: RefuseReason::TooLarge });
            } else {
                self.push(
                    events,
                    now,
                    EventKind::MessageQueued { side, msg: m.id, bytes: m.payload.len() as u32, reliable: false },
                );
                self.waiting_unreliable.push_back(m);
            }
        }
        if self.closed.is_none() {
            self.send_waiting_unreliable(now, events);
            if self.time_sensitive || self.keepalive_due(now) {
                self.flush_net(now, events);
            }
        }
        // An unthrottled connection has no budget to plot.
        let spent_bytes = std::mem::take(&mut self.spent_bytes);
        if !self.throttle.unlimited() {
            let (available_bytes, spent_bytes) = (available_bytes as f32, spent_bytes as f32);
            self.push(events, now, EventKind::Budget { side, available_bytes, spent_bytes });
        }
    }

    fn poll_send(&mut self, _now: SimTime, out: &mut Vec<u8>, _events: &mut Vec<Event>) -> Option<u32> {
        let (seq, bytes) = self.ready.pop_front()?;
        out.extend_from_slice(&bytes);
        Some(seq)
    }

    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        if self.closed.is_some() {
            self.counters.ignored_after_close += 1;
            return;
        }
        match decode_packet(packet) {
            Err(e) => {
                self.counters.malformed += 1;
                let side = self.side;
                self.push(events, now, EventKind::Malformed { side, reason: e.malformed_reason() });
            }
            Ok(pkt) => {
                self.last_receive = Some(now);
                self.received_packet(now, pkt, packet.len(), events);
                if !self.flushing_order_cache {
                    self.flush_order_cache(now, false, events);
                }
            }
        }
    }

    fn update(&mut self, now: SimTime, _events: &mut Vec<Event>) {
        let (iv, sm) = (self.stats_config.bandwidth_interval_ms, self.stats_config.bandwidth_smoothing);
        self.bw_sent.update(now, iv, sm);
        self.bw_received.update(now, iv, sm);
        self.bw_acked.update(now, iv, sm);
        let display_rtt_ms = self.rtt.has_sample().then(|| self.rtt.display_ms());
        self.loss.expire(now, self.stats_config.judge_window_us(display_rtt_ms));
    }

    fn stats(&self) -> StatsSample {
        stats::sample(&self.rtt, self.loss.window(), [&self.bw_sent, &self.bw_received, &self.bw_acked])
    }
}
