//! The UE4 figures the CLI reports, computed from events so recorded sessions give them too.

use serde::{Deserialize, Serialize};

use crate::event::{Event, EventKind, SendKind};

/// Totals over both sides of a UE4 run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Ue4Summary {
    /// Packets reported lost to their sender (`PacketNakked`).
    pub naks_received: u64,
    /// Message bunches sent again after a Nak (`MessageSent` with `NakResend`).
    pub bunches_resent: u64,
    /// Deepest `InRec` queue seen (`Ue4InRec`).
    pub max_inrec_depth: u32,
    /// Longest a channel stayed blocked behind a missing reliable bunch, in milliseconds.
    pub max_inrec_blocked_ms: f64,
    pub connection_closed: bool,
    /// The first close reason, if any.
    pub close_reason: Option<String>,
}

impl Ue4Summary {
    pub fn from_events(events: &[Event]) -> Self {
        let mut s = Ue4Summary::default();
        let mut max_blocked_us = 0;
        for e in events {
            match &e.kind {
                EventKind::PacketNakked { .. } => s.naks_received += 1,
                EventKind::MessageSent { kind: SendKind::NakResend, .. } => s.bunches_resent += 1,
                EventKind::Ue4InRec { depth, blocked_us, .. } => {
                    s.max_inrec_depth = s.max_inrec_depth.max(*depth);
                    max_blocked_us = max_blocked_us.max(*blocked_us);
                }
                EventKind::ConnectionClosed { reason, .. } => {
                    s.connection_closed = true;
                    s.close_reason.get_or_insert_with(|| reason.clone());
                }
                _ => {}
            }
        }
        s.max_inrec_blocked_ms = max_blocked_us as f64 / 1000.0;
        s
    }
}
