//! Channels: the sender's unacked reliable bunches (`OutRec`) and the receiver's in-order
//! processing of reliable bunches (`InReliable`, `InRec`) and partial-bunch reassembly.
//!
//! Why the receiver queues instead of dropping: unlike packets, reliable bunches must all be
//! processed in `ChSequence` order, so a bunch that arrives ahead of a missing one waits in
//! `InRec` and the channel processes nothing reliable until the gap is filled — UE4's
//! head-of-line blocking, measured here as queue depth and waiting time.

use std::collections::{BTreeMap, VecDeque};

use thiserror::Error;

use crate::event::SimTime;

use super::bunch::{make_relative, Bunch, MAX_CHSEQUENCE, MAX_CONSTRUCTED_BUNCH_BYTES};
use super::sequence::SeqNum;

/// Most unacked reliable bunches one channel may hold, and most queued out of order (UE4).
pub const RELIABLE_BUFFER: usize = 256;

/// A reliable bunch kept until acked, for exact-copy resends.
#[derive(Debug, Clone)]
pub struct OutBunch {
    pub bunch: Bunch,
    /// The workload messages it carries (several when merged; none for control bunches).
    pub msgs: Vec<u64>,
    /// The packet that last carried it; None while it waits in the send buffer.
    pub packet_id: Option<SeqNum>,
    pub received_ack: bool,
}

/// Sending half of a channel.
#[derive(Debug, Clone, Default)]
pub struct OutChannel {
    /// Last `ChSequence` handed out (`OutReliable[ChIndex]`).
    out_reliable: u32,
    /// Unacked (or acked but not yet released) reliable bunches in `ChSequence` order.
    out_rec: VecDeque<OutBunch>,
}

impl OutChannel {
    /// `NumOutRec`: includes acked bunches still queued behind an unacked one.
    pub fn num_out_rec(&self) -> usize {
        self.out_rec.len()
    }

    /// Whether `extra` more reliable bunches would overflow the buffer (`bOverflowsReliable`).
    pub fn overflows_reliable(&self, extra: usize) -> bool {
        self.out_rec.len() + extra >= RELIABLE_BUFFER
    }

    /// `PrepBunch`: gives a reliable bunch the next `ChSequence` and keeps a copy in `OutRec`.
    pub fn prep_reliable(&mut self, mut bunch: Bunch, msgs: Vec<u64>) -> Bunch {
        self.out_reliable += 1;
        bunch.ch_sequence = self.out_reliable;
        bunch.reliable = true;
        self.out_rec.push_back(OutBunch { bunch: bunch.clone(), msgs, packet_id: None, received_ack: false });
        bunch
    }

    /// Appends a merged message to the kept copy of bunch `ch_sequence` (still unsent).
    pub fn merge(&mut self, ch_sequence: u32, framed: &[u8], msg: u64) {
        if let Some(o) = self.find_mut(ch_sequence) {
            o.bunch.payload.extend_from_slice(framed);
            o.msgs.push(msg);
        }
    }

    fn find_mut(&mut self, ch_sequence: u32) -> Option<&mut OutBunch> {
        let first = self.out_rec.front()?.bunch.ch_sequence;
        let i = ch_sequence.checked_sub(first)? as usize;
        self.out_rec.get_mut(i).filter(|o| o.bunch.ch_sequence == ch_sequence)
    }

    /// Records which packet now carries the bunch `ch_sequence`.
    pub fn set_packet_id(&mut self, ch_sequence: u32, packet: SeqNum) {
        if let Some(o) = self.find_mut(ch_sequence) {
            o.packet_id = Some(packet);
        }
    }

    /// Packet `packet` was acked: marks the bunches it carried and releases acked bunches from the
    /// front (`ReceivedAcks`). Appends the messages of every bunch newly marked.
    pub fn received_ack(&mut self, packet: SeqNum, newly_acked: &mut Vec<u64>) {
        for o in &mut self.out_rec {
            if o.packet_id == Some(packet) && !o.received_ack {
                o.received_ack = true;
                newly_acked.extend_from_slice(&o.msgs);
            }
        }
        while self.out_rec.front().is_some_and(|o| o.received_ack) {
            self.out_rec.pop_front();
        }
    }

    /// Packet `packet` was nakked: the exact copies of its still-unacked bunches to send again
    /// (`ReceivedNak`). Their packet id is cleared until the resend goes out.
    pub fn received_nak(&mut self, packet: SeqNum, resend: &mut Vec<(Bunch, Vec<u64>)>) {
        for o in &mut self.out_rec {
            if o.packet_id == Some(packet) && !o.received_ack {
                o.packet_id = None;
                resend.push((o.bunch.clone(), o.msgs.clone()));
            }
        }
    }
}

