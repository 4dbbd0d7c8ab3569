//! Event streams as JSON lines: the format a game writes (or streams) so ackscope can show its
//! connections, and `ackscope export --events` writes.
//!
//! One JSON object per line. The first is the header, `{"ackscope_events":1, ...}` (the format's
//! version, the producer, the protocol and how its packets are laid out, the clients); every
//! other line is an event, `{"t_us":..,"client":..,"event":"PacketSent", <the kind's fields>}`,
//! or a client's name and group, `{"event":"ClientInfo","client":..,"name":..,"group":..}`. The
//! fields of each kind are [`EventKind`]'s, named and valued as its serde form names them
//! (README, "JSON-lines event streams", lists them all).
//!
//! Built for a writer that appends as things happen: a stream needs nothing at its end, times are
//! microseconds from the stream's start and never go back within a lane, and a reader takes it
//! line by line ([`StreamReader`]), so a stream still being written opens (the window follows it:
//! [`crate::source::stream`]). Forward compatible: a field or an event kind this build does not
//! know is skipped and counted ([`Skipped`]), never fatal, so a newer game's stream opens in an
//! older ackscope. Anything else wrong (not JSON, a missing or mistyped field, a time that goes
//! back, a newer major version) refuses the stream with the line number and the field.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;

use ackscope_protocol::{ClientId, Event, EventKind, SimTime, FIRST_CLIENT};
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::lane::{ClientInfo, Protocol, WireFormat};

/// The version this build writes and reads; a stream of a later version is refused.
pub const VERSION: u32 = 1;
/// The header's key that marks an ackscope event stream (its value is the version).
pub const MAGIC: &str = "ackscope_events";
/// The file extension the window and `summary` recognise.
pub const EXTENSION: &str = "jsonl";

/// What one lane of a stream runs, by name, and how its packets are laid out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LaneHeader {
    /// A strategy's name (`glenn`, `ue4`...) or the game's own protocol name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// `reliable_io`, `ue4`, `notify`, `slices` or `opaque` (the default for a protocol
    /// ackscope does not know).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire: Option<String>,
}

impl LaneHeader {
    /// The protocol the lane runs (a strategy when it names one).
    pub fn protocol(&self) -> Protocol {
        let wire = self.wire.as_deref().and_then(WireFormat::parse);
        Protocol::named(self.protocol.as_deref().unwrap_or("unknown"), wire)
    }
}

/// The first line of a stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamHeader {
    /// The format version ([`VERSION`]).
    pub ackscope_events: u32,
    /// Who wrote the stream (`"mygame 1.4.2"`, `"ackscope 0.1.0"`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub producer: String,
    /// The first lane's protocol and layout.
    #[serde(flatten)]
    pub lane: LaneHeader,
    /// More lanes (an A/B recording exported): lane 1, 2... in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_lanes: Vec<LaneHeader>,
    /// Clients known from the start (more can be named later by `ClientInfo` lines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<ClientInfo>,
}

impl StreamHeader {
    /// Each lane's header, the first one first.
    pub fn lanes(&self) -> Vec<LaneHeader> {
        std::iter::once(self.lane.clone()).chain(self.more_lanes.iter().cloned()).collect()
    }
}

/// What a stream held that this build does not know, by name, with how often it came.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped {
    pub kinds: BTreeMap<String, u64>,
    pub fields: BTreeMap<String, u64>,
}

impl Skipped {
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty() && self.fields.is_empty()
    }

    /// One line for the user: `skipped 3 unknown events (Foo x2, Bar), 5 unknown fields (...)`.
    pub fn describe(&self) -> String {
        let list = |m: &BTreeMap<String, u64>| {
            m.iter().map(|(k, n)| if *n > 1 { format!("{k} x{n}") } else { k.clone() }).collect::<Vec<_>>().join(", ")
        };
        let mut parts = Vec::new();
        if !self.kinds.is_empty() {
            parts.push(format!("{} events of unknown kinds ({})", self.kinds.values().sum::<u64>(), list(&self.kinds)));
        }
        if !self.fields.is_empty() {
            parts.push(format!("{} unknown fields ({})", self.fields.values().sum::<u64>(), list(&self.fields)));
        }
        format!("skipped {}", parts.join(" and "))
    }
}

