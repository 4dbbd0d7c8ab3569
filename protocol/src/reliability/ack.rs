//! Packet-level acks as in Glenn Fiedler's "Reliable Ordered Messages" and reliable.io.
//!
//! Both sides run the same algorithm. On send: record the sequence in the sent buffer (unacked,
//! with its send time), write `sequence`, `ack` (most recent received) and `ack_bits` (the 32
//! sequences up to `ack` that were received). On receive: refuse sequences too old for the
//! received buffer, insert the packet, then walk the peer's `ack`/`ack_bits` and report every
//! sequence not yet acked — exactly once, because it is marked acked in the sent buffer.
//!
//! Call order per packet: [`AckEndpoint::begin_packet`] then (after writing the payload)
//! [`AckEndpoint::finish_packet`]; on arrival [`AckEndpoint::read_header`], let the application
//! check the payload, and only if it accepts call [`AckEndpoint::accept_packet`] (a packet the
//! application rejects is never acked). [`AckEndpoint::update`] advances the loss and bandwidth
//! estimators; it is cheap enough to call per packet.
//!
//! Beyond reliable.io: the sent buffer grows. The loss estimate judges a packet once it is older
//! than 2 x RTT + 100 ms (`reliability::loss`), so the buffer must still hold it then, and an ack
//! can only be matched while its packet is held: reliable.io's fixed 256 entries forget packets
//! before their verdict above about 200 packets/s, and before their ack can even arrive above
//! 2,560 packets/s at 100 ms RTT. So `sent_packets_buffer_size` is the starting size, doubled
//! whenever a packet still awaiting its verdict would be overwritten, up to 32,768 (half the
//! sequence space; beyond that the oldest is judged early). At 60 packets/s it never grows.
//!
//! Beyond the seed: wrap aliasing under one-way outages. If one direction is dead for longer than
//! the sender needs to wrap its 16-bit sequence (65536 packets), the receiver's `ack`/`ack_bits`
//! still name the last sequences it got, and once the sender reuses those numbers the stale acks
//! would acknowledge packets that never arrived; worse, the receiver would take the new packets for
//! duplicates of the old. reliable.io accepts this as "extremely rare"; a testbed that scripts
//! 700-second outages cannot. So after `ack_expiry_ms` without receiving anything an endpoint
//! sends `ack_bits = 0` (acking nothing), and the next packet it receives restarts its received
//! state. The wire format is unchanged, so a reliable.io peer still interoperates. The rule holds
//! while a sender needs longer than `ack_expiry_ms` to wrap (65536 packets: up to ~13,000 pps at
//! the default 5 s).

use serde::{Deserialize, Serialize};

use crate::event::{MalformedReason, SimTime, StatsSample};
use crate::reliability::loss::AckLossJudge;
use crate::reliability::stats::{self, first_micros_where, BandwidthMeters, RttEstimator, StatsConfig};
use crate::wire::fragment::FragmentError;
use crate::wire::header::{HeaderError, PacketHeader};
use crate::wire::sequence::{sequence_greater_than, SequenceBuffer};

/// Largest sent buffer: half the sequence space, so that a sequence names one packet.
const MAX_SENT_BUFFER: usize = 32_768;

/// The reason a `Malformed` event gives for a packet header that did not decode. It lives with
/// the endpoint that reports the event, not in the codec: `wire` knows bytes, not events.
pub fn malformed_reason(e: &HeaderError) -> MalformedReason {
    match e {
        HeaderError::Truncated { .. } => MalformedReason::Truncated,
        HeaderError::Fragment => MalformedReason::Foreign,
        _ => MalformedReason::BadHeader,
    }
}

/// The reason a `Malformed` event gives for a reliable.io fragment that was refused.
pub fn fragment_malformed_reason(e: &FragmentError) -> MalformedReason {
    match e {
        FragmentError::Truncated { .. } => MalformedReason::Truncated,
        FragmentError::NotFragment(_) => MalformedReason::Foreign,
        FragmentError::BadPacketHeader(e) => malformed_reason(e),
        FragmentError::BadSize { .. } | FragmentError::CountMismatch { .. } | FragmentError::Stale { .. } => {
            MalformedReason::BadPayload
        }
        _ => MalformedReason::BadHeader,
    }
}

