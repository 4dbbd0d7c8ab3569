//! The part every delivery-notification endpoint shares: workload, message layer and estimators.
//!
//! Delivery outcomes drive the message layer (`reliability::outbox`): a success acks the messages
//! its packet carried; a failure found by an ack range resends them with `SendKind::NakResend`,
//! one found by a timeout with `SendKind::TimeoutResend`. The outbox takes every message the
//! workload produces: what does not fit the send window waits in its backlog.
//!
//! The loss estimate starts from the seed's count: failures / outcomes (`f`) over the window of
//! `reliability::loss`. A failure only means "not acked", though, and when every packet that
//! carried a packet's ack was lost on the way back, a delivered packet fails too: dnm writes each
//! ack range into one packet (`ack_repeat` = 1), so at 20 % loss each way the seed's count says
//! 36 %. The sender sees the return path's loss `q` as gaps in the peer's sequences (a packet
//! refused as older than expected counts as missing: its acks were not read either), and with
//! each ack in `n` of the peer's packets a delivered packet's ack is lost with probability `q^n`,
//! so the estimate reports `1 - (1 - f) / (1 - q^n)`, the loss that explains `f` when losses are
//! independent. The correction needs [`MIN_ARRIVALS_FOR_CORRECTION`] of the peer's packets in
//! the window: near total loss a single delivery more or less would swing it by tens of points,
//! and the seed's count, never below the truth, is then within a point of it anyway. rellikt
//! repeats each ack until 32 newer packets arrived (no fixed `n`): its count is reported as is.

use std::collections::HashMap;

use super::scheme::Outcome;
use crate::event::{DiscardReason, Event, EventKind, MalformedReason, SendKind, Side, SimTime, StatsSample};
use crate::reliability::outbox::{Inbox, Outbox, OutboxConfig, MAX_MESSAGE_BYTES, MESSAGE_OVERHEAD_BYTES};
use crate::reliability::stats::{self, BandwidthMeter, LossWindow, RttEstimator, StatsConfig};
use crate::wire::sequence::sequence_greater_than;
use crate::workload::{MessageRequest, Workload, WorkloadConfig};

/// The peer's packets that must have arrived within the window before the return-path correction
/// applies (module doc).
pub const MIN_ARRIVALS_FOR_CORRECTION: f64 = 16.0;

/// Workload, message layer and estimators of a delivery-notification endpoint.
#[derive(Debug, Clone)]
pub struct MessageEndpoint {
    side: Side,
    /// Whether `RttSample` is reported ([`crate::Peer::set_reports_rtt_samples`]).
    pub(super) reports_rtt: bool,
    workload: Workload,
    outbox: Outbox,
    inbox: Inbox,
    stats_config: StatsConfig,
    rtt: RttEstimator,
    loss: LossWindow,
    /// The peer's packets missing (true) or accepted, for the return-path correction (module doc).
    incoming: LossWindow,
    newest_received: Option<u16>,
    /// Packets of the peer that carry each of its acks, when fixed (the scheme's ack redundancy).
    ack_redundancy: Option<u32>,
    bw_sent: BandwidthMeter,
    bw_received: BandwidthMeter,
    bw_acked: BandwidthMeter,
    /// Size of each packet awaiting its outcome, for the acked bandwidth.
    sizes: HashMap<u16, u32>,
    requests: Vec<MessageRequest>,
    malformed: u64,
}

impl MessageEndpoint {
    /// `packet_room_bytes` is what a packet leaves for messages after its largest header: a
    /// larger message could never be sent, so it is refused (`TooLarge`) rather than queued.
    pub fn new(
        side: Side,
        workload: WorkloadConfig,
        seed: u64,
        send_queue_messages: u32,
        packet_room_bytes: usize,
        stats: StatsConfig,
        ack_redundancy: Option<u32>,
    ) -> Self {
        let room = packet_room_bytes.saturating_sub(MESSAGE_OVERHEAD_BYTES).min(MAX_MESSAGE_BYTES as usize);
        let oc = OutboxConfig {
            snapshot_mode: workload.snapshot_mode,
            send_queue_messages: send_queue_messages as usize,
            max_message_bytes: room as u32,
        };
        Self {
            side,
            reports_rtt: true,
            workload: Workload::new(side, workload, seed),
            outbox: Outbox::new(side, oc),
            inbox: Inbox::new(side),
            stats_config: stats,
            rtt: RttEstimator::new(stats),
            loss: LossWindow::new(stats.loss_window),
            incoming: LossWindow::new(stats.loss_window),
            newest_received: None,
            ack_redundancy: ack_redundancy.map(|n| n.clamp(1, 64)),
            bw_sent: BandwidthMeter::default(),
            bw_received: BandwidthMeter::default(),
            bw_acked: BandwidthMeter::default(),
            sizes: HashMap::new(),
            requests: Vec::new(),
            malformed: 0,
        }
    }

    pub fn side(&self) -> Side {
        self.side
    }
    pub fn outbox(&self) -> &Outbox {
        &self.outbox
    }
    pub fn workload_mut(&mut self) -> &mut Workload {
        &mut self.workload
    }
    /// Reliable messages not yet acked (backlog included).
    pub fn unacked_reliable(&self) -> usize {
        self.outbox.unacked_reliable()
    }
    pub fn malformed_count(&self) -> u64 {
        self.malformed
    }

    /// Moves what the backlog can into the send window, then queues the workload's messages due
    /// at `now` (behind the backlog: messages keep their order).
    pub fn poll_workload(&mut self, now: SimTime, events: &mut Vec<Event>) {
        self.outbox.flush_backlog();
        self.workload.poll(now, &mut self.requests);
        for m in self.requests.drain(..) {
            self.outbox.push(now, m, events);
        }
    }