/// What a line of a stream says.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Header(StreamHeader),
    Event {
        lane: usize,
        event: Event,
    },
    Client {
        lane: usize,
        info: ClientInfo,
    },
    /// A blank line, or an event of a kind this build does not know (counted in [`Skipped`]).
    Nothing,
}

/// Reads a stream line by line, checking each against what came before.
#[derive(Debug)]
pub struct StreamReader {
    origin: String,
    line: u64,
    header: Option<StreamHeader>,
    /// The latest time of each lane.
    last_us: Vec<u64>,
    pub skipped: Skipped,
}

/// The `event` of a line that names a client.
const CLIENT_INFO: &str = "ClientInfo";

impl StreamReader {
    /// A reader of the stream `origin` names (the file or the address, for messages).
    pub fn new(origin: impl Into<String>) -> Self {
        Self { origin: origin.into(), line: 0, header: None, last_us: Vec::new(), skipped: Skipped::default() }
    }

    /// The header, once read.
    pub fn header(&self) -> Option<&StreamHeader> {
        self.header.as_ref()
    }

    /// Lines read so far.
    pub fn lines(&self) -> u64 {
        self.line
    }

    /// Reads the next line (without its line end).
    pub fn read_line(&mut self, text: &str) -> Result<Item> {
        self.line += 1;
        let text = text.trim();
        if text.is_empty() {
            return Ok(Item::Nothing);
        }
        let at = format!("{}:{}", self.origin, self.line);
        let mut obj: Map<String, Value> = match serde_json::from_str(text) {
            Ok(Value::Object(obj)) => obj,
            Ok(_) => bail!("{at}: not a JSON object"),
            Err(e) => bail!("{at}: not JSON ({e})"),
        };
        if self.header.is_none() {
            let header = self.read_header(obj, &at)?;
            self.last_us = vec![0; header.lanes().len()];
            self.header = Some(header.clone());
            return Ok(Item::Header(header));
        }
        let kind = match obj.remove("event") {
            Some(Value::String(k)) => k,
            Some(v) => bail!("{at}: field `event`: expected the event's kind as a string, got {v}"),
            None => bail!("{at}: field `event` is missing (every event line names its kind)"),
        };
        let client = take_u64(&mut obj, "client", &at)?.unwrap_or(FIRST_CLIENT as u64);
        let client = ClientId::try_from(client).map_err(|_| anyhow!("{at}: field `client`: {client} is too large"))?;
        let lane = take_u64(&mut obj, "lane", &at)?.unwrap_or(0) as usize;
        if lane >= self.last_us.len() {
            bail!("{at}: field `lane`: lane {lane} is not in the header (it names {})", self.last_us.len());
        }
        let t_us = take_u64(&mut obj, "t_us", &at)?;
        if kind == CLIENT_INFO {
            let name = take_string(&mut obj, "name", &at)?;
            let group = take_string(&mut obj, "group", &at)?;
            self.count_fields(obj.keys().map(|k| format!("{CLIENT_INFO}.{k}")));
            return Ok(Item::Client { lane, info: ClientInfo { id: client, name, group } });
        }
        let t_us = t_us.ok_or_else(|| anyhow!("{at}: field `t_us` is missing (every event has its time)"))?;
        if t_us < self.last_us[lane] {
            bail!(
                "{at}: field `t_us`: {t_us} is before the previous event's {} (times never go back)",
                self.last_us[lane]
            );
        }
        let Some(kind_value) = known_kind(&kind) else {
            *self.skipped.kinds.entry(kind).or_default() += 1;
            return Ok(Item::Nothing);
        };
        let tagged = Value::Object(Map::from_iter([(kind_value.to_string(), Value::Object(obj))]));
        let mut unknown = Vec::new();
        let mut note = |path: serde_ignored::Path| unknown.push(path.to_string());
        let de = serde_ignored::Deserializer::new(tagged, &mut note);
        let event_kind: EventKind = serde_path_to_error::deserialize(de).map_err(|e| {
            let field = e.path().to_string();
            let field = field.strip_prefix(&format!("{kind}.")).unwrap_or(&field).to_string();
            anyhow!("{at}: field `{field}` of {kind}: {}", e.inner())
        })?;
        self.count_fields(unknown.into_iter().map(|f| format!("{kind}.{f}")));
        self.last_us[lane] = t_us;
        Ok(Item::Event { lane, event: Event::for_client(SimTime(t_us), client, event_kind) })
    }

