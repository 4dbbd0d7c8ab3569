//! What a lane is: where its events come from, what protocol it runs at each instant (so its
//! label, its colour and how its packets' headers decode), and who its clients are.
//!
//! Views read this description and nothing else to name, colour and decode a lane: a simulated
//! run, a UDP peer, a JSON-lines stream a game wrote and (to come) a proxy or a capture all look
//! the same to them. A strategy change mid-run is a `ParamChanged` event; the description keeps
//! each protocol with the instant it started, so a view shows what ran where it ran.
//!
//! It sits below both the session files (whose header stores it) and the model (which shows it):
//! both import it and it imports neither, so the model builds on the sessions without the
//! sessions naming the model back.

use std::collections::BTreeMap;

use ackscope_protocol::{ClientId, EventKind, Scenario, SimTime, Strategy};
use serde::{Deserialize, Serialize};

/// Where a lane's events come from.
///
/// Every origin is one [`crate::source::EventSource`] (or a file read back); the ones marked "to
/// come" have no source yet but are part of the file formats already, so a recording made by
/// one later opens in this build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Simulated in this process from the recording's scenario (re-runs exactly).
    Simulated,
    /// The scenario's two endpoints over real UDP sockets on loopback, in this process.
    UdpLoopback,
    /// One endpoint of the scenario against another process (`ackscope peer`).
    UdpPeer { local: String, remote: String },
    /// A conditioning proxy between a real client and server (to come): where it listens and the
    /// server it forwards to.
    Proxy { listen: String, upstream: String },
    /// A packet capture (pcapng, to come): the file it was read from.
    Capture { path: String },
    /// A game's own event stream in ackscope's JSON-lines format: the file or address it was
    /// read from and the producer its header names.
    EventStream { source: String, producer: String },
}

impl Origin {
    /// True when the lane's events were made by this process's simulation from a scenario (the
    /// only origin a re-run reproduces).
    pub fn is_simulated(&self) -> bool {
        matches!(self, Origin::Simulated)
    }

    /// A short phrase for the status bar and headings.
    pub fn describe(&self) -> String {
        match self {
            Origin::Simulated => "simulated".into(),
            Origin::UdpLoopback => "UDP loopback".into(),
            Origin::UdpPeer { local, remote } => format!("UDP {local} <-> {remote}"),
            Origin::Proxy { listen, upstream } => format!("proxy {listen} -> {upstream}"),
            Origin::Capture { path } => format!("capture {path}"),
            Origin::EventStream { source, producer } if producer.is_empty() => format!("stream {source}"),
            Origin::EventStream { source, producer } => format!("stream {source} ({producer})"),
        }
    }
}

/// How a lane's packet headers are laid out, so the packet detail can rebuild them from events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireFormat {
    /// reliable.io's header: sequence, ack, 32 ack bits (glenn, hybrid, acks).
    ReliableIo,
    /// UE4's packet notify: packet id, acked sequence, ack/nak history.
    Ue4,
    /// Delivery notification (dnm, rellikt): the 32 sequences before the newest received.
    Notify,
    /// Chunk and fragment packets: slice ids (acks travel as slice bitmaps).
    Slices,
    /// A layout ackscope does not know (a game's own): packets are shown from their events only.
    Opaque,
}

impl WireFormat {
    /// The header layout of `strategy`'s packets.
    pub fn of(strategy: Strategy) -> Self {
        match strategy {
            Strategy::Glenn | Strategy::Hybrid | Strategy::Acks => WireFormat::ReliableIo,
            Strategy::Ue4 => WireFormat::Ue4,
            Strategy::Dnm | Strategy::Rellikt => WireFormat::Notify,
            Strategy::Chunks | Strategy::Fragments => WireFormat::Slices,
        }
    }

    /// The name files use (`reliable_io`, `ue4`, ...).
    pub fn name(self) -> &'static str {
        match self {
            WireFormat::ReliableIo => "reliable_io",
            WireFormat::Ue4 => "ue4",
            WireFormat::Notify => "notify",
            WireFormat::Slices => "slices",
            WireFormat::Opaque => "opaque",
        }
    }

    /// A format by its name; `None` for one this build does not know.
    pub fn parse(name: &str) -> Option<Self> {
        [WireFormat::ReliableIo, WireFormat::Ue4, WireFormat::Notify, WireFormat::Slices, WireFormat::Opaque]
            .into_iter()
            .find(|w| w.name() == name)
    }
}

