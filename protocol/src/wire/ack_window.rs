//! An ack header rebuilt from the sequences its sender had accepted: what a packet said about
//! the packets it acknowledged, when only events were recorded.
//!
//! Recordings keep events, not packet bytes, yet the ack part of a packet's header is a pure
//! function of what its sender had accepted from the peer before writing it: reliable.io (glenn,
//! hybrid, dnm...) writes the most recent sequence received and 32 bits naming the ones before it
//! ([`super::PacketHeader`]); UE4's notify header writes its last accepted sequence and a history
//! whose bit `i` says whether `acked_seq - i` was acked. [`ack_window`] folds a sender's receipts
//! (its `PacketReceived` sequences, oldest first) into that pair, so a view can show a recorded
//! packet's header field by field. Values outside the sequence space (a corrupt log) are counted
//! in [`AckWindow::out_of_range`] and skipped, never a panic.

/// The ack fields of one header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckWindow {
    /// Most recent sequence received (in wrapping order).
    pub ack: u32,
    /// Bit `i` set: sequence `ack - i` was received (bit 0 is `ack` itself).
    pub bits: u32,
    /// Receipts skipped because they do not fit the sequence space.
    pub out_of_range: u32,
}

/// Sequence bits of reliable.io's header.
pub const RELIABLE_IO_SEQ_BITS: u32 = 16;
/// Sequence bits of UE4's packet notify header.
pub const UE4_SEQ_BITS: u32 = 14;

/// `a` is after `b` in a `seq_bits`-bit wrapping sequence space.
fn after(a: u32, b: u32, seq_bits: u32) -> bool {
    let mask = (1u32 << seq_bits) - 1;
    let d = a.wrapping_sub(b) & mask;
    d != 0 && d < (1 << (seq_bits - 1))
}

/// The ack fields a sender writes after accepting `received` (oldest first) in a `seq_bits`-bit
/// sequence space (16 for reliable.io, 14 for UE4; other widths are clamped to 1..=31); `None`
/// when nothing usable was received yet.
///
/// Pass the recent receipts only (a sender's receive buffer spans a few hundred packets): a
/// receipt a whole sequence wrap old would otherwise read as recent.
pub fn ack_window(received: &[u32], seq_bits: u32) -> Option<AckWindow> {
    let seq_bits = seq_bits.clamp(1, 31);
    let mask = (1u32 << seq_bits) - 1;
    let mut out_of_range = 0;
    let mut ack: Option<u32> = None;
    for &s in received {
        if s > mask {
            out_of_range += 1;
            continue;
        }
        if ack.is_none_or(|a| after(s, a, seq_bits)) {
            ack = Some(s);
        }
    }
    let ack = ack?;
    let mut bits = 0u32;
    for &s in received.iter().filter(|&&s| s <= mask) {
        let d = ack.wrapping_sub(s) & mask;
        if d < 32 {
            bits |= 1 << d;
        }
    }
    Some(AckWindow { ack, bits, out_of_range })
}

/// The sequences `bits` names as received, newest first (`ack`, `ack - 1`, ...), wrapping in a
/// `seq_bits`-bit space.
pub fn acked_sequences(ack: u32, bits: u32, seq_bits: u32) -> impl Iterator<Item = u32> {
    let mask = (1u32 << seq_bits.clamp(1, 31)) - 1;
    (0..32u32).filter(move |i| bits & (1 << i) != 0).map(move |i| ack.wrapping_sub(i) & mask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::PacketHeader;

    #[test]
    fn nothing_received_gives_no_header_fields() {
        assert_eq!(ack_window(&[], 16), None);
    }

    #[test]
    fn gaps_and_reordering_set_exactly_the_received_bits() {
        // 10, 12, then 11 late, 14: ack 14, received 14, 12, 11, 10 -> bits 0, 2, 3, 4.
        let w = ack_window(&[10, 12, 11, 14], 16).unwrap();
        assert_eq!((w.ack, w.bits, w.out_of_range), (14, 0b11101, 0));
        assert_eq!(acked_sequences(w.ack, w.bits, 16).collect::<Vec<_>>(), vec![14, 12, 11, 10]);
    }

    #[test]
    fn the_most_recent_sequence_wraps() {
        let w = ack_window(&[65534, 65535, 0, 1], 16).unwrap();
        assert_eq!(w.ack, 1);
        assert_eq!(w.bits, 0b1111);
        assert_eq!(acked_sequences(w.ack, w.bits, 16).collect::<Vec<_>>(), vec![1, 0, 65535, 65534]);
        // UE4's 14-bit space wraps at 16384.
        let w = ack_window(&[16383, 0], UE4_SEQ_BITS).unwrap();
        assert_eq!((w.ack, w.bits), (0, 0b11));
    }

    #[test]
    fn old_receipts_beyond_32_are_not_in_the_bits() {
        let received: Vec<u32> = (0..100).collect();
        let w = ack_window(&received, 16).unwrap();
        assert_eq!((w.ack, w.bits), (99, u32::MAX));
        let w = ack_window(&[0, 40], 16).unwrap();
        assert_eq!((w.ack, w.bits), (40, 1));
    }

    #[test]
    fn malformed_receipts_are_counted_not_panicked_on() {
        // Values beyond the sequence space, duplicates, and absurd widths.
        let w = ack_window(&[u32::MAX, 70_000, 5, 5, 3], 16).unwrap();
        assert_eq!((w.ack, w.bits, w.out_of_range), (5, 0b101, 2));
        assert_eq!(ack_window(&[u32::MAX], 16), None);
        assert!(ack_window(&[1, 2, 3], 0).is_some());
        assert!(ack_window(&[1, 2, 3], 99).is_some());
        assert_eq!(acked_sequences(0, 1, 0).count(), 1);
    }

    #[test]
    fn the_rebuilt_fields_survive_the_wire_codec() {
        let w = ack_window(&[100, 101, 103, 104, 107], 16).unwrap();
        let h = PacketHeader { sequence: 110, ack: w.ack as u16, ack_bits: w.bits };
        let mut out = Vec::new();
        let n = h.encode(&mut out);
        assert_eq!(PacketHeader::decode(&out), Ok((h, n)));
        // Cut short or with reserved bits, the decoder refuses instead of panicking.
        for cut in 0..n {
            assert!(PacketHeader::decode(&out[..cut]).is_err(), "{cut} bytes");
        }
        let mut bad = out.clone();
        bad[0] |= 0x80;
        assert!(PacketHeader::decode(&bad).is_err());
    }
}
