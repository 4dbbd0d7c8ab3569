//! The exact bytes of a lane's datagrams, where its source had them: what a UDP endpoint wrote
//! on its socket, what the proxy read, what a capture held. The bytes pane shows them as sent
//! (EXACT) instead of re-encoding the lane.
//!
//! Events describe a datagram (its send id, size, fate); its payload is kept here, beside the
//! recording, keyed like the link's ground truth by `(client, uid)`. The source fills the store
//! from its own threads while the window reads it, so it sits behind a mutex shared by both
//! ([`SharedPayloads`]). A live store keeps to the live memory caps the window uses
//! ([`LiveLimits`]): the newest datagrams within `window_s` of run time and within a quarter of
//! `max_bytes` (the rest is the recording's), the oldest going first, as the proxy's own table
//! does. A store read back from a session's sidecar file ([`crate::session::payloads`]) holds
//! what was saved, uncapped.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use ackscope_protocol::{ClientId, SimTime};

use crate::app::live_log::LiveLimits;

/// Memory one entry costs besides its payload: the entry, its index slot, the allocation.
const ENTRY_OVERHEAD_BYTES: u64 = 96;

/// One datagram's bytes as its source saw them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    pub client: ClientId,
    /// The link's send id (`LinkSent`/`PacketSent { uid }` of this client).
    pub uid: u64,
    /// When it was sent (or read, for the proxy and a capture).
    pub at: SimTime,
    pub bytes: Vec<u8>,
}

/// The store, shared between a source's threads (which fill it) and the window (which reads it).
pub type SharedPayloads = Arc<Payloads>;

/// Datagram payloads by `(client, uid)`, oldest evicted first beyond the caps.
#[derive(Debug, Default)]
pub struct Payloads {
    table: Mutex<Table>,
}

#[derive(Debug)]
struct Table {
    entries: VecDeque<Payload>,
    /// `(client, uid)` to the entry's position counted from the first ever stored.
    index: HashMap<(ClientId, u64), u64>,
    /// Position of `entries[0]` in that count.
    first: u64,
    held_bytes: u64,
    cap_bytes: u64,
    window: SimTime,
    evicted: u64,
}

impl Default for Table {
    fn default() -> Self {
        Self::capped(LiveLimits::default())
    }
}

impl Table {
    fn capped(limits: LiveLimits) -> Self {
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

    fn cost(p: &Payload) -> u64 {
        p.bytes.len() as u64 + ENTRY_OVERHEAD_BYTES
    }

    /// Drops the oldest entries beyond the caps, `now` being the newest instant stored.
    fn evict(&mut self, now: SimTime) {
        while let Some(old) = self.entries.front() {
            let too_old = now.saturating_since(old.at) > self.window;
            if self.held_bytes <= self.cap_bytes && !too_old {
                break;
            }
            let old = self.entries.pop_front().expect("front exists");
            self.held_bytes -= Self::cost(&old);
            if self.index.get(&(old.client, old.uid)) == Some(&self.first) {
                self.index.remove(&(old.client, old.uid));
            }
            self.first += 1;
            self.evicted += 1;
        }
    }
}

impl Payloads {
    /// An empty store capped by `limits`, ready to share.
    pub fn shared(limits: LiveLimits) -> SharedPayloads {
        Arc::new(Self { table: Mutex::new(Table::capped(limits)) })
    }

