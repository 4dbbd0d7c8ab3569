//! What a panel draws for one lane: the lane (its description, its whole log) and the connection
//! the window is focused on.
//!
//! The Clients tab chooses the focused client; every other panel reads the focused client's
//! connection through this, so focusing client 7 shows client 7 in Overview, Messages,
//! Packets, Anomalies, Summary and Compare alike. A lane without that client shows its first.

use ackscope_protocol::{ClientId, SimTime};

use super::connection::Connection;
use super::recording::Recording;
use crate::lane::{LaneColor, LaneInfo};

/// A lane and its focused connection.
#[derive(Clone, Copy)]
pub struct Shown<'a> {
    pub rec: &'a Recording,
    pub conn: &'a Connection,
}

impl std::ops::Deref for Shown<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl<'a> From<&'a Recording> for Shown<'a> {
    /// The lane's first client.
    fn from(rec: &'a Recording) -> Self {
        Shown { rec, conn: rec.primary() }
    }
}

impl<'a> Shown<'a> {
    /// `rec` focused on `client` (its first client when it has no such client).
    pub fn focus(rec: &'a Recording, client: ClientId) -> Self {
        Shown { rec, conn: rec.client_or_primary(client) }
    }

    /// Every lane focused on `client`.
    pub fn all(lanes: &'a [Recording], client: ClientId) -> Vec<Self> {
        lanes.iter().map(|rec| Self::focus(rec, client)).collect()
    }

    /// Identifies the lane and the client together: view state kept per lane starts afresh when
    /// either changes (a selection in client 3's packet log means nothing in client 4's).
    pub fn id(&self) -> u64 {
        self.rec.id().wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(self.conn.client)
    }

    pub fn info(&self) -> &'a LaneInfo {
        &self.rec.info
    }

    /// The lane's name (every protocol it ran, in order).
    pub fn label(&self) -> String {
        self.rec.info.label()
    }

    /// The lane's colour at `t`.
    pub fn color_at(&self, t: SimTime) -> LaneColor {
        self.rec.info.color_at(t)
    }

    /// True when the lane carries messages: it ran a strategy of ackscope's that has them, or
    /// (a protocol ackscope does not know) its events queued some.
    pub fn has_messages(&self) -> bool {
        let info = &self.rec.info;
        info.ever(|s| ackscope_protocol::registry::info(s).has_messages)
            || (info.runs().iter().any(|(_, p)| p.strategy.is_none()) && !self.conn.messages.is_empty())
    }

    /// True when the lane ran UE4 at any point (its own figures apply).
    pub fn ran_ue4(&self) -> bool {
        self.rec.info.ever(|s| s == ackscope_protocol::Strategy::Ue4)
    }

    /// The latest time of the focused connection.
    pub fn end_time(&self) -> SimTime {
        self.conn.store.end_time()
    }
}
