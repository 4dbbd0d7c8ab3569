//! The UE4-style connection as a [`Peer`]: workload messages become bunches on channels, bunches
//! are merged into packets, packets carry the notify header, and reliable bunches are resent only
//! when a packet that carried them is reported lost (Nak).
//!
//! Channels: 0 is the control channel (the close reason), 2 carries the workload's snapshots,
//! both open from the start; each actor's reliable messages go on an actor channel of its own
//! (the lowest free index from 3), opened by its first bunch (bOpen), closed after
//! `channel_close_s` without messages (bClose) and reopened on demand. Each has its own
//! `ChSequence`, `OutRec` and `InRec`, so head-of-line blocking stays within one actor.
//!
//! Call order inside one instant follows UE4's frame: received packets are processed (or held in
//! the order cache) as they arrive; [`Peer::on_tick`] is `UNetConnection::Tick` — flush the order
//! cache (end of `TickDispatch`), pay the throttle, let the game produce its messages, close idle
//! channels, then `FlushNet` if something is time-sensitive or the keep-alive is due. Packets are
//! built at the moment UE4 would flush them (including the immediate flush when 256 acks are
//! dirty during receive) and handed to the driver at its next [`Peer::poll_send`], because the
//! driver only puts packets on the link at send ticks.
//!
//! There is no retransmission timer anywhere. If the Nak for a packet is lost with the packet
//! that carried it, the sender only learns of it from the next packet's history — or, past 256
//! packets, by treating everything beyond the history as lost. A packet whose bunch the receiver
//! cannot process is Nak'ed explicitly (bSkipAck), which resends its reliable bunches even
//! though they arrived; the receiver drops those by `ChSequence`.

use std::collections::{BTreeMap, VecDeque};

use crate::event::{
    DiscardReason, Event, EventKind, RefuseReason, SendKind, Side, SimTime, StatsSample, Ue4ChannelKind,
};
use crate::peer::{Peer, PeerCommand};
use crate::reliability::loss::LossJudge;
use crate::reliability::stats::{self, BandwidthMeter, RttEstimator, StatsConfig};
use crate::workload::{MessageRequest, Workload, WorkloadConfig};

use super::bunch::{Bunch, CONTROL_CHANNEL, MIN_PACKET_BYTES};
use super::channel::{InChannel, OutChannel, OutInstance};
use super::notify::{PacketNotify, MAX_NOTIFY_HEADER_BYTES};
use super::order_cache::PacketOrderCache;
use super::packet::{decode_packet_with, DecodedPacket};
use super::sequence::SeqNum;
use super::throttle::Throttle;
use super::{Ue4Config, Ue4Counters, FIRST_ACTOR_CHANNEL, SNAPSHOT_CHANNEL};

mod receive;
mod send;

/// The reason UE4 gives when a channel would hold more than `RELIABLE_BUFFER` unacked bunches.
pub const RELIABLE_OVERFLOW_REASON: &str = "Outgoing reliable buffer overflow";
/// The reason given when nothing arrived for `connection_timeout_ms`.
pub const TIMEOUT_REASON: &str = "Connection timed out";

/// What channel index `ch` is used for in this model.
pub fn kind_of_index(ch: u32) -> Ue4ChannelKind {
    match ch {
        CONTROL_CHANNEL => Ue4ChannelKind::Control,
        SNAPSHOT_CHANNEL => Ue4ChannelKind::Snapshot,
        _ => Ue4ChannelKind::Actor,
    }
}

/// A bunch waiting in the send buffer.
#[derive(Debug, Clone)]
struct Queued {
    bunch: Bunch,
    msgs: Vec<u64>,
    kind: SendKind,
    /// A fresh whole bunch later messages of its channel may be merged into.
    mergeable: bool,
    /// Bits it takes in a packet.
    bits: usize,
}

/// What a sent packet carried, kept until the remote reports on it.
#[derive(Debug, Clone, Default)]
struct SentPacket {
    in_use: bool,
    sent_at: SimTime,
    bytes: usize,
    /// Channels with reliable bunches in it (UE4's channel record).
    channels: Vec<u32>,
    /// Whole unreliable messages in it.
    unreliable: Vec<u64>,
}

