//! The chunk receiver: reassembles one chunk at a time and answers with rate-limited acks.
//!
//! It starts at chunk 0. Every slice is checked against the chunk being received (chunk id,
//! slice count, slice id in range, last-slice size); anything else is ignored and counted. When
//! all slices are in, the chunk is ready to read; reading it advances to the next chunk id.
//!
//! Acks carry the whole bitfield, so losing one costs nothing. The seed lists the three ways a
//! chunk system hangs, all handled here: a duplicate slice still asks for an ack (the first ack
//! may have been lost); slices arriving while the chunk is ready still ask for an ack; and slices
//! of the previous chunk (already read) are answered with an all-set ack for that chunk, because
//! the sender may not know yet that it is done. Acks never go out one-for-one: at most one per
//! `ack_interval_ms`, whatever arrives, so a slice flood cannot be amplified.

use super::packets::{AckPacket, SlicePacket};
use super::ChunkConfig;
use crate::event::{Event, EventKind, Side, SimTime, SliceIgnoreReason};

/// What the receiver saw, for tests and panels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReceiverCounters {
    /// Slices stored (first arrival).
    pub slices_stored: u64,
    /// Slices of the current chunk received again.
    pub duplicates: u64,
    /// Slices for a chunk id that is neither current nor the previous one.
    pub wrong_chunk: u64,
    /// Slice count (or last-slice size) disagreeing with what the chunk already has.
    pub inconsistent: u64,
    /// Slice id not below the slice count.
    pub out_of_range: u64,
    /// Slices of a chunk already complete (ready or read): answered with an ack only.
    pub after_complete: u64,
    pub acks_sent: u64,
    pub chunks_received: u64,
}

/// The receiving end point of the chunk system.
#[derive(Debug, Clone)]
pub struct ChunkReceiver {
    side: Side,
    config: ChunkConfig,
    chunk_id: u16,
    receiving: bool,
    ready: bool,
    num_slices: usize,
    num_received: usize,
    received: Vec<bool>,
    data: Vec<u8>,
    last_len: usize,
    first_slice_at: SimTime,
    /// The chunk read last: (id, slice count).
    previous: Option<(u16, u32)>,
    /// Chunk id an ack is owed for.
    ack_pending: Option<u16>,
    last_ack_at: Option<SimTime>,
    counters: ReceiverCounters,
}

impl ChunkReceiver {
    pub fn new(side: Side, config: ChunkConfig) -> Self {
        Self {
            side,
            config,
            chunk_id: 0,
            receiving: false,
            ready: false,
            num_slices: 0,
            num_received: 0,
            received: Vec::new(),
            data: Vec::new(),
            last_len: 0,
            first_slice_at: SimTime::ZERO,
            previous: None,
            ack_pending: None,
            last_ack_at: None,
            counters: ReceiverCounters::default(),
        }
    }

    /// Changes the ack rate limit live.
    pub fn set_ack_interval_ms(&mut self, ms: f64) {
        self.config.ack_interval_ms = ms;
    }

    /// The chunk id being received (or the next one expected).
    pub fn chunk_id(&self) -> u16 {
        self.chunk_id
    }

    pub fn is_receiving(&self) -> bool {
        self.receiving
    }

    /// True when a whole chunk waits to be read.
    pub fn is_ready(&self) -> bool {
        self.ready
    }

    /// Per-slice received flags of the chunk being received, for slice-map views.
    pub fn received_slices(&self) -> &[bool] {
        &self.received
    }

    pub fn counters(&self) -> ReceiverCounters {
        self.counters
    }

