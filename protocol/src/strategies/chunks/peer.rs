//! The `chunks` strategy endpoint: a chunk sender and a chunk receiver behind one socket.
//!
//! As in the seed's client/server setup, each endpoint has a sender and a receiver, one per
//! direction. In the simulation, side A is the chunk source: it keeps one chunk queued behind the
//! one in flight, so chunks go back to back for the whole run; its content is the workload's
//! self-identifying payload so the receiver can prove each chunk intact and in order. Side B
//! receives, reads each chunk at once and acks.

use super::packets::{decode_packet, write_ack, ChunkPacket, PacketError};
use super::{ChunkConfig, ChunkReceiver, ChunkSender};
use crate::event::{DiscardReason, Event, EventKind, MalformedReason, Side, SimTime, StatsSample};
use crate::peer::{Peer, PeerCommand};
use crate::reliability::stats::BandwidthMeter;
use crate::wire::bits::BitError;
use crate::workload::{check_payload, make_payload};

/// Bandwidth figures are re-measured over this interval.
const BANDWIDTH_INTERVAL_MS: f64 = 100.0;
const BANDWIDTH_SMOOTHING: f64 = 0.1;

/// Maps a decode error to the malformed-event reason.
pub fn malformed_reason(e: &PacketError) -> MalformedReason {
    match e {
        PacketError::Empty | PacketError::Bits(BitError::Overflow { .. }) => MalformedReason::Truncated,
        PacketError::UnknownTag(_) => MalformedReason::Foreign,
        _ => MalformedReason::BadPayload,
    }
}

/// One endpoint of the chunk transfer.
#[derive(Debug, Clone)]
pub struct ChunkPeer {
    side: Side,
    config: ChunkConfig,
    sender: ChunkSender,
    receiver: ChunkReceiver,
    seq: u16,
    /// Sizes of the chunks this side sources, used in turn (empty = none).
    chunk_sizes: Vec<usize>,
    next_payload_id: u64,
    tick_open: bool,
    delivered: u64,
    corrupt: u64,
    malformed: u64,
    sent_bw: BandwidthMeter,
    received_bw: BandwidthMeter,
}

impl ChunkPeer {
    /// An endpoint that sources chunks of `chunk_bytes` back to back (0 = receive only). Sizes
    /// above the configured maximum are clamped to it.
    pub fn new(side: Side, config: ChunkConfig, chunk_bytes: usize) -> Self {
        let sizes = if chunk_bytes > 0 { vec![chunk_bytes] } else { Vec::new() };
        Self::with_chunk_sizes(side, config, sizes)
    }

    /// An endpoint that sources chunks with the given sizes in turn, cycling (soaks use mixed
    /// sizes, including ones that are not a multiple of the slice size). Zero sizes are skipped
    /// and sizes above the maximum are clamped to it.
    pub fn with_chunk_sizes(side: Side, config: ChunkConfig, sizes: Vec<usize>) -> Self {
        let max = config.max_chunk_bytes();
        Self {
            side,
            config,
            sender: ChunkSender::new(side, config),
            receiver: ChunkReceiver::new(side, config),
            seq: 0,
            chunk_sizes: sizes.into_iter().filter(|&n| n > 0).map(|n| n.min(max)).collect(),
            next_payload_id: 0,
            tick_open: false,
            delivered: 0,
            corrupt: 0,
            malformed: 0,
            sent_bw: BandwidthMeter::default(),
            received_bw: BandwidthMeter::default(),
        }
    }

    pub fn sender(&self) -> &ChunkSender {
        &self.sender
    }

    pub fn sender_mut(&mut self) -> &mut ChunkSender {
        &mut self.sender
    }

    pub fn receiver(&self) -> &ChunkReceiver {
        &self.receiver
    }

    /// Chunks read intact / read corrupt / packets rejected as malformed.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
    pub fn corrupt(&self) -> u64 {
        self.corrupt
    }
    pub fn malformed(&self) -> u64 {
        self.malformed
    }

    fn next_seq(&mut self) -> u16 {
        let s = self.seq;
        self.seq = self.seq.wrapping_add(1);
        s
    }
}

impl Peer for ChunkPeer {
    fn on_tick(&mut self, now: SimTime, events: &mut Vec<Event>) {
        if !self.chunk_sizes.is_empty() && self.sender.queued() == 0 {
            let size = self.chunk_sizes[(self.next_payload_id % self.chunk_sizes.len() as u64) as usize];
            let data = make_payload(self.side, self.next_payload_id, size as u32);
            if self.sender.queue_chunk(data).is_ok() {
                self.next_payload_id += 1;
            }
        }
        self.sender.begin_tick(now, events);
        self.tick_open = true;
    }