/// Settings of the ack endpoint (defaults from reliable.io).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AckConfig {
    /// Starting size; it grows to hold every packet until its loss verdict (see [`AckEndpoint`]).
    pub sent_packets_buffer_size: usize,
    pub received_packets_buffer_size: usize,
    /// After this long without receiving anything, stop acking what was received before and
    /// start afresh with the next packet (0 = never). See [`AckEndpoint`] on wrap aliasing.
    pub ack_expiry_ms: f64,
    pub stats: StatsConfig,
}

impl Default for AckConfig {
    fn default() -> Self {
        Self {
            sent_packets_buffer_size: 256,
            received_packets_buffer_size: 256,
            ack_expiry_ms: 5000.0,
            stats: StatsConfig::default(),
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct SentPacket {
    time: SimTime,
    acked: bool,
    bytes: u32,
}

#[derive(Debug, Clone, Copy, Default)]
struct ReceivedPacket;

/// A sequence the peer acknowledged, with the RTT it yields.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Acked {
    pub sequence: u16,
    pub rtt_ms: f64,
}

/// Counters since creation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckCounters {
    pub sent: u64,
    pub received: u64,
    pub acked: u64,
    /// Received but older than the received buffer can hold: neither processed nor acked.
    pub stale: u64,
    /// Received a sequence already received.
    pub duplicates: u64,
    pub malformed: u64,
}

/// What a received header means before the application decides to accept it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderVerdict {
    /// Process the payload, then call `accept_packet`.
    Fresh,
    /// A sequence already received (a duplicate copy).
    Duplicate,
    /// Too old for the received buffer: drop without processing or acking.
    Stale,
}

/// One side of the packet-ack protocol.
#[derive(Debug, Clone)]
pub struct AckEndpoint {
    config: AckConfig,
    sequence: u16,
    sent: SequenceBuffer<SentPacket>,
    received: SequenceBuffer<ReceivedPacket>,
    /// Bits for the 32 sequences up to the newest received, kept incrementally.
    recv_bits: u32,
    /// When the last packet was accepted.
    last_receive: Option<SimTime>,
    /// The fewest microseconds after `last_receive` that count as expired (`ack_expiry_ms`
    /// exceeded), `None` for never: an integer comparison per check instead of a conversion to
    /// milliseconds (three checks per packet).
    expiry_us: Option<u64>,
    /// Bit n set: our packet `sequence - 1 - n` is known acked. Every received header repeats
    /// up to 32 acks, nearly all already taken; this lets [`Self::accept_packet`] skip them
    /// without a lookup each (the lookups were a tenth of a simulated run).
    acked_recent: u64,
    counters: AckCounters,
    rtt: RttEstimator,
    /// Every packet sent until its loss verdict.
    loss: AckLossJudge,
    bandwidth: BandwidthMeters,
    stats_enabled: bool,
    /// Whether the estimates only [`Self::stats`] reads are kept (see
    /// [`Self::set_records_stats`]).
    records_stats: bool,
}

impl AckEndpoint {
    pub fn new(config: AckConfig) -> Self {
        Self {
            config,
            sequence: 0,
            sent: SequenceBuffer::new(config.sent_packets_buffer_size),
            received: SequenceBuffer::new(config.received_packets_buffer_size),
            recv_bits: 0,
            last_receive: None,
            expiry_us: Self::expiry_us(config.ack_expiry_ms),
            acked_recent: 0,
            counters: AckCounters::default(),
            rtt: RttEstimator::new(config.stats),
            loss: AckLossJudge::new(config.stats.loss_window),
            bandwidth: BandwidthMeters::default(),
            stats_enabled: true,
            records_stats: true,
        }
    }