    fn read_header(&mut self, obj: Map<String, Value>, at: &str) -> Result<StreamHeader> {
        match obj.get(MAGIC) {
            Some(Value::Number(n)) if n.as_u64().is_some_and(|v| v >= 1 && v <= VERSION as u64) => {}
            Some(Value::Number(n)) if n.as_u64().is_some_and(|v| v > VERSION as u64) => {
                bail!("{at}: field `{MAGIC}`: version {n} is newer than this ackscope reads ({VERSION})")
            }
            Some(v) => bail!("{at}: field `{MAGIC}`: expected the format version ({VERSION}), got {v}"),
            None => bail!(
                "{at}: not an ackscope event stream: the first line must be its header, {{\"{MAGIC}\":{VERSION},...}}"
            ),
        }
        let mut unknown = Vec::new();
        let mut note = |p: serde_ignored::Path| unknown.push(p.to_string());
        let de = serde_ignored::Deserializer::new(Value::Object(obj), &mut note);
        let header: StreamHeader = serde_path_to_error::deserialize(de)
            .map_err(|e| anyhow!("{at}: header field `{}`: {}", e.path(), e.inner()))?;
        self.count_fields(unknown.into_iter().map(|k| format!("header.{k}")));
        Ok(header)
    }

    fn count_fields(&mut self, names: impl Iterator<Item = String>) {
        for n in names {
            *self.skipped.fields.entry(n).or_default() += 1;
        }
    }

    /// Ends the stream: refuses one that had no header at all.
    pub fn finish(&self) -> Result<&StreamHeader> {
        self.header.as_ref().ok_or_else(|| anyhow!("{}: empty (no header line)", self.origin))
    }
}

/// Removes `key` from `obj` as an unsigned integer, if there.
fn take_u64(obj: &mut Map<String, Value>, key: &str, at: &str) -> Result<Option<u64>> {
    match obj.remove(key) {
        None => Ok(None),
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
        Some(v) => bail!("{at}: field `{key}`: expected a whole number from 0, got {v}"),
    }
}

/// Removes `key` from `obj` as a string ("" when absent).
fn take_string(obj: &mut Map<String, Value>, key: &str, at: &str) -> Result<String> {
    match obj.remove(key) {
        None => Ok(String::new()),
        Some(Value::String(s)) => Ok(s),
        Some(v) => bail!("{at}: field `{key}`: expected a string, got {v}"),
    }
}

/// The serde name of an event kind this build knows (`None`: skip it).
fn known_kind(kind: &str) -> Option<&'static str> {
    event_kind_names().iter().copied().find(|k| *k == kind)
}

/// Every event kind's name, as serde spells it (read once from the derive itself).
pub fn event_kind_names() -> &'static [&'static str] {
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        // serde tells the variants of an enum to a deserializer that asks for them.
        struct Names(Vec<&'static str>);
        impl<'de> serde::Deserializer<'de> for &mut Names {
            type Error = serde::de::value::Error;
            fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
                Err(serde::de::Error::custom("names only"))
            }
            fn deserialize_enum<V: serde::de::Visitor<'de>>(
                self,
                _: &'static str,
                variants: &'static [&'static str],
                _: V,
            ) -> Result<V::Value, Self::Error> {
                self.0 = variants.to_vec();
                Err(serde::de::Error::custom("names only"))
            }
            serde::forward_to_deserialize_any! {
                bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
                unit_struct newtype_struct seq tuple tuple_struct map struct identifier ignored_any
            }
        }
        let mut names = Names(Vec::new());
        let _ = EventKind::deserialize(&mut names);
        names.0
    })
}

/// One event as its line's object (without the line end): `t_us`, `client`, `lane` (when not
/// the first), `event` (its kind) and the kind's fields.
pub fn event_line(e: &Event, lane: usize) -> Result<String> {
    let Value::Object(tagged) = serde_json::to_value(&e.kind).context("serialising an event")? else {
        bail!("an event kind serialised to something else than an object");
    };
    let (kind, fields) = tagged.into_iter().next().ok_or_else(|| anyhow!("an event kind without a name"))?;
    let mut obj = Map::new();
    obj.insert("t_us".into(), e.time.0.into());
    obj.insert("client".into(), e.client.into());
    if lane != 0 {
        obj.insert("lane".into(), lane.into());
    }
    obj.insert("event".into(), kind.into());
    if let Value::Object(fields) = fields {
        for (k, v) in fields {
            if obj.contains_key(&k) {
                bail!("event {} has a field `{k}`, which the line itself uses", obj["event"]);
            }
            obj.insert(k, v);
        }
    }
    Ok(Value::Object(obj).to_string())
}

