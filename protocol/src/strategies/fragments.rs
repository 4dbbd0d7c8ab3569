//! The baseline the chunk system is measured against: packet fragmentation and reassembly.
//!
//! A block is sent as one big packet cut into fragments (reliable.io's fragment layout: `0x01`,
//! packet sequence u16 little-endian, fragment id u8, fragment count - 1 u8, then the data; all
//! fragments but the last are exactly the fragment size). The receiver only has something when
//! every fragment of one sequence arrived; fragments carry no acks of their own, so the sender
//! can only learn "the whole packet arrived" (a block ack naming the sequence) and otherwise
//! must send the whole block again under a new sequence. Losing any fragment loses the packet:
//! with 256 fragments at 1 % loss that is 1 - 0.99^256 = 92.4 % of attempts (the seed's figure).
//!
//! It shares [`ChunkConfig`] with the chunk system (fragment size = `slice_bytes`, at most
//! `min(max_slices, 256)` fragments, same bandwidth budget and ack rate limit), and the block
//! resend delay is `resend_delay_ms` (or RTT x 1.25) after the last fragment of an attempt.
//!
//! Loss estimate: all the sender learns is whether an attempt was acked, so it judges attempts
//! (once older than 2 x RTT + 100 ms after their last fragment, as in `reliability::loss`) and
//! reports the fragment loss that explains the share `f` of attempts never acked when fragments
//! are lost independently: `1 - (1 - f)^(1/n)` for attempts of `n` fragments (100 % when none was
//! acked). Only the side sending blocks judges anything.

use std::collections::VecDeque;

use thiserror::Error;

use crate::event::{Event, EventKind, MalformedReason, Side, SimTime, StatsSample};
use crate::link::IP_UDP_OVERHEAD_BYTES;
use crate::peer::{Peer, PeerCommand};
use crate::reliability::budget::TickBudget;
use crate::reliability::loss::LossWindow;
use crate::reliability::stats::StatsConfig;
use crate::strategies::chunks::{ChunkConfig, ChunkError};
use crate::workload::{check_payload, make_payload};

/// First byte of a fragment (as reliable.io).
pub const FRAGMENT_TAG: u8 = 0x01;
/// First byte of a block ack: the sequence of a packet reassembled whole.
pub const BLOCK_ACK_TAG: u8 = 0xCB;
/// Fragment header bytes.
pub const FRAGMENT_HEADER_BYTES: usize = 5;
/// Packets being reassembled at once; older ones are evicted.
pub const REASSEMBLY_ENTRIES: usize = 16;

/// A decoded baseline packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FragmentPacket {
    Fragment { seq: u16, id: u8, count: u16, data: Vec<u8> },
    BlockAck { seq: u16 },
}

/// Why bytes are not a valid baseline packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum FragmentError {
    #[error("shorter than its header")]
    Truncated,
    #[error("unknown packet tag {0:#04x}")]
    UnknownTag(u8),
    #[error("fragment {id} of {count} has {len} bytes")]
    BadLayout { id: u16, count: u16, len: usize },
}

fn malformed_reason(e: &FragmentError) -> MalformedReason {
    match e {
        FragmentError::Truncated => MalformedReason::Truncated,
        FragmentError::UnknownTag(_) => MalformedReason::Foreign,
        FragmentError::BadLayout { .. } => MalformedReason::BadPayload,
    }
}

/// Most fragments per block under `config`.
pub fn max_fragments(config: &ChunkConfig) -> usize {
    config.slice_limit().min(256)
}

