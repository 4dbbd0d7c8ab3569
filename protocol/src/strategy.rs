//! The [`Strategy`] enum: names, parsing and iteration derived once from it (strum), so the
//! window's menu, `--set strategy=...`, `--ab`, serde and the registry all read the same list,
//! and an eighth strategy is one variant here plus one row in [`crate::registry`].
//!
//! It sits apart from [`crate::scenario`] because both the scenario and the action log (an
//! action may change the strategy) name it, and the scenario holds the action log.

use serde::{Deserialize, Serialize};
use strum::{EnumCount, EnumIter, EnumString, IntoStaticStr};

/// Which protocol the endpoints run, in the order the window lists them.
///
/// The name (`glenn`, `ue4`, ...) is the same for serde, `--set`, `--ab` and the JSON report;
/// labels and capabilities live in the registry ([`crate::registry::info`]).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    Serialize,
    Deserialize,
    EnumIter,
    EnumString,
    IntoStaticStr,
    EnumCount,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Strategy {
    /// Glenn Fiedler's reliable-ordered messages over packet acks, with the message workload.
    #[default]
    Glenn,
    /// UE4-style packets, bunches and Nak-driven resend (`ue4.*`).
    Ue4,
    /// Multiplayer Game Programming's delivery notification manager (ack ranges + timeout)
    /// carrying the message workload; snapshots per `workload.snapshot_mode`.
    Dnm,
    /// rellikt's `[protocol id][sequence][ack][ack bitfield]` header, "unacked after 1 s = lost",
    /// carrying the message workload; snapshots per `workload.snapshot_mode`.
    Rellikt,
    /// ackscope's own: Glenn's packets and channel, resent on a Nak inferred from the acks or a
    /// timer from the RTT and its variance, with blind copies where the measured loss and RTT call
    /// for them (`hybrid.*`).
    Hybrid,
    /// reliable.io packet acks carrying an opaque payload of `payload_bytes`.
    Acks,
    /// Glenn's chunk/slice transfer of large blocks (side A sends `workload.chunk_kib` chunks back
    /// to back, side B acks).
    Chunks,
    /// The baseline for chunks: whole blocks as fragmented packets, resent whole on any loss.
    Fragments,
}

impl Strategy {
    /// The name used in files, `--set`, `--ab` and JSON (`glenn`, `ue4`, ...).
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// Every strategy, in menu order.
    pub fn all() -> impl Iterator<Item = Strategy> {
        <Strategy as strum::IntoEnumIterator>::iter()
    }

    /// A strategy by its name, or the list of valid names.
    pub fn parse(name: &str) -> Result<Strategy, String> {
        name.parse().map_err(|_| {
            let valid: Vec<&str> = Strategy::all().map(Strategy::name).collect();
            format!("unknown strategy '{name}' (valid: {})", valid.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_match_serde() {
        for s in Strategy::all() {
            assert_eq!(Strategy::parse(s.name()), Ok(s));
            let json = serde_json::to_value(s).unwrap();
            assert_eq!(json, s.name(), "serde and strum agree on {s:?}");
        }
        assert_eq!(Strategy::all().count(), Strategy::COUNT);
        let e = Strategy::parse("tcp").unwrap_err();
        assert!(e.contains("valid: glenn, ue4"), "{e}");
    }
}
