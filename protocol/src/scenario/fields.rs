//! Every settable leaf of a [`Scenario`], reached by its dotted name as a typed place ([`Slot`])
//! or read as a typed value: what [`Scenario::apply_change`] writes a
//! [`ParamChange`](crate::ParamChange) into, without turning the scenario into a tree of text.
//!
//! Each section lists its fields once ([`section!`]), which gives both the writer and the reader
//! and the names for "did you mean" hints; a test checks that every field of the scenario's
//! serialized form has a leaf here, so a new config field cannot be forgotten.

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{Scenario, SideConfig};
use crate::action::ParamValue;
use crate::link::LinkConfig;
use crate::link::ServerConfig;
use crate::reliability::ack::AckConfig;
use crate::reliability::flow::FlowConfig;
use crate::reliability::stats::StatsConfig;
use crate::strategies::chunks::ChunkConfig;
use crate::strategies::glenn::GlennConfig;
use crate::strategies::hybrid::HybridConfig;
use crate::strategies::notify::dnm::DnmConfig;
use crate::strategies::notify::rellikt::RelliktConfig;
use crate::strategies::ue4::Ue4Config;
use crate::workload::WorkloadConfig;

/// A field of the scenario, typed, that a [`ParamValue`] can be written into.
pub enum Slot<'a> {
    Float(&'a mut f64),
    /// A number that may be unset (`null`).
    OptFloat(&'a mut Option<f64>),
    U64(&'a mut u64),
    U32(&'a mut u32),
    U16(&'a mut u16),
    Usize(&'a mut usize),
    Bool(&'a mut bool),
    /// One of an enum's names (its serde spelling).
    Choice(&'a mut dyn Choice),
    /// A text that may be unset (`null`): a file's path.
    OptText(&'a mut Option<String>),
}

/// An enum field set and read by its serde name (`normal`, `lockstep`, `ue4`...).
pub trait Choice {
    /// The current value's name.
    fn name(&self) -> String;
    /// Sets the value named `name`, or says which names there are.
    fn set_name(&mut self, name: &str) -> Result<(), String>;
    /// Whether `name` is one of the names.
    fn check_name(&self, name: &str) -> Result<(), String>;
}

impl<T: Serialize + DeserializeOwned> Choice for T {
    fn name(&self) -> String {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::String(s)) => s,
            other => format!("{other:?}"),
        }
    }

    fn set_name(&mut self, name: &str) -> Result<(), String> {
        *self = parse_name::<T>(name)?;
        Ok(())
    }

    fn check_name(&self, name: &str) -> Result<(), String> {
        parse_name::<T>(name).map(|_| ())
    }
}

fn parse_name<T: DeserializeOwned>(name: &str) -> Result<T, String> {
    serde_json::from_value(serde_json::Value::String(name.to_string())).map_err(|e| e.to_string())
}

/// Why a value does not fit a slot: the kind it expects (`expects ...`) or a bad value of the
/// right kind (`bad value ...`).
#[derive(Debug)]
pub enum Misfit {
    Expects(&'static str),
    Bad(String),
}

impl Slot<'_> {
    /// The kind of value this field takes, for messages.
    pub fn expects(&self) -> &'static str {
        match self {
            Slot::Float(_) | Slot::U64(_) | Slot::U32(_) | Slot::U16(_) | Slot::Usize(_) => "a number",
            Slot::OptFloat(_) => "a number or null",
            Slot::Bool(_) => "true or false",
            Slot::Choice(_) => "a name",
            Slot::OptText(_) => "a name or null",
        }
    }

    /// Writes `value` (unchanged on a misfit).
    pub fn set(self, value: &ParamValue) -> Result<(), Misfit> {
        match self {
            Slot::Float(f) => *f = float(value)?,
            Slot::OptFloat(f) => {
                *f = match value {
                    ParamValue::Unset => None,
                    v => Some(float(v).map_err(|_| Misfit::Expects("a number or null"))?),
                }
            }
            Slot::U64(f) => *f = whole(value, u64::MAX.into())?.try_into().expect("in range"),
            Slot::U32(f) => *f = whole(value, u32::MAX.into())?.try_into().expect("in range"),
            Slot::U16(f) => *f = whole(value, u16::MAX.into())?.try_into().expect("in range"),
            Slot::Usize(f) => {
                let max = u64::try_from(usize::MAX).unwrap_or(u64::MAX);
                *f = whole(value, max.into())?.try_into().expect("in range");
            }
            Slot::Bool(f) => match value {
                ParamValue::Bool(b) => *f = *b,
                _ => return Err(Misfit::Expects("true or false")),
            },
            Slot::Choice(f) => match value {
                ParamValue::Name(n) => f.set_name(n).map_err(Misfit::Bad)?,
                _ => return Err(Misfit::Expects("a name")),
            },
            Slot::OptText(f) => *f = text(value)?,
        }
        Ok(())
    }

    /// Whether [`Self::set`] would take `value`, writing nothing.
    pub fn check(&self, value: &ParamValue) -> Result<(), Misfit> {
        match self {
            Slot::Float(_) => float(value).map(|_| ()),
            Slot::OptFloat(_) => match value {
                ParamValue::Unset => Ok(()),
                v => float(v).map(|_| ()).map_err(|_| Misfit::Expects("a number or null")),
            },
            Slot::U64(_) => whole(value, u64::MAX.into()).map(|_| ()),
            Slot::U32(_) => whole(value, u32::MAX.into()).map(|_| ()),
            Slot::U16(_) => whole(value, u16::MAX.into()).map(|_| ()),
            Slot::Usize(_) => whole(value, u64::try_from(usize::MAX).unwrap_or(u64::MAX).into()).map(|_| ()),
            Slot::Bool(_) => match value {
                ParamValue::Bool(_) => Ok(()),
                _ => Err(Misfit::Expects("true or false")),
            },
            Slot::Choice(f) => match value {
                ParamValue::Name(n) => f.check_name(n).map_err(Misfit::Bad),
                _ => Err(Misfit::Expects("a name")),
            },
            Slot::OptText(_) => text(value).map(|_| ()),
        }
    }
}

/// A text or nothing: a name as written, a number as its text (a file may be called `2024`).
fn text(value: &ParamValue) -> Result<Option<String>, Misfit> {
    match value {
        ParamValue::Unset => Ok(None),
        ParamValue::Name(n) => Ok(Some(n.clone())),
        ParamValue::Int(_) | ParamValue::Float(_) => Ok(Some(value.to_string())),
        ParamValue::Bool(_) => Err(Misfit::Expects("a name or null")),
    }
}

/// A finite number.
fn float(value: &ParamValue) -> Result<f64, Misfit> {
    match value.as_f64() {
        Some(v) if v.is_finite() => Ok(v),
        Some(v) => Err(Misfit::Bad(format!("must be a finite number, got {v}"))),
        None => Err(Misfit::Expects("a number")),
    }
}

/// A whole number from 0 to `max`.
fn whole(value: &ParamValue, max: i128) -> Result<i128, Misfit> {
    match value {
        ParamValue::Int(i) if (0..=max).contains(i) => Ok(*i),
        ParamValue::Int(_) | ParamValue::Float(_) => {
            Err(Misfit::Bad(format!("{value} is not a whole number from 0 to {max}")))
        }
        _ => Err(Misfit::Expects("a number")),
    }
}

/// A field's current value, typed.
pub trait Leaf {
    fn value(&self) -> ParamValue;
}

/// Each field type's slot.
macro_rules! slot_from {
    ($($t:ty => $variant:ident),* $(,)?) => {$(
        impl<'a> From<&'a mut $t> for Slot<'a> {
            fn from(v: &'a mut $t) -> Self {
                Slot::$variant(v)
            }
        }
    )*};
}
slot_from!(f64 => Float, Option<f64> => OptFloat, u64 => U64, u32 => U32, u16 => U16, usize => Usize, bool => Bool);

impl Leaf for u64 {
    fn value(&self) -> ParamValue {
        ParamValue::Int((*self).into())
    }
}

impl Leaf for u32 {
    fn value(&self) -> ParamValue {
        ParamValue::Int((*self).into())
    }
}

impl Leaf for u16 {
    fn value(&self) -> ParamValue {
        ParamValue::Int((*self).into())
    }
}

impl Leaf for usize {
    fn value(&self) -> ParamValue {
        // usize is at most 64 bits wide on every target Rust supports.
        ParamValue::Int(i128::try_from(*self).unwrap_or(i128::MAX))
    }
}

impl Leaf for f64 {
    fn value(&self) -> ParamValue {
        ParamValue::number(*self)
    }
}

impl Leaf for Option<f64> {
    fn value(&self) -> ParamValue {
        self.map_or(ParamValue::Unset, ParamValue::number)
    }
}

impl Leaf for Option<String> {
    fn value(&self) -> ParamValue {
        self.clone().map_or(ParamValue::Unset, ParamValue::Name)
    }
}

impl<'a> From<&'a mut Option<String>> for Slot<'a> {
    fn from(v: &'a mut Option<String>) -> Self {
        Slot::OptText(v)
    }
}

impl Leaf for bool {
    fn value(&self) -> ParamValue {
        ParamValue::Bool(*self)
    }
}

/// Enum fields: set and read by name.
macro_rules! choice_leaf {
    ($($t:ty),*) => {$(
        impl Leaf for $t {
            fn value(&self) -> ParamValue {
                ParamValue::Name(Choice::name(self))
            }
        }
        impl<'a> From<&'a mut $t> for Slot<'a> {
            fn from(v: &'a mut $t) -> Self {
                Slot::Choice(v)
            }
        }
    )*};
}
choice_leaf!(
    crate::Strategy,
    super::TickPhase,
    crate::link::JitterDistribution,
    crate::reliability::stats::RttFilter,
    crate::workload::SnapshotMode,
    crate::workload::SizeDistribution,
    crate::workload::Senders
);

/// One section of the scenario: its leaves by name (dots inside a section reach nested structs:
/// `burst.p_percent`), as a slot to write and a value to read, and the list of names.
macro_rules! section {
    ($ty:ty, $slot:ident, $get:ident, $names:ident { $($key:literal => $($field:ident).+),* $(,)? }) => {
        /// The leaves of this section, by name.
        pub const $names: &[&str] = &[$($key),*];

        fn $slot<'a>(c: &'a mut $ty, key: &str) -> Option<Slot<'a>> {
            match key {
                $($key => Some(Slot::from(&mut c.$($field).+)),)*
                _ => None,
            }
        }

        fn $get(c: &$ty, key: &str) -> Option<ParamValue> {
            match key {
                $($key => Some(Leaf::value(&c.$($field).+)),)*
                _ => None,
            }
        }
    };
}

