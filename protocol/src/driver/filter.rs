//! Which events a [`Simulation`](super::Simulation) records: all of them, or only those a fold
//! such as [`MetricsAccumulator`](crate::MetricsAccumulator) reads.
//!
//! A sweep folds each run's events into the message metrics and keeps nothing else; the link's
//! ground truth and the stats samples were two thirds of the events it drained and matched for
//! nothing (and computing a stats sample, a pass over the RTT window, cost more than the event).
//! A filter leaves the run itself unchanged (same seed, same sends, same fates): an event it
//! drops is either never built (link events, stats) or removed at the end of its instant, after
//! the simulation's own summary read it (RTT samples feed flow control within the instant).
//! Whatever it keeps comes out exactly as in a run that records everything.

use crate::event::{Event, EventKind};

/// Groups of events a simulation may leave out; everything else (packets sent, messages, chunks,
/// parameter changes and restarts, malformed packets, ...) is always recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventFilter {
    /// The link's ground truth: `LinkSent`, `LinkDropped`, `LinkDuplicated`, `LinkDelivered`.
    pub link: bool,
    /// What an endpoint believes of single packets: `PacketReceived`, `PacketDiscarded`, `PacketAcked`,
    /// `PacketNakked`.
    pub packet_beliefs: bool,
    /// `RttSample`.
    pub rtt_samples: bool,
    /// `Stats` (the endpoint's estimates are not even computed without it).
    pub stats: bool,
}

impl EventFilter {
    /// Every event (the default).
    pub const ALL: EventFilter = EventFilter { link: true, packet_beliefs: true, rtt_samples: true, stats: true };

    /// For [`MetricsAccumulator`](crate::MetricsAccumulator) (which reads `PacketSent`, the
    /// message events and restart markers), the events `ackscope sweep` folds: no link events,
    /// packet beliefs, RTT samples or stats. Glenn's and hybrid's endpoints do not build packet
    /// beliefs when told so; the others' are taken out at the end of each instant (see
    /// [`crate::Peer::set_reports_packet_beliefs`]). RTT samples feed flow control's filter, so
    /// the message strategies' endpoints leave them out only where that filter goes unfed as
    /// well (`Simulation::fix_flow_off`, which a sweep declares); elsewhere they are taken out
    /// at the end of each instant.
    pub const MESSAGE_METRICS: EventFilter =
        EventFilter { link: false, packet_beliefs: false, rtt_samples: false, stats: false };

    /// Whether events of this kind are recorded.
    #[inline]
    pub fn keeps(&self, kind: &EventKind) -> bool {
        match kind {
            EventKind::LinkSent { .. }
            | EventKind::LinkDropped { .. }
            | EventKind::LinkDuplicated { .. }
            | EventKind::LinkDelivered { .. } => self.link,
            EventKind::PacketReceived { .. }
            | EventKind::PacketDiscarded { .. }
            | EventKind::PacketAcked { .. }
            | EventKind::PacketNakked { .. } => self.packet_beliefs,
            EventKind::RttSample { .. } => self.rtt_samples,
            EventKind::Stats { .. } => self.stats,
            _ => true,
        }
    }

    /// Removes the events from `start` on that this filter leaves out, keeping the order of the
    /// rest.
    pub(super) fn retain_from(&self, events: &mut Vec<Event>, start: usize) {
        let tail = &mut events[start..];
        // Most instants end with a run of kept events (the tick's sends): nothing moves there.
        let Some(first) = tail.iter().position(|e| !self.keeps(&e.kind)) else { return };
        let mut kept = first;
        for i in first + 1..tail.len() {
            if self.keeps(&tail[i].kind) {
                tail.swap(kept, i);
                kept += 1;
            }
        }
        events.truncate(start + kept);
    }
}

impl Default for EventFilter {
    fn default() -> Self {
        Self::ALL
    }
}
