//! The bytes of every relayed datagram, kept beside the events for a bytes pane and a pcapng
//! export, keyed by `(client, uid)` like the link's ground truth.
//!
//! Events describe a datagram (size, fate); its payload is kept here, in arrival order, with the
//! instants it left the proxy. The table ([`KeptTable`]) keeps to the live memory caps the window
//! uses ([`LiveLimits`]), the oldest going first.

use ackscope_protocol::{ClientId, Dir, SimTime};
use serde::Serialize;

use crate::model::kept::{Kept, KeptTable};
use crate::model::limits::LiveLimits;

/// One datagram as it reached the proxy, and when each copy left it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Datagram {
    pub client: ClientId,
    pub dir: Dir,
    /// The link's send id (`LinkSent { uid }` of this client).
    pub uid: u64,
    /// When the proxy read it (µs since the proxy started).
    pub at: SimTime,
    pub bytes: Vec<u8>,
    /// When each copy was sent on (one per delivered copy; empty when dropped or still in flight).
    pub forwarded: Vec<SimTime>,
}

/// A copy sent on: which datagram, when.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Forward {
    pub client: ClientId,
    pub uid: u64,
    pub at: SimTime,
}

impl Kept for Datagram {
    fn key(&self) -> (ClientId, u64) {
        (self.client, self.uid)
    }
    fn at(&self) -> SimTime {
        self.at
    }
    fn payload_len(&self) -> usize {
        self.bytes.len()
    }
}

/// The side table of datagram bytes.
pub type ByteStore = KeptTable<Datagram>;

impl ByteStore {
    pub fn new(limits: LiveLimits) -> Self {
        Self::capped(limits)
    }

    /// Notes that a copy of `(client, uid)` left at `f.at` (ignored once the datagram is evicted).
    pub fn forwarded(&mut self, f: Forward) {
        if let Some(d) = self.get_mut(f.client, f.uid) {
            d.forwarded.push(f.at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kept::ENTRY_OVERHEAD_BYTES;

    fn dg(client: ClientId, uid: u64, at_ms: u64, len: usize) -> Datagram {
        Datagram {
            client,
            dir: Dir::BtoA,
            uid,
            at: SimTime(at_ms * 1000),
            bytes: vec![uid as u8; len],
            forwarded: vec![],
        }
    }

    #[test]
    fn the_table_finds_by_client_and_uid_and_keeps_to_its_caps() {
        let limits = LiveLimits { window_s: 10.0, max_bytes: 4 * 100 * (1000 + ENTRY_OVERHEAD_BYTES) };
        let mut t = ByteStore::new(limits);
        for uid in 0..250u64 {
            t.push(dg(1 + (uid % 2) as u32, uid, uid, 1000));
        }
        // A quarter of the cap: 100 entries, the newest.
        assert_eq!(t.len(), 100);
        assert_eq!(t.evicted(), 150);
        assert!(t.get(1, 148).is_none() && t.get(1, 150).is_some());
        assert_eq!(t.get(2, 249).unwrap().bytes[0], 249);
        assert!(t.get(1, 249).is_none(), "uid 249 belongs to client 2");
        t.forwarded(Forward { client: 2, uid: 249, at: SimTime(300_000) });
        assert_eq!(t.get(2, 249).unwrap().forwarded, vec![SimTime(300_000)]);
        // Older than the window: gone whatever the bytes.
        t.push(dg(1, 1000, 20_000, 10));
        assert_eq!(t.len(), 1);
        assert!(t.held_bytes() < 200);
    }
}
