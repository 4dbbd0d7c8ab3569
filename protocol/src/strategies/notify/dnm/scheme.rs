//! The `dnm` strategy as a [`NotifyScheme`]: ack ranges in every packet, failures from skipped
//! ranges and the delivery timeout.

use super::manager::DeliveryNotificationManager;
use super::wire::{header_bytes_max, read_packet, write_parts, DnmPacket, MAX_WIRE_RANGES};
use super::DnmConfig;
use crate::event::{DiscardReason, MalformedReason, SimTime};
use crate::reliability::stats::StatsConfig;
use crate::strategies::notify::scheme::{Admission, NotifyScheme, Outcome};

/// Ack ranges one packet carries at most under `config`.
fn max_ranges(config: &DnmConfig) -> usize {
    (config.max_ack_ranges_per_packet as usize).clamp(1, MAX_WIRE_RANGES)
}

impl NotifyScheme for DeliveryNotificationManager {
    type Config = DnmConfig;
    /// A packet without its messages.
    type Header = DnmPacket;

    fn new(config: DnmConfig) -> Self {
        DeliveryNotificationManager::new(config)
    }

    fn message_room_bytes(&self) -> usize {
        let c = self.config();
        (c.max_packet_bytes as usize).saturating_sub(header_bytes_max(max_ranges(c)))
    }

    fn send_queue_messages(&self) -> u32 {
        self.config().send_queue_messages
    }

    fn stats_config(&self) -> StatsConfig {
        self.config().stats
    }

    /// Each ack range goes into `ack_repeat` packets (the seed: 1).
    fn ack_redundancy(&self) -> Option<u32> {
        Some(self.config().ack_repeat.max(1))
    }

    fn reconfigure(&mut self, config: &DnmConfig) {
        self.set_timeout_ms(config.timeout_ms);
        self.set_accept_late(config.accept_late);
    }

    fn process_timeouts(&mut self, now: SimTime, out: &mut Vec<Outcome>) {
        DeliveryNotificationManager::process_timeouts(self, now, out);
    }

    fn next_header(&mut self, now: SimTime, out: &mut Vec<Outcome>) -> DnmPacket {
        let sequence = self.next_packet(now, out);
        let acks = self.take_pending_acks(max_ranges(self.config()));
        DnmPacket { sequence, acks, messages: Vec::new() }
    }

    fn sequence(header: &DnmPacket) -> u16 {
        header.sequence
    }

    fn message_budget(&self, header: &DnmPacket) -> usize {
        (self.config().max_packet_bytes as usize).saturating_sub(header_bytes_max(header.acks.len()))
    }

    fn write(&self, header: &DnmPacket, messages: &[Vec<u8>], out: &mut Vec<u8>) -> bool {
        write_parts(header.sequence, &header.acks, messages, out).is_ok()
    }

    /// The sequence alone: no acks, no messages.
    fn bare(header: &DnmPacket) -> DnmPacket {
        DnmPacket { sequence: header.sequence, acks: Vec::new(), messages: Vec::new() }
    }

    fn read(&self, packet: &[u8]) -> Result<(DnmPacket, Vec<Vec<u8>>), MalformedReason> {
        let mut p = read_packet(packet).map_err(|e| e.reason())?;
        let messages = std::mem::take(&mut p.messages);
        Ok((p, messages))
    }

    /// Implausible ack ranges make the packet malformed; a sequence older than expected is
    /// neither processed nor acked (the seed's rule), unless `accept_late` processes it once.
    fn admit(&mut self, now: SimTime, header: &DnmPacket) -> Result<Admission, MalformedReason> {
        if !header.acks.is_empty() && !self.ranges_plausible(&header.acks) {
            return Err(MalformedReason::BadPayload);
        }
        let seen = self.processed_recently(header.sequence);
        Ok(match (self.process_sequence(now, header.sequence), seen) {
            (true, _) => Admission::Accept,
            (false, true) => Admission::Ignore(DiscardReason::Duplicate),
            (false, false) => Admission::Ignore(DiscardReason::Late),
        })
    }

    fn process_acks(&mut self, now: SimTime, header: &DnmPacket, out: &mut Vec<Outcome>) {
        DeliveryNotificationManager::process_acks(self, now, &header.acks, out);
    }
}