section!(Scenario, top_slot, top_get, TOP {
    "seed" => seed,
    "strategy" => strategy,
    "send_rate_pps" => send_rate_pps,
    "payload_bytes" => payload_bytes,
    "stats_interval_ms" => stats_interval_ms,
    "tick_phase" => tick_phase,
    "tick_jitter_ms" => tick_jitter_ms,
});

section!(SideConfig, side_slot, side_get, SIDE {
    "tick_phase_ms" => tick_phase_ms,
});

section!(AckConfig, ack_slot, ack_get, ACK {
    "sent_packets_buffer_size" => sent_packets_buffer_size,
    "received_packets_buffer_size" => received_packets_buffer_size,
    "ack_expiry_ms" => ack_expiry_ms,
});

section!(StatsConfig, stats_slot, stats_get, STATS {
    "rtt_smoothing" => rtt_smoothing,
    "rtt_display_smoothing" => rtt_display_smoothing,
    "rtt_filter" => rtt_filter,
    "bandwidth_smoothing" => bandwidth_smoothing,
    "rtt_window" => rtt_window,
    "loss_window" => loss_window,
    "loss_rtt_factor" => loss_rtt_factor,
    "loss_margin_ms" => loss_margin_ms,
    "bandwidth_interval_ms" => bandwidth_interval_ms,
});

