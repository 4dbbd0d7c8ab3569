//! Jumping from one panel to a thing in another: a message, a packet or a slice of one lane.
//!
//! A view pushes [`AppCommand::Reveal`](super::AppCommand::Reveal); applying it switches to the
//! tab that shows the target, moves the cursor if asked, and leaves a [`Reveal`] with a new serial
//! number in [`AppState::reveal`](super::AppState::reveal). The target panel, which keeps its own
//! view state, selects and scrolls to it the first time it sees that serial: the app state holds
//! no egui types and no panel's state, and every panel reveals the same way.

use ackscope_protocol::{Side, SimTime};

use super::tab::Tab;

/// What to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevealTarget {
    /// Message `id` sent by `side`, in the Messages tab.
    Message { lane: usize, side: Side, id: u64 },
    /// Link send `uid`, in the Packets tab (its row selected, its detail open).
    Packet { lane: usize, uid: u64 },
    /// Slice `slice` of the chunk with wire id `chunk` sent by `side` around `at`, in the Slices tab.
    Slice { lane: usize, side: Side, chunk: u32, slice: u32, at: SimTime },
}

impl RevealTarget {
    /// The lane the target belongs to.
    pub fn lane(&self) -> usize {
        match *self {
            RevealTarget::Message { lane, .. }
            | RevealTarget::Packet { lane, .. }
            | RevealTarget::Slice { lane, .. } => lane,
        }
    }

    /// The tab that shows it.
    pub fn tab(&self) -> Tab {
        match self {
            RevealTarget::Message { .. } => Tab::Messages,
            RevealTarget::Packet { .. } => Tab::Packets,
            RevealTarget::Slice { .. } => Tab::Slices,
        }
    }
}

/// The latest reveal asked for; `serial` grows with each, so a panel acts on each once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reveal {
    pub serial: u64,
    pub target: RevealTarget,
}

/// Tracks which reveal a panel has acted on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RevealSeen(u64);

impl RevealSeen {
    /// The target of `reveal` when it is new to this panel (marking it seen).
    pub fn take(&mut self, reveal: Option<&Reveal>) -> Option<RevealTarget> {
        let r = reveal?;
        if r.serial <= self.0 {
            return None;
        }
        self.0 = r.serial;
        Some(r.target)
    }
}
