//! Channels: the sender's unacked reliable bunches (`OutRec`) and, in [`incoming`], the
//! receiver's in-order processing of reliable bunches (`InReliable`, `InRec`), partial-bunch
//! reassembly and the channel's open/close life.
//!
//! Why per channel: UE4 numbers reliable bunches per channel (`ChSequence`) and a receiving
//! channel processes nothing reliable past a missing one, so head-of-line blocking spans one
//! channel — one actor — not the connection. The sequence counters (`OutReliable[ChIndex]`,
//! `InReliable[ChIndex]`) belong to the connection and outlive the channel that used the index,
//! which is what lets a reopened channel on the same index tell stale resends of the old one
//! from new bunches.

mod incoming;

use std::collections::VecDeque;

use crate::event::{SimTime, Ue4ChannelKind};

use super::bunch::Bunch;
use super::sequence::SeqNum;

pub use incoming::{BunchOutcome, ChannelError, InChannel, InChannelCounters};

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
    /// `ChSequence` of the first piece of the whole bunch this one was split from (its own when
    /// it was not split), and how many pieces that bunch has.
    pub group_first: u32,
    pub group_len: u32,
}

impl OutBunch {
    fn in_group(&self, first: u32) -> bool {
        self.group_first == first
    }
}

/// What a sending channel is open for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutInstance {
    pub kind: Ue4ChannelKind,
    /// The actor an actor channel replicates.
    pub actor: Option<u32>,
    /// The next bunch opens the channel (`bOpen`).
    pub open_pending: bool,
    /// A close bunch was sent: the index is freed once everything is acked.
    pub closing: bool,
    /// Last time a message was sent on it (idle closes count from here).
    pub last_used: SimTime,
    /// `bPausedUntilReliableACK`: an unreliable bunch was made reliable; replication (snapshots)
    /// waits until `OutRec` is empty.
    pub paused_until_reliable_ack: bool,
}

impl OutInstance {
    /// A channel open from the start (control, snapshots): no opening bunch.
    pub fn open_from_start(kind: Ue4ChannelKind) -> Self {
        Self {
            kind,
            actor: None,
            open_pending: false,
            closing: false,
            last_used: SimTime::ZERO,
            paused_until_reliable_ack: false,
        }
    }
}

/// Sending half of a channel index.
#[derive(Debug, Clone, Default)]
pub struct OutChannel {
    /// Last `ChSequence` handed out (`OutReliable[ChIndex]`), kept across reopenings.
    out_reliable: u32,
    /// Unacked (or acked but not yet released) reliable bunches in `ChSequence` order.
    out_rec: VecDeque<OutBunch>,
    /// The channel using this index; None when the index is free.
    pub instance: Option<OutInstance>,
    /// Resend every piece of a split bunch when any piece is nakked, and release the pieces
    /// only together (the seed's prose), instead of piece by piece.
    pub whole_bunch_resend: bool,
}

impl OutChannel {
    /// An index used by `instance` (None: free), resending split bunches whole or not.
    pub fn new(instance: Option<OutInstance>, whole_bunch_resend: bool) -> Self {
        Self { instance, whole_bunch_resend, ..Default::default() }
    }

    /// `NumOutRec`: includes acked bunches still queued behind an unacked one.
    pub fn num_out_rec(&self) -> usize {
        self.out_rec.len()
    }

    /// `bOverflowsReliable` for `extra` more bunches, `close` when the last of them closes the
    /// channel (a close bunch may take the last slot).
    pub fn overflows_reliable_with(&self, extra: usize, close: bool) -> bool {
        self.out_rec.len() + extra >= RELIABLE_BUFFER + close as usize
    }

    /// Whether `extra` more reliable bunches would overflow the buffer (`bOverflowsReliable`).
    pub fn overflows_reliable(&self, extra: usize) -> bool {
        self.overflows_reliable_with(extra, false)
    }

    /// `PrepBunch`: gives a reliable bunch the next `ChSequence` and keeps a copy in `OutRec`.
    pub fn prep_reliable(&mut self, bunch: Bunch, msgs: Vec<u64>) -> Bunch {
        self.prep_reliable_group(vec![bunch], msgs).remove(0)
    }

