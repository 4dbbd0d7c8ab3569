//! Delivery-notification strategies: `dnm` and `rellikt`.

pub mod dnm;
pub mod rellikt;
