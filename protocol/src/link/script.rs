//! Link changes over time: outages, lag spikes, bandwidth drops.
//!
//! A scenario's script is a list of timed actions ([`crate::action::Step`]); a link change is the
//! action [`crate::action::Action::Link`], a [`LinkPatch`] for one or both directions. The driver
//! applies it exactly at its time (before any packet due then is sent or delivered) and reports
//! each changed parameter as a `ParamChanged` event with its dotted name, the same way a live edit
//! in the app is reported, so plots can mark them on the time axis and a replay shows them.
//! [`LinkStep`] is the link-change step on its own, as scenario scripts first spelled it.

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

/// Link parameters a step sets; `None` leaves a parameter as it is (and is not written out).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinkPatch {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reorder_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth_kbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_p_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_r_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_loss_in_bad_percent: Option<f64>,
}

impl LinkPatch {
    /// Every field with its dotted name under `link.X` (`burst_p_percent` is `burst.p_percent`).
    pub fn fields(&self) -> [(&'static str, Option<f64>); 9] {
        [
            ("latency_ms", self.latency_ms),
            ("jitter_ms", self.jitter_ms),
            ("loss_percent", self.loss_percent),
            ("duplicate_percent", self.duplicate_percent),
            ("reorder_percent", self.reorder_percent),
            ("bandwidth_kbps", self.bandwidth_kbps),
            ("burst.p_percent", self.burst_p_percent),
            ("burst.r_percent", self.burst_r_percent),
            ("burst.loss_in_bad_percent", self.burst_loss_in_bad_percent),
        ]
    }

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

/// One link change at `at_s` seconds of virtual time; a script holds it as a
/// [`crate::action::Step`] (`LinkStep { .. }.into()`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LinkStep {
    pub at_s: f64,
    pub dir: StepDirection,
    pub set: LinkPatch,
}
