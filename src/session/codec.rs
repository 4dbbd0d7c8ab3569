//! Events on disk as `(dt_us, kind)` pairs: time as a delta from the previous event.
//!
//! serde gives the (de)serialisers no context, so progress reaches them through a thread-local
//! set around one load or save ([`with_progress`]); without one they report nothing.

use std::cell::RefCell;
use std::sync::Arc;

use ackscope_protocol::{Event, EventKind, SimTime};
use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserializer, Serializer};

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
            if out.len() % REPORT_EVERY == 0 && report(out.len()) {
                return Err(serde::de::Error::custom("cancelled"));
            }
            t = t
                .checked_add(dt)
                .filter(|t| *t >= 0)
                .ok_or_else(|| serde::de::Error::custom(format!("event {} has a time before the start", out.len())))?;
            out.push(Event::new(SimTime(t as u64), kind));
        }
        Ok(out)
    }
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Event>, D::Error> {
    d.deserialize_seq(EventsVisitor)
}