    /// Handles one decoded slice packet.
    pub fn process_slice(&mut self, now: SimTime, p: &SlicePacket, events: &mut Vec<Event>) {
        if p.chunk_id != self.chunk_id {
            match self.previous {
                Some((id, n)) if id == p.chunk_id && n == p.num_slices && p.slice_id < n => {
                    self.counters.after_complete += 1;
                    self.ack_pending = Some(id);
                }
                _ => {
                    self.counters.wrong_chunk += 1;
                    self.ignored(now, p, SliceIgnoreReason::WrongChunk, events);
                }
            }
            return;
        }
        if p.slice_id >= p.num_slices {
            self.counters.out_of_range += 1;
            self.ignored(now, p, SliceIgnoreReason::OutOfRange, events);
            return;
        }
        let slice_size = self.config.slice_size();
        let i = p.slice_id as usize;
        let n = p.num_slices as usize;
        let last = i + 1 == n;
        if self.receiving || self.ready {
            if n != self.num_slices || (last && self.received[i] && p.data.len() != self.last_len) {
                self.counters.inconsistent += 1;
                self.ignored(now, p, SliceIgnoreReason::Inconsistent, events);
                return;
            }
        } else {
            if n > self.config.slice_limit() || p.data.len() > slice_size || (!last && p.data.len() != slice_size) {
                self.counters.inconsistent += 1;
                self.ignored(now, p, SliceIgnoreReason::Inconsistent, events);
                return;
            }
            self.receiving = true;
            self.num_slices = n;
            self.num_received = 0;
            self.received = vec![false; n];
            self.data = vec![0; n * slice_size];
            self.first_slice_at = now;
        }
        if (!last && p.data.len() != slice_size) || p.data.is_empty() || p.data.len() > slice_size {
            self.counters.inconsistent += 1;
            self.ignored(now, p, SliceIgnoreReason::Inconsistent, events);
            return;
        }
        // Duplicates and slices of a complete chunk still owe an ack: the last one may be lost.
        self.ack_pending = Some(self.chunk_id);
        if self.ready {
            self.counters.after_complete += 1;
            return;
        }
        if self.received[i] {
            self.counters.duplicates += 1;
            return;
        }
        self.data[i * slice_size..i * slice_size + p.data.len()].copy_from_slice(&p.data);
        if last {
            self.last_len = p.data.len();
        }
        self.received[i] = true;
        self.num_received += 1;
        self.counters.slices_stored += 1;
        events.push(Event::new(
            now,
            EventKind::SliceReceived { side: self.side, chunk: self.chunk_id as u32, slice: p.slice_id },
        ));
        if self.num_received == self.num_slices {
            self.receiving = false;
            self.ready = true;
            self.counters.chunks_received += 1;
        }
    }

    fn ignored(&self, now: SimTime, p: &SlicePacket, reason: SliceIgnoreReason, events: &mut Vec<Event>) {
        events.push(Event::new(
            now,
            EventKind::SliceIgnored { side: self.side, chunk: p.chunk_id as u32, slice: p.slice_id, reason },
        ));
    }

    /// Takes the ready chunk: `(chunk id, data, microseconds since its first slice)`, and moves on
    /// to the next chunk id.
    pub fn read(&mut self, now: SimTime) -> Option<(u16, Vec<u8>, u64)> {
        if !self.ready {
            return None;
        }
        let size = (self.num_slices - 1) * self.config.slice_size() + self.last_len;
        let mut data = std::mem::take(&mut self.data);
        data.truncate(size);
        let id = self.chunk_id;
        self.previous = Some((id, self.num_slices as u32));
        self.chunk_id = id.wrapping_add(1);
        self.ready = false;
        self.receiving = false;
        self.num_slices = 0;
        self.num_received = 0;
        self.received.clear();
        self.last_len = 0;
        Some((id, data, now.saturating_since(self.first_slice_at).0))
    }

