//! ackscope: a desktop network inspector and protocol testbed for real-time game networking.
//!
//! The binary's modules live here so integration tests can drive them: the headless run and its
//! report, the parameter table and `--set` overrides, the live runtime threads, sessions, the
//! model the window shows, the application state, the views, and the window's frame loop above both.

pub mod app;
pub mod capture;
pub mod cli;
pub mod filter;
pub mod fit;
pub mod lane;
pub mod model;
pub mod params;
pub mod proxy;
pub mod report;
pub mod runtime;
pub mod session;
pub mod source;
pub mod ui;
pub mod window;
