//! The reusable parts strategies are built from: packet acks, reliable ordered messages, the
//! message layer over delivery notification, estimators, flow control and send budgets.
//!
//! - [`ack`]: reliable.io-style packet acks ([`AckEndpoint`]).
//! - [`channel`]: Glenn's reliable-ordered message channel ([`ReliableChannel`]).
//! - [`message`]: the message objects that channel carries.
//! - [`outbox`]: messages over delivery notification (which message rode in which packet, what to
//!   resend, newest-state snapshots) and the message block codec.
//! - [`stats`]: RTT, loss and bandwidth estimators; [`loss`]: which packets count as lost, judged
//!   over a window defined in time.
//! - [`flow`]: rellikt's RTT-driven send-rate switch.
//! - [`budget`]: the per-tick byte budget of bandwidth-limited senders.

pub mod ack;
pub mod budget;
pub mod channel;
pub mod flow;
pub mod loss;
pub mod message;
pub mod outbox;
pub mod stats;

pub use ack::{AckConfig, AckCounters, AckEndpoint, Acked, HeaderVerdict};
pub use budget::TickBudget;
pub use channel::{ChannelError, ChannelSizes, ReliableChannel};
pub use flow::{FlowConfig, FlowControl};
pub use loss::{AckLossJudge, LossJudge, LossWindow, LOSS_WINDOW_MS};
pub use message::{Message, MessageError, MessageFactory, MessageType};
pub use outbox::{Inbox, Outbox, OutboxConfig};
pub use stats::{RttFilter, StatsConfig};