/// Decodes any bytes, never panicking.
pub fn decode_fragment_packet(bytes: &[u8], config: &ChunkConfig) -> Result<FragmentPacket, FragmentError> {
    match bytes.first() {
        None => Err(FragmentError::Truncated),
        Some(&FRAGMENT_TAG) => {
            if bytes.len() < FRAGMENT_HEADER_BYTES {
                return Err(FragmentError::Truncated);
            }
            let seq = u16::from_le_bytes([bytes[1], bytes[2]]);
            let id = bytes[3];
            let count = bytes[4] as u16 + 1;
            let data = &bytes[FRAGMENT_HEADER_BYTES..];
            let size = config.slice_size();
            let last = id as u16 + 1 == count;
            let ok = (id as u16) < count
                && count as usize <= max_fragments(config)
                && if last { !data.is_empty() && data.len() <= size } else { data.len() == size };
            if !ok {
                return Err(FragmentError::BadLayout { id: id as u16, count, len: data.len() });
            }
            Ok(FragmentPacket::Fragment { seq, id, count, data: data.to_vec() })
        }
        Some(&BLOCK_ACK_TAG) => match bytes {
            [_, a, b] => Ok(FragmentPacket::BlockAck { seq: u16::from_le_bytes([*a, *b]) }),
            _ => Err(FragmentError::Truncated),
        },
        Some(&t) => Err(FragmentError::UnknownTag(t)),
    }
}

#[derive(Debug, Clone)]
struct Block {
    id: u32,
    data: Vec<u8>,
    num_fragments: usize,
    started: SimTime,
    attempt: u32,
    /// Sequence of the attempt being sent, its next fragment, and each finished attempt's
    /// (sequence, time its last fragment went out).
    seq: u16,
    next_fragment: usize,
    finished: Vec<(u16, SimTime)>,
}

/// Sends blocks as fragmented packets, resending whole blocks until one attempt is acked.
#[derive(Debug, Clone)]
pub struct FragmentSender {
    side: Side,
    config: ChunkConfig,
    queue: VecDeque<Vec<u8>>,
    current: Option<Block>,
    next_block: u32,
    next_seq: u16,
    budget: TickBudget,
    rtt_ms: Option<f64>,
    /// Finished attempts awaiting their verdict: (last fragment sent at, sequence, acked), and
    /// the verdicts with the fragment count of the latest attempt (module doc).
    unjudged: VecDeque<(SimTime, u16, bool)>,
    attempts: LossWindow,
    fragments_per_attempt: usize,
}

impl FragmentSender {
    pub fn new(side: Side, config: ChunkConfig) -> Self {
        Self {
            side,
            config,
            queue: VecDeque::new(),
            current: None,
            next_block: 0,
            next_seq: 0,
            budget: TickBudget::default(),
            rtt_ms: None,
            unjudged: VecDeque::new(),
            attempts: LossWindow::new(StatsConfig::default().loss_window),
            fragments_per_attempt: 1,
        }
    }

    /// The per-fragment loss implied by the attempts judged (module doc), in percent.
    pub fn loss_percent(&self) -> f64 {
        let f = self.attempts.percent() / 100.0;
        let n = self.fragments_per_attempt.max(1) as f64;
        (1.0 - (1.0 - f).max(0.0).powf(1.0 / n)) * 100.0
    }

    /// Whether any attempt has been judged yet (before, [`Self::loss_percent`] is no estimate).
    pub fn has_loss_verdict(&self) -> bool {
        self.attempts.judged() > 0
    }

    /// Judges the attempts older than the window: delivered when an ack named them.
    pub fn judge(&mut self, now: SimTime) {
        let window_us = StatsConfig::default().judge_window_us(self.rtt_ms);
        while let Some(&(done, _, acked)) = self.unjudged.front() {
            if now.0 < done.0.saturating_add(window_us) {
                break;
            }
            self.unjudged.pop_front();
            self.attempts.record(now, !acked);
        }
    }

    pub fn set_bandwidth_kbps(&mut self, kbps: f64) {
        self.config.bandwidth_kbps = kbps;
    }

    pub fn queue_block(&mut self, data: Vec<u8>) -> Result<(), ChunkError> {
        let max = self.config.slice_size() * max_fragments(&self.config);
        if data.is_empty() {
            return Err(ChunkError::Empty);
        }
        if data.len() > max {
            return Err(ChunkError::TooLarge { bytes: data.len(), max });
        }
        self.queue.push_back(data);
        Ok(())
    }

    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    pub fn rtt_ms(&self) -> Option<f64> {
        self.rtt_ms
    }

    fn bytes_per_second(&self) -> f64 {
        let k = self.config.bandwidth_kbps;
        if k.is_finite() && k > 0.0 {
            k * 125.0
        } else {
            0.0
        }
    }

