//! The chunk sender: one chunk in flight, a queue in front, slices sent round-robin within a
//! byte budget until the receiver's ack bitfield covers them all.
//!
//! Call order per send tick: [`ChunkSender::begin_tick`] (adds `bandwidth x dt` to the budget and
//! starts the next queued chunk), then [`ChunkSender::next_packet`] until it returns `None`, then
//! [`ChunkSender::end_tick`] (reports the tick's budget). Acks go to [`ChunkSender::process_ack`]
//! whenever they arrive.
//!
//! RTT: the chunk protocol has no packet acks of its own, so the sender measures the time from a
//! slice's send to the ack packet that first marks it, taking only slices sent exactly once
//! (Karn's rule: a resent slice's ack is ambiguous) and the smallest such sample per ack packet
//! (the freshest slice). The figure includes the receiver's ack rate limit, which is what a resend
//! timer has to wait for anyway.
//!
//! Loss estimate: the share of slice *sends* judged lost. The ack bitfield says which slices
//! arrived, not which send of a slice did, so when a slice is first marked acked the ack is
//! credited to one send: the latest sent at least the shortest of the last 8 send-to-ack times
//! before the ack (a later one could not have been answered yet; behind a filling queue that time
//! grows, so only recent ones count), or the latest before the ack when none is that old. Earlier
//! sends of the slice are judged lost then, the credited one delivered; sends too recent to have
//! caused the ack are not judged (their fate is unknown: the receiver already had the slice). A
//! send whose slice is still unacked once it is older than the judging window of every other
//! strategy (`reliability::loss`: 2 x RTT + 100 ms, 1.1 s before an RTT sample) is judged lost.
//! Crediting the slice to every send of it, as this did before, read a rate cap's 49 % of dropped
//! slices as 34 %: a resent slice's earlier, dropped sends counted as delivered once a later send
//! got through. Only the side sending slices judges anything.

use std::collections::VecDeque;

use super::packets::{slice_packet_bytes, write_slice, AckPacket, SlicePacket};
use super::{ChunkConfig, ChunkError};
use crate::event::{Event, EventKind, Side, SimTime};
use crate::link::IP_UDP_OVERHEAD_BYTES;
use crate::reliability::budget::TickBudget;
use crate::reliability::loss::LossWindow;
use crate::reliability::stats::StatsConfig;

/// Budget left over from one tick is capped at this much sending time (or one full slice
/// packet), so an idle sender cannot save up a burst; the initial burst is the explicit option.
/// EWMA factor of the sender's RTT estimate.
const RTT_SMOOTHING: f64 = 0.1;
/// The seed's RTT-based resend delay factor.
const RTT_RESEND_FACTOR: f64 = 1.25;
/// Send-to-ack times kept to judge which send an ack answers (module doc): few enough to follow
/// a queue that fills or drains within a second or two.
const RECENT_SAMPLES: usize = 8;

/// What the sender did, for tests and panels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SenderCounters {
    pub chunks_started: u64,
    pub chunks_completed: u64,
    pub slices_sent: u64,
    pub slices_resent: u64,
    pub acks_received: u64,
    /// Acks for another chunk (or another slice count) than the one in flight.
    pub acks_ignored: u64,
    /// Slice packet bytes sent (without IP+UDP).
    pub bytes_sent: u64,
}

#[derive(Debug, Clone)]
struct InFlight {
    id: u16,
    data: Vec<u8>,
    num_slices: usize,
    acked: Vec<bool>,
    num_acked: usize,
    current: usize,
    last_sent: Vec<Option<SimTime>>,
    send_count: Vec<u32>,
    /// Per slice: the ids of its sends (see [`ChunkSender::judge`]), oldest first.
    sends: Vec<Vec<u64>>,
    started: SimTime,
    /// Initial burst: slices still to send in the burst, then the end of the wait after it.
    burst_left: usize,
    hold_until: SimTime,
}

/// The sending end point of the chunk system.
#[derive(Debug, Clone)]
pub struct ChunkSender {
    side: Side,
    config: ChunkConfig,
    queue: VecDeque<Vec<u8>>,
    current: Option<InFlight>,
    next_chunk_id: u16,
    budget: TickBudget,
    rtt_ms: Option<f64>,
    counters: SenderCounters,
    /// Slice sends awaiting their loss verdict, in send order; the first has id `first_unjudged`.
    unjudged: VecDeque<SendVerdict>,
    first_unjudged: u64,
    /// The last [`RECENT_SAMPLES`] send-to-ack times (the RTT samples), in microseconds, oldest
    /// first: the shortest of them is how soon an ack can follow its send now.
    recent_ack_us: VecDeque<u64>,
    loss: LossWindow,
    /// Slices one ack newly marked (reused between acks).
    newly_acked: Vec<usize>,
}

