//! How steps and actions are spelled in files (RON) and in JSON.
//!
//! A step: `(at_s: 12, action: burst)`, `(at_us: 12000000, action: burst)`, or the link-change
//! form scenario scripts had first, `(at_s: 20.0, dir: a_to_b, set: (loss_percent: 100.0))`
//! (`dir` defaults to `both`). Unknown fields are refused.
//!
//! An action: `burst` (side A) or `burst(side: B)`; `send_chunk(kib: 256)` or
//! `send_chunk(kib: 256, side: B)`; `set(name: "link.loss_percent", value: "20")` (the value
//! may also be a bare number or boolean); `link(dir: a_to_b, set: (loss_percent: 100.0))`;
//! `restart`; `strategy(ue4)`; `pause`; `resume`; `transport(udp)` / `transport(in_process)`.
//!
//! `burst` written bare and `burst(side: B)` are the same action, and serde alone cannot read an
//! enum variant in both forms. So an action is first read as a bare name or a one-entry map
//! (`{name: arguments}`, which is what RON and JSON give for a variant with arguments), then the
//! arguments are read into the variant's own struct, which refuses unknown fields. Names that are
//! not actions, and unknown argument names, are refused with the nearest valid name.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{Action, ParamChange, ParamValue, Step, Transport, MAX_CHUNK_KIB};
use crate::event::{Side, SimTime};
use crate::link::{LinkPatch, StepDirection};
use crate::names::nearest_name;
use crate::strategy::Strategy;

/// Every action name, in the order [`Action`] lists them.
pub const ACTION_NAMES: [&str; 9] =
    ["set", "burst", "send_chunk", "link", "restart", "strategy", "pause", "resume", "transport"];

/// A step as written: a time and either an action or a link change.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepIn {
    #[serde(default)]
    at_s: Option<f64>,
    #[serde(default)]
    at_us: Option<u64>,
    #[serde(default)]
    action: Option<Action>,
    #[serde(default)]
    dir: Option<StepDirection>,
    #[serde(default)]
    set: Option<LinkPatch>,
}

impl TryFrom<StepIn> for Step {
    type Error = String;

    fn try_from(s: StepIn) -> Result<Step, String> {
        let at = match (s.at_s, s.at_us) {
            (Some(_), Some(_)) => return Err("a step has `at_s` or `at_us`, not both".into()),
            (None, None) => return Err("a step needs its time: `at_s` (seconds) or `at_us`".into()),
            (Some(t), None) if !(t.is_finite() && (0.0..=1e9).contains(&t)) => {
                return Err(format!("`at_s` must be a number of seconds from 0 to 1e9, got {t}"))
            }
            (Some(t), None) => SimTime::from_secs_f64(t),
            (None, Some(us)) => SimTime(us),
        };
        let action = match (s.action, s.dir, s.set) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
                return Err("a step has an `action` or a link change (`dir`, `set`), not both".into())
            }
            (Some(a), None, None) => a,
            (None, dir, Some(set)) => Action::Link { dir: dir.unwrap_or_default(), set },
            (None, _, None) => return Err("a step needs an `action` (or a link change: `set`)".into()),
        };
        Ok(Step { at, action })
    }
}

/// A step as written out: always the `action` form, the time in seconds.
#[derive(Serialize)]
pub struct StepOut {
    at_s: f64,
    action: Action,
}

impl From<Step> for StepOut {
    fn from(s: Step) -> Self {
        StepOut { at_s: s.at.as_secs_f64(), action: s.action }
    }
}

fn side_a(side: &Side) -> bool {
    *side == Side::A
}

fn both(dir: &StepDirection) -> bool {
    *dir == StepDirection::Both
}

/// Every action with its arguments, as serde reads and writes a variant with a name.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum Full {
    Set {
        name: String,
        value: Value,
    },
    Burst {
        #[serde(default = "default_side", skip_serializing_if = "side_a")]
        side: Side,
    },
    SendChunk {
        #[serde(default = "default_side", skip_serializing_if = "side_a")]
        side: Side,
        kib: u32,
    },
    Link {
        #[serde(default, skip_serializing_if = "both")]
        dir: StepDirection,
        set: LinkPatch,
    },
    Restart,
    Strategy(Strategy),
    Pause,
    Resume,
    Transport(Transport),
}

fn default_side() -> Side {
    Side::A
}

impl Serialize for Action {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let full = match self {
            // The common case stays bare, as people write it.
            Action::Burst { side: Side::A } => return s.serialize_unit_variant("Action", 1, "burst"),
            // The value as text, as files always wrote it.
            Action::Set(c) => Full::Set { name: c.name().to_string(), value: Value::String(c.value().to_string()) },
            Action::Burst { side } => Full::Burst { side: *side },
            Action::SendChunk { side, kib } => Full::SendChunk { side: *side, kib: *kib },
            Action::Link { dir, set } => Full::Link { dir: *dir, set: *set },
            Action::Restart => Full::Restart,
            Action::Strategy(st) => Full::Strategy(*st),
            Action::Pause => Full::Pause,
            Action::Resume => Full::Resume,
            Action::Transport(t) => Full::Transport(*t),
        };
        full.serialize(s)
    }
}

/// An action as first read: a bare name, or a name with its arguments.
#[derive(Deserialize)]
#[serde(untagged)]
enum Buffered {
    Bare(String),
    Full(BTreeMap<String, Arg>),
}

/// Arguments as a JSON tree. A number that is not finite becomes its text (`"NaN"`), which any
/// number field then refuses: JSON would make it `null`, which an optional field reads as "not
/// set", so a NaN would vanish instead of being refused. (Errors here cannot be reported as they
/// are: the untagged [`Buffered`] swallows them.)
struct Arg(Value);