/// Which colour of the one palette a lane takes: its strategy's, or a slot of its own for a
/// protocol ackscope does not know. The views turn it into a colour for the theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LaneColor {
    Strategy(Strategy),
    Slot(u8),
}

/// What a lane runs over one stretch of time.
#[derive(Debug, Clone, PartialEq)]
pub struct Protocol {
    /// The name shown (a strategy's name, or what a stream calls its protocol).
    pub name: String,
    /// The strategy, when it is one of ackscope's (its figures and sections apply).
    pub strategy: Option<Strategy>,
    pub wire: WireFormat,
}

impl Protocol {
    pub fn of(strategy: Strategy) -> Self {
        Self { name: strategy.name().to_string(), strategy: Some(strategy), wire: WireFormat::of(strategy) }
    }

    /// A protocol by its name: a strategy when it names one, else opaque (or `wire` when the
    /// stream says how its packets are laid out).
    pub fn named(name: &str, wire: Option<WireFormat>) -> Self {
        match Strategy::parse(name) {
            Ok(s) => Self { wire: wire.unwrap_or(WireFormat::of(s)), ..Self::of(s) },
            Err(_) => Self { name: name.to_string(), strategy: None, wire: wire.unwrap_or(WireFormat::Opaque) },
        }
    }

    /// Its colour: the strategy's, or a slot picked from its name (the same name, the same slot).
    pub fn color(&self) -> LaneColor {
        match self.strategy {
            Some(s) => LaneColor::Strategy(s),
            None => LaneColor::Slot(self.name.bytes().fold(0u8, |h, b| h.wrapping_mul(31).wrapping_add(b))),
        }
    }
}

/// A client's name and group, as a stream or a scenario gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientInfo {
    pub id: ClientId,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Clients given the same link (`clients: [(count: 12, preset: ...)]`), or a stream's own
    /// grouping ("4G", "EU"...): the Clients table filters by it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
}

impl ClientInfo {
    /// How a client is named in the views: its name, or `client N`.
    pub fn label(&self) -> String {
        if self.name.is_empty() {
            format!("client {}", self.id)
        } else {
            self.name.clone()
        }
    }
}

/// Everything the views know about a lane besides its events.
#[derive(Debug, Clone, PartialEq)]
pub struct LaneInfo {
    pub origin: Origin,
    /// What it runs from each instant on, in time order; never empty.
    runs: Vec<(SimTime, Protocol)>,
    /// Clients named by the source (others are known only by their id).
    clients: BTreeMap<ClientId, ClientInfo>,
}

impl LaneInfo {
    /// A lane running `protocol` from the start.
    pub fn new(origin: Origin, protocol: Protocol) -> Self {
        Self { origin, runs: vec![(SimTime::ZERO, protocol)], clients: BTreeMap::new() }
    }

    /// A lane of `scenario`'s strategy, simulated or over UDP on loopback.
    pub fn of_scenario(scenario: &Scenario, udp: bool) -> Self {
        let origin = if udp { Origin::UdpLoopback } else { Origin::Simulated };
        Self::new(origin, Protocol::of(scenario.strategy))
    }

    /// What the lane runs at `t` (the latest change at or before it).
    pub fn protocol_at(&self, t: SimTime) -> &Protocol {
        let i = self.runs.partition_point(|(at, _)| *at <= t);
        &self.runs[i.saturating_sub(1)].1
    }

    /// What it ran first.
    pub fn first(&self) -> &Protocol {
        &self.runs[0].1
    }

    /// What it runs last (now, while live).
    pub fn last(&self) -> &Protocol {
        &self.runs[self.runs.len() - 1].1
    }

    /// Every protocol with the instant it started.
    pub fn runs(&self) -> &[(SimTime, Protocol)] {
        &self.runs
    }