    /// The `expiry_us` field for `ack_expiry_ms`: the elapsed times whose milliseconds
    /// exceed it (none when it is 0 or less).
    fn expiry_us(ack_expiry_ms: f64) -> Option<u64> {
        if ack_expiry_ms > 0.0 {
            first_micros_where(|ms| ms > ack_expiry_ms)
        } else {
            None
        }
    }

    pub fn config(&self) -> &AckConfig {
        &self.config
    }

    /// Changes the estimator settings (buffer sizes are fixed at creation).
    pub fn set_stats_config(&mut self, stats: StatsConfig) {
        self.config.stats = stats;
        self.rtt.set_config(stats);
    }

    /// Turns RTT and bandwidth accounting off (acks only), e.g. to measure the bare ack path.
    pub fn set_stats_enabled(&mut self, enabled: bool) {
        self.stats_enabled = enabled;
    }

    /// Whether to keep the estimates only [`Self::stats`] reads (true at first): bandwidth, the
    /// loss verdicts, the smoothed RTT and the window of RTT samples behind min, max and jitter.
    /// Without them the endpoint behaves exactly the same (acks, RTT samples, the display RTT
    /// that resends and loss judging follow, the sent buffer's growth) and `stats()` reports
    /// zeros for those figures; a run that reads no `Stats` (a sweep) saves their upkeep per
    /// packet.
    ///
    /// Fixed for the run: turning them off counts only before the first packet is sent or
    /// received (estimates kept from the start cannot be made up later, and a run switching
    /// them back on would report figures no full run gives); turning them on always counts,
    /// from then on. Returns whether the endpoint now does as asked.
    pub fn set_records_stats(&mut self, records: bool) -> bool {
        if !records && (self.counters.sent > 0 || self.counters.received > 0) {
            return !self.records_stats;
        }
        self.records_stats = records;
        self.loss.set_records_verdicts(records);
        true
    }

    /// The sequence the next packet will carry.
    pub fn next_sequence(&self) -> u16 {
        self.sequence
    }

    /// True when nothing has been received for longer than `ack_expiry_ms`.
    #[inline]
    fn receive_expired(&self, now: SimTime) -> bool {
        match (self.last_receive, self.expiry_us) {
            (Some(t), Some(us)) => now.saturating_since(t).0 >= us,
            _ => false,
        }
    }

    /// Current `ack` / `ack_bits` to send: the most recent received sequence (65535 before any)
    /// and which of the 32 before it arrived (none once receiving has expired).
    #[inline]
    pub fn ack_state(&self, now: SimTime) -> (u16, u32) {
        let bits = if self.receive_expired(now) { 0 } else { self.recv_bits };
        (self.received.next_sequence().wrapping_sub(1), bits)
    }

    /// Records a new outgoing packet and appends its header to `out`; returns the header.
    #[inline(always)]
    pub fn begin_packet(&mut self, now: SimTime, out: &mut Vec<u8>) -> PacketHeader {
        let sequence = self.sequence;
        self.sequence = self.sequence.wrapping_add(1);
        self.acked_recent <<= 1;
        self.loss.sent(now, sequence);
        self.make_room();
        let entry = SentPacket { time: now, acked: false, bytes: 0 };
        // Sequences go out in order, so the next is always held (`is_next`); the general insert
        // stays for a buffer reset by growth.
        if self.sent.is_next(sequence) {
            *self.sent.insert_next() = entry;
        } else if let Some(e) = self.sent.insert_reusing(sequence) {
            *e = entry;
        }
        let (ack, ack_bits) = self.ack_state(now);
        let h = PacketHeader { sequence, ack, ack_bits };
        h.encode(out);
        h
    }

    /// Doubles the sent buffer while inserting the next packet would overwrite one still awaiting
    /// its loss verdict (the judge's `held()` counts the packet being sent).
    #[inline]
    fn make_room(&mut self) {
        // The check per packet inline, the rare growth out of line (a call per packet was 25
        // instructions).
        if self.loss.held() > self.sent.size() && self.sent.size() < MAX_SENT_BUFFER {
            self.grow_sent();
        }
    }