    fn start_next(&mut self, now: SimTime, events: &mut Vec<Event>) {
        if self.current.is_some() {
            return;
        }
        let Some(data) = self.queue.pop_front() else { return };
        let n = self.config.slices_for(data.len());
        let id = self.next_block;
        self.next_block += 1;
        events.push(Event::new(
            now,
            EventKind::ChunkStarted { side: self.side, chunk: id, bytes: data.len() as u32, slices: n as u32 },
        ));
        let seq = self.next_seq;
        self.next_seq = seq.wrapping_add(1);
        self.current = Some(Block {
            id,
            data,
            num_fragments: n,
            started: now,
            attempt: 0,
            seq,
            next_fragment: 0,
            finished: Vec::new(),
        });
    }

    /// See [`crate::strategies::chunks::ChunkSender::begin_tick`]: the same budget rule.
    pub fn begin_tick(&mut self, now: SimTime, events: &mut Vec<Event>) {
        let one = (self.config.slice_size() + FRAGMENT_HEADER_BYTES) as f64 + IP_UDP_OVERHEAD_BYTES as f64;
        self.budget.begin(now, self.bytes_per_second(), one);
        self.start_next(now, events);
        self.budget.set_active(self.current.is_some());
    }

    pub fn end_tick(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.budget.end(now, self.side, events);
    }

    fn resend_delay_us(&self) -> u64 {
        let ms = match (self.config.rtt_resend, self.rtt_ms) {
            (true, Some(r)) => r * 1.25,
            _ => self.config.resend_delay_ms.max(0.0),
        };
        (ms * 1000.0).round() as u64
    }

    /// Writes the next fragment into `out`; returns its packet sequence, or `None` when nothing
    /// goes out this tick.
    pub fn next_packet(&mut self, now: SimTime, out: &mut Vec<u8>, events: &mut Vec<Event>) -> Option<u16> {
        self.start_next(now, events);
        let delay_us = self.resend_delay_us();
        let side = self.side;
        let size = self.config.slice_size();
        let b = self.current.as_mut()?;
        if b.next_fragment >= b.num_fragments {
            // Whole attempt out: wait for its ack, then send the whole block again.
            let (_, done) = *b.finished.last()?;
            if now.saturating_since(done).0 < delay_us {
                return None;
            }
            b.attempt += 1;
            b.seq = self.next_seq;
            self.next_seq = self.next_seq.wrapping_add(1);
            b.next_fragment = 0;
        }
        let i = b.next_fragment;
        let start = i * size;
        let end = (start + size).min(b.data.len());
        let cost = (FRAGMENT_HEADER_BYTES + end - start) as f64 + IP_UDP_OVERHEAD_BYTES as f64;
        if cost > self.budget.available() {
            return None;
        }
        out.push(FRAGMENT_TAG);
        out.extend_from_slice(&b.seq.to_le_bytes());
        out.push(i as u8);
        out.push((b.num_fragments - 1) as u8);
        out.extend_from_slice(&b.data[start..end]);
        self.budget.spend(cost);
        b.next_fragment += 1;
        events
            .push(Event::new(now, EventKind::SliceSent { side, chunk: b.id, slice: i as u32, resend: b.attempt > 0 }));
        if b.next_fragment == b.num_fragments {
            b.finished.push((b.seq, now));
            self.unjudged.push_back((now, b.seq, false));
            self.fragments_per_attempt = b.num_fragments;
            events.push(Event::new(
                now,
                EventKind::FragmentBlockSent {
                    side,
                    chunk: b.id,
                    attempt: b.attempt,
                    seq: b.seq as u32,
                    fragments: b.num_fragments as u32,
                },
            ));
        }
        Some(b.seq)
    }

