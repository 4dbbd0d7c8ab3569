//! The exact bytes of a lane's datagrams, where its source had them: what a UDP endpoint wrote
//! on its socket, what the proxy read, what a capture held. The bytes pane shows them as sent
//! (EXACT) instead of re-encoding the lane.
//!
//! Events describe a datagram (its send id, size, fate); its payload is kept here, beside the
//! recording, keyed like the link's ground truth by `(client, uid)`. The source fills the store
//! from its own threads while the window reads it, so it sits behind a mutex shared by both
//! ([`SharedPayloads`]). It keeps to the live memory caps the window uses, as the proxy's own
//! byte store does: both are a [`KeptTable`]. A saved session keeps them
//! ([`crate::session::payloads`]: [`saved`] turns a store into its entries), and reopening it
//! fills a store again ([`store_of`]).

use std::sync::{Arc, Mutex, PoisonError};

use ackscope_protocol::{ClientId, SimTime};

use super::kept::{Kept, KeptTable};
use crate::model::limits::LiveLimits;
use crate::session::payloads::SavedPayload;

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

impl Kept for Payload {
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

/// The store, shared between a source's threads (which fill it) and the window (which reads it).
pub type SharedPayloads = Arc<Payloads>;

/// Datagram payloads by `(client, uid)`, oldest evicted first beyond the caps.
#[derive(Debug, Default)]
pub struct Payloads {
    table: Mutex<KeptTable<Payload>>,
}

impl Payloads {
    /// An empty store capped by `limits`, ready to share.
    pub fn shared(limits: LiveLimits) -> SharedPayloads {
        Arc::new(Self { table: Mutex::new(KeptTable::capped(limits)) })
    }

    fn table(&self) -> std::sync::MutexGuard<'_, KeptTable<Payload>> {
        // A panic elsewhere while holding the lock leaves a table that is still consistent.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets the caps (the window's settings, known once the source has started); the oldest
    /// entries beyond them go now.
    pub fn set_limits(&self, limits: LiveLimits) {
        self.table().set_limits(limits);
    }

    /// Stores a datagram's bytes; a later one with the same `(client, uid)` replaces it.
    pub fn push(&self, p: Payload) {
        self.table().push(p);
    }

    /// [`Self::push`] of bytes borrowed from the sender.
    pub fn keep(&self, client: ClientId, uid: u64, at: SimTime, bytes: &[u8]) {
        self.push(Payload { client, uid, at, bytes: bytes.to_vec() });
    }

    /// The bytes of `client`'s send `uid`, while kept.
    pub fn get(&self, client: ClientId, uid: u64) -> Option<Vec<u8>> {
        self.table().get(client, uid).map(|p| p.bytes.clone())
    }

    /// A copy of every payload kept, in the order stored (what a save writes).
    pub fn all(&self) -> Vec<Payload> {
        self.table().iter().cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.table().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Payloads dropped to keep to the caps.
    pub fn evicted(&self) -> u64 {
        self.table().evicted()
    }

    /// Memory the store reckons it holds.
    pub fn held_bytes(&self) -> u64 {
        self.table().held_bytes()
    }
}

/// Every payload `store` holds, oldest first (ties by client and uid), as a session keeps them.
pub fn saved(store: &Payloads) -> Vec<SavedPayload> {
    let mut v: Vec<SavedPayload> = store
        .all()
        .into_iter()
        .map(|p| SavedPayload { client: p.client, uid: p.uid, at_us: p.at.0, hex: p.bytes })
        .collect();
    v.sort_by_key(|p| (p.at_us, p.client, p.uid));
    v
}

/// A store holding `saved`, uncapped (a file's payloads are all kept, as its events are); `None`
/// when there are none, so the bytes pane re-encodes as it does for any recording without them.
pub fn store_of(saved: &[SavedPayload]) -> Option<SharedPayloads> {
    if saved.is_empty() {
        return None;
    }
    // Caps no file reaches: a thousand million seconds, all the memory there is.
    let store = Payloads::shared(LiveLimits { window_s: 1e9, max_bytes: u64::MAX });
    for p in saved {
        store.push(Payload { client: p.client, uid: p.uid, at: SimTime(p.at_us), bytes: p.hex.clone() });
    }
    Some(store)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kept::ENTRY_OVERHEAD_BYTES;

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
}