    #[cold]
    fn grow_sent(&mut self) {
        while self.loss.held() > self.sent.size() && self.sent.size() < MAX_SENT_BUFFER {
            let old = self.sent.size();
            let mut grown = SequenceBuffer::new((old * 2).min(MAX_SENT_BUFFER));
            // The old buffer covers the `old` sequences before the one being sent.
            let oldest = self.sent.next_sequence().wrapping_sub(old as u16);
            grown.reset_to(oldest);
            for i in 0..old as u16 {
                let s = oldest.wrapping_add(i);
                if let Some(p) = self.sent.get(s).copied() {
                    if let Some(e) = grown.insert(s) {
                        *e = p;
                    }
                }
            }
            self.sent = grown;
        }
    }

    /// Current size of the sent buffer (it grows with rate x judging window).
    pub fn sent_buffer_size(&self) -> usize {
        self.sent.size()
    }

    /// Records the final size of packet `sequence` (header + payload).
    #[inline]
    pub fn finish_packet(&mut self, sequence: u16, total_bytes: usize) {
        if let Some(e) = self.sent.get_mut(sequence) {
            e.bytes = total_bytes as u32;
        }
        self.counters.sent += 1;
        if self.stats_enabled && self.records_stats {
            self.bandwidth.sent.add_packet(total_bytes);
        }
    }

    /// Decodes the header of an incoming packet without changing any state.
    #[inline(always)]
    pub fn read_header(
        &mut self,
        now: SimTime,
        bytes: &[u8],
    ) -> Result<(PacketHeader, usize, HeaderVerdict), HeaderError> {
        match PacketHeader::decode(bytes) {
            Ok((h, n)) => {
                // The next in order (nearly every packet) is fresh: no age check, no lookup.
                let verdict = if self.received.is_next(h.sequence) || self.receive_expired(now) {
                    HeaderVerdict::Fresh
                } else if self.received.is_too_old(h.sequence) {
                    HeaderVerdict::Stale
                } else if self.received.exists(h.sequence) {
                    HeaderVerdict::Duplicate
                } else {
                    HeaderVerdict::Fresh
                };
                Ok((h, n, verdict))
            }
            Err(e) => {
                self.counters.malformed += 1;
                Err(e)
            }
        }
    }

    /// Counts a packet the application rejected after its header decoded (it is not acked).
    pub fn reject_packet(&mut self) {
        self.counters.malformed += 1;
    }

    /// Whether packet `sequence` was received (and is still held in the received buffer): a
    /// fragment of such a packet is a stray copy.
    pub fn has_received(&self, sequence: u16) -> bool {
        self.received.exists(sequence)
    }

    /// Counts a stale packet that was dropped.
    pub fn drop_stale(&mut self) {
        self.counters.stale += 1;
    }