section!(LinkConfig, link_slot, link_get, LINK {
    "latency_ms" => latency_ms,
    "jitter_ms" => jitter_ms,
    "jitter_distribution" => jitter_distribution,
    "jitter_reorders" => jitter_reorders,
    "loss_percent" => loss_percent,
    "burst.p_percent" => burst.p_percent,
    "burst.r_percent" => burst.r_percent,
    "burst.loss_in_bad_percent" => burst.loss_in_bad_percent,
    "duplicate_percent" => duplicate_percent,
    "reorder_percent" => reorder_percent,
    "reorder_delay_ms" => reorder_delay_ms,
    "bandwidth_kbps" => bandwidth_kbps,
    "queue_bytes" => queue_bytes,
    "mtu_bytes" => mtu_bytes,
});

section!(WorkloadConfig, workload_slot, workload_get, WORKLOAD {
    "snapshot_rate_hz" => snapshot_rate_hz,
    "snapshot_bytes" => snapshot_bytes,
    "reliable_rate_hz" => reliable_rate_hz,
    "reliable_min_bytes" => reliable_min_bytes,
    "reliable_max_bytes" => reliable_max_bytes,
    "reliable_size_distribution" => reliable_size_distribution,
    "senders" => senders,
    "burst_messages" => burst_messages,
    "chunk_kib" => chunk_kib,
    "snapshot_mode" => snapshot_mode,
    "actors" => actors,
});