    /// Messages for packet `seq`, within `budget_bytes`.
    pub fn fill(&mut self, now: SimTime, seq: u16, budget_bytes: usize, events: &mut Vec<Event>) -> Vec<Vec<u8>> {
        self.outbox.fill(now, seq, budget_bytes, events)
    }

    pub fn packet_sent(&mut self, seq: u16, bytes: usize) {
        self.sizes.insert(seq, bytes as u32);
        self.bw_sent.add_packet(bytes);
    }

    pub fn delivered(&mut self, now: SimTime, seq: u16, rtt_ms: f64, events: &mut Vec<Event>) {
        let side = self.side;
        events.push(Event::new(now, EventKind::PacketAcked { side, seq: seq as u32 }));
        if self.reports_rtt {
            events.push(Event::new(now, EventKind::RttSample { side, rtt_ms: rtt_ms as f32 }));
        }
        self.rtt.add_sample(rtt_ms);
        self.loss.record(now, false);
        if let Some(b) = self.sizes.remove(&seq) {
            self.bw_acked.add_packet(b as usize);
        }
        self.outbox.on_delivered(now, seq, events);
    }

    /// Reports every delivery outcome in `outcomes` (draining it): successes ack their messages,
    /// failures resend them (`TimeoutResend` after a timeout, `NakResend` when skipped by an ack).
    pub fn report(&mut self, now: SimTime, outcomes: &mut Vec<Outcome>, events: &mut Vec<Event>) {
        for o in outcomes.drain(..) {
            match o {
                Outcome::Delivered { sequence, rtt_ms } => self.delivered(now, sequence, rtt_ms, events),
                Outcome::Failed { sequence, timeout } => {
                    let why = if timeout { SendKind::TimeoutResend } else { SendKind::NakResend };
                    self.failed(now, sequence, why, events);
                }
            }
        }
    }

    pub fn failed(&mut self, now: SimTime, seq: u16, why: SendKind, events: &mut Vec<Event>) {
        events.push(Event::new(now, EventKind::PacketNakked { side: self.side, seq: seq as u32 }));
        self.loss.record(now, true);
        self.sizes.remove(&seq);
        self.outbox.on_failed(seq, why);
    }

    /// Checks a packet's message payloads; `None` (and a malformed event) when one is corrupt.
    pub fn check_messages(&mut self, now: SimTime, payloads: &[Vec<u8>], events: &mut Vec<Event>) -> Option<Vec<u64>> {
        match self.inbox.check(payloads) {
            Some(ids) => Some(ids),
            None => {
                self.malformed(now, MalformedReason::BadPayload, events);
                None
            }
        }
    }

    /// A packet accepted for processing: report it (received, or discarded when it will never be
    /// acked: `unacked`) and deliver its messages.
    pub fn accepted(
        &mut self,
        now: SimTime,
        seq: u16,
        bytes: usize,
        ids: &[u64],
        unacked: Option<DiscardReason>,
        events: &mut Vec<Event>,
    ) {
        let (side, seq32) = (self.side, seq as u32);
        let kind = match unacked {
            None => EventKind::PacketReceived { side, seq: seq32, bytes: bytes as u32 },
            Some(reason) => EventKind::PacketDiscarded { side, seq: seq32, reason },
        };
        events.push(Event::new(now, kind));
        self.bw_received.add_packet(bytes);
        match self.newest_received {
            Some(newest) if !sequence_greater_than(seq, newest) => {}
            newest => {
                // A long silence counts as at most one window of missing packets.
                let missed = newest.map_or(0, |n| seq.wrapping_sub(n) as usize - 1);
                for _ in 0..missed.min(self.stats_config.loss_window) {
                    self.incoming.record(now, true);
                }
                self.incoming.record(now, false);
                self.newest_received = Some(seq);
            }
        }
        self.inbox.deliver(now, ids, events);
    }

    /// A well-formed packet ignored unacked.
    pub fn discarded(&mut self, now: SimTime, seq: u16, reason: DiscardReason, events: &mut Vec<Event>) {
        events.push(Event::new(now, EventKind::PacketDiscarded { side: self.side, seq: seq as u32, reason }));
    }

    pub fn malformed(&mut self, now: SimTime, reason: MalformedReason, events: &mut Vec<Event>) {
        self.malformed += 1;
        events.push(Event::new(now, EventKind::Malformed { side: self.side, reason }));
    }

    pub fn update(&mut self, now: SimTime) {
        let (iv, sm) = (self.stats_config.bandwidth_interval_ms, self.stats_config.bandwidth_smoothing);
        self.bw_sent.update(now, iv, sm);
        self.bw_received.update(now, iv, sm);
        self.bw_acked.update(now, iv, sm);
    }

    /// RTT from delivery successes; loss from failures / outcomes over the recent window, less
    /// the failures explained by acks lost on the way back (module doc).
    pub fn stats(&self) -> StatsSample {
        let mut s = stats::sample(&self.rtt, &self.loss, [&self.bw_sent, &self.bw_received, &self.bw_acked]);
        let Some(n) = self.ack_redundancy else { return s };
        let f = self.loss.percent() / 100.0;
        let q = self.incoming.percent() / 100.0;
        let arrivals = self.incoming.judged() as f64 * (1.0 - q);
        let acks_arrive = 1.0 - q.powi(n as i32);
        if arrivals >= MIN_ARRIVALS_FOR_CORRECTION && acks_arrive > 1e-6 && self.loss.judged() > 0 {
            let p = (1.0 - (1.0 - f) / acks_arrive).clamp(0.0, 1.0);
            s.loss_percent = (p * 100.0) as f32;
        }
        s
    }
}