    /// Commits a packet the application accepted: marks it received (so it will be acked) and
    /// processes the peer's acks, appending each newly acked sequence to `acked` once.
    #[inline(always)]
    pub fn accept_packet(&mut self, now: SimTime, header: &PacketHeader, total_bytes: usize, acked: &mut Vec<Acked>) {
        let s = header.sequence;
        if self.receive_expired(now) {
            // A long silence: whatever we held may alias the sender's wrapped sequences.
            self.received.reset_to(s);
            self.recv_bits = 0;
        }
        self.last_receive = Some(now);
        if self.received.is_next(s) {
            // In order (nearly every packet): absent, held, one past the newest.
            self.received.insert_next();
            self.recv_bits = self.recv_bits << 1 | 1;
        } else if self.received.exists(s) {
            self.counters.duplicates += 1;
        } else {
            let newest = self.received.next_sequence().wrapping_sub(1);
            if self.received.insert(s).is_some() {
                if sequence_greater_than(s, newest) {
                    let shift = s.wrapping_sub(newest) as u32;
                    self.recv_bits = if shift >= 32 { 0 } else { self.recv_bits << shift };
                    self.recv_bits |= 1;
                } else {
                    let back = newest.wrapping_sub(s) as u32;
                    if back < 32 {
                        self.recv_bits |= 1 << back;
                    }
                }
            } else {
                self.counters.stale += 1;
                return;
            }
        }
        self.counters.received += 1;
        let stats = self.stats_enabled;
        let records = stats && self.records_stats;
        if records {
            self.bandwidth.received.add_packet(total_bytes);
        }

        // Set bits only, newest first (bit n acks `ack - n`), leaving out those known acked.
        let back = self.sequence.wrapping_sub(1).wrapping_sub(header.ack) as u32;
        let known = if back < 64 { (self.acked_recent >> back) as u32 } else { 0 };
        let mut bits = header.ack_bits & !known;
        while bits != 0 {
            let i = bits.trailing_zeros() as u16;
            bits &= bits - 1;
            let seq = header.ack.wrapping_sub(i);
            if let Some(p) = self.sent.get_mut(seq) {
                if !p.acked {
                    p.acked = true;
                    if back + (i as u32) < 64 {
                        self.acked_recent |= 1 << (back + i as u32);
                    }
                    self.loss.acked(seq);
                    let rtt_ms = now.saturating_since(p.time).as_millis_f64();
                    self.counters.acked += 1;
                    if records {
                        self.bandwidth.acked.add_packet(p.bytes as usize);
                        self.rtt.add_sample(rtt_ms);
                    } else if stats {
                        // The display RTT only: resends and loss judging follow it.
                        self.rtt.add_display_sample(rtt_ms);
                    }
                    acked.push(Acked { sequence: seq, rtt_ms });
                }
            }
        }
    }

    /// Judges packets that are old enough (acked or lost) and closes bandwidth intervals.
    #[inline(always)]
    pub fn update(&mut self, now: SimTime) {
        let sc = &self.config.stats;
        let window_us = sc.judge_window_us(self.rtt.has_sample().then(|| self.rtt.display_ms()));
        self.loss.expire(now, window_us);
        if self.records_stats {
            self.bandwidth.update(now, sc.bandwidth_interval_ms, sc.bandwidth_smoothing);
        }
    }

    /// A snapshot of the estimates.
    pub fn stats(&self) -> StatsSample {
        stats::sample(&self.rtt, self.loss.window(), self.bandwidth.all())
    }

    pub fn counters(&self) -> AckCounters {
        self.counters
    }

    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(from: &mut AckEndpoint, to: &mut AckEndpoint, now: SimTime, deliver: bool) -> Vec<Acked> {
        let mut buf = Vec::new();
        let h = from.begin_packet(now, &mut buf);
        from.finish_packet(h.sequence, buf.len());
        let mut acked = Vec::new();
        if deliver {
            let (h2, _, v) = to.read_header(now, &buf).unwrap();
            assert_eq!(h2, h);
            assert_eq!(v, HeaderVerdict::Fresh);
            to.accept_packet(now, &h2, buf.len(), &mut acked);
        }
        acked
    }

    #[test]
    fn acks_expire_just_past_ack_expiry_ms() {
        // Expired means more than `ack_expiry_ms` (an odd value) since the last receive, to the
        // microsecond.
        let config = AckConfig { ack_expiry_ms: 2500.0005, ..AckConfig::default() };
        let (mut a, mut b) = (AckEndpoint::new(config), AckEndpoint::new(config));
        exchange(&mut b, &mut a, SimTime(1_000_000), true);
        assert_eq!(a.ack_state(SimTime(3_500_000)), (0, 1), "2500 ms is not past 2500.0005 ms");
        assert_eq!(a.ack_state(SimTime(3_500_001)), (0, 0));
        assert_eq!(a.ack_state(SimTime(900_000)), (0, 1), "before the receive");
        let never = AckConfig { ack_expiry_ms: 0.0, ..AckConfig::default() };
        let (mut a, mut b) = (AckEndpoint::new(never), AckEndpoint::new(never));
        exchange(&mut b, &mut a, SimTime(1_000_000), true);
        assert_eq!(a.ack_state(SimTime(u64::MAX)), (0, 1));
    }

