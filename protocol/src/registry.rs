//! The strategy registry: one row per [`Strategy`], the only place that knows which endpoint type
//! implements it, how to build it from a [`Scenario`], which part of the scenario it may take while
//! running, its label and what it carries.
//!
//! It sits above `scenario` and the strategy modules (not inside `strategies/`), so that neither
//! the strategies nor the scenario import it and the crate has no import circle: strategies know
//! their own config only. [`info`] is an exhaustive match, so a new `Strategy` variant does not
//! compile until it has a row.

use std::any::Any;

use crate::event::Side;
use crate::peer::{LiveSettings, Peer};
use crate::scenario::{Scenario, Strategy};
use crate::strategies::acks::AckPeer;
use crate::strategies::chunks::ChunkPeer;
use crate::strategies::fragments::FragmentPeer;
use crate::strategies::glenn::GlennPeer;
use crate::strategies::hybrid::hybrid_peer;
use crate::strategies::notify::dnm::DnmPeer;
use crate::strategies::notify::rellikt::RelliktPeer;
use crate::strategies::ue4::Ue4Peer;

/// One registry row.
///
/// Besides building endpoints, a row is what the window knows of a strategy, as data: its name,
/// label and colour, and which section of the scenario holds its own settings (the window's
/// controls for it). Views read these and never match on [`Strategy`], so a new row is drawn
/// with no edit to a view.
pub struct StrategyInfo {
    pub strategy: Strategy,
    /// The name files, `--set strategy=` and sweeps use (`Strategy::name`).
    pub name: &'static str,
    /// What the window shows.
    pub label: &'static str,
    /// The strategy's colour on a dark background, RGB, distinct from every other row's and
    /// clear of the side colours (blue = side A, orange = side B) that per-lane plots use; the
    /// window derives a darker one for the light theme.
    pub colour: [u8; 3],
    /// The scenario section holding the strategy's own settings (`glenn`, `chunk`...), whose
    /// parameters the window shows as its group; `None` when it has none of its own.
    pub settings: Option<&'static str>,
    /// One line for tooltips and `--help`.
    pub summary: &'static str,
    /// Carries the message workload (reliable-message metrics, bursts, the Messages tab).
    pub has_messages: bool,
    /// Moves large blocks (chunk metrics, *Send chunk*, the Slices tab).
    pub has_chunks: bool,
    /// Builds the endpoint of `side`.
    pub build: fn(&Scenario, Side) -> Box<dyn Peer>,
    /// The strategy's own section of the scenario, handed to a running endpoint on a live change.
    pub own: fn(&Scenario) -> Box<dyn Any + Send>,
}

/// The row of `strategy`.
pub fn info(strategy: Strategy) -> &'static StrategyInfo {
    match strategy {
        Strategy::Glenn => &GLENN,
        Strategy::Ue4 => &UE4,
        Strategy::Dnm => &DNM,
        Strategy::Rellikt => &RELLIKT,
        Strategy::Hybrid => &HYBRID,
        Strategy::Acks => &ACKS,
        Strategy::Chunks => &CHUNKS,
        Strategy::Fragments => &FRAGMENTS,
    }
}

/// Every row, in menu order.
pub fn all() -> impl Iterator<Item = &'static StrategyInfo> {
    Strategy::all().map(info)
}

/// Builds the endpoint for `side` from the scenario.
pub fn make_peer(scenario: &Scenario, side: Side) -> Box<dyn Peer> {
    (info(scenario.strategy).build)(scenario, side)
}

/// The settings a running endpoint of the scenario's strategy takes on a live change.
pub fn live_settings(scenario: &Scenario) -> LiveSettings {
    LiveSettings { workload: scenario.workload, own: (info(scenario.strategy).own)(scenario) }
}

/// Bytes per chunk side `side` sources: side A sends `workload.chunk_kib`, side B only acks.
fn chunk_source_bytes(scenario: &Scenario, side: Side) -> usize {
    match side {
        Side::A => scenario.workload.chunk_kib as usize * 1024,
        Side::B => 0,
    }
}

static GLENN: StrategyInfo = StrategyInfo {
    strategy: Strategy::Glenn,
    name: "glenn",
    label: "Glenn redundancy",
    colour: [60, 205, 160],
    settings: Some("glenn"),
    summary: "reliable-ordered messages over packet acks, resent after a delay (or in every packet)",
    has_messages: true,
    has_chunks: false,
    build: |s, side| Box::new(GlennPeer::new(side, s.ack, s.glenn, s.workload, s.seed)),
    own: |s| Box::new(s.glenn),
};