impl<'de> Deserialize<'de> for Arg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Arg, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Arg;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an action argument")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Arg, E> {
                Ok(Arg(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Arg, E> {
                Ok(Arg(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Arg, E> {
                Ok(Arg(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Arg, E> {
                Ok(Arg(serde_json::Number::from_f64(v).map_or_else(|| Value::String(v.to_string()), Value::Number)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Arg, E> {
                Ok(Arg(Value::String(v.to_string())))
            }
            fn visit_unit<E>(self) -> Result<Arg, E> {
                Ok(Arg(Value::Null))
            }
            fn visit_none<E>(self) -> Result<Arg, E> {
                Ok(Arg(Value::Null))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Arg, D::Error> {
                Arg::deserialize(d)
            }
            fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Arg, D::Error> {
                Arg::deserialize(d)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Arg, A::Error> {
                let mut v = Vec::new();
                while let Some(Arg(x)) = seq.next_element()? {
                    v.push(x);
                }
                Ok(Arg(Value::Array(v)))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Arg, A::Error> {
                let mut m = serde_json::Map::new();
                while let Some((k, Arg(x))) = map.next_entry::<String, Arg>()? {
                    m.insert(k, x);
                }
                Ok(Arg(Value::Object(m)))
            }
        }
        d.deserialize_any(V)
    }
}

/// "unknown X `name`" with the nearest of `valid`, or the list of them.
fn unknown(what: &str, name: &str, valid: &[&str]) -> String {
    match nearest_name(name, valid.iter().copied()) {
        Some(n) => format!("unknown {what} `{name}`: did you mean `{n}`?"),
        None => format!("unknown {what} `{name}` (valid: {})", valid.join(", ")),
    }
}

/// Adds "did you mean" to serde_json's "unknown field `x`, expected `a` or `b`" messages.
fn with_suggestion(message: String) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else { return message };
    let Some((found, tail)) = rest.split_once('`') else { return message };
    let expected: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
    match nearest_name(found, expected.iter().copied()) {
        Some(n) => format!("{message}: did you mean `{n}`?"),
        None => message,
    }
}

fn action_from(buffered: Buffered) -> Result<Action, String> {
    let (name, args) = match buffered {
        Buffered::Bare(name) => match name.as_str() {
            "burst" => return Ok(Action::Burst { side: Side::A }),
            "restart" => return Ok(Action::Restart),
            "pause" => return Ok(Action::Pause),
            "resume" => return Ok(Action::Resume),
            n if ACTION_NAMES.contains(&n) => {
                let example = match n {
                    "set" => "set(name: \"link.loss_percent\", value: \"20\")",
                    "send_chunk" => "send_chunk(kib: 256)",
                    "link" => "link(dir: a_to_b, set: (loss_percent: 100.0))",
                    "transport" => "transport(udp)",
                    _ => "strategy(ue4)",
                };
                return Err(format!("action `{n}` needs its arguments, e.g. {example}"));
            }
            n => return Err(unknown("action", n, &ACTION_NAMES)),
        },
        Buffered::Full(map) => {
            let mut entries = map.into_iter();
            match (entries.next(), entries.next()) {
                (Some((name, Arg(args))), None) => (name, args),
                _ => return Err("an action is one name with its arguments, e.g. send_chunk(kib: 256)".into()),
            }
        }
    };
    if !ACTION_NAMES.contains(&name.as_str()) {
        return Err(unknown("action", &name, &ACTION_NAMES));
    }
    let mut one = serde_json::Map::new();
    one.insert(name.clone(), args);
    let full: Full = serde_json::from_value(Value::Object(one))
        .map_err(|e| format!("in action `{name}`: {}", with_suggestion(e.to_string())))?;
    Ok(match full {
        Full::Set { name, value } => {
            let value = match value {
                Value::String(s) => ParamValue::parse(&s),
                Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                    (Some(i), _, _) => ParamValue::Int(i.into()),
                    (_, Some(u), _) => ParamValue::Int(u.into()),
                    (_, _, Some(v)) => ParamValue::number(v),
                    _ => ParamValue::parse(&n.to_string()),
                },
                Value::Bool(b) => ParamValue::Bool(b),
                Value::Null => ParamValue::Unset,
                other => {
                    return Err(format!("in action `set`: the value must be text, a number or a boolean, got {other}"))
                }
            };
            if name.trim().is_empty() {
                return Err("in action `set`: the parameter name is empty".into());
            }
            Action::Set(ParamChange::new(&name, value))
        }
        Full::Burst { side } => Action::Burst { side },
        Full::SendChunk { kib, .. } if !(1..=MAX_CHUNK_KIB).contains(&kib) => {
            return Err(format!("in action `send_chunk`: `kib` must be from 1 to {MAX_CHUNK_KIB}, got {kib}"))
        }
        Full::SendChunk { side, kib } => Action::SendChunk { side, kib },
        Full::Link { dir, set } => Action::Link { dir, set },
        Full::Restart => Action::Restart,
        Full::Strategy(s) => Action::Strategy(s),
        Full::Pause => Action::Pause,
        Full::Resume => Action::Resume,
        Full::Transport(t) => Action::Transport(t),
    })
}

impl<'de> Deserialize<'de> for Action {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Action, D::Error> {
        let buffered = Buffered::deserialize(d).map_err(|e| {
            D::Error::custom(format!(
                "an action is a name such as `burst` or one with arguments such as `send_chunk(kib: 256)` ({e})"
            ))
        })?;
        action_from(buffered).map_err(D::Error::custom)
    }
}