/// One slice send awaiting its loss verdict.
#[derive(Debug, Clone, Copy)]
struct SendVerdict {
    sent_at: SimTime,
    /// `Some(lost)` once its slice's ack settled (and judged) it; `None` while the slice is unacked.
    settled: Option<bool>,
    /// Sent too shortly before its slice's ack to have caused it: not judged.
    unknown: bool,
}

impl ChunkSender {
    pub fn new(side: Side, config: ChunkConfig) -> Self {
        Self {
            side,
            config,
            queue: VecDeque::new(),
            current: None,
            next_chunk_id: 0,
            budget: TickBudget::default(),
            rtt_ms: None,
            counters: SenderCounters::default(),
            unjudged: VecDeque::new(),
            first_unjudged: 0,
            recent_ack_us: VecDeque::with_capacity(RECENT_SAMPLES),
            loss: LossWindow::new(StatsConfig::default().loss_window),
            newly_acked: Vec::new(),
        }
    }

    pub fn config(&self) -> &ChunkConfig {
        &self.config
    }

    /// Changes the target bandwidth from the next tick on (live).
    pub fn set_bandwidth_kbps(&mut self, kbps: f64) {
        self.config.bandwidth_kbps = kbps;
    }

    /// Changes the resend policy live; the slice layout (`slice_bytes`, `max_slices`) is kept
    /// because the receiver decodes with it.
    pub fn set_resend_policy(&mut self, resend_delay_ms: f64, rtt_resend: bool, initial_burst: bool) {
        self.config.resend_delay_ms = resend_delay_ms;
        self.config.rtt_resend = rtt_resend;
        self.config.initial_burst = initial_burst;
    }

    /// Queues a chunk behind the one in flight.
    pub fn queue_chunk(&mut self, data: Vec<u8>) -> Result<(), ChunkError> {
        if data.is_empty() {
            return Err(ChunkError::Empty);
        }
        let max = self.config.max_chunk_bytes();
        if data.len() > max {
            return Err(ChunkError::TooLarge { bytes: data.len(), max });
        }
        self.queue.push_back(data);
        Ok(())
    }

