//! Every integration test of the app in one binary: each file a module, so a
//! `cargo test` links one test executable per crate instead of one per file (on a 2-core CI
//! each link was a large share of the time). Run one file's tests with
//! `cargo test --test app MODULE::`.

mod common;

mod anomaly;
mod cli;
mod compare;
mod edits;
mod export;
mod files;
mod live_window;
mod new_strategy;
mod overview;
mod packet_detail;
mod panels;
mod peer_cli;
mod progressive_open;
mod readme_outputs;
mod registry_docs;
mod replay;
mod rerun;
mod run_flow_json;
mod sessions;
mod strict;
mod sweep;
mod timeline;
mod transport_switch;
mod tune;
mod typed_change;
mod udp;
mod udp_matches_sim;
mod ui;
