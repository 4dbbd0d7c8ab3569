//! Send ids of the real-time transports, and the book that lets a receiver in the same process
//! name a datagram by its sender's id and send instant.

use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, MutexGuard};

use ackscope_protocol::{Side, SimTime};

/// Send ids are `n * UID_KINDS + kind`: kind 0 and 1 are side A's and side B's sends, 2 and 3
/// datagrams side A or side B received without a name for them (another process's sends, see
/// [`UidBook`]). Ids from different sources never collide and stay small, since ground-truth
/// tallies (the simulation's among them) index tables by id.
pub const UID_KINDS: u64 = 4;

/// The id of `side`'s `n`-th send.
pub fn send_uid(side: Side, n: u64) -> u64 {
    n * UID_KINDS + side.index() as u64
}

/// The id of the `n`-th datagram `receiver` could not name.
pub fn unnamed_uid(receiver: Side, n: u64) -> u64 {
    n * UID_KINDS + 2 + receiver.index() as u64
}

/// What the book knows of one send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BookEntry {
    pub uid: u64,
    /// The instant the sender's driver sent it, when recorded.
    pub sent_at: Option<SimTime>,
}

/// Lets the receiving endpoint name a datagram by the id its sender gave that send, and know the
/// instant it was sent, when both endpoints live in one process.
///
/// Ground truth (was this acked send ever delivered?) needs the link events on the receiving side
/// and the `PacketSent` on the sending side to carry the same id, but the wire format must stay
/// the strategy's own (for `--raw` interop), so the id cannot travel in the datagram. The sender
/// records `content -> id` before the datagram leaves; the receiver looks its bytes up. Identical
/// datagrams queue in send order.
///
/// The send instant lets the receiving link key its random draws by send time, as the
/// simulation's link does, so a UDP run meets the same per-packet fates as a simulated one.
#[derive(Debug, Default)]
pub struct UidBook {
    map: Mutex<HashMap<u64, VecDeque<BookEntry>>>,
}

/// Entries kept before the book forgets everything (only datagrams lost outside the simulated
/// link, e.g. by a full socket buffer, are never taken back out).
const UID_BOOK_MAX_ENTRIES: usize = 1 << 16;

impl UidBook {
    fn key(bytes: &[u8]) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        bytes.hash(&mut h);
        h.finish()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, VecDeque<BookEntry>>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes that the datagram `bytes` is send `uid`, sent at an unknown instant.
    pub fn record(&self, bytes: &[u8], uid: u64) {
        self.record_entry(bytes, BookEntry { uid, sent_at: None });
    }

    /// Notes that the datagram `bytes` is send `uid`, sent at `sent_at`.
    pub fn record_sent(&self, bytes: &[u8], uid: u64, sent_at: SimTime) {
        self.record_entry(bytes, BookEntry { uid, sent_at: Some(sent_at) });
    }

    fn record_entry(&self, bytes: &[u8], entry: BookEntry) {
        let mut m = self.lock();
        if m.len() >= UID_BOOK_MAX_ENTRIES {
            m.clear();
        }
        m.entry(Self::key(bytes)).or_default().push_back(entry);
    }

    /// The send id of the oldest unclaimed datagram with these bytes.
    pub fn take(&self, bytes: &[u8]) -> Option<u64> {
        self.take_entry(bytes).map(|e| e.uid)
    }

    /// What was recorded of the oldest unclaimed datagram with these bytes.
    pub fn take_entry(&self, bytes: &[u8]) -> Option<BookEntry> {
        let mut m = self.lock();
        let k = Self::key(bytes);
        let q = m.get_mut(&k)?;
        let entry = q.pop_front();
        if q.is_empty() {
            m.remove(&k);
        }
        entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_book_names_identical_datagrams_in_send_order() {
        let book = UidBook::default();
        book.record(b"same", 4);
        book.record(b"other", 5);
        book.record(b"same", 6);
        assert_eq!(book.take(b"same"), Some(4));
        assert_eq!(book.take(b"same"), Some(6));
        assert_eq!(book.take(b"same"), None);
        assert_eq!(book.take(b"other"), Some(5));
    }

    #[test]
    fn uid_book_carries_each_send_instant_with_its_id() {
        let book = UidBook::default();
        book.record_sent(b"same", 0, SimTime(1_000));
        book.record_sent(b"same", 4, SimTime(2_000));
        book.record(b"other", 1);
        let at = |uid, t| Some(BookEntry { uid, sent_at: t });
        assert_eq!(book.take_entry(b"same"), at(0, Some(SimTime(1_000))));
        assert_eq!(book.take_entry(b"other"), at(1, None));
        assert_eq!(book.take_entry(b"same"), at(4, Some(SimTime(2_000))));
        assert_eq!(book.take_entry(b"same"), None);
    }
}
