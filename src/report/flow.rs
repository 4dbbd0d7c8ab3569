//! The `flow` section of a run report: every flow-control mode switch, from the `FlowMode` events.

use ackscope_protocol::{ClientId, Event, EventKind, Scenario, Side};
use serde::Serialize;

/// Flow control over a run: present when it was enabled at any point (in the scenario, by a live
/// change to `flow.enabled=true`, or whenever a switch happened); absent otherwise, since a run
/// without flow control has no switches to report and an empty list would suggest it had.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowSummary {
    /// Mode switches in time order.
    pub switches: Vec<FlowSwitch>,
}

/// One mode switch of one side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowSwitch {
    pub time_s: f64,
    /// `"a"` or `"b"`.
    pub side: &'static str,
    /// The new mode: `"good"` (high rate) or `"bad"` (low rate).
    pub mode: &'static str,
    /// The penalty in force after the switch: how long good conditions must last in bad mode.
    pub penalty_s: f64,
    /// The client whose connection switched (in a run of several clients only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientId>,
}

/// [`FlowSummary`] fed one event at a time.
#[derive(Debug, Clone)]
pub struct FlowFold {
    enabled: bool,
    /// Whether switches name their client (a run of several clients).
    name_clients: bool,
    switches: Vec<FlowSwitch>,
}

impl FlowFold {
    /// A new fold of a run of `scenario` (its flow control setting at the start, its clients).
    pub fn new(scenario: &Scenario) -> Self {
        Self { enabled: scenario.flow.enabled, name_clients: scenario.client_count() > 1, switches: Vec::new() }
    }

    pub fn observe(&mut self, e: &Event) {
        match &e.kind {
            EventKind::FlowMode { side, good, penalty_ms } => self.switches.push(FlowSwitch {
                time_s: e.time.as_secs_f64(),
                side: match side {
                    Side::A => "a",
                    Side::B => "b",
                },
                mode: if *good { "good" } else { "bad" },
                penalty_s: *penalty_ms as f64 / 1000.0,
                client: self.name_clients.then_some(e.client),
            }),
            EventKind::ParamChanged { name, value } if name == "flow.enabled" && value == "true" => self.enabled = true,
            _ => {}
        }
    }

    /// The switches so far, or `None` when flow control was never enabled (see the type); with
    /// `client`, that client's only.
    pub fn finish(&self, client: Option<ClientId>) -> Option<FlowSummary> {
        let switches: Vec<FlowSwitch> =
            self.switches.iter().filter(|s| client.is_none_or(|k| s.client.is_none_or(|c| c == k))).cloned().collect();
        (self.enabled || !switches.is_empty()).then_some(FlowSummary { switches })
    }
}

impl FlowSummary {
    /// The switches in `events`, or `None` when flow control was never enabled (see the type).
    pub fn from_events(scenario: &Scenario, events: &[Event]) -> Option<Self> {
        let mut fold = FlowFold::new(scenario);
        for e in events {
            fold.observe(e);
        }
        fold.finish(None)
    }

    /// One line for the text report.
    pub fn to_text(&self) -> String {
        let bad = self.switches.iter().filter(|s| s.mode == "bad").count();
        let first = self
            .switches
            .first()
            .map_or(String::new(), |s| format!(", first at {:.2} s (side {}, to {})", s.time_s, s.side, s.mode));
        format!("\nflow control: {} switches ({bad} to bad){first}", self.switches.len())
    }
}
