//! A live run that carries on a recording: its batches moved to the recording's time and send ids.
//!
//! A transport change during a run (in-process <-> UDP) stops one runner and starts another, whose
//! clock starts at zero and whose send ids count from zero. The recording is one continuous
//! timeline, so the new runner's events are moved to start at the instant of the change, and its
//! send ids past every id the recording has used (ground truth tables match acks to link events
//! by id, which must stay unique within a run).

use ackscope_protocol::{Action, Event, EventKind, SimTime};

use super::{Batch, Lanes};
use crate::source::EventSource;

/// `inner`'s batches with every event time and action time moved by `at`, and every send id by
/// `first_uid`.
pub struct Continued {
    inner: Box<dyn EventSource>,
    at: SimTime,
    first_uid: u64,
}

impl Continued {
    /// Carries `inner` on from `at`, its send ids starting at `first_uid`.
    pub fn new(inner: Box<dyn EventSource>, at: SimTime, first_uid: u64) -> Self {
        Self { inner, at, first_uid }
    }

    fn shift(&self, mut b: Batch) -> Batch {
        for e in &mut b.events {
            shift_event(e, self.at, self.first_uid);
        }
        for s in &mut b.actions {
            s.at = s.at.plus_micros(self.at.0);
        }
        b
    }
}

/// Moves `e` by `at` and its send id (if it has one) by `first_uid`.
pub fn shift_event(e: &mut Event, at: SimTime, first_uid: u64) {
    e.time = e.time.plus_micros(at.0);
    if let Some(uid) = send_id_mut(&mut e.kind) {
        *uid += first_uid;
    }
}

/// The send id an event names (link events and `PacketSent`), to move it.
fn send_id_mut(kind: &mut EventKind) -> Option<&mut u64> {
    match kind {
        EventKind::LinkSent { uid, .. }
        | EventKind::LinkDropped { uid, .. }
        | EventKind::LinkDuplicated { uid, .. }
        | EventKind::LinkDelivered { uid, .. }
        | EventKind::PacketSent { uid, .. } => Some(uid),
        _ => None,
    }
}

impl EventSource for Continued {
    fn send(&self, lanes: Lanes, action: Action) -> bool {
        self.inner.send(lanes, action)
    }
    fn try_batches(&self) -> Box<dyn Iterator<Item = Batch> + '_> {
        Box::new(self.inner.try_batches().map(|b| self.shift(b)))
    }
    fn is_running(&self) -> bool {
        self.inner.is_running()
    }
    fn stop(&mut self) {
        self.inner.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackscope_protocol::{Dir, Side, Step};

    #[test]
    fn times_and_send_ids_move_and_nothing_else() {
        let at = SimTime(12_345_678);
        let mut sent = Event::new(SimTime(10), EventKind::PacketSent { side: Side::B, seq: 7, bytes: 40, uid: 5 });
        shift_event(&mut sent, at, 1000);
        assert_eq!(
            sent,
            Event::new(SimTime(12_345_688), EventKind::PacketSent { side: Side::B, seq: 7, bytes: 40, uid: 1005 })
        );
        let mut link = Event::new(SimTime(0), EventKind::LinkDelivered { dir: Dir::AtoB, uid: 0, delay_us: 9 });
        shift_event(&mut link, at, 1000);
        assert!(matches!(link.kind, EventKind::LinkDelivered { uid: 1000, .. }));
        assert_eq!(link.time, at);
        let mut acked = Event::new(SimTime(3), EventKind::PacketAcked { side: Side::A, seq: 2 });
        shift_event(&mut acked, at, 1000);
        assert_eq!(acked.kind, EventKind::PacketAcked { side: Side::A, seq: 2 });
        let c = Continued { inner: Box::new(Idle), at, first_uid: 0 };
        let b = c.shift(Batch { actions: vec![Step::new(SimTime(1), Action::Restart)], ..Batch::default() });
        assert_eq!(b.actions[0].at, SimTime(12_345_679));
    }

    struct Idle;
    impl EventSource for Idle {
        fn send(&self, _: Lanes, _: Action) -> bool {
            false
        }
        fn try_batches(&self) -> Box<dyn Iterator<Item = Batch> + '_> {
            Box::new(std::iter::empty())
        }
        fn is_running(&self) -> bool {
            false
        }
        fn stop(&mut self) {}
    }
}