/// Why a channel could not accept a bunch in a way that ends the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ChannelError {
    #[error("Incoming reliable buffer overflow")]
    InRecOverflow,
}

/// What happened to a channel's out-of-order queue while handling one bunch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InRecChange {
    pub changed: bool,
    pub depth: usize,
    /// How long the channel has been (or was, if now unblocked) blocked.
    pub blocked_us: u64,
}

/// Counters of a receiving channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InChannelCounters {
    pub duplicate_bunches: u64,
    pub queued_bunches: u64,
    pub max_inrec_depth: usize,
    /// Longest and total time a bunch waited in `InRec`.
    pub max_inrec_wait_us: u64,
    pub total_inrec_wait_us: u64,
    pub partial_discarded: u64,
    pub too_large_discarded: u64,
}

#[derive(Debug, Clone)]
struct Assembly {
    reliable: bool,
    /// Last `ChSequence` (reliable) or packet id (unreliable) appended.
    seq: u64,
    data: Vec<u8>,
}

/// Receiving half of a channel.
#[derive(Debug, Clone, Default)]
pub struct InChannel {
    /// Last reliable `ChSequence` processed (`InReliable[ChIndex]`).
    in_reliable: u32,
    /// Reliable bunches ahead of a gap, with their arrival time.
    in_rec: BTreeMap<u32, (Bunch, SimTime)>,
    blocked_since: Option<SimTime>,
    partial: Option<Assembly>,
    pub counters: InChannelCounters,
}

impl InChannel {
    pub fn inrec_depth(&self) -> usize {
        self.in_rec.len()
    }

    /// `ReceivedRawBunch`: `packet_id` is the receiver's running id of the carrying packet.
    /// Completed payloads are appended to `delivered`.
    pub fn received_raw_bunch(
        &mut self,
        now: SimTime,
        packet_id: u64,
        mut bunch: Bunch,
        delivered: &mut Vec<Vec<u8>>,
    ) -> Result<InRecChange, ChannelError> {
        let mut change = InRecChange { depth: self.in_rec.len(), ..Default::default() };
        if !bunch.reliable {
            // UE4 processes unreliable bunches at once, even while reliable ones wait.
            self.received_next_bunch(packet_id, bunch, delivered);
            return Ok(change);
        }
        bunch.ch_sequence = make_relative(bunch.ch_sequence, self.in_reliable.wrapping_add(1), MAX_CHSEQUENCE);
        let seq = bunch.ch_sequence;
        if seq <= self.in_reliable {
            self.counters.duplicate_bunches += 1;
            return Ok(change);
        }
        if seq != self.in_reliable + 1 {
            if self.in_rec.contains_key(&seq) {
                self.counters.duplicate_bunches += 1;
                return Ok(change);
            }
            if self.in_rec.len() >= RELIABLE_BUFFER {
                return Err(ChannelError::InRecOverflow);
            }
            self.in_rec.insert(seq, (bunch, now));
            let since = *self.blocked_since.get_or_insert(now);
            self.counters.queued_bunches += 1;
            self.counters.max_inrec_depth = self.counters.max_inrec_depth.max(self.in_rec.len());
            return Ok(InRecChange {
                changed: true,
                depth: self.in_rec.len(),
                blocked_us: now.saturating_since(since).0,
            });
        }
        self.in_reliable = seq;
        self.received_next_bunch(packet_id, bunch, delivered);
        while let Some(entry) = self.in_rec.first_entry() {
            if *entry.key() != self.in_reliable + 1 {
                break;
            }
            let (b, arrived) = entry.remove();
            let waited = now.saturating_since(arrived).0;
            self.counters.max_inrec_wait_us = self.counters.max_inrec_wait_us.max(waited);
            self.counters.total_inrec_wait_us += waited;
            self.in_reliable = b.ch_sequence;
            self.received_next_bunch(packet_id, b, delivered);
            change.changed = true;
        }
        change.depth = self.in_rec.len();
        if change.changed {
            if let Some(since) = self.blocked_since {
                change.blocked_us = now.saturating_since(since).0;
            }
            if self.in_rec.is_empty() {
                self.blocked_since = None;
            }
        }
        Ok(change)
    }