section!(ChunkConfig, chunk_slot, chunk_get, CHUNK {
    "bandwidth_kbps" => bandwidth_kbps,
    "resend_delay_ms" => resend_delay_ms,
    "rtt_resend" => rtt_resend,
    "initial_burst" => initial_burst,
    "burst_wait_ms" => burst_wait_ms,
    "slice_bytes" => slice_bytes,
    "max_slices" => max_slices,
    "ack_interval_ms" => ack_interval_ms,
});

section!(FlowConfig, flow_slot, flow_get, FLOW {
    "enabled" => enabled,
    "rtt_threshold_ms" => rtt_threshold_ms,
    "good_rate_pps" => good_rate_pps,
    "bad_rate_pps" => bad_rate_pps,
    "initial_penalty_ms" => initial_penalty_ms,
    "max_penalty_ms" => max_penalty_ms,
    "relapse_window_ms" => relapse_window_ms,
    "good_reset_ms" => good_reset_ms,
});

section!(GlennConfig, glenn_slot, glenn_get, GLENN {
    "resend_delay_ms" => resend_delay_ms,
    "rtt_resend" => rtt_resend,
    "rtt_resend_factor" => rtt_resend_factor,
    "packet_budget_bytes" => packet_budget_bytes,
    "max_messages_per_packet" => max_messages_per_packet,
    "send_queue_size" => send_queue_size,
    "receive_queue_size" => receive_queue_size,
    "sent_packets_buffer_size" => sent_packets_buffer_size,
    "unreliable_queue_size" => unreliable_queue_size,
});

section!(Ue4Config, ue4_slot, ue4_get, UE4 {
    "net_speed_bytes_per_sec" => net_speed_bytes_per_sec,
    "desired_tick_rate_hz" => desired_tick_rate_hz,
    "max_packet_bytes" => max_packet_bytes,
    "keepalive_ms" => keepalive_ms,
    "order_cache_enabled" => order_cache_enabled,
    "order_cache_max_missing" => order_cache_max_missing,
    "order_cache_capacity" => order_cache_capacity,
    "initial_packet_seq" => initial_packet_seq,
    "merge_bunches" => merge_bunches,
    "connection_timeout_ms" => connection_timeout_ms,
    "max_waiting_unreliable" => max_waiting_unreliable,
    "channel_close_s" => channel_close_s,
    "whole_bunch_resend" => whole_bunch_resend,
    "partial_bunch_reliable_threshold" => partial_bunch_reliable_threshold,
});

section!(DnmConfig, dnm_slot, dnm_get, DNM {
    "timeout_ms" => timeout_ms,
    "max_ack_ranges_per_packet" => max_ack_ranges_per_packet,
    "ack_repeat" => ack_repeat,
    "max_pending_ack_ranges" => max_pending_ack_ranges,
    "receive_reset_ms" => receive_reset_ms,
    "max_packet_bytes" => max_packet_bytes,
    "send_queue_messages" => send_queue_messages,
    "accept_late" => accept_late,
});