/// Writes a whole stream: the header, then each lane's events in time order.
pub fn write(out: &mut impl Write, header: &StreamHeader, lanes: &[&[Event]]) -> Result<u64> {
    let mut n = 0;
    writeln!(out, "{}", serde_json::to_string(header)?)?;
    for (lane, events) in lanes.iter().enumerate() {
        for e in *events {
            writeln!(out, "{}", event_line(e, lane)?)?;
            n += 1;
        }
    }
    Ok(n)
}

/// A whole stream read from a file.
#[derive(Debug, Clone)]
pub struct Stream {
    pub header: StreamHeader,
    /// Each lane's events, in time order.
    pub lanes: Vec<Vec<Event>>,
    /// Clients named by `ClientInfo` lines, per lane, in the order they came.
    pub named: Vec<Vec<ClientInfo>>,
    pub skipped: Skipped,
}

/// Reads the stream in `path` to its end.
pub fn load(path: &Path) -> Result<Stream> {
    let origin = path.display().to_string();
    let file = std::fs::File::open(path).with_context(|| format!("{origin}: cannot read"))?;
    read(std::io::BufReader::with_capacity(1 << 20, file), &origin)
}

/// Reads a whole stream from `input`; `origin` names it in errors.
pub fn read(input: impl BufRead, origin: &str) -> Result<Stream> {
    let mut reader = StreamReader::new(origin);
    let (mut lanes, mut named): (Vec<Vec<Event>>, Vec<Vec<ClientInfo>>) = (Vec::new(), Vec::new());
    for (i, line) in input.lines().enumerate() {
        let line = line.with_context(|| format!("{origin}:{}: cannot read (not UTF-8 text?)", i + 1))?;
        match reader.read_line(&line)? {
            Item::Header(h) => {
                lanes = vec![Vec::new(); h.lanes().len()];
                named = vec![Vec::new(); h.lanes().len()];
            }
            Item::Event { lane, event } => lanes[lane].push(event),
            Item::Client { lane, info } => named[lane].push(info),
            Item::Nothing => {}
        }
    }
    let header = reader.finish()?.clone();
    Ok(Stream { header, lanes, named, skipped: reader.skipped })
}

/// True when `path` names a JSON-lines stream (by its extension).
pub fn is_stream_path(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case(EXTENSION))
}

#[cfg(test)]
mod tests {
    use ackscope_protocol::{Side, StatsSample};

    use super::*;