/// A UE4-style endpoint.
#[derive(Debug, Clone)]
pub struct Ue4Peer {
    side: Side,
    /// Whether `RttSample` is reported ([`Peer::set_reports_rtt_samples`]).
    reports_rtt: bool,
    config: Ue4Config,
    /// `MaxPacket`: the configured size, raised to hold one largest bunch.
    max_packet_bytes: u32,
    workload: Workload,
    notify: PacketNotify,
    order_cache: PacketOrderCache<(DecodedPacket, usize)>,
    flushing_order_cache: bool,
    /// By channel index, grown on demand.
    out_channels: Vec<OutChannel>,
    in_channels: Vec<InChannel>,
    /// The open (not closing) actor channel of each actor.
    actor_channels: BTreeMap<u32, u32>,
    throttle: Throttle,
    send_buffer: Vec<Queued>,
    send_buffer_bits: usize,
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
        let whole = config.whole_bunch_resend;
        let static_out = |kind| OutChannel::new(Some(OutInstance::open_from_start(kind)), whole);
        Self {
            side,
            reports_rtt: true,
            max_packet_bytes: (config.max_packet_bytes as usize).max(MIN_PACKET_BYTES) as u32,
            workload: Workload::new(side, workload, seed),
            notify: PacketNotify::new(first.minus(1), first),
            order_cache: PacketOrderCache::new(config.order_cache_capacity as usize),
            flushing_order_cache: false,
            out_channels: vec![
                static_out(Ue4ChannelKind::Control),
                OutChannel::new(None, whole),
                static_out(Ue4ChannelKind::Snapshot),
            ],
            in_channels: vec![
                InChannel::static_channel(Ue4ChannelKind::Control),
                InChannel::unused(),
                InChannel::static_channel(Ue4ChannelKind::Snapshot),
            ],
            actor_channels: BTreeMap::new(),
            throttle: Throttle::new(config.net_speed_bytes_per_sec, config.desired_tick_rate_hz),
            send_buffer: Vec::new(),
            send_buffer_bits: 0,
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
        for (i, ch) in self.in_channels.iter().enumerate() {
            let depth = ch.counters.max_inrec_depth as u64;
            c.max_inrec_depth = c.max_inrec_depth.max(depth);
            let by_kind = match kind_of_index(i as u32) {
                Ue4ChannelKind::Actor => &mut c.max_inrec_depth_actor,
                Ue4ChannelKind::Control => &mut c.max_inrec_depth_control,
                Ue4ChannelKind::Snapshot => &mut c.max_inrec_depth_snapshot,
            };
            *by_kind = (*by_kind).max(depth);
            c.max_inrec_wait_us = c.max_inrec_wait_us.max(ch.counters.max_inrec_wait_us);
            c.total_inrec_wait_us += ch.counters.total_inrec_wait_us;
            c.duplicate_bunches += ch.counters.duplicate_bunches;
            c.partial_discarded += ch.counters.partial_discarded + ch.counters.too_large_discarded;
            c.skipped_bunches += ch.counters.skipped_bunches;
            c.bunch_errors += ch.counters.bunch_errors;
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

    /// Unacked reliable bunches over all channels (`NumOutRec` summed).
    pub fn num_out_rec(&self) -> usize {
        self.out_channels.iter().map(OutChannel::num_out_rec).sum()
    }

    /// The open actor channel of each actor, as `(actor, channel index)`.
    pub fn actor_channels(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.actor_channels.iter().map(|(a, c)| (*a, *c))
    }

    /// Deepest `InRec` each receiving channel index has had, by index.
    pub fn max_inrec_depth_by_channel(&self) -> Vec<usize> {
        self.in_channels.iter().map(|c| c.counters.max_inrec_depth).collect()
    }

    fn push(&self, events: &mut Vec<Event>, now: SimTime, kind: EventKind) {
        events.push(Event::new(now, kind));
    }

    fn keepalive_due(&self, now: SimTime) -> bool {
        self.last_send.is_none_or(|t| now.saturating_since(t).as_millis_f64() > self.config.keepalive_ms)
    }

    /// Bits a packet may spend on bunches, after the worst-case notify header and the
    /// termination bit.
    fn bunch_capacity_bits(&self) -> usize {
        (self.max_packet_bytes as usize - MAX_NOTIFY_HEADER_BYTES) * 8 - 1
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
                    self.config.channel_close_s = c.channel_close_s;
                }
            }
            PeerCommand::Burst => self.workload.burst(),
            PeerCommand::SendChunk { .. } | PeerCommand::TargetKbps(_) => {}
        }
    }

    fn set_reports_rtt_samples(&mut self, reports: bool) -> bool {
        self.reports_rtt = reports;
        true
    }

    /// Reliable messages sent and not yet acked; a closed connection has nothing left to drain.
    fn unacked_reliable(&self) -> usize {
        if self.closed.is_some() {
            0
        } else {
            self.unacked_pieces.len()
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
            self.send_message(now, m, events);
        }
        if self.closed.is_none() {
            self.close_idle_channels(now, events);
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
            if let Ok(pkt) = decode_packet_with(packet, self.max_packet_bytes) {
                let (side, seq, reason) = (self.side, pkt.header.seq.get() as u32, DiscardReason::Closed);
                self.push(events, now, EventKind::PacketDiscarded { side, seq, reason });
            }
            return;
        }
        match decode_packet_with(packet, self.max_packet_bytes) {
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
