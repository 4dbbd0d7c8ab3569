//! Every integration test of the protocol crate in one binary: each file a module, so a
//! `cargo test` links one test executable per crate instead of one per file (on a 2-core CI
//! each link was a large share of the time). Run one file's tests with
//! `cargo test --test protocol MODULE::`.

mod support;

mod accumulators;
mod acks;
mod buffer_reuse;
mod chunk_completion;
mod chunk_flood;
mod chunk_fragments;
mod chunk_fuzz;
mod chunk_sender;
mod chunk_soak;
mod clients;
mod codec;
mod decode_ackscope;
mod decode_fuzz;
mod decode_header;
mod dnm_fuzz;
mod dnm_messages;
mod dnm_soak;
mod event_filter;
mod flow_control;
mod flow_fixed_off;
mod flow_rtt_step;
mod glenn_malformed;
mod glenn_resend;
mod glenn_soak;
mod hybrid;
mod loss_estimate;
mod loss_truths;
mod message_soaks;
mod one_trace;
mod rellikt_soak;
mod snapshots_staleness;
mod tick_phase;
mod ue4_actor_soak;
mod ue4_channels;
mod ue4_flush;
mod ue4_malformed;
mod ue4_nak_resend;
mod ue4_notify;
mod ue4_order_cache;
mod ue4_overflow;
mod ue4_skip_ack;
mod ue4_soak;
mod ue4_throttle;