section!(RelliktConfig, rellikt_slot, rellikt_get, RELLIKT {
    "protocol_id" => protocol_id,
    "loss_timeout_ms" => loss_timeout_ms,
    "sent_buffer_size" => sent_buffer_size,
    "received_buffer_size" => received_buffer_size,
    "ack_expiry_ms" => ack_expiry_ms,
    "max_packet_bytes" => max_packet_bytes,
    "send_queue_messages" => send_queue_messages,
});

section!(HybridConfig, hybrid_slot, hybrid_get, HYBRID {
    "reorder_tolerance_packets" => reorder_tolerance_packets,
    "rtt_factor" => rtt_factor,
    "rttvar_factor" => rttvar_factor,
    "tight_rttvar_factor" => tight_rttvar_factor,
    "redundancy_age_rtts" => redundancy_age_rtts,
    "redundancy_budget_bytes" => redundancy_budget_bytes,
    "redundant_copies" => redundant_copies,
    "recovery_target_ms" => recovery_target_ms,
    "tail_share_percent" => tail_share_percent,
    "every_tick" => every_tick,
    "initial_rtt_ms" => initial_rtt_ms,
});

section!(ServerConfig, server_slot, server_get, SERVER {
    "uplink_kbps" => uplink_kbps,
    "uplink_queue_bytes" => uplink_queue_bytes,
});

/// Settings of the link as a whole, beside its two directions.
pub const WHOLE_LINK: &[&str] = &["trace"];

/// The groups of the scenario's top level (a name of a group is not a value), with the field
/// names each takes after its dot.
pub const GROUPS: &[(&str, &[&str])] = &[
    ("a", SIDE),
    ("b", SIDE),
    ("ack", ACK),
    ("ack.stats", STATS),
    ("link", LINK),
    ("link.a_to_b", LINK),
    ("link.b_to_a", LINK),
    ("workload", WORKLOAD),
    ("chunk", CHUNK),
    ("flow", FLOW),
    ("script", &[]),
    ("glenn", GLENN),
    ("ue4", UE4),
    ("dnm", DNM),
    ("dnm.stats", STATS),
    ("rellikt", RELLIKT),
    ("rellikt.stats", STATS),
    ("hybrid", HYBRID),
    ("server", SERVER),
];

/// The place `path` (one leaf: `link.a_to_b.loss_percent`, never `link.loss_percent`) names, or
/// `None`.
pub fn slot<'a>(s: &'a mut Scenario, path: &str) -> Option<Slot<'a>> {
    let Some((group, key)) = path.split_once('.') else { return top_slot(s, path) };
    match group {
        "a" => side_slot(&mut s.a, key),
        "b" => side_slot(&mut s.b, key),
        "link" => match key.split_once('.') {
            Some(("a_to_b", key)) => link_slot(&mut s.link.a_to_b, key),
            Some(("b_to_a", key)) => link_slot(&mut s.link.b_to_a, key),
            None if key == "trace" => Some(Slot::from(&mut s.link.trace)),
            _ => None,
        },
        "ack" => match key.strip_prefix("stats.") {
            Some(key) => stats_slot(&mut s.ack.stats, key),
            None => ack_slot(&mut s.ack, key),
        },
        "workload" => workload_slot(&mut s.workload, key),
        "chunk" => chunk_slot(&mut s.chunk, key),
        "flow" => flow_slot(&mut s.flow, key),
        "glenn" => glenn_slot(&mut s.glenn, key),
        "ue4" => ue4_slot(&mut s.ue4, key),
        "dnm" => match key.strip_prefix("stats.") {
            Some(key) => stats_slot(&mut s.dnm.stats, key),
            None => dnm_slot(&mut s.dnm, key),
        },
        "rellikt" => match key.strip_prefix("stats.") {
            Some(key) => stats_slot(&mut s.rellikt.stats, key),
            None => rellikt_slot(&mut s.rellikt, key),
        },
        "hybrid" => hybrid_slot(&mut s.hybrid, key),
        "server" => server_slot(&mut s.server, key),
        _ => None,
    }
}