    /// The ack owed, if one is owed and the rate limit allows one at `now`.
    pub fn poll_ack(&mut self, now: SimTime, seq: u16) -> Option<AckPacket> {
        let id = self.ack_pending?;
        let interval_us = (self.config.ack_interval_ms.max(0.0) * 1000.0).round() as u64;
        if self.last_ack_at.is_some_and(|t| now.saturating_since(t).0 < interval_us) {
            return None;
        }
        self.ack_pending = None;
        let ack = if id == self.chunk_id && (self.receiving || self.ready) {
            AckPacket { seq, chunk_id: id, num_slices: self.num_slices as u32, acked: self.received.clone() }
        } else {
            let (pid, n) = self.previous.filter(|(pid, _)| *pid == id)?;
            AckPacket { seq, chunk_id: pid, num_slices: n, acked: vec![true; n as usize] }
        };
        self.last_ack_at = Some(now);
        self.counters.acks_sent += 1;
        Some(ack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(chunk_id: u16, slice_id: u32, num_slices: u32, len: usize) -> SlicePacket {
        SlicePacket { seq: 0, chunk_id, slice_id, num_slices, data: vec![slice_id as u8; len] }
    }

    fn ms(t: u64) -> SimTime {
        SimTime(t * 1000)
    }

    #[test]
    fn slices_that_do_not_fit_the_chunk_are_ignored_counted_and_reported() {
        let mut r = ChunkReceiver::new(Side::B, ChunkConfig::default());
        let mut ev = Vec::new();
        r.process_slice(ms(0), &slice(0, 0, 3, 1024), &mut ev);
        r.process_slice(ms(1), &slice(5, 1, 3, 1024), &mut ev); // wrong chunk
        r.process_slice(ms(2), &slice(0, 1, 4, 1024), &mut ev); // slice count differs
        r.process_slice(ms(3), &slice(0, 7, 3, 1024), &mut ev); // out of range
        let c = r.counters();
        assert_eq!((c.slices_stored, c.wrong_chunk, c.inconsistent, c.out_of_range), (1, 1, 1, 1));
        let reasons: Vec<_> = ev
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::SliceIgnored { reason, .. } => Some(reason),
                _ => None,
            })
            .collect();
        use SliceIgnoreReason::*;
        assert_eq!(reasons, vec![WrongChunk, Inconsistent, OutOfRange]);
    }

    #[test]
    fn the_seeds_three_hangs_are_answered_with_acks() {
        let mut r = ChunkReceiver::new(Side::B, ChunkConfig::default());
        let mut ev = Vec::new();
        r.process_slice(ms(0), &slice(0, 0, 2, 1024), &mut ev);
        assert_eq!(r.poll_ack(ms(0), 0).map(|a| a.acked), Some(vec![true, false]));
        // 1. A duplicate still owes an ack (the first one may have been lost).
        r.process_slice(ms(60), &slice(0, 0, 2, 1024), &mut ev);
        assert_eq!(r.poll_ack(ms(60), 1).map(|a| a.acked), Some(vec![true, false]));
        r.process_slice(ms(120), &slice(0, 1, 2, 10), &mut ev);
        assert!(r.is_ready());
        assert_eq!(r.poll_ack(ms(120), 2).map(|a| a.acked), Some(vec![true, true]));
        // 2. While the chunk waits to be read, its slices are still acked.
        r.process_slice(ms(180), &slice(0, 1, 2, 10), &mut ev);
        assert_eq!(r.poll_ack(ms(180), 3).map(|a| (a.chunk_id, a.acked)), Some((0, vec![true, true])));
        let (id, data, _) = r.read(ms(180)).expect("ready");
        assert_eq!((id, data.len()), (0, 1034));
        assert_eq!(r.chunk_id(), 1);
        // 3. After the read, slices of the previous chunk get an all-set ack for it.
        r.process_slice(ms(240), &slice(0, 0, 2, 1024), &mut ev);
        assert_eq!(r.poll_ack(ms(240), 4).map(|a| (a.chunk_id, a.acked)), Some((0, vec![true, true])));
        // Nothing owed: nothing sent.
        assert_eq!(r.poll_ack(ms(400), 5), None);
    }

    #[test]
    fn acks_wait_for_the_interval_whatever_arrives() {
        let mut r = ChunkReceiver::new(Side::B, ChunkConfig::default());
        let mut ev = Vec::new();
        r.process_slice(ms(0), &slice(0, 0, 4, 1024), &mut ev);
        assert!(r.poll_ack(ms(0), 0).is_some());
        r.process_slice(ms(10), &slice(0, 1, 4, 1024), &mut ev);
        assert!(r.poll_ack(ms(10), 1).is_none());
        assert!(r.poll_ack(ms(49), 1).is_none());
        assert_eq!(r.poll_ack(ms(50), 1).map(|a| a.acked), Some(vec![true, true, false, false]));
    }
}