static UE4: StrategyInfo = StrategyInfo {
    strategy: Strategy::Ue4,
    name: "ue4",
    label: "UE4 Nak",
    colour: [235, 100, 200],
    settings: Some("ue4"),
    summary: "UE4 packets and bunches, reliable bunches resent only on Nak",
    has_messages: true,
    has_chunks: false,
    build: |s, side| Box::new(Ue4Peer::new(side, s.ue4, s.workload, s.seed)),
    own: |s| Box::new(s.ue4),
};

static DNM: StrategyInfo = StrategyInfo {
    strategy: Strategy::Dnm,
    name: "dnm",
    label: "Delivery notification",
    colour: [235, 205, 70],
    settings: Some("dnm"),
    summary: "Multiplayer Game Programming's delivery notification manager: ack ranges and timeouts",
    has_messages: true,
    has_chunks: false,
    build: |s, side| Box::new(DnmPeer::new(side, s.dnm, s.workload, s.seed)),
    own: |s| Box::new(s.dnm),
};

static RELLIKT: StrategyInfo = StrategyInfo {
    strategy: Strategy::Rellikt,
    name: "rellikt",
    label: "rellikt",
    colour: [160, 140, 255],
    settings: Some("rellikt"),
    summary: "protocol id, sequence, ack and bitfield; unacked after 1 s = lost",
    has_messages: true,
    has_chunks: false,
    build: |s, side| Box::new(RelliktPeer::new(side, s.rellikt, s.workload, s.seed)),
    own: |s| Box::new(s.rellikt),
};

static HYBRID: StrategyInfo = StrategyInfo {
    strategy: Strategy::Hybrid,
    name: "hybrid",
    label: "Hybrid (ackscope)",
    colour: [170, 230, 60],
    settings: Some("hybrid"),
    summary: "Glenn's packets and channel, resent on a Nak read from the ack bits or a timer from RTT and its variance, a blind copy where measured loss and RTT call for one",
    has_messages: true,
    has_chunks: false,
    build: |s, side| Box::new(hybrid_peer(side, s.ack, s.glenn, s.hybrid, s.workload, s.seed)),
    own: |s| Box::new((s.glenn, s.hybrid)),
};

static ACKS: StrategyInfo = StrategyInfo {
    strategy: Strategy::Acks,
    name: "acks",
    label: "Packet acks only",
    colour: [175, 175, 175],
    settings: Some("ack"),
    summary: "reliable.io packet acks carrying an opaque payload",
    has_messages: false,
    has_chunks: false,
    build: |s, side| Box::new(AckPeer::new(side, s.ack, s.payload_bytes as usize)),
    own: |_| Box::new(()),
};

static CHUNKS: StrategyInfo = StrategyInfo {
    strategy: Strategy::Chunks,
    name: "chunks",
    label: "Chunks (large blocks)",
    colour: [120, 215, 255],
    settings: Some("chunk"),
    summary: "Glenn's large blocks: slices, ack bitfields, a budgeted sender",
    has_messages: false,
    has_chunks: true,
    build: |s, side| Box::new(ChunkPeer::new(side, s.chunk, chunk_source_bytes(s, side))),
    own: |s| Box::new(s.chunk),
};

static FRAGMENTS: StrategyInfo = StrategyInfo {
    strategy: Strategy::Fragments,
    name: "fragments",
    label: "Fragments (baseline)",
    colour: [255, 120, 90],
    settings: Some("chunk"),
    summary: "whole blocks as fragmented packets, resent whole on any loss",
    has_messages: false,
    has_chunks: true,
    build: |s, side| Box::new(FragmentPeer::new(side, s.chunk, chunk_source_bytes(s, side))),
    own: |s| Box::new(s.chunk),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_strategy_has_one_row_naming_itself_with_a_label_and_a_colour() {
        let mut labels = std::collections::HashSet::new();
        let mut colours = std::collections::HashSet::new();
        for s in Strategy::all() {
            let row = info(s);
            assert_eq!(row.strategy, s, "row of {s:?} names another strategy");
            assert_eq!(row.name, s.name(), "row of {s:?} names itself otherwise");
            assert!(!row.label.is_empty() && !row.summary.is_empty(), "{s:?} lacks a label or summary");
            assert!(labels.insert(row.label), "label {} used twice", row.label);
            assert!(colours.insert(row.colour), "colour {:?} used twice", row.colour);
            if let Some(section) = row.settings {
                let known = crate::scenario::fields::GROUPS.iter().any(|(g, _)| *g == section);
                assert!(known, "{s:?}: its settings '{section}' are no section of the scenario");
            }
            assert!(!(row.has_messages && row.has_chunks), "{s:?}: one workload kind per strategy");
            for side in Side::BOTH {
                let _ = make_peer(&Scenario { strategy: s, ..Scenario::default() }, side);
            }
        }
    }
}