    #[test]
    fn an_endpoint_without_stats_records_acks_and_resends_by_the_same_figures() {
        // Two pairs over the same lossy, jittery exchange; one pair keeps no stats. Everything
        // but `stats()` must match bit for bit, the sent buffer's growth included.
        let config = AckConfig { sent_packets_buffer_size: 16, ..AckConfig::default() };
        let mut full = [AckEndpoint::new(config), AckEndpoint::new(config)];
        let mut bare = [AckEndpoint::new(config), AckEndpoint::new(config)];
        for e in &mut bare {
            assert!(e.set_records_stats(false));
        }
        let mut x = 12345u64;
        for i in 0..3000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let now = SimTime(i * 1000 + (x >> 60));
            let (from, deliver) = ((i % 2) as usize, !(x >> 33).is_multiple_of(10));
            let a = exchange_one(&mut full, from, now, deliver);
            let b = exchange_one(&mut bare, from, now, deliver);
            assert_eq!(a, b, "packet {i}");
        }
        for (f, b) in full.iter().zip(&bare) {
            assert_eq!(f.sent_buffer_size(), b.sent_buffer_size());
            assert!(f.sent_buffer_size() > 16, "the buffer grew");
            assert_eq!(f.counters(), b.counters());
            assert_eq!(f.rtt().display_ms().to_bits(), b.rtt().display_ms().to_bits());
            let (fs, bs) = (f.stats(), b.stats());
            assert!(fs.loss_percent > 0.0 && fs.sent_kbps > 0.0 && fs.jitter_ms > 0.0);
            assert_eq!((bs.loss_percent, bs.sent_kbps, bs.rtt_ms, bs.jitter_ms), (0.0, 0.0, 0.0, 0.0));
            assert_eq!(fs.rtt_display_ms, bs.rtt_display_ms);
        }
        assert!(!full[0].set_records_stats(false), "too late: packets went out");
        assert!(full[0].stats().sent_kbps > 0.0);
    }

    /// One packet from `pair[from]` to the other, then both update; returns the header bytes
    /// and what was acked (RTTs as bits).
    fn exchange_one(
        pair: &mut [AckEndpoint; 2],
        from: usize,
        now: SimTime,
        deliver: bool,
    ) -> (Vec<u8>, Vec<(u16, u64)>) {
        let [a, b] = pair;
        let (from, to) = if from == 0 { (a, b) } else { (b, a) };
        let mut buf = Vec::new();
        let h = from.begin_packet(now, &mut buf);
        from.finish_packet(h.sequence, buf.len() + 100);
        let mut acked = Vec::new();
        if deliver {
            let (h2, _, _) = to.read_header(now, &buf).unwrap();
            to.accept_packet(now, &h2, buf.len() + 100, &mut acked);
        }
        from.update(now);
        to.update(now);
        (buf, acked.iter().map(|a| (a.sequence, a.rtt_ms.to_bits())).collect())
    }

    #[test]
    fn each_delivered_sequence_is_acked_once() {
        let mut a = AckEndpoint::new(AckConfig::default());
        let mut b = AckEndpoint::new(AckConfig::default());
        let mut acked_by_a = Vec::new();
        for i in 0..100u64 {
            let t = SimTime(i * 10_000);
            exchange(&mut a, &mut b, t, i % 3 != 0);
            acked_by_a.extend(exchange(&mut b, &mut a, t, true).into_iter().map(|x| x.sequence));
        }
        let expected: Vec<u16> = (0..99u16).filter(|s| s % 3 != 0).collect();
        let mut got = acked_by_a.clone();
        got.sort();
        got.dedup();
        assert_eq!(got.len(), acked_by_a.len(), "an ack was reported twice");
        assert_eq!(got, expected);
    }
}
