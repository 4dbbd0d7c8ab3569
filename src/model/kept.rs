//! A table of datagram payloads kept beside a recording, keyed like the link's ground truth by
//! `(client, uid)`, to the live memory caps the window uses ([`LiveLimits`]): the newest entries
//! within `window_s` of run time and within a quarter of `max_bytes` (the rest of the cap is the
//! recording's), the oldest going first. The proxy's byte store ([`crate::proxy::ByteStore`])
//! and the window's payload store ([`super::payloads`]) are both this table.

use std::collections::{HashMap, VecDeque};

use ackscope_protocol::{ClientId, SimTime};

use crate::model::limits::LiveLimits;

/// Memory one entry costs besides its payload: the entry, its index slot, the allocation.
pub const ENTRY_OVERHEAD_BYTES: u64 = 96;

/// What the table needs of an entry.
pub trait Kept {
    /// `(client, uid)`: the link's send id of this client.
    fn key(&self) -> (ClientId, u64);
    /// When it was sent or read (the window cap is in these instants).
    fn at(&self) -> SimTime;
    /// Its payload's length, the part of its cost that varies.
    fn payload_len(&self) -> usize;
}

/// Entries by `(client, uid)`, in the order stored, oldest evicted first beyond the caps; a later
/// entry with the same key replaces the earlier one for lookups.
#[derive(Debug)]
pub struct KeptTable<T> {
    entries: VecDeque<T>,
    /// `(client, uid)` to the entry's position counted from the first ever stored.
    index: HashMap<(ClientId, u64), u64>,
    /// Position of `entries[0]` in that count.
    first: u64,
    held_bytes: u64,
    cap_bytes: u64,
    window: SimTime,
    evicted: u64,
}

impl<T: Kept> Default for KeptTable<T> {
    fn default() -> Self {
        Self::capped(LiveLimits::default())
    }
}

impl<T: Kept> KeptTable<T> {
    /// An empty table capped by `limits`.
    pub fn capped(limits: LiveLimits) -> Self {
        let mut t = Self {
            entries: VecDeque::new(),
            index: HashMap::new(),
            first: 0,
            held_bytes: 0,
            cap_bytes: 0,
            window: SimTime::ZERO,
            evicted: 0,
        };
        t.set_caps(limits);
        t
    }

    fn set_caps(&mut self, limits: LiveLimits) {
        self.cap_bytes = limits.max_bytes / 4;
        self.window = SimTime::from_secs_f64(limits.window_s);
    }

    /// Sets the caps; the oldest entries beyond them go now.
    pub fn set_limits(&mut self, limits: LiveLimits) {
        self.set_caps(limits);
        let now = self.entries.back().map_or(SimTime::ZERO, Kept::at);
        self.evict(now);
    }

    fn cost(e: &T) -> u64 {
        e.payload_len() as u64 + ENTRY_OVERHEAD_BYTES
    }

    /// Stores an entry, evicting the oldest beyond the caps.
    pub fn push(&mut self, e: T) {
        let pos = self.first + self.entries.len() as u64;
        self.held_bytes += Self::cost(&e);
        self.index.insert(e.key(), pos);
        let now = e.at();
        self.entries.push_back(e);
        self.evict(now);
    }

    /// Drops the oldest entries beyond the caps, `now` being the newest instant stored.
    fn evict(&mut self, now: SimTime) {
        while let Some(old) = self.entries.front() {
            let too_old = now.saturating_since(old.at()) > self.window;
            if self.held_bytes <= self.cap_bytes && !too_old {
                break;
            }
            let old = self.entries.pop_front().expect("front exists");
            self.held_bytes -= Self::cost(&old);
            // A later entry with the same key keeps its own index slot.
            if self.index.get(&old.key()) == Some(&self.first) {
                self.index.remove(&old.key());
            }
            self.first += 1;
            self.evicted += 1;
        }
    }

    /// The entry `uid` of `client`, while kept.
    pub fn get(&self, client: ClientId, uid: u64) -> Option<&T> {
        let pos = *self.index.get(&(client, uid))?;
        self.entries.get((pos - self.first) as usize)
    }

    /// [`Self::get`], to change it in place.
    pub fn get_mut(&mut self, client: ClientId, uid: u64) -> Option<&mut T> {
        let pos = *self.index.get(&(client, uid))?;
        self.entries.get_mut((pos - self.first) as usize)
    }

    /// Every entry kept, in the order stored (what a save or an export writes).
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.entries.iter()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries dropped to keep to the caps.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// Memory the table reckons it holds.
    pub fn held_bytes(&self) -> u64 {
        self.held_bytes
    }
}
