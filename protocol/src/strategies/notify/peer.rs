//! [`NotifyPeer`]: one endpoint of a delivery-notification strategy, generic over its scheme.
//!
//! Both sides run the workload: every send tick one packet goes out carrying the scheme's header
//! (sequence and acks) and whatever queued messages fit. The scheme reports an [`Outcome`] per
//! packet; the shared [`MessageEndpoint`] turns it into `PacketAcked`/`PacketNakked` events,
//! estimator samples and message acks or resends.

use super::endpoint::MessageEndpoint;
use super::scheme::{Admission, NotifyScheme, Outcome};
use crate::event::{Event, Side, SimTime, StatsSample};
use crate::peer::{Peer, PeerCommand};
use crate::workload::WorkloadConfig;

/// A delivery-notification endpoint: the shared message plumbing around scheme `S`.
#[derive(Debug, Clone)]
pub struct NotifyPeer<S> {
    m: MessageEndpoint,
    scheme: S,
    tick_pending: bool,
    outcomes: Vec<Outcome>,
}

impl<S: NotifyScheme> NotifyPeer<S> {
    pub fn new(side: Side, config: S::Config, workload: WorkloadConfig, seed: u64) -> Self {
        let scheme = S::new(config);
        let m = MessageEndpoint::new(
            side,
            workload,
            seed,
            scheme.send_queue_messages(),
            scheme.message_room_bytes(),
            scheme.stats_config(),
            scheme.ack_redundancy(),
        );
        Self { m, scheme, tick_pending: false, outcomes: Vec::new() }
    }

    pub fn messages(&self) -> &MessageEndpoint {
        &self.m
    }

    /// The scheme's state (ack bookkeeping, counters).
    pub fn scheme(&self) -> &S {
        &self.scheme
    }

    fn report(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.m.report(now, &mut self.outcomes, events);
    }
}

impl<S: NotifyScheme> Peer for NotifyPeer<S> {
    fn command(&mut self, _now: SimTime, command: PeerCommand) {
        match command {
            PeerCommand::Reconfigure(live) => {
                self.m.workload_mut().set_config(live.workload);
                if let Some(c) = live.own::<S::Config>() {
                    self.scheme.reconfigure(c);
                }
            }
            PeerCommand::Burst => self.m.workload_mut().burst(),
            PeerCommand::SendChunk { .. } | PeerCommand::TargetKbps(_) => {}
        }
    }

    fn unacked_reliable(&self) -> usize {
        self.m.unacked_reliable()
    }

    fn set_reports_rtt_samples(&mut self, reports: bool) -> bool {
        self.m.reports_rtt = reports;
        true
    }

    fn on_tick(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.tick_pending = true;
        self.scheme.process_timeouts(now, &mut self.outcomes);
        self.report(now, events);
        self.m.poll_workload(now, events);
    }

    fn poll_send(&mut self, now: SimTime, out: &mut Vec<u8>, events: &mut Vec<Event>) -> Option<u32> {
        if !std::mem::take(&mut self.tick_pending) {
            return None;
        }
        let h = self.scheme.next_header(now, &mut self.outcomes);
        self.report(now, events);
        let seq = S::sequence(&h);
        let messages = self.m.fill(now, seq, self.scheme.message_budget(&h), events);
        if !self.scheme.write(&h, &messages, out) {
            out.clear();
            if !self.scheme.write(&S::bare(&h), &[], out) {
                return None;
            }
        }
        self.m.packet_sent(seq, out.len());
        Some(seq as u32)
    }

    fn receive(&mut self, now: SimTime, packet: &[u8], events: &mut Vec<Event>) {
        let (h, messages) = match self.scheme.read(packet) {
            Ok(x) => x,
            Err(reason) => return self.m.malformed(now, reason, events),
        };
        let Some(ids) = self.m.check_messages(now, &messages, events) else { return };
        let seq = S::sequence(&h);
        let unacked = match self.scheme.admit(now, &h) {
            Err(reason) => return self.m.malformed(now, reason, events),
            Ok(Admission::Ignore(reason)) => return self.m.discarded(now, seq, reason, events),
            Ok(Admission::Unacked(reason)) => Some(reason),
            Ok(Admission::Accept) => None,
        };
        self.m.accepted(now, seq, packet.len(), &ids, unacked, events);
        self.scheme.process_acks(now, &h, &mut self.outcomes);
        self.report(now, events);
    }

    fn update(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.scheme.process_timeouts(now, &mut self.outcomes);
        self.report(now, events);
        self.m.update(now);
    }

    fn stats(&self) -> StatsSample {
        self.m.stats()
    }
}