    fn poll_send(&mut self, now: SimTime, out: &mut Vec<u8>, events: &mut Vec<Event>) -> Option<u32> {
        if !self.tick_open {
            return None;
        }
        let seq = self.seq;
        if let Some(ack) = self.receiver.poll_ack(now, seq) {
            if write_ack(&ack, &self.config, out).is_ok() {
                self.next_seq();
                self.sent_bw.add_packet(out.len());
                return Some(seq as u32);
            }
            out.clear();
        }
        if self.sender.next_packet(now, seq, out, events) {
            self.next_seq();
            self.sent_bw.add_packet(out.len());
            return Some(seq as u32);
        }
        self.sender.end_tick(now, events);
        self.tick_open = false;
        None
    }

    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        let side = self.side;
        let decoded = match decode_packet(packet, &self.config) {
            Ok(p) => p,
            Err(e) => {
                self.malformed += 1;
                events.push(Event::new(now, EventKind::Malformed { side, reason: malformed_reason(&e) }));
                return;
            }
        };
        self.received_bw.add_packet(packet.len());
        match decoded {
            ChunkPacket::Slice(s) => {
                let at = events.len();
                events.push(Event::new(
                    now,
                    EventKind::PacketReceived { side, seq: s.seq as u32, bytes: packet.len() as u32 },
                ));
                self.receiver.process_slice(now, &s, events);
                // A slice the receiver ignored is never acked: discarded, not received.
                if events[at + 1..].iter().any(|e| matches!(e.kind, EventKind::SliceIgnored { .. })) {
                    let reason = DiscardReason::SliceIgnored;
                    events[at].kind = EventKind::PacketDiscarded { side, seq: s.seq as u32, reason };
                }
                if let Some((chunk, data, elapsed_us)) = self.receiver.read(now) {
                    let payload_id = check_payload(side.other(), &data);
                    if payload_id.is_some() {
                        self.delivered += 1;
                    } else {
                        self.corrupt += 1;
                    }
                    events.push(Event::new(
                        now,
                        EventKind::ChunkDelivered {
                            side,
                            chunk: chunk as u32,
                            bytes: data.len() as u32,
                            elapsed_us,
                            payload_id,
                        },
                    ));
                }
            }
            ChunkPacket::Ack(a) => {
                events.push(Event::new(
                    now,
                    EventKind::PacketReceived { side, seq: a.seq as u32, bytes: packet.len() as u32 },
                ));
                self.sender.process_ack(now, &a, events);
            }
        }
    }

    fn update(&mut self, now: SimTime, _events: &mut Vec<Event>) {
        self.sender.judge(now);
        self.sent_bw.update(now, BANDWIDTH_INTERVAL_MS, BANDWIDTH_SMOOTHING);
        self.received_bw.update(now, BANDWIDTH_INTERVAL_MS, BANDWIDTH_SMOOTHING);
    }

    fn stats(&self) -> StatsSample {
        let rtt = self.sender.rtt_ms().unwrap_or(0.0) as f32;
        StatsSample {
            rtt_ms: rtt,
            rtt_display_ms: rtt,
            loss_percent: self.sender.loss_percent() as f32,
            // A receive-only endpoint (and a sender before its first verdict) judges nothing.
            no_loss_verdict: !self.sender.has_loss_verdict(),
            sent_kbps: self.sent_bw.kbps() as f32,
            received_kbps: self.received_bw.kbps() as f32,
            ..StatsSample::default()
        }
    }

    fn command(&mut self, _now: SimTime, command: PeerCommand) {
        match command {
            PeerCommand::Reconfigure(live) => {
                if let Some(c) = live.own::<ChunkConfig>() {
                    self.reconfigure(c);
                }
            }
            PeerCommand::SendChunk { bytes } => self.send_chunk(bytes),
            PeerCommand::TargetKbps(kbps) => self.set_target_bandwidth_kbps(kbps),
            PeerCommand::Burst => {}
        }
    }

    fn unacked_reliable(&self) -> usize {
        0
    }
}

impl ChunkPeer {
    fn reconfigure(&mut self, c: &ChunkConfig) {
        if c.bandwidth_kbps != self.config.bandwidth_kbps {
            self.set_target_bandwidth_kbps(c.bandwidth_kbps);
        }
        if (c.resend_delay_ms, c.rtt_resend, c.initial_burst)
            != (self.config.resend_delay_ms, self.config.rtt_resend, self.config.initial_burst)
        {
            self.sender.set_resend_policy(c.resend_delay_ms, c.rtt_resend, c.initial_burst);
            self.config.resend_delay_ms = c.resend_delay_ms;
            self.config.rtt_resend = c.rtt_resend;
            self.config.initial_burst = c.initial_burst;
        }
    }

    fn send_chunk(&mut self, bytes: usize) {
        let size = bytes.min(self.config.max_chunk_bytes());
        if size == 0 {
            return;
        }
        let data = make_payload(self.side, self.next_payload_id, size as u32);
        if self.sender.queue_chunk(data).is_ok() {
            self.next_payload_id += 1;
        }
    }

    /// Changes the sender's target bandwidth from now on.
    pub fn set_target_bandwidth_kbps(&mut self, kbps: f64) {
        self.sender.set_bandwidth_kbps(kbps);
        self.config.bandwidth_kbps = kbps;
    }
}
