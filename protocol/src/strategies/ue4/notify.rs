//! UE4's packet notify (`FNetPacketNotify`): per-packet sequence numbers and the ack/nak history.
//!
//! Every packet starts with one `u32` packing its 14-bit sequence, the 14-bit sequence of the
//! last packet the sender has received (`AckedSeq`, UE4's `InAckSeq`) and the number of 32-bit
//! history words that follow (1..=8, written minus one in 4 bits). Bit `i` of the history says
//! whether packet `AckedSeq - i` was received (Ack) or not (Nak). The receiving side advances
//! `InAckSeq` for every packet it accepts, writing Naks for the gap before it; the sending side
//! walks from its last acked sequence to the new `AckedSeq`, reporting each sequence exactly once
//! and treating whatever lies beyond the 256-bit history as lost.

use std::collections::VecDeque;

use crate::wire::bits::{BitError, Stream};

use super::sequence::SeqNum;

/// Most sequences one history can describe (UE4's `MaxSequenceHistoryLength`).
pub const MAX_SEQUENCE_HISTORY_LENGTH: usize = 256;
/// Bits per history word.
pub const BITS_PER_WORD: usize = 32;
/// History words (8).
pub const HISTORY_WORD_COUNT: usize = MAX_SEQUENCE_HISTORY_LENGTH / BITS_PER_WORD;
/// Largest notify header on the wire: packed word plus a full history.
pub const MAX_NOTIFY_HEADER_BYTES: usize = 4 + HISTORY_WORD_COUNT * 4;

const SEQ_SHIFT: u32 = 18;
const ACK_SEQ_SHIFT: u32 = 4;
const HISTORY_WORD_COUNT_MASK: u32 = 0xF;

/// The ack/nak history (`TSequenceHistory<256>`): newest status in bit 0 of word 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SequenceHistory {
    storage: [u32; HISTORY_WORD_COUNT],
}

impl SequenceHistory {
    /// Shifts the whole history up by one and puts `delivered` in bit 0 (`AddDeliveryStatus`).
    pub fn add_delivery_status(&mut self, delivered: bool) {
        let mut carry = delivered as u32;
        for w in &mut self.storage {
            let old = carry;
            carry = *w >> (BITS_PER_WORD - 1);
            *w = (*w << 1) | old;
        }
    }

    /// Whether the sequence `index` steps before the newest one was delivered.
    pub fn is_delivered(&self, index: usize) -> bool {
        index < MAX_SEQUENCE_HISTORY_LENGTH && self.storage[index / BITS_PER_WORD] & (1 << (index % BITS_PER_WORD)) != 0
    }

    /// Writes or reads the first `words` words; words not read stay zero (Nak).
    pub fn serialize<S: Stream>(&mut self, s: &mut S, words: usize) -> Result<(), BitError> {
        for w in self.storage.iter_mut().take(words.min(HISTORY_WORD_COUNT)) {
            s.serialize_bits(w, 32)?;
        }
        Ok(())
    }
}

/// A decoded packet notify header (`FNotificationHeader`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotificationHeader {
    pub seq: SeqNum,
    pub acked_seq: SeqNum,
    /// 1..=8.
    pub history_word_count: usize,
    pub history: SequenceHistory,
}

impl NotificationHeader {
    /// Reads a header; a word count above 8 is malformed (UE4 would silently clamp it).
    pub fn read<S: Stream>(s: &mut S) -> Result<Self, BitError> {
        let mut packed = 0u32;
        s.serialize_bits(&mut packed, 32)?;
        let seq = SeqNum::new((packed >> SEQ_SHIFT) as u16);
        let acked_seq = SeqNum::new((packed >> ACK_SEQ_SHIFT) as u16);
        let count = (packed & HISTORY_WORD_COUNT_MASK) as usize + 1;
        if count > HISTORY_WORD_COUNT {
            return Err(BitError::OutOfRange { value: count as i64, min: 1, max: HISTORY_WORD_COUNT as i64 });
        }
        let mut history = SequenceHistory::default();
        history.serialize(s, count)?;
        Ok(Self { seq, acked_seq, history_word_count: count, history })
    }

    /// Writes the header.
    pub fn write<S: Stream>(&self, s: &mut S) -> Result<(), BitError> {
        let mut packed = ((self.seq.get() as u32) << SEQ_SHIFT)
            | ((self.acked_seq.get() as u32) << ACK_SEQ_SHIFT)
            | ((self.history_word_count.clamp(1, HISTORY_WORD_COUNT) as u32 - 1) & HISTORY_WORD_COUNT_MASK);
        s.serialize_bits(&mut packed, 32)?;
        let mut h = self.history;
        h.serialize(s, self.history_word_count)
    }
}

