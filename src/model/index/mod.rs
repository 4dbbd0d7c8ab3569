//! Indexes built incrementally from the event stream for the panels: per-message lifecycles
//! ([`messages`]), the packet log ([`packets`]), the chunk slice map ([`chunks`]) and the Summary
//! tab's metric folds ([`summary`]).
//!
//! Each index takes events one at a time in emission order and keeps the times at which things
//! happened rather than a current state, so a view can ask "what was true at the cursor" with a
//! comparison or a binary search instead of replaying the log; nothing is rebuilt per frame.
//!
//! What happened to each packet (the link's verdict, the receiver's acceptance, the sender's ack
//! or nak) is not an index's: the recording's `PacketLedger` folds it once, before the indexes
//! see the event, and the packet log and the message timeline keep only link send ids and ask
//! the ledger.

pub mod chunks;
pub mod messages;
pub mod packets;
pub mod summary;
pub mod uid_table;

pub use chunks::{ChunkIndex, ChunkRecord, SliceRecord, SliceState};
pub use messages::{MessageFilter, MessageIndex, MessageRecord, MsgKey, SendRecord};
pub use packets::{
    DirFilter, Fate, FateFilter, FilteredRows, PacketFilter, PacketIndex, PacketRow, PacketSend, RowContents,
};
pub use summary::{SummaryFigures, SummaryFold};
pub use uid_table::UidTable;
