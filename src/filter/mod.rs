//! Display filters: one small expression language over the packets, messages and anomalies of
//! a recording, as Wireshark's display filters are over packets.
//!
//! ```text
//! seq > 900 && dropped
//! fate == dropped_burst || (dir == b_to_a && delay_ms > 150)
//! resend.cause in {nak, timeout} && !spurious
//! seq in 100..200
//! ```
//!
//! - [`syntax`]: the grammar (documented there), parsed with winnow into a tree with byte spans;
//!   errors name what was expected and the character it was expected at.
//! - [`fields`]: every field per row kind, with its unit, meaning and named values.
//! - [`compile`]: the type check against one row kind, then a tree of closures: evaluating a
//!   row is function-pointer calls and comparisons, with no name lookup or string work.
//! - [`complete`]: the candidates at a cursor, for the filter bar.
//! - [`cache`]: a filter's matching rows in one recording, kept and extended as it grows (only
//!   rows whose facts changed are checked again); [`matchset`] is its rank/select bit set.
//! - [`budget`]: how much of a frame the caches may spend on rows they have not checked.
//! - [`io_graph`]: per-interval count, rate, sum, mean or max of a field over a filter's rows.
//! - [`summary`]: the figures over a filter's rows (`ackscope summary --filter`).
//!
//! Every user of a filter (the Packets, Messages and Anomalies tabs, the IO graph, `export
//! --filter`, `summary --filter`) goes through [`cache::Matches`], so they agree row for row.

pub mod budget;
pub mod cache;
pub mod compile;
pub mod complete;
mod error;
pub mod fields;
pub mod io_graph;
pub mod matchset;
pub mod rows;
pub mod summary;
pub mod syntax;

pub use budget::Budget;
pub use cache::{matching_rows, Matches, SharedFilter, Source, Updated};
pub use compile::Compiled;
pub use complete::{complete, Candidate, CandidateKind, Completion};
pub use error::FilterError;
pub use fields::{Row, RowKind};
pub use rows::PacketFacts;
