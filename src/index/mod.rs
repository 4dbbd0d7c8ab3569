//! Indexes built incrementally from the event stream for the views.
//!
//! Each index takes events one at a time (`ingest`) in emission order and keeps what its view
//! needs to draw any time range cheaply; nothing is rebuilt per frame.

pub mod messages;

pub use messages::{MessageFilter, MessageIndex, MessageRecord, MsgKey, PacketFate, SendRecord};
