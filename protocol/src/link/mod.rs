//! The seeded lossy link between the two endpoints, and the scripted changes of its settings.
//!
//! - [`lossy`]: one direction of the link, a pipeline of per-packet decisions (MTU, queue, burst
//!   and random loss, delay, duplication) and a scheduler ordered by `(deliver_at, send order)`.
//! - [`script`]: [`LinkStep`]s that change link settings at given virtual times.

pub mod lossy;
pub mod script;

pub use lossy::{BurstLoss, JitterDistribution, Link, LinkConfig, IP_UDP_OVERHEAD_BYTES};
pub use script::{LinkPatch, LinkStep, StepDirection};