    /// A block ack: completes the block if it names one of its attempts.
    pub fn process_ack(&mut self, now: SimTime, seq: u16, events: &mut Vec<Event>) {
        let side = self.side;
        let Some(b) = self.current.as_ref() else { return };
        let Some(&(_, done)) = b.finished.iter().find(|(s, _)| *s == seq) else { return };
        if let Some(a) = self.unjudged.iter_mut().find(|a| a.1 == seq) {
            a.2 = true;
        }
        let ms = now.saturating_since(done).as_millis_f64();
        self.rtt_ms = Some(self.rtt_ms.map_or(ms, |r| r + (ms - r) * 0.1));
        events.push(Event::new(now, EventKind::RttSample { side, rtt_ms: ms as f32 }));
        let elapsed_us = now.saturating_since(b.started).0;
        events.push(Event::new(
            now,
            EventKind::ChunkCompleted { side, chunk: b.id, bytes: b.data.len() as u32, elapsed_us },
        ));
        self.current = None;
    }
}

#[derive(Debug, Clone)]
struct Reassembly {
    seq: u16,
    count: usize,
    received: Vec<bool>,
    got: usize,
    data: Vec<u8>,
    len: usize,
    first_at: SimTime,
}

/// Reassembles fragmented packets; a packet exists only once all its fragments are in.
#[derive(Debug, Clone)]
pub struct FragmentReceiver {
    side: Side,
    config: ChunkConfig,
    entries: VecDeque<Reassembly>,
    /// Recently completed sequences: their fragments only ask for the ack again.
    completed: VecDeque<u16>,
    ack_pending: Option<u16>,
    last_ack_at: Option<SimTime>,
    /// Fragments that disagreed with their packet's entry.
    pub inconsistent: u64,
}

impl FragmentReceiver {
    pub fn new(side: Side, config: ChunkConfig) -> Self {
        Self {
            side,
            config,
            entries: VecDeque::new(),
            completed: VecDeque::new(),
            ack_pending: None,
            last_ack_at: None,
            inconsistent: 0,
        }
    }

    /// Handles one fragment; returns a whole packet `(data, microseconds since its first fragment)`.
    pub fn process_fragment(
        &mut self,
        now: SimTime,
        seq: u16,
        id: u8,
        count: u16,
        data: &[u8],
        events: &mut Vec<Event>,
    ) -> Option<(Vec<u8>, u64)> {
        if self.completed.contains(&seq) {
            self.ack_pending = Some(seq);
            return None;
        }
        let size = self.config.slice_size();
        let pos = match self.entries.iter().position(|e| e.seq == seq) {
            Some(p) => p,
            None => {
                if self.entries.len() >= REASSEMBLY_ENTRIES {
                    self.entries.pop_front();
                }
                let n = count as usize;
                self.entries.push_back(Reassembly {
                    seq,
                    count: n,
                    received: vec![false; n],
                    got: 0,
                    data: vec![0; n * size],
                    len: 0,
                    first_at: now,
                });
                self.entries.len() - 1
            }
        };
        let e = &mut self.entries[pos];
        let i = id as usize;
        if e.count != count as usize || i >= e.count {
            self.inconsistent += 1;
            return None;
        }
        if e.received[i] {
            return None;
        }
        e.received[i] = true;
        e.got += 1;
        e.data[i * size..i * size + data.len()].copy_from_slice(data);
        if i + 1 == e.count {
            e.len = i * size + data.len();
        }
        if e.got < e.count {
            return None;
        }
        let e = self.entries.remove(pos)?;
        if self.completed.len() >= REASSEMBLY_ENTRIES {
            self.completed.pop_front();
        }
        self.completed.push_back(seq);
        self.ack_pending = Some(seq);
        events.push(Event::new(now, EventKind::FragmentReassembled { side: self.side, seq: seq as u32 }));
        let mut data = e.data;
        data.truncate(e.len);
        Some((data, now.saturating_since(e.first_at).0))
    }

    /// The block ack owed, rate limited like the chunk receiver's.
    pub fn poll_ack(&mut self, now: SimTime) -> Option<u16> {
        let seq = self.ack_pending?;
        let iv = (self.config.ack_interval_ms.max(0.0) * 1000.0).round() as u64;
        if self.last_ack_at.is_some_and(|t| now.saturating_since(t).0 < iv) {
            return None;
        }
        self.ack_pending = None;
        self.last_ack_at = Some(now);
        Some(seq)
    }
}

/// The `fragments` strategy endpoint: side A sources blocks of `chunk_kib` back to back, side B
/// reassembles and acks.
#[derive(Debug, Clone)]
pub struct FragmentPeer {
    side: Side,
    config: ChunkConfig,
    sender: FragmentSender,
    receiver: FragmentReceiver,
    block_bytes: usize,
    next_payload_id: u64,
    next_delivery_id: u64,
    tick_open: bool,
}

