//! Events on disk as `(dt_us, kind)` pairs: time as a delta from the previous event.

use ackscope_protocol::{Event, EventKind, SimTime};
use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserializer, Serializer};

pub fn serialize<S: Serializer>(events: &[Event], s: S) -> Result<S::Ok, S::Error> {
    let mut seq = s.serialize_seq(Some(events.len()))?;
    let mut prev = 0i64;
    for e in events {
        let t = e.time.0 as i64;
        seq.serialize_element(&(t - prev, &e.kind))?;
        prev = t;
    }
    seq.end()
}

struct EventsVisitor;

impl<'de> Visitor<'de> for EventsVisitor {
    type Value = Vec<Event>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of (dt_us, event) pairs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Event>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        let mut t = 0i64;
        while let Some((dt, kind)) = seq.next_element::<(i64, EventKind)>()? {
            t = t
                .checked_add(dt)
                .filter(|t| *t >= 0)
                .ok_or_else(|| serde::de::Error::custom(format!("event {} has a time before the start", out.len())))?;
            out.push(Event { time: SimTime(t as u64), kind });
        }
        Ok(out)
    }
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Event>, D::Error> {
    d.deserialize_seq(EventsVisitor)
}
