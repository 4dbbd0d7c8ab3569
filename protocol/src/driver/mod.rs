//! Driving endpoints on time: one endpoint's loop ([`EndpointDriver`]) and the simulation that
//! composes a server and its clients, two of them per client's connection with a two-way lossy
//! link ([`Simulation`]).
//!
//! Every transport calls the same [`EndpointDriver`]: the simulation on virtual time, the app's
//! real-time runtimes around a socket and a clock. The order at an instant, the send ticks, the
//! stats schedule, flow control and live reconfiguration are therefore written once.

mod connection;
pub mod drain;
mod due_queue;
mod endpoint;
mod filter;
mod simulation;
mod ticker;

pub use drain::{drain, DrainOutcome};
pub use endpoint::{EndpointDriver, Inbound, LinkUpdate, Outbound, PeerFactory, SendIds, Transmit};
pub use filter::EventFilter;
pub use simulation::Simulation;
pub use ticker::{TickTiming, Ticker};