    /// `PrepBunch` for every piece of one bunch: consecutive `ChSequence`s, one group.
    pub fn prep_reliable_group(&mut self, pieces: Vec<Bunch>, msgs: Vec<u64>) -> Vec<Bunch> {
        let (first, len) = (self.out_reliable + 1, pieces.len() as u32);
        pieces
            .into_iter()
            .map(|mut bunch| {
                self.out_reliable += 1;
                bunch.ch_sequence = self.out_reliable;
                bunch.reliable = true;
                let o = OutBunch {
                    bunch: bunch.clone(),
                    msgs: msgs.clone(),
                    packet_id: None,
                    received_ack: false,
                    group_first: first,
                    group_len: len,
                };
                self.out_rec.push_back(o);
                bunch
            })
            .collect()
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
    /// front (`ReceivedAcks`) — a split bunch only once all its pieces are acked when resending
    /// whole bunches. Appends the messages of every bunch newly marked.
    pub fn received_ack(&mut self, packet: SeqNum, newly_acked: &mut Vec<u64>) {
        for o in &mut self.out_rec {
            if o.packet_id == Some(packet) && !o.received_ack {
                o.received_ack = true;
                newly_acked.extend_from_slice(&o.msgs);
            }
        }
        while let Some(front) = self.out_rec.front() {
            let n = if self.whole_bunch_resend { front.group_len as usize } else { 1 };
            if n > self.out_rec.len() || !self.out_rec.iter().take(n).all(|o| o.received_ack) {
                break;
            }
            self.out_rec.drain(..n);
        }
    }

    /// Packet `packet` was nakked: the exact copies of its still-unacked reliable bunches to send
    /// again (`ReceivedNak`) — with whole-bunch resend, every piece of a split bunch one of which
    /// was in the packet. Their packet id is cleared until the resend goes out.
    pub fn received_nak(&mut self, packet: SeqNum, resend: &mut Vec<(Bunch, Vec<u64>)>) {
        let mut groups: Vec<u32> = Vec::new();
        for o in &mut self.out_rec {
            if o.packet_id == Some(packet) && !o.received_ack {
                if self.whole_bunch_resend && o.group_len > 1 {
                    if !groups.contains(&o.group_first) {
                        groups.push(o.group_first);
                    }
                } else {
                    o.packet_id = None;
                    resend.push((o.bunch.clone(), o.msgs.clone()));
                }
            }
        }
        for first in groups {
            for o in self.out_rec.iter_mut().filter(|o| o.in_group(first)) {
                o.packet_id = None;
                resend.push((o.bunch.clone(), o.msgs.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::ue4::bunch::MAX_CHSEQUENCE;

    fn rb(seq: u32, payload: u8) -> Bunch {
        Bunch {
            ch_index: 1,
            reliable: true,
            ch_sequence: seq % MAX_CHSEQUENCE,
            partial: false,
            partial_initial: false,
            partial_final: false,
            payload: vec![payload],
            ..Default::default()
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

    /// Three pieces in packets 10, 11, 12; 11 is lost. Whole-bunch resend sends all three
    /// again; piece by piece, only the one in 11.
    #[test]
    fn a_nakked_piece_resends_the_whole_bunch_or_only_itself() {
        for whole in [true, false] {
            let mut oc = OutChannel { whole_bunch_resend: whole, ..Default::default() };
            let pieces = oc.prep_reliable_group(vec![rb(0, 1), rb(0, 2), rb(0, 3)], vec![7]);
            for (i, p) in pieces.iter().enumerate() {
                oc.set_packet_id(p.ch_sequence, SeqNum::new(10 + i as u16));
            }
            let mut acked = Vec::new();
            oc.received_ack(SeqNum::new(10), &mut acked);
            assert_eq!(oc.num_out_rec(), if whole { 3 } else { 2 }, "whole={whole}");
            oc.received_ack(SeqNum::new(12), &mut acked);
            let mut resend = Vec::new();
            oc.received_nak(SeqNum::new(11), &mut resend);
            let seqs: Vec<u32> = resend.iter().map(|(b, _)| b.ch_sequence).collect();
            assert_eq!(seqs, if whole { vec![1, 2, 3] } else { vec![2] }, "whole={whole}");
            for s in &seqs {
                oc.set_packet_id(*s, SeqNum::new(20));
            }
            oc.received_ack(SeqNum::new(20), &mut acked);
            assert_eq!(oc.num_out_rec(), 0, "whole={whole}");
        }
    }
}