    /// A store holding `entries` whatever their size (a saved session's: they were within the
    /// caps when recorded).
    pub fn loaded(entries: Vec<Payload>) -> SharedPayloads {
        let uncapped = LiveLimits { window_s: f64::INFINITY, max_bytes: u64::MAX };
        let store = Self::shared(uncapped);
        for p in entries {
            store.push(p);
        }
        store
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        // A panic elsewhere while holding the lock leaves a table that is still consistent.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets the caps (the window's settings, known once the source has started); the oldest
    /// entries beyond them go now.
    pub fn set_limits(&self, limits: LiveLimits) {
        let mut t = self.table();
        t.cap_bytes = limits.max_bytes / 4;
        t.window = SimTime::from_secs_f64(limits.window_s);
        let now = t.entries.back().map_or(SimTime::ZERO, |p| p.at);
        t.evict(now);
    }

    /// Stores a datagram's bytes; a later one with the same `(client, uid)` replaces it.
    pub fn push(&self, p: Payload) {
        let mut t = self.table();
        let pos = t.first + t.entries.len() as u64;
        t.held_bytes += Table::cost(&p);
        t.index.insert((p.client, p.uid), pos);
        let now = p.at;
        t.entries.push_back(p);
        t.evict(now);
    }

    /// [`Self::push`] of bytes borrowed from the sender.
    pub fn keep(&self, client: ClientId, uid: u64, at: SimTime, bytes: &[u8]) {
        self.push(Payload { client, uid, at, bytes: bytes.to_vec() });
    }

    /// The bytes of `client`'s send `uid`, while kept.
    pub fn get(&self, client: ClientId, uid: u64) -> Option<Vec<u8>> {
        let t = self.table();
        let pos = *t.index.get(&(client, uid))?;
        t.entries.get((pos - t.first) as usize).map(|p| p.bytes.clone())
    }

    /// Every payload kept, in the order stored (what a save writes).
    pub fn snapshot(&self) -> Vec<Payload> {
        self.table().entries.iter().cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.table().entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Payloads dropped to keep to the caps.
    pub fn evicted(&self) -> u64 {
        self.table().evicted
    }

    /// Memory the store reckons it holds.
    pub fn held_bytes(&self) -> u64 {
        self.table().held_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(client: ClientId, uid: u64, at_ms: u64, len: usize) -> Payload {
        Payload { client, uid, at: SimTime(at_ms * 1000), bytes: vec![uid as u8; len] }
    }

    #[test]
    fn the_store_finds_by_client_and_uid_and_keeps_to_its_caps() {
        let limits = LiveLimits { window_s: 10.0, max_bytes: 4 * 100 * (1000 + ENTRY_OVERHEAD_BYTES) };
        let s = Payloads::shared(limits);
        for uid in 0..250u64 {
            s.push(p(1 + (uid % 2) as u32, uid, uid, 1000));
        }
        // A quarter of the cap: the newest 100.
        assert_eq!(s.len(), 100);
        assert_eq!(s.evicted(), 150);
        assert!(s.get(1, 148).is_none() && s.get(1, 150).is_some());
        assert_eq!(s.get(2, 249).unwrap(), vec![249u8; 1000]);
        assert!(s.get(1, 249).is_none(), "uid 249 belongs to client 2");
        // Older than the window: gone whatever the bytes.
        s.push(p(1, 1000, 20_000, 10));
        assert_eq!(s.len(), 1);
        assert!(s.held_bytes() < 200);
        // Tighter caps later evict at once.
        for uid in 1001..1011 {
            s.push(p(1, uid, 20_000, 10));
        }
        s.set_limits(LiveLimits { window_s: 10.0, max_bytes: 4 * 3 * (10 + ENTRY_OVERHEAD_BYTES) });
        assert_eq!(s.len(), 3);
        assert_eq!(s.get(1, 1010).unwrap().len(), 10);
    }

    #[test]
    fn a_replaced_entry_is_found_after_its_first_copy_is_evicted() {
        let limits = LiveLimits { window_s: 1.0, max_bytes: u64::MAX };
        let s = Payloads::shared(limits);
        s.push(p(1, 7, 0, 4));
        s.push(Payload { bytes: vec![9; 4], ..p(1, 7, 900, 4) });
        s.push(p(1, 8, 1500, 4));
        assert_eq!(s.get(1, 7), Some(vec![9; 4]), "the newer copy stays findable");
    }

    #[test]
    fn a_loaded_store_keeps_everything() {
        let s = Payloads::loaded((0..5000).map(|u| p(1, u, u * 10_000, 2000)).collect());
        assert_eq!(s.len(), 5000);
        assert_eq!(s.snapshot()[4999].uid, 4999);
    }
}
