//! Events on disk as `(dt_us, kind)` pairs: time as a delta from the previous event; an event of
//! another client than the first (version 3) as `(dt_us, kind, client)`.
//!
//! The client goes last and only when it is not client 1, so a one-client recording is written
//! exactly as versions 1 and 2 wrote it, and every event those versions hold reads as client 1.
//!
//! serde gives the (de)serialisers no context, so progress reaches them through a thread-local
//! set around one load or save ([`with_progress`]); without one they report nothing.

use std::cell::RefCell;
use std::sync::Arc;

use ackscope_protocol::{ClientId, Event, EventKind, SimTime, FIRST_CLIENT};
use serde::de::{IgnoredAny, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, SerializeTuple};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Progress;

/// Events between two progress reports.
const REPORT_EVERY: usize = 8192;

thread_local! {
    static PROGRESS: RefCell<Option<Arc<Progress>>> = const { RefCell::new(None) };
}

/// Runs `f` with `progress` receiving the count of events (de)serialised on this thread.
pub fn with_progress<R>(progress: Option<Arc<Progress>>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Arc<Progress>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            PROGRESS.with(|p| *p.borrow_mut() = self.0.take());
        }
    }
    let _restore = Restore(PROGRESS.with(|p| p.replace(progress)));
    f()
}

/// Reports `n` events done; true when the job was cancelled.
fn report(n: usize) -> bool {
    PROGRESS.with(|p| {
        p.borrow().as_ref().is_some_and(|p| {
            p.advance_to(n as u64);
            p.is_cancelled()
        })
    })
}

pub fn serialize<S: Serializer>(events: &[Event], s: S) -> Result<S::Ok, S::Error> {
    let mut seq = s.serialize_seq(Some(events.len()))?;
    let mut prev = 0i64;
    for (i, e) in events.iter().enumerate() {
        if i % REPORT_EVERY == 0 && report(i) {
            return Err(serde::ser::Error::custom("cancelled"));
        }
        let t = e.time.0 as i64;
        seq.serialize_element(&Line::of(t - prev, e))?;
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
        while let Some(Line(dt, kind, client)) = seq.next_element::<Line<EventKind>>()? {
            if out.len() % REPORT_EVERY == 0 && report(out.len()) {
                return Err(serde::de::Error::custom("cancelled"));
            }
            t = t
                .checked_add(dt)
                .filter(|t| *t >= 0)
                .ok_or_else(|| serde::de::Error::custom(format!("event {} has a time before the start", out.len())))?;
            out.push(Event::for_client(SimTime(t as u64), client, kind));
        }
        Ok(out)
    }
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Event>, D::Error> {
    d.deserialize_seq(EventsVisitor)
}

/// One event on disk: its time delta, its kind and its client (written only when not client 1).
#[derive(Debug, Clone, PartialEq)]
pub struct Line<K>(pub i64, pub K, pub ClientId);

impl<'a> Line<&'a EventKind> {
    pub fn of(dt: i64, e: &'a Event) -> Self {
        Line(dt, &e.kind, e.client)
    }
}

impl<K: Serialize> Serialize for Line<K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let len = if self.2 == FIRST_CLIENT { 2 } else { 3 };
        let mut t = s.serialize_tuple(len)?;
        t.serialize_element(&self.0)?;
        t.serialize_element(&self.1)?;
        if len == 3 {
            t.serialize_element(&self.2)?;
        }
        t.end()
    }
}

impl<'de, K: Deserialize<'de>> Deserialize<'de> for Line<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<K>(std::marker::PhantomData<K>);
        impl<'de, K: Deserialize<'de>> Visitor<'de> for V<K> {
            type Value = Line<K>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an event: (dt_us, kind) or (dt_us, kind, client)")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Line<K>, A::Error> {
                use serde::de::Error;
                let dt = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(0, &self))?;
                let kind = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(1, &self))?;
                let client = seq.next_element()?.unwrap_or(FIRST_CLIENT);
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    return Err(A::Error::invalid_length(4, &self));
                }
                Ok(Line(dt, kind, client))
            }
        }
        d.deserialize_tuple(3, V(std::marker::PhantomData))
    }
}