/// The value of the leaf `path` (as [`slot`] names it), or `None`.
pub fn get(s: &Scenario, path: &str) -> Option<ParamValue> {
    let Some((group, key)) = path.split_once('.') else { return top_get(s, path) };
    match group {
        "a" => side_get(&s.a, key),
        "b" => side_get(&s.b, key),
        "link" => match key.split_once('.') {
            Some(("a_to_b", key)) => link_get(&s.link.a_to_b, key),
            Some(("b_to_a", key)) => link_get(&s.link.b_to_a, key),
            None if key == "trace" => Some(s.link.trace.value()),
            _ => None,
        },
        "ack" => match key.strip_prefix("stats.") {
            Some(key) => stats_get(&s.ack.stats, key),
            None => ack_get(&s.ack, key),
        },
        "workload" => workload_get(&s.workload, key),
        "chunk" => chunk_get(&s.chunk, key),
        "flow" => flow_get(&s.flow, key),
        "glenn" => glenn_get(&s.glenn, key),
        "ue4" => ue4_get(&s.ue4, key),
        "dnm" => match key.strip_prefix("stats.") {
            Some(key) => stats_get(&s.dnm.stats, key),
            None => dnm_get(&s.dnm, key),
        },
        "rellikt" => match key.strip_prefix("stats.") {
            Some(key) => stats_get(&s.rellikt.stats, key),
            None => rellikt_get(&s.rellikt, key),
        },
        "hybrid" => hybrid_get(&s.hybrid, key),
        "server" => server_get(&s.server, key),
        _ => None,
    }
}

/// Every leaf of the scenario by its full dotted name (both link directions, every estimator's
/// settings), in the scenario's order. The clients' names (`clients`, `client.K.NAME`) are not
/// fields: [`Scenario::apply_change`] takes them apart.
pub fn leaf_names() -> Vec<String> {
    let mut out: Vec<String> = TOP.iter().map(|k| k.to_string()).collect();
    // `link.X` stands for both directions, which are listed under their own names.
    for (group, keys) in GROUPS.iter().filter(|(g, _)| *g != "link") {
        out.extend(keys.iter().map(|k| format!("{group}.{k}")));
    }
    out.extend(WHOLE_LINK.iter().map(|k| format!("link.{k}")));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every leaf of the serialized scenario, by dotted name.
    fn serialized_leaves() -> Vec<String> {
        fn walk(v: &serde_json::Value, name: String, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    for (k, child) in m {
                        // The script is steps, not values; the clients' names are not fields.
                        if name.is_empty() && ["script", "clients", "client"].contains(&k.as_str()) {
                            continue;
                        }
                        let dotted = if name.is_empty() { k.clone() } else { format!("{name}.{k}") };
                        walk(child, dotted, out);
                    }
                }
                _ => out.push(name),
            }
        }
        // Settings a file leaves out while they are the defaults, given values to be written.
        let mut s = Scenario::default();
        s.server.uplink_kbps = 1000.0;
        s.link.trace = Some("trace.pcapng".into());
        let mut out = Vec::new();
        walk(&serde_json::to_value(s).unwrap(), String::new(), &mut out);
        out
    }

    #[test]
    fn every_field_of_the_scenario_is_a_leaf_here_and_nothing_else() {
        let mut ours = leaf_names();
        let mut theirs = serialized_leaves();
        ours.sort();
        theirs.sort();
        assert_eq!(ours, theirs, "the scenario's fields and the settable leaves differ");
        let mut s = Scenario::default();
        for name in &ours {
            let value = get(&s, name).unwrap_or_else(|| panic!("{name} does not read"));
            let slot = slot(&mut s, name).unwrap_or_else(|| panic!("{name} has no slot"));
            slot.check(&value).unwrap_or_else(|e| panic!("{name}: its own value {value} misfits: {e:?}"));
            slot.set(&value).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        }
        assert_eq!(s, Scenario::default(), "writing each field's own value changed the scenario");
    }
}
