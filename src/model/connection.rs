//! One client's connection in a recording: its events and every index the panels read, fed
//! from its events alone, as quinn-proto keeps one state per `ConnectionHandle`.
//!
//! Sequences, message ids, chunk ids and link send ids are each connection's own (two clients
//! both send packet 7), so the ledger, the series and the indexes are kept per connection and a
//! view focused on a client reads that client's. Besides the indexes, a connection keeps the
//! few running tallies the Clients table needs at any cursor with a binary search: each
//! reliable message's delivery latency in delivery order and the instants of resends.

use std::sync::OnceLock;

use ackscope_protocol::{ClientId, Event, EventKind, PacketLedger, SendKind, SimTime};

use super::anomaly::AnomalyIndex;
use super::index::{ChunkIndex, MessageIndex, PacketIndex};
use super::store::Store;

/// A connection's events, ledger and indexes.
pub struct Connection {
    pub client: ClientId,
    /// Ground truth per send (what the link did, what the sender reported), the one source the
    /// store's true-loss series and the indexes' packet fates read.
    pub ledger: PacketLedger,
    pub store: Store,
    pub messages: MessageIndex,
    pub chunks: ChunkIndex,
    pub packets: PacketIndex,
    /// Drops, naks, stalls... in time order, for the anomaly list and the strip under the scrubber.
    pub anomalies: AnomalyIndex,
    /// Each reliable message's first delivery: when, and how long after it was queued (µs), in
    /// delivery order.
    pub deliveries: Vec<(SimTime, u64)>,
    /// When a message or slice was sent again (any cause), in time order.
    pub resends: Vec<SimTime>,
}

impl Connection {
    pub fn new(client: ClientId) -> Self {
        Self {
            client,
            ledger: PacketLedger::for_client(client),
            store: Store::new(),
            messages: MessageIndex::new(),
            chunks: ChunkIndex::new(),
            packets: PacketIndex::new(),
            anomalies: AnomalyIndex::new(),
            deliveries: Vec::new(),
            resends: Vec::new(),
        }
    }

    /// An empty connection, for a recording that has none yet.
    pub fn empty() -> &'static Connection {
        static EMPTY: OnceLock<Connection> = OnceLock::new();
        EMPTY.get_or_init(|| Connection::new(ackscope_protocol::FIRST_CLIENT))
    }

    /// Appends one event (in time order) to the ledger, every index, the tallies and the store.
    ///
    /// The ledger first: an index or a series sample taken at an event sees the ground truth
    /// exactly as of that event.
    pub fn ingest(&mut self, e: Event) {
        self.ledger.observe_event(&e);
        self.messages.ingest(&e);
        self.chunks.ingest(&e);
        self.packets.ingest(&e, &self.ledger);
        self.anomalies.ingest(&e, &self.ledger, &self.messages);
        match e.kind {
            EventKind::MessageDelivered { side, msg } => {
                if let Some(m) = self.messages.get((side.other(), msg)) {
                    if m.reliable && m.deliveries == 1 {
                        self.deliveries.push((e.time, e.time.saturating_since(m.queued_at).0));
                    }
                }
            }
            EventKind::MessageSent { kind, .. } if kind != SendKind::First => self.resends.push(e.time),
            EventKind::SliceSent { resend: true, .. } => self.resends.push(e.time),
            _ => {}
        }
        self.store.push(e, &self.ledger);
    }

    /// Heap bytes the connection holds: ledger, store, indexes and tallies (see
    /// [`super::heap`]).
    pub fn heap_bytes(&self) -> usize {
        self.ledger.heap_bytes()
            + self.store.heap_bytes()
            + self.messages.heap_bytes()
            + self.chunks.heap_bytes()
            + self.packets.heap_bytes()
            + self.anomalies.heap_bytes()
            + super::heap::vec(&self.deliveries)
            + super::heap::vec(&self.resends)
    }

    /// Reliable messages delivered by `t`, with their latencies in µs (delivery order).
    pub fn deliveries_by(&self, t: SimTime) -> &[(SimTime, u64)] {
        &self.deliveries[..self.deliveries.partition_point(|(at, _)| *at <= t)]
    }

    /// Resends made by `t`.
    pub fn resends_by(&self, t: SimTime) -> usize {
        self.resends.partition_point(|at| *at <= t)
    }
}