/// One connection's packet notify state (`FNetPacketNotify`).
#[derive(Debug, Clone)]
pub struct PacketNotify {
    in_seq_history: SequenceHistory,
    /// Last sequence received and accepted from the remote.
    in_seq: SeqNum,
    /// Last received sequence we have written into our history.
    in_ack_seq: SeqNum,
    /// Last `in_ack_seq` that we know the remote has seen (it acked a packet carrying it).
    in_ack_seq_ack: SeqNum,
    /// Sequence of the next packet we send.
    out_seq: SeqNum,
    /// Last of our sequences the remote has reported on.
    out_ack_seq: SeqNum,
    /// For each packet sent and not yet reported on: its sequence and the `in_ack_seq` it carried.
    ack_record: VecDeque<(SeqNum, SeqNum)>,
    written_history_word_count: usize,
    written_in_ack_seq: SeqNum,
}

impl PacketNotify {
    /// `initial_in_seq` is the remote's first sequence minus one; `initial_out_seq` our first.
    pub fn new(initial_in_seq: SeqNum, initial_out_seq: SeqNum) -> Self {
        Self {
            in_seq_history: SequenceHistory::default(),
            in_seq: initial_in_seq,
            in_ack_seq: initial_in_seq,
            in_ack_seq_ack: initial_in_seq,
            out_seq: initial_out_seq,
            out_ack_seq: initial_out_seq.minus(1),
            ack_record: VecDeque::new(),
            written_history_word_count: 0,
            written_in_ack_seq: initial_in_seq,
        }
    }

    pub fn out_seq(&self) -> SeqNum {
        self.out_seq
    }

    pub fn out_ack_seq(&self) -> SeqNum {
        self.out_ack_seq
    }

    pub fn in_seq(&self) -> SeqNum {
        self.in_seq
    }

    /// Packets sent that the remote has not reported on yet.
    pub fn unreported(&self) -> usize {
        self.ack_record.len()
    }

    /// True when sending another packet would put more than half the sequence space in flight,
    /// after which the remote could no longer tell new sequences from old ones.
    pub fn is_sequence_window_full(&self) -> bool {
        SeqNum::diff(self.out_seq, self.out_ack_seq) >= SeqNum::HALF as i32 - 1
    }

    /// Sequences the remote may still need to hear about (`GetCurrentSequenceHistoryLength`).
    pub fn current_history_length(&self) -> usize {
        if self.in_ack_seq.ge(self.in_ack_seq_ack) {
            SeqNum::diff(self.in_ack_seq, self.in_ack_seq_ack) as usize
        } else {
            MAX_SEQUENCE_HISTORY_LENGTH
        }
    }

    /// Builds the header for the next packet (`WriteHeader`): as many history words as the
    /// remote may still need, at least one.
    pub fn header_for_next_packet(&mut self) -> NotificationHeader {
        let words = self.current_history_length().div_ceil(BITS_PER_WORD).clamp(1, HISTORY_WORD_COUNT);
        self.written_history_word_count = words;
        self.written_in_ack_seq = self.in_ack_seq;
        NotificationHeader {
            seq: self.out_seq,
            acked_seq: self.in_ack_seq,
            history_word_count: words,
            history: self.in_seq_history,
        }
    }

    /// Records the packet just written and moves to the next sequence (`CommitAndIncrementOutSeq`).
    pub fn commit_and_increment_out_seq(&mut self) -> SeqNum {
        debug_assert!(self.written_history_word_count != 0, "commit without a header");
        self.ack_record.push_back((self.out_seq, self.written_in_ack_seq));
        self.written_history_word_count = 0;
        self.out_seq = self.out_seq.next();
        self.out_seq
    }

    /// How far `header` is ahead of the last accepted packet, or 0 when it must be ignored
    /// (old, duplicate, or acking sequences we never sent) — `GetSequenceDelta`.
    pub fn sequence_delta(&self, h: &NotificationHeader) -> i32 {
        if h.seq.gt(self.in_seq) && h.acked_seq.ge(self.out_ack_seq) && self.out_seq.gt(h.acked_seq) {
            SeqNum::diff(h.seq, self.in_seq)
        } else {
            0
        }
    }

    /// Accepts `header`: reports every newly covered sequence of ours to `on_notify(seq,
    /// delivered)` once and moves `in_seq` forward. Returns the sequence delta (0 = ignored).
    pub fn update(&mut self, h: &NotificationHeader, on_notify: impl FnMut(SeqNum, bool)) -> i32 {
        let delta = self.sequence_delta(h);
        if delta > 0 {
            self.process_received_acks(h, on_notify);
            self.in_seq = h.seq;
        }
        delta
    }

