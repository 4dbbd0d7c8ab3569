//! Network condition presets, applied to both link directions: the protocol crate's list
//! ([`ackscope_protocol::link::presets`], where a scenario's client groups find them by name), with
//! the figures and their sources in that module's documentation. The window's preset menu reads
//! [`builtin`] and keeps the user's custom presets as [`Preset`]s too.

pub use ackscope_protocol::link::presets::{builtin, find, Preset};
