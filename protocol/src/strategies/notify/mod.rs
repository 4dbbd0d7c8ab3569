//! Delivery-notification strategies: `dnm` and `rellikt`, one generic endpoint around two schemes.
//!
//! Both tell the layer above, for every packet, "delivered" or "failed" and never resend
//! anything themselves (MGP 7.5: "modules above decide"); the message layer above is shared. So
//! there is one endpoint, [`NotifyPeer`], and each strategy is only its [`NotifyScheme`]: its
//! header and how it learns outcomes (ack ranges and a timeout for `dnm`, an ack bitfield and
//! "unacked after 1 s = lost" for `rellikt`).
//!
//! - [`scheme`]: the trait and the [`Outcome`] of a packet.
//! - [`endpoint`]: the shared [`MessageEndpoint`] (workload, outbox/inbox, estimators).
//! - [`peer`]: [`NotifyPeer`], the `Peer` that runs a scheme with it.
//! - [`dnm`], [`rellikt`]: the two schemes, with their wire formats and settings.

pub mod dnm;
pub mod endpoint;
pub mod peer;
pub mod rellikt;
pub mod scheme;

pub use endpoint::MessageEndpoint;
pub use peer::NotifyPeer;
pub use scheme::{NotifyScheme, Outcome};