    /// `ProcessReceivedAcks`: everything beyond the history is lost, the rest is looked up.
    fn process_received_acks(&mut self, h: &NotificationHeader, mut on_notify: impl FnMut(SeqNum, bool)) {
        if !h.acked_seq.gt(self.out_ack_seq) {
            return;
        }
        let mut ack_count = SeqNum::diff(h.acked_seq, self.out_ack_seq) as usize;
        self.in_ack_seq_ack = self.update_in_ack_seq_ack(ack_count, h.acked_seq);
        let mut current = self.out_ack_seq.next();
        while ack_count > MAX_SEQUENCE_HISTORY_LENGTH {
            ack_count -= 1;
            on_notify(current, false);
            current = current.next();
        }
        while ack_count > 0 {
            ack_count -= 1;
            on_notify(current, h.history.is_delivered(ack_count));
            current = current.next();
        }
        self.out_ack_seq = h.acked_seq;
    }

    /// Pops the ack records up to `acked_seq` and returns the `in_ack_seq` that packet carried:
    /// the remote has now seen our history up to there, so later headers can be shorter.
    fn update_in_ack_seq_ack(&mut self, ack_count: usize, acked_seq: SeqNum) -> SeqNum {
        if ack_count <= self.ack_record.len() {
            self.ack_record.drain(..ack_count - 1);
            if let Some((out, in_ack)) = self.ack_record.pop_front() {
                if out == acked_seq {
                    return in_ack;
                }
            }
        }
        // Pessimistic, as UE4: cannot happen for headers that passed `sequence_delta`.
        acked_seq.minus(MAX_SEQUENCE_HISTORY_LENGTH as u16)
    }

    /// Writes the delivery status of `seq` (the sequence just accepted) into the history,
    /// with a Nak for every sequence skipped before it (`AckSeq` / `NakSeq`).
    pub fn ack_seq(&mut self, seq: SeqNum, is_ack: bool) {
        while seq.gt(self.in_ack_seq) {
            self.in_ack_seq = self.in_ack_seq.next();
            let report = self.in_ack_seq == seq && is_ack;
            self.in_seq_history.add_delivery_status(report);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::bits::{BitReader, BitWriter};

    #[test]
    fn history_shifts_across_words() {
        let mut h = SequenceHistory::default();
        h.add_delivery_status(true);
        for _ in 0..40 {
            h.add_delivery_status(false);
        }
        assert!(h.is_delivered(40));
        assert!(!h.is_delivered(39) && !h.is_delivered(41));
    }

    #[test]
    fn header_round_trips_and_rejects_too_many_words() {
        let mut h = SequenceHistory::default();
        h.add_delivery_status(true);
        let hdr = NotificationHeader {
            seq: SeqNum::new(16000),
            acked_seq: SeqNum::new(5),
            history_word_count: 3,
            history: h,
        };
        let mut w = BitWriter::with_capacity(64);
        hdr.write(&mut w).unwrap();
        let bytes = w.finish();
        assert_eq!(bytes.len(), 16);
        assert_eq!(NotificationHeader::read(&mut BitReader::new(&bytes)).unwrap(), hdr);
        let bad = [0x0Fu8, 0, 0, 0];
        assert!(NotificationHeader::read(&mut BitReader::new(&bad)).is_err());
    }

    /// The seed's example: after 3, packets 6 and 8 are processed; history reads 00101 for 4..=8.
    #[test]
    fn gaps_are_written_as_naks() {
        let mut rx = PacketNotify::new(SeqNum::new(3), SeqNum::new(0));
        rx.ack_seq(SeqNum::new(6), true);
        rx.ack_seq(SeqNum::new(8), true);
        let h = rx.header_for_next_packet();
        assert_eq!(h.acked_seq, SeqNum::new(8));
        let bits: Vec<bool> = (0..5).map(|i| h.history.is_delivered(i)).collect();
        assert_eq!(bits, [true, false, true, false, false]);
    }

    #[test]
    fn sender_reports_each_sequence_once_and_beyond_history_as_lost() {
        let mut tx = PacketNotify::new(SeqNum::new(0), SeqNum::new(10));
        for _ in 0..300 {
            let _ = tx.header_for_next_packet();
            tx.commit_and_increment_out_seq();
        }
        // The remote received only the last packet (10 + 299).
        let mut history = SequenceHistory::default();
        history.add_delivery_status(true);
        let h = NotificationHeader { seq: SeqNum::new(1), acked_seq: SeqNum::new(309), history_word_count: 8, history };
        let mut seen = Vec::new();
        assert_eq!(tx.update(&h, |s, d| seen.push((s, d))), 1);
        assert_eq!(seen.len(), 300);
        assert_eq!(seen[0], (SeqNum::new(10), false));
        assert_eq!(seen[299], (SeqNum::new(309), true));
        assert_eq!(seen.iter().filter(|(_, d)| *d).count(), 1);
        // The same header again is ignored: nothing reported twice.
        assert_eq!(tx.update(&h, |_, _| panic!("reported twice")), 0);
    }
}
