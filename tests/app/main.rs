//! Every integration test of the app in one binary: each file a module, so a
//! `cargo test` links one test executable per crate instead of one per file (on a 2-core CI
//! each link was a large share of the time). Run one file's tests with
//! `cargo test --test app MODULE::`.

mod common;

mod anomaly;
mod bytes;
mod capture_flows;
mod capture_import;
mod capture_stream;
mod cli;
mod clients;
mod clients_cli;
mod compare;
mod compare_capture;
mod compare_two;
mod decode_acks;
mod decode_enet;
mod decode_kcp;
mod dnm_capacity;
mod edits;
mod export;
mod false_acks_window;
mod files;
mod filter_grammar;
mod filter_rows;
mod filter_window;
mod fit;
mod fit_proxy;
mod fit_window;
mod goto_lanes;
mod live_window;
mod marks;
mod new_strategy;
mod overview;
mod packet_detail;
mod panels;
mod params_ranges;
mod pcapng_export;
mod peer_cli;
mod progressive_open;
mod proxy;
mod proxy_window;
mod raw_fragments;
mod readme_outputs;
mod registry_docs;
mod relay;
mod replay;
mod replay_controls;
mod rerun;
mod run_flow_json;
mod sessions;
mod stream_bookmarks;
mod strict;
mod summary_diff;
mod sweep;
mod timeline;
mod transport_switch;
mod tune;
mod typed_change;
mod udp;
mod udp_matches_sim;
mod ui;
mod window_defects;
mod window_lag;
mod wireshark;
