//! The UE4 figures the CLI reports, computed from events so recorded sessions give them too.

use serde::{Deserialize, Serialize};

use crate::event::{Event, EventKind, SendKind};

use crate::strategies::ue4::SeqNum;

/// Totals over both sides of a UE4 run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Ue4Summary {
    /// Packets reported lost to their sender (`PacketNakked`).
    pub naks_received: u64,
    /// Message bunches sent again after a Nak (`MessageSent` with `NakResend`).
    pub bunches_resent: u64,
    /// Deepest `InRec` queue seen (`Ue4InRec`).
    pub max_inrec_depth: u32,
    /// Longest a channel stayed blocked behind a missing reliable bunch, in milliseconds.
    pub max_inrec_blocked_ms: f64,
    /// Incoming packets a receiver skipped over (gaps in the sequences it processed; UE4's
    /// `InPacketsLost`).
    pub packets_skipped: u64,
    /// Copies the link delivered that the receiver never processed: duplicates, packets older
    /// than one already processed (reordered past the order cache), malformed ones, and any
    /// arriving after close.
    pub packets_ignored: u64,
    pub connection_closed: bool,
    /// The first close reason, if any.
    pub close_reason: Option<String>,
}

impl Ue4Summary {
    pub fn from_events(events: &[Event]) -> Self {
        let mut a = Ue4SummaryAccumulator::default();
        a.observe_all(events);
        a.finish()
    }
}

/// Feeds events one at a time (a view can extend it as time moves forward); `finish` gives the
/// summary so far.
#[derive(Debug, Clone, Default)]
pub struct Ue4SummaryAccumulator {
    s: Ue4Summary,
    max_blocked_us: u64,
    last_received: [Option<SeqNum>; 2],
    link_delivered: u64,
    processed: u64,
}

impl Ue4SummaryAccumulator {
    pub fn observe_all(&mut self, events: &[Event]) {
        for e in events {
            self.observe(e);
        }
    }

    pub fn observe(&mut self, e: &Event) {
        let s = &mut self.s;
        match &e.kind {
            EventKind::LinkDelivered { .. } => self.link_delivered += 1,
            EventKind::PacketReceived { side, seq, .. } => {
                self.processed += 1;
                let seq = SeqNum::new(*seq as u16);
                if let Some(prev) = self.last_received[side.index()] {
                    s.packets_skipped += (SeqNum::diff(seq, prev) - 1).max(0) as u64;
                }
                self.last_received[side.index()] = Some(seq);
            }
            EventKind::PacketNakked { .. } => s.naks_received += 1,
            EventKind::MessageSent { kind: SendKind::NakResend, .. } => s.bunches_resent += 1,
            EventKind::Ue4InRec { depth, blocked_us, .. } => {
                s.max_inrec_depth = s.max_inrec_depth.max(*depth);
                self.max_blocked_us = self.max_blocked_us.max(*blocked_us);
            }
            EventKind::ConnectionClosed { reason, .. } => {
                s.connection_closed = true;
                s.close_reason.get_or_insert_with(|| reason.clone());
            }
            _ => {}
        }
    }

    pub fn finish(&self) -> Ue4Summary {
        let mut s = self.s.clone();
        s.max_inrec_blocked_ms = self.max_blocked_us as f64 / 1000.0;
        s.packets_ignored = self.link_delivered.saturating_sub(self.processed);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Scenario, Simulation, Strategy};

    #[test]
    fn summary_counts_naks_resends_skipped_and_ignored_packets() {
        let mut s = Scenario { seed: 3, strategy: Strategy::Ue4, ..Default::default() };
        s.link.a_to_b.jitter_ms = 20.0;
        s.link.a_to_b.duplicate_percent = 5.0;
        let mut sim = Simulation::new(s);
        sim.run_for_secs(20.0);
        let events: Vec<Event> = sim.drain_events().collect();
        let summary = Ue4Summary::from_events(&events);
        let t = sim.totals();
        assert!(summary.naks_received > 0 && summary.bunches_resent > 0, "{summary:?}");
        assert!(summary.packets_skipped > 0 && summary.packets_ignored >= t.duplicated, "{summary:?} {t:?}");
        assert!(!summary.connection_closed);
    }
}
