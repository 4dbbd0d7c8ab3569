//! The `flow` section of a run report: every flow-control mode switch, from the `FlowMode` events.

use ackscope_protocol::{Event, EventKind, Scenario, Side};
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
}

impl FlowSummary {
    /// The switches in `events`, or `None` when flow control was never enabled (see the type).
    pub fn from_events(scenario: &Scenario, events: &[Event]) -> Option<Self> {
        let mut enabled = scenario.flow.enabled;
        let mut switches = Vec::new();
        for e in events {
            match &e.kind {
                EventKind::FlowMode { side, good, penalty_ms } => switches.push(FlowSwitch {
                    time_s: e.time.as_secs_f64(),
                    side: match side {
                        Side::A => "a",
                        Side::B => "b",
                    },
                    mode: if *good { "good" } else { "bad" },
                    penalty_s: *penalty_ms as f64 / 1000.0,
                }),
                EventKind::ParamChanged { name, value } if name == "flow.enabled" && value == "true" => enabled = true,
                _ => {}
            }
        }
        (enabled || !switches.is_empty()).then_some(Self { switches })
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
