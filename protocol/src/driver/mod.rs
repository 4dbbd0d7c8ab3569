//! Driving endpoints on time: one endpoint's loop ([`EndpointDriver`]) and the simulation that
//! composes two of them with a two-way lossy link ([`Simulation`]).
//!
//! Every transport calls the same [`EndpointDriver`]: the simulation on virtual time, the app's
//! real-time runtimes around a socket and a clock. The order at an instant, the send ticks, the
//! stats schedule, flow control and live reconfiguration are therefore written once.

pub mod drain;
mod endpoint;
mod filter;
mod simulation;
mod ticker;

pub use drain::{drain, DrainOutcome};
pub use endpoint::{EndpointDriver, Inbound, LinkUpdate, Outbound, PeerFactory, SendIds, Transmit};
pub use filter::EventFilter;
pub use simulation::Simulation;
pub use ticker::{TickTiming, Ticker};