    /// The lane's name: its protocol, or every protocol it ran in order (`glenn > ue4`).
    pub fn label(&self) -> String {
        let mut names: Vec<&str> = Vec::new();
        for (_, p) in &self.runs {
            if names.last() != Some(&p.name.as_str()) {
                names.push(&p.name);
            }
        }
        names.join(" > ")
    }

    /// The lane's colour at `t`.
    pub fn color_at(&self, t: SimTime) -> LaneColor {
        self.protocol_at(t).color()
    }

    /// The strategy running at `t`, when it is one of ackscope's.
    pub fn strategy_at(&self, t: SimTime) -> Option<Strategy> {
        self.protocol_at(t).strategy
    }

    /// True when any stretch of the lane ran `pred`'s strategies.
    pub fn ever(&self, pred: impl Fn(Strategy) -> bool) -> bool {
        self.runs.iter().any(|(_, p)| p.strategy.is_some_and(&pred))
    }

    /// Notes a protocol change an event says happened (a `strategy` or `restart` change naming a
    /// strategy); other events change nothing.
    pub fn observe(&mut self, t: SimTime, kind: &EventKind) {
        let EventKind::ParamChanged { name, value } = kind else { return };
        if name != "strategy" && name != "restart" {
            return;
        }
        let Ok(s) = Strategy::parse(value) else { return };
        self.switch_to(t, Protocol::of(s));
    }

    /// Runs `protocol` from `t` on (nothing when it runs already).
    pub fn switch_to(&mut self, t: SimTime, protocol: Protocol) {
        if self.last() == &protocol {
            return;
        }
        match self.runs.last_mut() {
            // A change at the instant of the previous one (or at the start) replaces it.
            Some((at, p)) if *at >= t => *p = protocol,
            _ => self.runs.push((t, protocol)),
        }
    }

    /// Names (or renames) a client.
    pub fn name_client(&mut self, info: ClientInfo) {
        self.clients.insert(info.id, info);
    }

    /// What the source said about `client` (its id alone when it said nothing).
    pub fn client(&self, client: ClientId) -> ClientInfo {
        self.clients.get(&client).cloned().unwrap_or(ClientInfo { id: client, ..ClientInfo::default() })
    }

    /// Every client the source named, by id.
    pub fn named_clients(&self) -> impl Iterator<Item = &ClientInfo> {
        self.clients.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_strategy_change_keeps_both_each_where_it_ran() {
        let mut lane = LaneInfo::new(Origin::Simulated, Protocol::of(Strategy::Glenn));
        let change = |v: &str| EventKind::ParamChanged { name: "strategy".into(), value: v.into() };
        lane.observe(SimTime(5_000_000), &change("ue4"));
        lane.observe(
            SimTime(6_000_000),
            &EventKind::ParamChanged { name: "link.loss_percent".into(), value: "5".into() },
        );
        assert_eq!(lane.strategy_at(SimTime(4_999_999)), Some(Strategy::Glenn));
        assert_eq!(lane.strategy_at(SimTime(5_000_000)), Some(Strategy::Ue4));
        assert_eq!(lane.protocol_at(SimTime(9_000_000)).wire, WireFormat::Ue4);
        assert_eq!(lane.label(), "glenn > ue4");
        // A restart naming the running strategy changes nothing.
        lane.observe(SimTime(7_000_000), &EventKind::ParamChanged { name: "restart".into(), value: "ue4".into() });
        assert_eq!(lane.runs().len(), 2);
    }

    #[test]
    fn an_unknown_protocol_is_opaque_with_a_stable_colour() {
        let p = Protocol::named("mygame-net", None);
        assert_eq!((p.strategy, p.wire), (None, WireFormat::Opaque));
        assert_eq!(p.color(), Protocol::named("mygame-net", None).color());
        assert_eq!(Protocol::named("ue4", None), Protocol::of(Strategy::Ue4));
        assert_eq!(Protocol::named("x", Some(WireFormat::ReliableIo)).wire, WireFormat::ReliableIo);
        for w in [WireFormat::ReliableIo, WireFormat::Ue4, WireFormat::Notify, WireFormat::Slices, WireFormat::Opaque] {
            assert_eq!(WireFormat::parse(w.name()), Some(w));
        }
    }
}