    /// `ReceivedNextBunch`: reassembles partial bunches, delivers whole ones.
    fn received_next_bunch(&mut self, packet_id: u64, bunch: Bunch, delivered: &mut Vec<Vec<u8>>) {
        if !bunch.partial {
            delivered.push(bunch.payload);
            return;
        }
        let seq = if bunch.reliable { bunch.ch_sequence as u64 } else { packet_id };
        if bunch.partial_initial {
            if let Some(p) = &self.partial {
                if p.reliable && !bunch.reliable {
                    // An unreliable partial may not destroy a reliable one being assembled.
                    self.counters.partial_discarded += 1;
                    return;
                }
                self.counters.partial_discarded += 1;
            }
            self.partial = Some(Assembly { reliable: bunch.reliable, seq, data: bunch.payload });
        } else {
            let matches = self.partial.as_ref().is_some_and(|p| {
                p.reliable == bunch.reliable
                    && if bunch.reliable { seq == p.seq + 1 } else { seq == p.seq || seq == p.seq + 1 }
            });
            match (&mut self.partial, matches) {
                (Some(p), true) => {
                    p.seq = seq;
                    p.data.extend_from_slice(&bunch.payload);
                }
                _ => {
                    if self.partial.take().is_some() || !bunch.reliable {
                        self.counters.partial_discarded += 1;
                    }
                    return;
                }
            }
        }
        let too_large = self.partial.as_ref().is_some_and(|p| p.data.len() > MAX_CONSTRUCTED_BUNCH_BYTES);
        if too_large {
            self.partial = None;
            self.counters.too_large_discarded += 1;
        } else if bunch.partial_final {
            if let Some(p) = self.partial.take() {
                delivered.push(p.data);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rb(seq: u32, payload: u8) -> Bunch {
        Bunch {
            channel: 1,
            reliable: true,
            ch_sequence: seq % MAX_CHSEQUENCE,
            partial: false,
            partial_initial: false,
            partial_final: false,
            payload: vec![payload],
        }
    }

    #[test]
    fn bunch_ahead_of_a_gap_waits_in_inrec_then_drains_in_order() {
        let mut ch = InChannel::default();
        let mut out = Vec::new();
        ch.received_raw_bunch(SimTime(0), 1, rb(1, 1), &mut out).unwrap();
        let c = ch.received_raw_bunch(SimTime(10), 2, rb(3, 3), &mut out).unwrap();
        assert_eq!((c.changed, c.depth), (true, 1));
        ch.received_raw_bunch(SimTime(20), 3, rb(4, 4), &mut out).unwrap();
        assert_eq!(out, vec![vec![1]]);
        let c = ch.received_raw_bunch(SimTime(50), 4, rb(2, 2), &mut out).unwrap();
        assert_eq!((c.changed, c.depth, c.blocked_us), (true, 0, 40));
        assert_eq!(out, vec![vec![1], vec![2], vec![3], vec![4]]);
        assert_eq!(ch.counters.max_inrec_depth, 2);
        assert_eq!(ch.counters.max_inrec_wait_us, 40);
        ch.received_raw_bunch(SimTime(60), 5, rb(3, 3), &mut out).unwrap();
        assert_eq!(ch.counters.duplicate_bunches, 1);
    }

    #[test]
    fn reliable_sequence_survives_ten_bit_wrap() {
        let mut ch = InChannel::default();
        let mut out = Vec::new();
        for s in 1..3000u32 {
            ch.received_raw_bunch(SimTime(0), s as u64, rb(s, s as u8), &mut out).unwrap();
        }
        assert_eq!(out.len(), 2999);
    }

    #[test]
    fn nak_returns_unacked_bunches_and_ack_releases_from_the_front() {
        let mut oc = OutChannel::default();
        for m in 0..3 {
            let b = oc.prep_reliable(rb(0, m as u8), vec![m]);
            oc.set_packet_id(b.ch_sequence, SeqNum::new(10 + m as u16));
        }
        let mut acked = Vec::new();
        oc.received_ack(SeqNum::new(11), &mut acked);
        assert_eq!(acked, vec![1]);
        assert_eq!(oc.num_out_rec(), 3, "acked bunch behind an unacked one is not released");
        let mut resend = Vec::new();
        oc.received_nak(SeqNum::new(10), &mut resend);
        assert_eq!(resend.len(), 1);
        assert_eq!(resend[0].0.ch_sequence, 1);
        oc.set_packet_id(1, SeqNum::new(13));
        oc.received_ack(SeqNum::new(13), &mut acked);
        assert_eq!(oc.num_out_rec(), 1);
    }
}
