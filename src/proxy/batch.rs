//! What the relay hands over as it goes: one [`Batch`] of events in time order with the
//! datagrams, link changes and client arrivals beside them.
//!
//! It lives apart from [`super::relay`] because everything downstream of the relay (the
//! recording, the decoder, the window's reader) reads it without needing the relay itself.

use std::net::SocketAddr;

use ackscope_protocol::{ClientId, Event, SimTime, Step};

use super::bytes::{Datagram, Forward};

/// What the relay hands over as it goes: events in time order, and what goes beside them.
#[derive(Debug, Default)]
pub struct Batch {
    pub events: Vec<Event>,
    /// Every datagram read, with its bytes (when the config keeps bytes).
    pub datagrams: Vec<Datagram>,
    /// Every copy sent on (when the config keeps bytes).
    pub forwards: Vec<Forward>,
    /// Live link changes applied to every client, for the session's action log.
    pub actions: Vec<Step>,
    /// Clients that arrived: id, address, instant.
    pub joined: Vec<(ClientId, SocketAddr, SimTime)>,
    /// Clients that expired, and when.
    pub expired: Vec<(ClientId, SimTime)>,
}

impl Batch {
    pub(super) fn is_empty(&self) -> bool {
        self.events.is_empty()
            && self.datagrams.is_empty()
            && self.forwards.is_empty()
            && self.actions.is_empty()
            && self.joined.is_empty()
            && self.expired.is_empty()
    }

    pub(super) fn append(&mut self, mut other: Batch) {
        self.events.append(&mut other.events);
        self.datagrams.append(&mut other.datagrams);
        self.forwards.append(&mut other.forwards);
        self.actions.append(&mut other.actions);
        self.joined.append(&mut other.joined);
        self.expired.append(&mut other.expired);
    }
}
