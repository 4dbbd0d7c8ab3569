//! One module per strategy: the endpoints that speak a protocol over the link.
//!
//! Each endpoint knows its own configuration only: nothing here imports the scenario, the
//! registry, the driver or `measure/` (the registry, above this module, maps a scenario to an
//! endpoint; `measure/` reads the events they emit).
//!
//! - [`acks`]: packet acks with an opaque payload.
//! - [`glenn`]: Glenn Fiedler's reliable-ordered messages over packet acks.
//! - [`ue4`]: UE4 packets, bunches and Nak-driven resends.
//! - [`hybrid`]: ackscope's own: Glenn's packets, Nak inferred from acks, timeouts, redundancy.
//! - [`notify`]: delivery notification (`dnm`, `rellikt`) carrying the message layer.
//! - [`chunks`]: Glenn's large blocks (slices and ack bitfields).
//! - [`fragments`]: the baseline for chunks: whole blocks as fragmented packets.

pub mod acks;
pub mod chunks;
pub mod fragments;
pub mod glenn;
pub mod hybrid;
pub mod notify;
pub mod ue4;
