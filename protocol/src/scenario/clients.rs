//! A run's clients: how many, in which groups, with which settings of their own, and how each
//! one's scenario (and seed) is made from the run's.
//!
//! A run is one server (side A) and N clients (side B), each client on its own link in each
//! direction with its own workload. `clients` says how many, either as a count or as groups:
//!
//! ```ron
//! clients: 16,
//! clients: [(count: 12, preset: "home broadband"), (count: 4, link: (latency_ms: 100, loss_percent: 4))],
//! ```
//!
//! Clients are numbered from 1 in group order. A group's client starts from the scenario's own
//! settings, then takes the group's `preset` (a built-in network preset by name, any case: see
//! [`crate::link::presets`]), its `link` (set on both directions) and its `set` list (dotted
//! names as `--set` takes them, e.g. `("workload.chunk_kib", "256")`); then its own settings
//! from `client` (`--set client.3.link.loss_percent=20` adds `("link.loss_percent", "20")` under
//! client 3; `client.K.preset=NAME` takes a preset). `--set clients=N` sets a count (replacing any
//! groups). Each client's settings are fixed at the start of the run; a live `set` of a plain name
//! changes every client, `client.K.NAME` client K only.
//!
//! Seeds: client k's scenario has seed [`client_seed`]`(seed, k)`, client 1 the run's own seed,
//! so every draw of client k (its links, its tick phase and lateness, both ends' workload) is a
//! function of the seed and k only: adding client 9 changes nothing of clients 1-8, and a run of
//! one client is exactly a two-endpoint run. The server's send ticks are the run's side A ticks,
//! the same instants for every connection.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Scenario, SetError};
use crate::action::{ParamChange, ParamValue};
use crate::event::{ClientId, Dir};
use crate::link::draws::stream;
use crate::link::presets;
use crate::link::LinkPatch;

/// Most clients a run may have.
pub const MAX_CLIENTS: u32 = 1 << 16;

/// Stream of the client seeds under the run's seed (no other draw uses it).
const CLIENT_STREAM: u64 = 0x636C_6965_6E74; // "client"

/// Names a client may not set for itself: they belong to the whole run.
const RUN_WIDE_NAMES: [&str; 6] = ["seed", "strategy", "clients", "client", "server", "script"];

/// The seed of client `k`'s scenario: the run's own for client 1, a stream of its own for every
/// other (see the module doc).
pub fn client_seed(seed: u64, k: ClientId) -> u64 {
    if k <= 1 {
        seed
    } else {
        stream(stream(seed, CLIENT_STREAM), k as u64)
    }
}

/// How many clients a run has: a count, or groups with settings of their own.
#[derive(Debug, Clone, PartialEq)]
pub enum Clients {
    Count(u32),
    Groups(Vec<ClientGroup>),
}

impl Default for Clients {
    fn default() -> Self {
        Clients::Count(1)
    }
}

impl Clients {
    /// Clients in all.
    pub fn total(&self) -> u64 {
        match self {
            Clients::Count(n) => *n as u64,
            Clients::Groups(g) => g.iter().map(|g| g.count as u64).sum(),
        }
    }

    /// One client and nothing else said (nothing to write in a scenario file).
    pub fn is_one(&self) -> bool {
        *self == Clients::Count(1)
    }
}

