//! Bytes on the wire: bit-packed streams, wrapping sequence arithmetic (16-bit, and any width up
//! to 31 bits for UE4's 14-bit packet ids), the reliable.io packet header codec and its fragments.
//!
//! Everything here is a pure codec or arithmetic over bytes and numbers: no events, no time, no
//! endpoint state beyond the rolling [`SequenceBuffer`]. Strategies build their packet formats on
//! these pieces.

pub mod ack_window;
pub mod bits;
pub mod fragment;
pub mod header;
pub mod sequence;

pub use ack_window::{ack_window, acked_sequences, AckWindow, RELIABLE_IO_SEQ_BITS, UE4_SEQ_BITS};
pub use bits::{bits_required, BitError, BitReader, BitWriter, MeasureStream, Stream};
pub use fragment::{
    decode_fragment, write_fragments, Fragment, FragmentConfig, FragmentError, FragmentHeader, FragmentOutcome,
    Reassembled, Reassembly,
};
pub use header::{HeaderError, PacketHeader};
pub use sequence::{
    sequence_difference, sequence_greater_than, sequence_less_than, sign_extended_difference, SequenceBuffer,
};
