//! What a relay feeds a decoder: each datagram as it left its sender, and later its fate. Both
//! the decoder and its probe ([`super::probe`]) take them, so they stand here below both.

use serde::{Deserialize, Serialize};

use crate::event::{ClientId, Dir, SimTime};

/// A datagram as a relay sees it leave its sender.
#[derive(Debug, Clone, Copy)]
pub struct Datagram<'a> {
    /// The caller's id for it (unique per run): events name it and [`Decoder::fate`] refers to it.
    pub uid: u64,
    pub time: SimTime,
    /// `AtoB` is client -> server, `BtoA` server -> client (side A is the client).
    pub dir: Dir,
    pub client: ClientId,
    pub bytes: &'a [u8],
}

/// What the relay did with a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fate {
    /// Handed to its receiver at `at`.
    Delivered {
        at: SimTime,
    },
    Dropped,
}
