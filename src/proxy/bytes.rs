//! The bytes of every relayed datagram, kept beside the events for a bytes pane and a pcapng
//! export, keyed by `(client, uid)` like the link's ground truth.
//!
//! Events describe a datagram (size, fate); its payload is kept here, in arrival order, with the
//! instants it left the proxy. The table keeps to the live memory caps the window uses
//! ([`LiveLimits`]): the newest datagrams within `window_s` of run time and within a quarter of
//! `max_bytes` (the rest of the cap is the recording's), the oldest going first.

use std::collections::{HashMap, VecDeque};

use ackscope_protocol::{ClientId, Dir, SimTime};
use serde::Serialize;

use crate::app::live_log::LiveLimits;

/// Memory one entry costs besides its payload: the entry, its index slot, the allocation.
const ENTRY_OVERHEAD_BYTES: u64 = 96;

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

/// The side table of datagram bytes.
#[derive(Debug)]
pub struct ByteStore {
    entries: VecDeque<Datagram>,
    /// `(client, uid)` to the entry's position counted from the first ever stored.
    index: HashMap<(ClientId, u64), u64>,
    /// Position of `entries[0]` in that count.
    first: u64,
    held_bytes: u64,
    cap_bytes: u64,
    window: SimTime,
    evicted: u64,
}

impl ByteStore {
    pub fn new(limits: LiveLimits) -> Self {
        Self {
            entries: VecDeque::new(),
            index: HashMap::new(),
            first: 0,
            held_bytes: 0,
            cap_bytes: limits.max_bytes / 4,
            window: SimTime::from_secs_f64(limits.window_s),
            evicted: 0,
        }
    }

    fn cost(d: &Datagram) -> u64 {
        d.bytes.len() as u64 + ENTRY_OVERHEAD_BYTES
    }

    /// Stores a datagram just read, evicting the oldest beyond the caps.
    pub fn push(&mut self, d: Datagram) {
        let pos = self.first + self.entries.len() as u64;
        self.held_bytes += Self::cost(&d);
        self.index.insert((d.client, d.uid), pos);
        let now = d.at;
        self.entries.push_back(d);
        while let Some(old) = self.entries.front() {
            let too_old = now.saturating_since(old.at) > self.window;
            if self.held_bytes <= self.cap_bytes && !too_old {
                break;
            }
            let old = self.entries.pop_front().expect("front exists");
            self.held_bytes -= Self::cost(&old);
            self.index.remove(&(old.client, old.uid));
            self.first += 1;
            self.evicted += 1;
        }
    }

    /// Notes that a copy of `(client, uid)` left at `f.at` (ignored once the datagram is evicted).
    pub fn forwarded(&mut self, f: Forward) {
        if let Some(&pos) = self.index.get(&(f.client, f.uid)) {
            if let Some(d) = self.entries.get_mut((pos - self.first) as usize) {
                d.forwarded.push(f.at);
            }
        }
    }

    /// The datagram `uid` of `client`, while kept.
    pub fn get(&self, client: ClientId, uid: u64) -> Option<&Datagram> {
        let pos = *self.index.get(&(client, uid))?;
        self.entries.get((pos - self.first) as usize)
    }

    /// Every datagram kept, in arrival order (what a save or an export writes).
    pub fn iter(&self) -> impl Iterator<Item = &Datagram> {
        self.entries.iter()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Datagrams dropped from the table to keep to the caps.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// Memory the table reckons it holds.
    pub fn held_bytes(&self) -> u64 {
        self.held_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