    /// Chunks waiting behind the one in flight.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    pub fn is_sending(&self) -> bool {
        self.current.is_some()
    }

    /// Wire id of the chunk in flight, or of the next one when idle.
    pub fn chunk_id(&self) -> u16 {
        self.current.as_ref().map_or(self.next_chunk_id, |c| c.id)
    }

    /// Per-slice acked flags of the chunk in flight (empty when idle), for slice-map views.
    pub fn acked_slices(&self) -> &[bool] {
        self.current.as_ref().map_or(&[], |c| &c.acked)
    }

    /// Smoothed send-to-ack time, once measured.
    pub fn rtt_ms(&self) -> Option<f64> {
        self.rtt_ms
    }

    pub fn counters(&self) -> SenderCounters {
        self.counters
    }

    /// Share of judged slice sends never acked (module doc), in percent.
    pub fn loss_percent(&self) -> f64 {
        self.loss.percent()
    }

    /// Whether any send has been judged yet (before, [`Self::loss_percent`] is no estimate).
    pub fn has_loss_verdict(&self) -> bool {
        self.loss.judged() > 0
    }

    /// Judges the slice sends older than the window: by the credit their slice's ack gave them,
    /// lost when it is not acked yet (module doc).
    pub fn judge(&mut self, now: SimTime) {
        let window_us = StatsConfig::default().judge_window_us(self.rtt_ms);
        while let Some(&v) = self.unjudged.front() {
            if now.0 < v.sent_at.0.saturating_add(window_us) {
                break;
            }
            self.unjudged.pop_front();
            self.first_unjudged += 1;
            // Settled ones were judged when their slice's ack came; the rest are lost.
            if !v.unknown && v.settled.is_none() {
                self.loss.record(now, true);
            }
        }
    }

    /// Slice `i` of the chunk in flight was first marked acked at `now`: credits one of its
    /// sends still awaiting a verdict with the delivery, the earlier ones with a loss (module doc).
    fn settle_sends(&mut self, now: SimTime, i: usize) {
        let Some(c) = self.current.as_mut() else { return };
        let sends = std::mem::take(&mut c.sends[i]);
        let soonest_us = self.recent_ack_us.iter().min().copied().unwrap_or(0);
        let cutoff = now.0.saturating_sub(soonest_us);
        let verdict = |id: u64| id.checked_sub(self.first_unjudged).map(|k| k as usize);
        let before_ack = |v: &SendVerdict| v.sent_at.0 <= now.0;
        // The latest send old enough to have been answered, or else the latest before the ack.
        let old_enough = sends.iter().rev().find_map(|&id| {
            let k = verdict(id)?;
            self.unjudged.get(k).filter(|v| v.sent_at.0 <= cutoff).map(|_| id)
        });
        let credited = old_enough.or_else(|| {
            sends.iter().rev().find_map(|&id| self.unjudged.get(verdict(id)?).filter(|v| before_ack(v)).map(|_| id))
        });
        for &id in &sends {
            let Some(v) = verdict(id).and_then(|k| self.unjudged.get_mut(k)) else { continue };
            let lost = match credited {
                Some(c) if id == c => false,
                Some(c) if id < c => true,
                _ => {
                    v.unknown = true;
                    continue;
                }
            };
            // Judged now rather than when the window closes: the ack tells already.
            v.settled = Some(lost);
            self.loss.record(now, lost);
        }
        // The list is not needed again (the slice is acked); its buffer is given back.
        if let Some(c) = self.current.as_mut() {
            c.sends[i] = sends;
            c.sends[i].clear();
        }
    }

    fn bytes_per_second(&self) -> f64 {
        let kbps = self.config.bandwidth_kbps;
        if kbps.is_finite() && kbps > 0.0 {
            kbps * 1000.0 / 8.0
        } else {
            0.0
        }
    }

    fn full_packet_wire_bytes(&self) -> f64 {
        (slice_packet_bytes(&self.config, self.config.slice_size(), true) + IP_UDP_OVERHEAD_BYTES as usize) as f64
    }

    /// The minimum time between two sends of one slice.
    pub fn resend_delay_ms(&self) -> f64 {
        match (self.config.rtt_resend, self.rtt_ms) {
            (true, Some(rtt)) => rtt * RTT_RESEND_FACTOR,
            _ => self.config.resend_delay_ms.max(0.0),
        }
    }

    fn start_next(&mut self, now: SimTime, events: &mut Vec<Event>) {
        if self.current.is_some() {
            return;
        }
        let Some(data) = self.queue.pop_front() else {
            return;
        };
        let n = self.config.slices_for(data.len());
        let id = self.next_chunk_id;
        events.push(Event::new(
            now,
            EventKind::ChunkStarted { side: self.side, chunk: id as u32, bytes: data.len() as u32, slices: n as u32 },
        ));
        self.counters.chunks_started += 1;
        self.current = Some(InFlight {
            id,
            data,
            num_slices: n,
            acked: vec![false; n],
            num_acked: 0,
            current: 0,
            last_sent: vec![None; n],
            send_count: vec![0; n],
            sends: vec![Vec::new(); n],
            started: now,
            burst_left: if self.config.initial_burst { n } else { 0 },
            hold_until: SimTime::ZERO,
        });
    }

    /// Starts a send tick: accumulates the budget for the time since the last tick.
    pub fn begin_tick(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.budget.begin(now, self.bytes_per_second(), self.full_packet_wire_bytes());
        self.start_next(now, events);
        self.budget.set_active(self.current.is_some());
    }

    /// Ends the tick, reporting the budget when a chunk was in flight.
    pub fn end_tick(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.budget.end(now, self.side, events);
    }

    /// Picks the next slice to send at `now` within the budget, advancing the round-robin cursor.
    fn pick(&mut self, now: SimTime) -> Option<usize> {
        let delay_us = (self.resend_delay_ms() * 1000.0).round() as u64;
        let slice_size = self.config.slice_size();
        let budget = self.budget.available();
        let cfg = self.config;
        let c = self.current.as_mut()?;
        if c.burst_left > 0 {
            // The initial burst: every slice once, whatever the budget.
            let i = c.num_slices - c.burst_left;
            c.burst_left -= 1;
            if c.burst_left == 0 {
                c.hold_until = now.plus_micros((cfg.burst_wait_ms.max(0.0) * 1000.0).round() as u64);
                c.current = 0;
            }
            return Some(i);
        }
        if now < c.hold_until {
            return None;
        }
        for k in 0..c.num_slices {
            let i = (c.current + k) % c.num_slices;
            if c.acked[i] {
                continue;
            }
            if c.last_sent[i].is_some_and(|t| now.saturating_since(t).0 < delay_us) {
                continue;
            }
            let last = i + 1 == c.num_slices;
            let len = if last { c.data.len() - i * slice_size } else { slice_size };
            let cost = (slice_packet_bytes(&cfg, len, last) + IP_UDP_OVERHEAD_BYTES as usize) as f64;
            if cost > budget {
                c.current = i;
                return None;
            }
            c.current = (i + 1) % c.num_slices;
            return Some(i);
        }
        None
    }

    /// Writes the next slice packet with datagram sequence `seq` into `out`, or returns false when
    /// nothing more goes out this tick (budget spent, all slices acked or waiting to resend).
    pub fn next_packet(&mut self, now: SimTime, seq: u16, out: &mut Vec<u8>, events: &mut Vec<Event>) -> bool {
        self.start_next(now, events);
        let Some(i) = self.pick(now) else {
            return false;
        };
        let slice_size = self.config.slice_size();
        let side = self.side;
        let Some(c) = self.current.as_mut() else {
            return false;
        };
        let start = i * slice_size;
        let end = (start + slice_size).min(c.data.len());
        let p = SlicePacket {
            seq,
            chunk_id: c.id,
            slice_id: i as u32,
            num_slices: c.num_slices as u32,
            data: c.data[start..end].to_vec(),
        };
        let before = out.len();
        if write_slice(&p, &self.config, out).is_err() {
            // Broken invariant of our own layout; send nothing rather than garbage.
            out.truncate(before);
            return false;
        }
        let resend = c.send_count[i] > 0;
        c.send_count[i] += 1;
        c.last_sent[i] = Some(now);
        let wire = (out.len() - before) as f64 + IP_UDP_OVERHEAD_BYTES as f64;
        self.budget.spend(wire);
        self.counters.slices_sent += 1;
        self.counters.slices_resent += resend as u64;
        // Judged sends need no place in the list (a slice never acked keeps being resent).
        let first = self.first_unjudged;
        if c.sends[i].len() >= 8 {
            c.sends[i].retain(|&id| id >= first);
        }
        c.sends[i].push(first + self.unjudged.len() as u64);
        self.unjudged.push_back(SendVerdict { sent_at: now, settled: None, unknown: false });
        self.counters.bytes_sent += (out.len() - before) as u64;
        events.push(Event::new(now, EventKind::SliceSent { side, chunk: c.id as u32, slice: i as u32, resend }));
        true
    }

    /// Applies an ack packet: a slice flips to acked the first time any ack marks it (so acks
    /// arriving out of order or duplicated are harmless). Completes the chunk when all are acked.
    pub fn process_ack(&mut self, now: SimTime, ack: &AckPacket, events: &mut Vec<Event>) {
        let side = self.side;
        let Some(c) = self.current.as_mut() else {
            self.counters.acks_ignored += 1;
            return;
        };
        if ack.chunk_id != c.id || ack.num_slices as usize != c.num_slices || ack.acked.len() != c.num_slices {
            self.counters.acks_ignored += 1;
            return;
        }
        self.counters.acks_received += 1;
        let mut sample_us: Option<u64> = None;
        let mut newly = std::mem::take(&mut self.newly_acked);
        for (i, &a) in ack.acked.iter().enumerate() {
            if !a || c.acked[i] {
                continue;
            }
            c.acked[i] = true;
            c.num_acked += 1;
            newly.push(i);
            events.push(Event::new(now, EventKind::SliceAcked { side, chunk: c.id as u32, slice: i as u32 }));
            if let (1, Some(t)) = (c.send_count[i], c.last_sent[i]) {
                let s = now.saturating_since(t).0;
                sample_us = Some(sample_us.map_or(s, |m| m.min(s)));
            }
        }
        // Credited with the smallest send-to-ack time known before this ack.
        for &i in &newly {
            self.settle_sends(now, i);
        }
        newly.clear();
        self.newly_acked = newly;
        let Some(c) = self.current.as_mut() else { return };
        if let Some(us) = sample_us {
            if self.recent_ack_us.len() == RECENT_SAMPLES {
                self.recent_ack_us.pop_front();
            }
            self.recent_ack_us.push_back(us);
            let ms = us as f64 / 1000.0;
            self.rtt_ms = Some(self.rtt_ms.map_or(ms, |r| r + (ms - r) * RTT_SMOOTHING));
            events.push(Event::new(now, EventKind::RttSample { side, rtt_ms: ms as f32 }));
        }
        if c.num_acked == c.num_slices {
            let elapsed_us = now.saturating_since(c.started).0;
            events.push(Event::new(
                now,
                EventKind::ChunkCompleted { side, chunk: c.id as u32, bytes: c.data.len() as u32, elapsed_us },
            ));
            self.counters.chunks_completed += 1;
            self.next_chunk_id = c.id.wrapping_add(1);
            self.current = None;
        }
    }
}
