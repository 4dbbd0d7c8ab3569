//! The UE4 figures the CLI reports, computed from events so recorded sessions give them too.

use serde::{Deserialize, Serialize};

use std::collections::BTreeSet;

use super::clients::{ClientFold, PerClient};
use crate::event::{ClientId, Event, EventKind, RefuseReason, SendKind, Ue4ChannelKind};

use crate::wire::{sign_extended_difference, UE4_SEQ_BITS};

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
    /// When the first side closed, in seconds.
    pub closed_at_s: Option<f64>,
    /// Reliable messages a side had queued and not yet seen acked when it closed, summed over
    /// both sides: what closing the connection gave up on.
    pub abandoned_messages: u64,
    /// Messages the application offered after its side had closed (refused as `Closed`).
    pub refused_after_close: u64,
    /// Packets a receiver processed but reported lost because a bunch in them could not be
    /// processed (bSkipAck): each makes the sender resend the packet's reliable bunches.
    pub skip_acks: u64,
    /// Actor channels opened (a bunch with bOpen) and closed after idling (bClose), both sides.
    pub channels_opened: u64,
    pub channels_closed: u64,
    /// Deepest `InRec` queue per channel kind.
    pub max_inrec_depth_by_kind: InRecDepthByKind,
}

/// Deepest `InRec` queue seen on each kind of channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct InRecDepthByKind {
    pub actor: u32,
    pub control: u32,
    pub snapshot: u32,
}

impl InRecDepthByKind {
    fn get_mut(&mut self, kind: Ue4ChannelKind) -> &mut u32 {
        match kind {
            Ue4ChannelKind::Actor => &mut self.actor,
            Ue4ChannelKind::Control => &mut self.control,
            Ue4ChannelKind::Snapshot => &mut self.snapshot,
        }
    }
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
///
/// Keyed by client (sequences count per connection): [`Self::client`] gives one client's
/// summary, [`Self::finish`] the summary over every client (counts summed, maxima the largest,
/// the first close of any connection).
#[derive(Debug, Clone, Default)]
pub struct Ue4SummaryAccumulator {
    clients: PerClient<ClientUe4>,
}

impl Ue4SummaryAccumulator {
    pub fn observe_all(&mut self, events: &[Event]) {
        for e in events {
            self.observe(e);
        }
    }

    #[inline]
    pub fn observe(&mut self, e: &Event) {
        self.clients.observe(e, ClientUe4::observe);
    }

    /// Client `k`'s summary so far (None before any event of it).
    pub fn client(&self, k: ClientId) -> Option<Ue4Summary> {
        self.clients.get(k).map(ClientUe4::finish)
    }

    /// The summary over every client so far.
    pub fn finish(&self) -> Ue4Summary {
        let mut all = self.clients.iter().map(ClientUe4::finish);
        let Some(mut s) = all.next() else { return Ue4Summary::default() };
        for c in all {
            s.naks_received += c.naks_received;
            s.bunches_resent += c.bunches_resent;
            s.max_inrec_depth = s.max_inrec_depth.max(c.max_inrec_depth);
            s.max_inrec_blocked_ms = s.max_inrec_blocked_ms.max(c.max_inrec_blocked_ms);
            s.packets_skipped += c.packets_skipped;
            s.packets_ignored += c.packets_ignored;
            if c.closed_at_s.is_some_and(|t| s.closed_at_s.is_none_or(|first| t < first)) {
                (s.close_reason, s.closed_at_s) = (c.close_reason.clone(), c.closed_at_s);
            }
            s.connection_closed |= c.connection_closed;
            s.abandoned_messages += c.abandoned_messages;
            s.refused_after_close += c.refused_after_close;
            s.skip_acks += c.skip_acks;
            s.channels_opened += c.channels_opened;
            s.channels_closed += c.channels_closed;
            let (k, o) = (&mut s.max_inrec_depth_by_kind, c.max_inrec_depth_by_kind);
            (k.actor, k.control, k.snapshot) =
                (k.actor.max(o.actor), k.control.max(o.control), k.snapshot.max(o.snapshot));
        }
        s
    }
}

/// One client's part of a [`Ue4SummaryAccumulator`].
#[derive(Debug, Clone, Default)]
struct ClientUe4 {
    s: Ue4Summary,
    max_blocked_us: u64,
    last_received: [Option<u32>; 2],
    link_delivered: u64,
    processed: u64,
    /// Per side: reliable messages queued and not acked yet (until that side closes).
    outstanding: [BTreeSet<u64>; 2],
    closed: [bool; 2],
}

impl ClientFold for ClientUe4 {
    fn for_client(_: ClientId) -> Self {
        Self::default()
    }
}

impl ClientUe4 {
    fn observe(&mut self, e: &Event) {
        if e.kind.is_restart() {
            // New endpoints: sequences and message ids count afresh, and a closed connection is
            // open again.
            self.last_received = [None; 2];
            self.outstanding = Default::default();
            self.closed = [false; 2];
        }
        let s = &mut self.s;
        match &e.kind {
            EventKind::LinkDelivered { .. } => self.link_delivered += 1,
            EventKind::PacketReceived { side, seq, .. } => {
                self.processed += 1;
                // UE4's packet ids are 14 bits wide: only the wrapped distance means anything.
                let seq = *seq & ((1 << UE4_SEQ_BITS) - 1);
                if let Some(prev) = self.last_received[side.index()] {
                    s.packets_skipped +=
                        u64::from((sign_extended_difference(seq, prev, UE4_SEQ_BITS) - 1).max(0).unsigned_abs());
                }
                self.last_received[side.index()] = Some(seq);
            }
            EventKind::PacketNakked { .. } => s.naks_received += 1,
            EventKind::MessageSent { kind: SendKind::NakResend, .. } => s.bunches_resent += 1,
            EventKind::Ue4InRec { depth, blocked_us, kind, .. } => {
                s.max_inrec_depth = s.max_inrec_depth.max(*depth);
                let by_kind = s.max_inrec_depth_by_kind.get_mut(*kind);
                *by_kind = (*by_kind).max(*depth);
                self.max_blocked_us = self.max_blocked_us.max(*blocked_us);
            }
            EventKind::Ue4SkipAck { .. } => s.skip_acks += 1,
            EventKind::Ue4ChannelOpened { .. } => s.channels_opened += 1,
            EventKind::Ue4ChannelClosed { .. } => s.channels_closed += 1,
            EventKind::MessageQueued { side, msg, reliable: true, .. } if !self.closed[side.index()] => {
                self.outstanding[side.index()].insert(*msg);
            }
            EventKind::MessageAcked { side, msg, .. } => {
                self.outstanding[side.index()].remove(msg);
            }
            EventKind::MessageRefused { reason: RefuseReason::Closed, side, .. } if self.closed[side.index()] => {
                s.refused_after_close += 1;
            }
            EventKind::ConnectionClosed { side, reason } => {
                s.connection_closed = true;
                s.close_reason.get_or_insert_with(|| reason.clone());
                s.closed_at_s.get_or_insert(e.time.as_secs_f64());
                if !std::mem::replace(&mut self.closed[side.index()], true) {
                    s.abandoned_messages += std::mem::take(&mut self.outstanding[side.index()]).len() as u64;
                }
            }
            _ => {}
        }
    }

    fn finish(&self) -> Ue4Summary {
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
