//! ackscope: a desktop network inspector and protocol testbed for real-time game networking.
//!
//! The binary's modules live here so integration tests can drive them: the headless run and its
//! report, `--set` overrides, the live runtime threads, the event store and the window.

pub mod cli;
pub mod index;
pub mod overrides;
pub mod pindex;
pub mod playback;
pub mod presets;
pub mod report;
pub mod runtime;
pub mod session;
pub mod store;
pub mod ui;
