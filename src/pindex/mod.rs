//! Per-panel indexes built incrementally from the event stream: the chunk slice map
//! ([`chunks::ChunkIndex`]) and the packet log ([`packets::PacketIndex`]).
//!
//! Each index keeps the times at which things happened rather than a current state, so a view can
//! ask "what was true at the cursor" without replaying the log: the state of a slice or a packet
//! at any time is a comparison (or a binary search) over the stored times.

pub mod chunks;
pub mod packets;

pub use chunks::{ChunkIndex, ChunkRecord, SliceRecord, SliceState};
pub use packets::{DirFilter, Fate, FateFilter, FilteredRows, PacketFilter, PacketIndex, PacketRow, RowContents};
