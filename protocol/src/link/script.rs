//! Scripted link changes over time: outages, lag spikes, bandwidth drops.
//!
//! A scenario may carry a list of [`LinkStep`]s, each changing some link parameters of one or both
//! directions at a virtual time. The simulation applies them exactly at their time (before any
//! packet due then is sent or delivered) and reports each changed parameter as a `ParamChanged`
//! event with its dotted name, the same way a live edit in the app is reported, so plots can mark
//! them on the time axis and a replay shows them.

use serde::{Deserialize, Serialize};

use crate::event::Dir;
use crate::link::LinkConfig;

/// Which directions a step changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepDirection {
    #[default]
    Both,
    AToB,
    BToA,
}

impl StepDirection {
    pub fn includes(self, dir: Dir) -> bool {
        matches!(
            (self, dir),
            (StepDirection::Both, _) | (StepDirection::AToB, Dir::AtoB) | (StepDirection::BToA, Dir::BtoA)
        )
    }
}

/// Link parameters a step sets; `None` leaves a parameter as it is.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LinkPatch {
    pub latency_ms: Option<f64>,
    pub jitter_ms: Option<f64>,
    pub loss_percent: Option<f64>,
    pub duplicate_percent: Option<f64>,
    pub reorder_percent: Option<f64>,
    pub bandwidth_kbps: Option<f64>,
    pub burst_p_percent: Option<f64>,
    pub burst_r_percent: Option<f64>,
    pub burst_loss_in_bad_percent: Option<f64>,
}

impl LinkPatch {
    /// Applies the patch, returning `(dotted field name, new value)` for every field it set.
    pub fn apply(&self, c: &mut LinkConfig) -> Vec<(&'static str, f64)> {
        let mut changed = Vec::new();
        let mut set = |name: &'static str, v: Option<f64>, field: &mut f64| {
            if let Some(v) = v {
                *field = v;
                changed.push((name, v));
            }
        };
        set("latency_ms", self.latency_ms, &mut c.latency_ms);
        set("jitter_ms", self.jitter_ms, &mut c.jitter_ms);
        set("loss_percent", self.loss_percent, &mut c.loss_percent);
        set("duplicate_percent", self.duplicate_percent, &mut c.duplicate_percent);
        set("reorder_percent", self.reorder_percent, &mut c.reorder_percent);
        set("bandwidth_kbps", self.bandwidth_kbps, &mut c.bandwidth_kbps);
        set("burst.p_percent", self.burst_p_percent, &mut c.burst.p_percent);
        set("burst.r_percent", self.burst_r_percent, &mut c.burst.r_percent);
        set("burst.loss_in_bad_percent", self.burst_loss_in_bad_percent, &mut c.burst.loss_in_bad_percent);
        changed
    }
}

/// One scripted change at `at_s` seconds of virtual time.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LinkStep {
    pub at_s: f64,
    pub dir: StepDirection,
    pub set: LinkPatch,
}