impl FragmentPeer {
    pub fn new(side: Side, config: ChunkConfig, block_bytes: usize) -> Self {
        Self {
            side,
            config,
            sender: FragmentSender::new(side, config),
            receiver: FragmentReceiver::new(side, config),
            block_bytes: block_bytes.min(config.slice_size() * max_fragments(&config)),
            next_payload_id: 0,
            next_delivery_id: 0,
            tick_open: false,
        }
    }
}

impl Peer for FragmentPeer {
    fn on_tick(&mut self, now: SimTime, events: &mut Vec<Event>) {
        if self.block_bytes > 0 && self.sender.queued() == 0 {
            let data = make_payload(self.side, self.next_payload_id, self.block_bytes as u32);
            if self.sender.queue_block(data).is_ok() {
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
        if let Some(seq) = self.receiver.poll_ack(now) {
            out.push(BLOCK_ACK_TAG);
            out.extend_from_slice(&seq.to_le_bytes());
            return Some(seq as u32);
        }
        if let Some(seq) = self.sender.next_packet(now, out, events) {
            return Some(seq as u32);
        }
        self.sender.end_tick(now, events);
        self.tick_open = false;
        None
    }

    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        let side = self.side;
        match decode_fragment_packet(packet, &self.config) {
            Err(e) => {
                events.push(Event::new(now, EventKind::Malformed { side, reason: malformed_reason(&e) }));
            }
            Ok(FragmentPacket::BlockAck { seq }) => {
                events.push(Event::new(
                    now,
                    EventKind::PacketReceived { side, seq: seq as u32, bytes: packet.len() as u32 },
                ));
                self.sender.process_ack(now, seq, events);
            }
            Ok(FragmentPacket::Fragment { seq, id, count, data }) => {
                events.push(Event::new(
                    now,
                    EventKind::PacketReceived { side, seq: seq as u32, bytes: packet.len() as u32 },
                ));
                if let Some((block, elapsed_us)) = self.receiver.process_fragment(now, seq, id, count, &data, events) {
                    let payload_id = check_payload(side.other(), &block);
                    // A later attempt of a block already delivered is a duplicate, not a new block.
                    if payload_id.is_some_and(|p| p < self.next_delivery_id) {
                        return;
                    }
                    if let Some(p) = payload_id {
                        self.next_delivery_id = p + 1;
                    }
                    events.push(Event::new(
                        now,
                        EventKind::ChunkDelivered {
                            side,
                            chunk: payload_id.unwrap_or(u64::MAX) as u32,
                            bytes: block.len() as u32,
                            elapsed_us,
                            payload_id,
                        },
                    ));
                }
            }
        }
    }

    fn update(&mut self, now: SimTime, _events: &mut Vec<Event>) {
        self.sender.judge(now);
    }

    fn stats(&self) -> StatsSample {
        let rtt = self.sender.rtt_ms().unwrap_or(0.0) as f32;
        let loss_percent = self.sender.loss_percent() as f32;
        let no_loss_verdict = !self.sender.has_loss_verdict();
        StatsSample { rtt_ms: rtt, rtt_display_ms: rtt, loss_percent, no_loss_verdict, ..StatsSample::default() }
    }

    /// Only the target bandwidth changes while running (a live `chunk.bandwidth_kbps` edit
    /// arrives as `Reconfigure`, `set_chunk_bandwidth_kbps` as `TargetKbps`).
    fn command(&mut self, _now: SimTime, command: PeerCommand) {
        match command {
            PeerCommand::TargetKbps(kbps) => self.sender.set_bandwidth_kbps(kbps),
            PeerCommand::Reconfigure(live) => {
                if let Some(c) = live.own::<ChunkConfig>() {
                    self.sender.set_bandwidth_kbps(c.bandwidth_kbps);
                }
            }
            PeerCommand::Burst | PeerCommand::SendChunk { .. } => {}
        }
    }

    fn unacked_reliable(&self) -> usize {
        0
    }
}