    fn reader_after_header() -> StreamReader {
        let mut r = StreamReader::new("t.jsonl");
        r.read_line(r#"{"ackscope_events":1,"producer":"test","protocol":"mygame"}"#).unwrap();
        r
    }

    #[test]
    fn every_event_kind_round_trips_through_its_line() {
        assert!(event_kind_names().len() >= 30, "{:?}", event_kind_names());
        let kinds = [
            EventKind::PacketSent { side: Side::B, seq: 7, bytes: 60, uid: 99 },
            EventKind::Stats {
                side: Side::A,
                stats: StatsSample { rtt_ms: 101.5, loss_percent: 2.0, ..Default::default() },
            },
            EventKind::ParamChanged { name: "link.loss_percent".into(), value: "5".into() },
            EventKind::ChunkDelivered { side: Side::B, chunk: 1, bytes: 9, elapsed_us: 5, payload_id: None },
        ];
        let mut r = reader_after_header();
        for (i, kind) in kinds.into_iter().enumerate() {
            let e = Event::for_client(SimTime(1000 + i as u64), 3 + i as u32, kind);
            let line = event_line(&e, 0).unwrap();
            assert_eq!(r.read_line(&line).unwrap(), Item::Event { lane: 0, event: e }, "{line}");
        }
        assert!(r.skipped.is_empty());
    }

    #[test]
    fn unknown_kinds_and_fields_are_skipped_and_counted() {
        let mut r = reader_after_header();
        assert_eq!(r.read_line(r#"{"t_us":5,"event":"Teleported","client":2,"x":1}"#).unwrap(), Item::Nothing);
        let line = r#"{"t_us":6,"client":2,"event":"RttSample","side":"A","rtt_ms":40.5,"jitter_hint":3}"#;
        let Item::Event { event, .. } = r.read_line(line).unwrap() else { panic!() };
        assert_eq!(event.kind, EventKind::RttSample { side: Side::A, rtt_ms: 40.5 });
        assert_eq!(r.skipped.kinds["Teleported"], 1);
        assert_eq!(r.skipped.fields.get("RttSample.jitter_hint"), Some(&1), "{:?}", r.skipped.fields);
        assert!(r.skipped.describe().contains("Teleported"), "{}", r.skipped.describe());
    }

    #[test]
    fn bad_lines_are_refused_with_their_line_and_field() {
        let cases = [
            (r#"{"t_us":6,"event":"RttSample","side":"A","rtt_ms":"fast"}"#, "t.jsonl:2: field `rtt_ms` of RttSample"),
            (r#"{"t_us":6,"event":"RttSample","side":"C","rtt_ms":1}"#, "t.jsonl:2: field `side` of RttSample"),
            (r#"{"t_us":6,"event":"RttSample","side":"A"}"#, "rtt_ms"),
            (r#"{"event":"RttSample","side":"A","rtt_ms":1}"#, "t.jsonl:2: field `t_us` is missing"),
            (r#"{"t_us":-1,"event":"RttSample","side":"A","rtt_ms":1}"#, "t.jsonl:2: field `t_us`"),
            (r#"{"t_us":1,"client":"x","event":"RttSample"}"#, "t.jsonl:2: field `client`"),
            (r#"{"t_us":1,"side":"A"}"#, "t.jsonl:2: field `event` is missing"),
            (r#"[1,2]"#, "t.jsonl:2: not a JSON object"),
            (r#"{"t_us":1,"#, "t.jsonl:2: not JSON"),
            (r#"{"t_us":1,"lane":4,"event":"RttSample","side":"A","rtt_ms":1}"#, "t.jsonl:2: field `lane`"),
        ];
        for (line, want) in cases {
            let err = reader_after_header().read_line(line).unwrap_err().to_string();
            assert!(err.starts_with(want) || err.contains(want), "{line}: {err}");
        }
        let mut r = reader_after_header();
        r.read_line(r#"{"t_us":10,"event":"RttSample","side":"A","rtt_ms":1}"#).unwrap();
        let err = r.read_line(r#"{"t_us":9,"event":"RttSample","side":"A","rtt_ms":1}"#).unwrap_err().to_string();
        assert!(err.starts_with("t.jsonl:3: field `t_us`: 9 is before"), "{err}");
        for (head, want) in [
            (r#"{"t_us":1}"#, "not an ackscope event stream"),
            (r#"{"ackscope_events":2}"#, "version 2 is newer"),
            (r#"{"ackscope_events":1,"clients":[{"id":"x"}]}"#, "header field `clients[0].id`"),
        ] {
            let err = StreamReader::new("h.jsonl").read_line(head).unwrap_err().to_string();
            assert!(err.starts_with("h.jsonl:1: ") && err.contains(want), "{head}: {err}");
        }
    }

    proptest::proptest! {
        /// Any mutation of a valid line (bytes replaced, inserted, removed, the line cut) is
        /// read or refused with its line number, never a panic.
        #[test]
        fn mutated_lines_never_panic(
            edits in proptest::collection::vec((0usize..200, proptest::prelude::any::<u8>(), 0u8..3), 1..6),
            cut in proptest::option::of(0usize..200),
        ) {
            let line = event_line(&Event::for_client(SimTime(5), 2, EventKind::Stats {
                side: Side::B,
                stats: StatsSample { rtt_ms: 50.0, ..Default::default() },
            }), 0).unwrap();
            let mut bytes = line.into_bytes();
            for (at, b, op) in edits {
                let at = at % (bytes.len() + 1);
                match op {
                    0 if at < bytes.len() => bytes[at] = b,
                    1 => bytes.insert(at, b),
                    _ if at < bytes.len() => drop(bytes.remove(at)),
                    _ => {}
                }
            }
            if let Some(c) = cut {
                bytes.truncate(c);
            }
            let text = String::from_utf8_lossy(&bytes);
            let mut r = reader_after_header();
            if let Err(e) = r.read_line(&text) {
                proptest::prop_assert!(e.to_string().starts_with("t.jsonl:2: "), "{}", e);
            }
        }
    }
}