impl Serialize for Clients {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Clients::Count(n) => s.serialize_u32(*n),
            Clients::Groups(g) => g.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Clients {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Clients;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a number of clients (1 to {MAX_CLIENTS}) or a list of groups such as [(count: 4, preset: \"LAN\")]")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Clients, E> {
                u32::try_from(v)
                    .map(Clients::Count)
                    .map_err(|_| E::custom(format!("{v} clients: at most {MAX_CLIENTS}")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Clients, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom(format!("{v} clients: a run has at least one")))
                    .and_then(|v| self.visit_u64(v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Clients, E> {
                if v.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&v) {
                    self.visit_u64(v as u64)
                } else {
                    Err(E::custom(format!("{v} clients: a whole number is expected")))
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Clients, A::Error> {
                let mut groups = Vec::new();
                while let Some(g) = seq.next_element::<ClientGroup>()? {
                    groups.push(g);
                }
                Ok(Clients::Groups(groups))
            }
        }
        d.deserialize_any(V)
    }
}

/// Clients that share settings: `count` of them, each with the preset, link and settings given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClientGroup {
    pub count: u32,
    /// A built-in network preset by name (any case), set on both directions first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// Link settings for both directions, after the preset.
    #[serde(skip_serializing_if = "is_empty_patch")]
    pub link: LinkPatch,
    /// Any other settings by dotted name (`("link.a_to_b.bandwidth_kbps", "300")`,
    /// `("workload.chunk_kib", "256")`), after the link.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set: Vec<(String, String)>,
}

fn is_empty_patch(p: &LinkPatch) -> bool {
    *p == LinkPatch::default()
}

impl Default for ClientGroup {
    fn default() -> Self {
        Self { count: 1, preset: None, link: LinkPatch::default(), set: Vec::new() }
    }
}

fn err(text: String) -> SetError {
    SetError(text)
}

impl Scenario {
    /// How many clients the run has (at least 1, whatever the scenario says: see
    /// [`Self::check_clients`] for the refusal).
    pub fn client_count(&self) -> u32 {
        self.clients.total().clamp(1, MAX_CLIENTS as u64) as u32
    }

    /// The group client `k` belongs to (its index in `clients`), when `clients` lists groups.
    pub fn group_of(&self, k: ClientId) -> Option<(usize, &ClientGroup)> {
        let Clients::Groups(groups) = &self.clients else { return None };
        let mut first = 1u64;
        for (i, g) in groups.iter().enumerate() {
            if (first..first + g.count as u64).contains(&(k as u64)) {
                return Some((i, g));
            }
            first += g.count as u64;
        }
        None
    }

    /// Client `k`'s scenario: the run's settings, then its group's preset, link and settings, then
    /// its own (`client`), under its own seed ([`client_seed`]); it describes one connection (one
    /// client, no groups). Client 1 of a run without groups or settings of its own gets the
    /// scenario itself.
    pub fn for_client(&self, k: ClientId) -> Result<Scenario, SetError> {
        let mut s = self.clone();
        s.clients = Clients::default();
        s.client.clear();
        if let Some((i, g)) = self.group_of(k) {
            let place = |e: SetError| err(format!("clients[{i}] (client {k}): {e}"));
            if let Some(name) = &g.preset {
                s.set_for_client("preset", name).map_err(place)?;
            }
            for dir in Dir::BOTH {
                g.link.apply(s.link.get_mut(dir));
            }
            for (name, value) in &g.set {
                s.set_for_client(name, value).map_err(place)?;
            }
        }
        for (name, value) in self.client.get(&k).into_iter().flatten() {
            s.set_for_client(name, value).map_err(|e| err(format!("client.{k}.{name}: {e}")))?;
        }
        s.seed = client_seed(self.seed, k);
        Ok(s)
    }

    /// Refuses a count or groups outside 1..=[`MAX_CLIENTS`], settings for a client the run does
    /// not have, and any group or client setting that does not apply (an unknown preset or name,
    /// a value of the wrong type); the message names the group or client.
    pub fn check_clients(&self) -> Result<(), SetError> {
        let total = self.clients.total();
        if total == 0 {
            return Err(err("clients: a run has at least one client".into()));
        }
        if total > MAX_CLIENTS as u64 {
            return Err(err(format!("clients: {total} clients, at most {MAX_CLIENTS}")));
        }
        if let Clients::Groups(groups) = &self.clients {
            if let Some(i) = groups.iter().position(|g| g.count == 0) {
                return Err(err(format!("clients[{i}]: a group has at least one client (count: 0)")));
            }
            let mut first = 1;
            for g in groups {
                self.for_client(first)?;
                first += g.count;
            }
        }
        for &k in self.client.keys() {
            if k == 0 || k > total as u32 {
                return Err(err(format!("client.{k}: the run has {total} client(s), numbered from 1")));
            }
            self.for_client(k)?;
        }
        Ok(())
    }

    /// Sets `name` on this (one client's) scenario from text: [`Self::apply_change_for_client`]
    /// of the parsed change.
    pub fn set_for_client(&mut self, name: &str, value: &str) -> Result<(), SetError> {
        self.apply_change_for_client(&ParamChange::parse(name, value))
    }

    /// Applies `change` to this (one client's) scenario: a plain dotted name, or `preset` for a
    /// built-in network preset on both directions. Names of the whole run are refused.
    pub fn apply_change_for_client(&mut self, change: &ParamChange) -> Result<(), SetError> {
        let name = change.name();
        let head = name.split('.').next().unwrap_or_default();
        if RUN_WIDE_NAMES.contains(&head) {
            return Err(err(format!("'{name}' belongs to the whole run, not to one client")));
        }
        if name == "preset" {
            let value = change.value().to_string();
            let p = presets::find(&value)
                .ok_or_else(|| err(format!("unknown preset '{value}' (valid: {})", presets::names().join(", "))))?;
            p.apply_both(&mut self.link.a_to_b, &mut self.link.b_to_a);
            return Ok(());
        }
        self.apply_change(change)
    }

    /// [`Scenario::apply_change`] of the names this module owns: `clients` (a count) and
    /// `client.K.NAME` (client K's own setting, checked on a copy first, kept as text like a
    /// file's). None for any other name.
    pub(super) fn set_clients_param(&mut self, change: &ParamChange) -> Option<Result<(), SetError>> {
        let (name, value) = (change.name(), change.value());
        if name == "clients" {
            return Some(match value {
                ParamValue::Int(n) if (1..=i128::from(MAX_CLIENTS)).contains(n) => {
                    self.clients = Clients::Count(u32::try_from(*n).expect("checked above"));
                    Ok(())
                }
                _ => Err(err(format!("'clients' takes a number of clients from 1 to {MAX_CLIENTS}, got {value}"))),
            });
        }
        let (k, rest) = parse_client_name(name)?;
        Some(
            k.and_then(|k| {
                let mut probe = self.for_client(k.min(self.client_count())).unwrap_or_else(|_| self.clone());
                let inner = ParamChange::new(rest, value.clone());
                probe.apply_change_for_client(&inner)?;
                let list = self.client.entry(k).or_default();
                list.retain(|(n, _)| n != rest);
                list.push((rest.to_string(), value.to_string()));
                Ok(k)
            })
            .map(|_| ()),
        )
    }
}

/// Splits `client.K.NAME` into K and NAME: None when `name` is not a client's name, an error when
/// K is not a client number or NAME is missing.
pub fn parse_client_name(name: &str) -> Option<(Result<ClientId, SetError>, &str)> {
    let rest = name.trim().strip_prefix("client.")?;
    let (k, inner) = rest.split_once('.').unwrap_or((rest, ""));
    let parsed = match k.parse::<u64>() {
        _ if inner.is_empty() => {
            Err(err(format!("'{name}': expected client.K.NAME, such as client.3.link.loss_percent")))
        }
        Ok(k) if (1..=MAX_CLIENTS as u64).contains(&k) => Ok(k as ClientId),
        _ => Err(err(format!("'{name}': clients are numbered from 1 to {MAX_CLIENTS}, got '{k}'"))),
    };
    Some((parsed, inner))
}

/// Per-client settings by client number, as `client` holds them.
pub type ClientSettings = BTreeMap<ClientId, Vec<(String, String)>>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::WorkloadConfig;

    fn groups() -> Scenario {
        let text = r#"(seed: 7, clients: [(count: 2, preset: "home broadband"), (count: 3, link: (latency_ms: 100, loss_percent: 4), set: [("workload.chunk_kib", "8")])])"#;
        ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
            .from_str(text)
            .unwrap()
    }

    #[test]
    fn groups_read_from_ron_and_give_each_client_its_settings_and_seed() {
        let s = groups();
        assert_eq!(s.client_count(), 5);
        s.check_clients().unwrap();
        let c1 = s.for_client(1).unwrap();
        assert_eq!((c1.seed, c1.link.a_to_b.latency_ms, c1.link.b_to_a.loss_percent), (7, 32.0, 2.0));
        let c3 = s.for_client(3).unwrap();
        assert_eq!((c3.link.a_to_b.latency_ms, c3.link.b_to_a.loss_percent), (100.0, 4.0));
        assert_eq!(c3.link.a_to_b.jitter_ms, 0.0, "the scenario's own where the group says nothing");
        assert_eq!(c3.workload.chunk_kib, 8);
        assert_eq!(s.for_client(2).unwrap().workload, WorkloadConfig::default());
        let seeds: std::collections::BTreeSet<u64> = (1..=5).map(|k| s.for_client(k).unwrap().seed).collect();
        assert_eq!(seeds.len(), 5);
        assert_eq!(client_seed(7, 4), s.for_client(4).unwrap().seed, "a function of the seed and k only");
        // Written back as it was read.
        let text = ron::to_string(&s).unwrap();
        assert!(text.contains("clients:[(count:2,preset:Some(\"home broadband\"))"), "{text}");
    }

    #[test]
    fn set_takes_a_count_and_client_settings_in_any_order_and_refuses_what_does_not_apply() {
        let mut s = Scenario::default();
        s.set("client.3.link.loss_percent", "20").unwrap();
        s.set("client.3.workload.chunk_kib", "256").unwrap();
        s.set("clients", "4").unwrap();
        s.set("client.3.link.loss_percent", "25").unwrap();
        s.set("client.2.preset", "4G/LTE").unwrap();
        s.check_clients().unwrap();
        let c3 = s.for_client(3).unwrap();
        assert_eq!(
            (c3.link.a_to_b.loss_percent, c3.link.b_to_a.loss_percent, c3.workload.chunk_kib),
            (25.0, 25.0, 256)
        );
        assert_eq!(s.for_client(2).unwrap().link.a_to_b.latency_ms, 100.0);
        assert_eq!(s.for_client(4).unwrap().link, s.link);
        assert_eq!(s.client[&3].len(), 2, "a repeated name replaces the earlier value");
        let before = s.clone();
        for (name, value, expect) in [
            ("clients", "0", "from 1"),
            ("client.0.link.loss_percent", "1", "numbered from 1"),
            ("client.2", "1", "client.K.NAME"),
            ("client.2.link.los_percent", "1", "did you mean"),
            ("client.2.seed", "1", "whole run"),
            ("client.2.preset", "dial-up", "unknown preset"),
            ("client.2.link.loss_percent", "much", "expects a number"),
        ] {
            let e = s.set(name, value).unwrap_err().0;
            assert!(e.contains(expect), "{name}={value}: {e}");
        }
        assert_eq!(s, before);
        s.set("client.9.link.loss_percent", "1").unwrap();
        assert!(s.check_clients().unwrap_err().0.contains("client.9: the run has 4"));
    }

    #[test]
    fn one_client_serialises_as_before_and_count_or_groups_round_trip() {
        let text = ron::to_string(&Scenario::default()).unwrap();
        assert!(!text.contains("clients") && !text.contains("server"), "{text}");
        let s: Scenario = ron::from_str("(clients: 12)").unwrap();
        assert_eq!(s.clients, Clients::Count(12));
        let s = groups();
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(serde_json::from_value::<Scenario>(json).unwrap(), s);
        let e = ron::from_str::<Scenario>("(clients: \"many\")").unwrap_err().to_string();
        assert!(e.contains("a number of clients"), "{e}");
        let e = ron::from_str::<Scenario>("(clients: [(cont: 3)])").unwrap_err().to_string();
        assert!(e.contains("cont"), "{e}");
    }
}
