//! The reliable-ordered message channel from Glenn Fiedler's "Reliable Ordered Messages", as in
//! yojimbo: messages are included in packets until a packet carrying them is acked.
//!
//! Sender: every message gets the next 16-bit message id and waits in the send queue (a
//! [`SequenceBuffer`] indexed by message id). For each outgoing packet [`ReliableChannel::select`]
//! walks the unacked messages oldest first and picks every one not sent within the resend delay
//! that still fits the packet's bit budget, up to a message count; it never picks an id at or
//! beyond `oldest unacked + receive queue size`, because the receiver could not buffer it, the packet
//! would be acked and the message lost for good. The packet's message ids are remembered by packet
//! sequence, so the packet-level ack ([`crate::reliability::ack::AckEndpoint`]) acks them
//! ([`ReliableChannel::on_packet_acked`]), which frees their slots and advances the oldest unacked id.
//!
//! Receiver: messages are inserted in the receive queue by message id (duplicates and ids already
//! delivered are ignored) and handed to the application strictly in id order
//! ([`ReliableChannel::receive`]), each exactly once. An id at or beyond `next expected + receive
//! queue size` cannot come from a correct sender: that is a desync, reported as an error.

use smallvec::SmallVec;
use thiserror::Error;

use crate::event::{SendKind, SimTime};
use crate::reliability::message::{keep_payload, Message};
use crate::wire::sequence::{sequence_difference, sequence_less_than, SequenceBuffer};

/// Bits reserved per message id in the budget: 16 bits, or 1 bit when consecutive to the previous
/// id, plus the flag; the worst case keeps packets within budget whatever the ids are.
pub const MESSAGE_ID_WORST_BITS: usize = 17;
/// Messages are measured from a byte boundary; in a packet they may start anywhere, and the
/// payload's alignment can then cost up to 7 more bits.
pub const ALIGN_SLACK_BITS: usize = 7;

/// Explicit channel errors: nothing is lost silently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ChannelError {
    /// The send queue holds `send_queue_size` unacked messages: back-pressure to the caller.
    #[error("send queue full")]
    SendQueueFull,
    /// A received message id is beyond what the receive queue can hold (broken sender).
    #[error("received message id {message_id}, expected {expected} and at most {window} ahead")]
    Desync { message_id: u16, expected: u16, window: u16 },
}

/// Fixed-size settings of a channel (the queues are allocated once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelSizes {
    pub send_queue_size: usize,
    pub receive_queue_size: usize,
    /// Packets whose message ids are remembered for acks.
    pub sent_packets_buffer_size: usize,
}

impl Default for ChannelSizes {
    fn default() -> Self {
        Self { send_queue_size: 1024, receive_queue_size: 1024, sent_packets_buffer_size: 1024 }
    }
}

#[derive(Debug, Clone, Default)]
struct SendEntry {
    message: Message,
    workload_id: u64,
    /// Measured size from a byte boundary, with its type id.
    bits: usize,
    /// Never sent while `None` (the seed's "-1").
    last_sent: Option<SimTime>,
    /// When first put in a packet: an ack for a packet older than this names an earlier message
    /// that had the same (wrapped) id, never this one.
    first_sent: Option<SimTime>,
}

impl SendEntry {
    fn view(&self) -> MessageView {
        MessageView {
            workload_id: self.workload_id,
            bits: self.bits,
            first_sent: self.first_sent,
            last_sent: self.last_sent,
        }
    }
}

/// An unacked message as the sender sees it, for a policy deciding whether it goes again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageView {
    pub workload_id: u64,
    /// Measured size from a byte boundary, with its type id.
    pub bits: usize,
    /// When it first went into a packet, and when last (None: never sent).
    pub first_sent: Option<SimTime>,
    pub last_sent: Option<SimTime>,
}

/// Message ids one packet carries, inline up to this many (a packet rarely carries more reliable
/// messages; beyond it they spill to the heap).
const INLINE_IDS: usize = 8;

#[derive(Debug, Clone, Default)]
struct SentPacket {
    time: SimTime,
    ids: SmallVec<[u16; INLINE_IDS]>,
}

/// A message picked for a packet, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick {
    pub id: u16,
    pub workload_id: u64,
    pub kind: SendKind,
}

/// A message acked via a packet ack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckedMessage {
    pub id: u16,
    pub workload_id: u64,
}

/// Both directions of one reliable-ordered channel (each endpoint owns one).
#[derive(Debug, Clone)]
pub struct ReliableChannel {
    sizes: ChannelSizes,
    send_queue: SequenceBuffer<SendEntry>,
    sent_packets: SequenceBuffer<SentPacket>,
    receive_queue: SequenceBuffer<Message>,
    send_message_id: u16,
    oldest_unacked: u16,
    receive_message_id: u16,
    /// Payload buffers of messages acked or received twice, for the endpoint to reuse
    /// ([`Self::take_freed`]); at most [`FREED_BUFFERS`] are kept.
    freed: Vec<Vec<u8>>,
}

/// Freed payload buffers a channel keeps for reuse (an endpoint that does not take them loses
/// nothing: beyond this they are dropped).
pub const FREED_BUFFERS: usize = 256;

impl ReliableChannel {
    /// Sizes are clamped to `1..=32768` (the wrap-aware comparison's reach).
    pub fn new(sizes: ChannelSizes) -> Self {
        let c = |n: usize| n.clamp(1, 32768);
        let sizes = ChannelSizes {
            send_queue_size: c(sizes.send_queue_size),
            receive_queue_size: c(sizes.receive_queue_size),
            sent_packets_buffer_size: c(sizes.sent_packets_buffer_size),
        };
        Self {
            send_queue: SequenceBuffer::new(sizes.send_queue_size),
            sent_packets: SequenceBuffer::new(sizes.sent_packets_buffer_size),
            receive_queue: SequenceBuffer::new(sizes.receive_queue_size),
            sizes,
            send_message_id: 0,
            oldest_unacked: 0,
            receive_message_id: 0,
            freed: Vec::new(),
        }
    }

    /// The payload buffer of a message acked or received twice (its old content still in it): the
    /// endpoint writes a later payload into it instead of allocating one.
    pub fn take_freed(&mut self) -> Option<Vec<u8>> {
        self.freed.pop()
    }

    pub fn sizes(&self) -> ChannelSizes {
        self.sizes
    }

    /// Messages sent and not yet acked (the send queue's occupancy).
    pub fn unacked(&self) -> usize {
        self.send_message_id.wrapping_sub(self.oldest_unacked) as usize
    }

    /// The id the next sent message gets.
    pub fn next_message_id(&self) -> u16 {
        self.send_message_id
    }

    /// The id the receiver delivers next.
    pub fn next_receive_id(&self) -> u16 {
        self.receive_message_id
    }

    /// True when the send queue has room.
    pub fn can_send(&self) -> bool {
        self.unacked() < self.sizes.send_queue_size
    }

    /// Bits a message of `bits` takes in a packet, in the worst case.
    pub fn packet_bits(bits: usize) -> usize {
        bits + MESSAGE_ID_WORST_BITS + ALIGN_SLACK_BITS
    }

    /// Queues a message (measured at `bits`); returns its message id. Never fails after
    /// [`Self::can_send`] returned true.
    pub fn send(&mut self, message: Message, workload_id: u64, bits: usize) -> Result<u16, ChannelError> {
        if !self.can_send() {
            return Err(ChannelError::SendQueueFull);
        }
        let id = self.send_message_id;
        let Some(e) = self.send_queue.insert(id) else {
            // Unreachable while the window rule holds; reported rather than lost.
            return Err(ChannelError::SendQueueFull);
        };
        *e = SendEntry { message, workload_id, bits, last_sent: None, first_sent: None };
        self.send_message_id = id.wrapping_add(1);
        Ok(id)
    }

    /// Picks the messages for one packet: oldest first, not sent within `resend_delay_us`
    /// (0 = every unacked message), fitting `budget_bits` (reduced by what is taken), at most
    /// `max_messages`. Marks them sent at `now`; `out` receives them in id order.
    ///
    /// The one exception to the budget: a message larger than the whole budget (possible only
    /// when the budget was lowered after it was queued) is sent alone in an otherwise empty packet.
    pub fn select(
        &mut self,
        now: SimTime,
        resend_delay_us: u64,
        budget_bits: &mut usize,
        max_messages: usize,
        out: &mut Vec<Pick>,
    ) {
        self.select_with(budget_bits, max_messages, out, now, |_, m| match m.last_sent {
            None => Some(SendKind::First),
            Some(_) if resend_delay_us == 0 => Some(SendKind::Redundant),
            Some(t) if now.saturating_since(t).0 >= resend_delay_us => Some(SendKind::DelayResend),
            Some(_) => None,
        });
    }

    /// [`Self::select`] with the rule given: `decide` says for each unacked message (oldest
    /// first) whether it goes, and as what kind of send. The budget, count, window and
    /// over-budget rules are `select`'s.
    pub fn select_with(
        &mut self,
        budget_bits: &mut usize,
        max_messages: usize,
        out: &mut Vec<Pick>,
        now: SimTime,
        mut decide: impl FnMut(u16, &MessageView) -> Option<SendKind>,
    ) {
        let smallest = Self::packet_bits(0);
        let full_budget = *budget_bits;
        let span = self.unacked().min(self.sizes.receive_queue_size);
        let mut taken = 0;
        for i in 0..span {
            if taken >= max_messages || *budget_bits < smallest {
                break;
            }
            let id = self.oldest_unacked.wrapping_add(i as u16);
            let Some(e) = self.send_queue.get_mut(id) else { continue };
            let Some(kind) = decide(id, &e.view()) else { continue };
            let need = Self::packet_bits(e.bits);
            if need > full_budget && taken == 0 && max_messages > 0 {
                // Queued under a larger budget that was lowered since: it can never fit, and
                // skipping it forever would stall ordered delivery, so it goes alone, over budget.
                *budget_bits = 0;
            } else if need > *budget_bits {
                continue;
            } else {
                *budget_bits -= need;
            }
            e.last_sent = Some(now);
            e.first_sent.get_or_insert(now);
            taken += 1;
            out.push(Pick { id, workload_id: e.workload_id, kind });
        }
    }

    /// The oldest unacked message id (the next id to send when nothing is unacked).
    pub fn oldest_unacked(&self) -> u16 {
        self.oldest_unacked
    }

    /// What the sender knows of unacked message `id`, if it is queued.
    pub fn view(&self, id: u16) -> Option<MessageView> {
        self.send_queue.get(id).map(SendEntry::view)
    }

    /// Puts unacked message `id` in the packet being built, as `kind`, if it fits `budget_bits`
    /// (reduced by what it takes): marks it sent at `now` and returns the pick. Picks need not
    /// come in id order, but must not repeat an id within one packet.
    pub fn pick(&mut self, id: u16, now: SimTime, kind: SendKind, budget_bits: &mut usize) -> Option<Pick> {
        let e = self.send_queue.get_mut(id)?;
        let need = Self::packet_bits(e.bits);
        if need > *budget_bits {
            return None;
        }
        *budget_bits -= need;
        e.last_sent = Some(now);
        e.first_sent.get_or_insert(now);
        Some(Pick { id, workload_id: e.workload_id, kind })
    }

    /// When packet `sequence` was sent and the message ids it carried, while it is remembered
    /// and not yet acked.
    pub fn packet_messages(&self, sequence: u16) -> Option<(SimTime, &[u16])> {
        self.sent_packets.get(sequence).map(|p| (p.time, p.ids.as_slice()))
    }

    /// The queued message `id`, for writing it into a packet.
    pub fn message_mut(&mut self, id: u16) -> Option<&mut Message> {
        self.send_queue.get_mut(id).map(|e| &mut e.message)
    }

    /// Remembers which message ids packet `sequence` carries. Call it for every packet, even one
    /// without messages, so an entry left from 65536 packets ago can never answer for this one.
    pub fn on_packet_sent(&mut self, now: SimTime, sequence: u16, picks: &[Pick]) {
        if let Some(p) = self.sent_packets.insert_reusing(sequence) {
            p.time = now;
            p.ids.clear();
            // Most packets carry no reliable message: an empty `extend` still costs its reserve.
            if !picks.is_empty() {
                p.ids.extend(picks.iter().map(|p| p.id));
            }
        }
    }

    /// Acks the messages packet `sequence` carried; appends the newly acked ones to `out`.
    pub fn on_packet_acked(&mut self, sequence: u16, out: &mut Vec<AckedMessage>) {
        let Some(p) = self.sent_packets.get_mut(sequence) else { return };
        if p.ids.is_empty() {
            // Most packets carry no reliable message. Nothing is removed from the send queue, so
            // the oldest unacked id stays where the last call left it (queued, or the next id).
            self.sent_packets.remove(sequence);
            return;
        }
        let sent_at = p.time;
        for &id in &p.ids {
            if let Some(e) = self.send_queue.get_mut(id) {
                if e.first_sent.is_none_or(|t| t > sent_at) {
                    continue;
                }
                out.push(AckedMessage { id, workload_id: e.workload_id });
                keep_payload(&mut self.freed, std::mem::take(&mut e.message.payload), FREED_BUFFERS);
                self.send_queue.remove(id);
            }
        }
        // Emptied, not freed: the slot's buffer serves the packet that reuses it.
        p.ids.clear();
        self.sent_packets.remove(sequence);
        while self.oldest_unacked != self.send_message_id && !self.send_queue.exists(self.oldest_unacked) {
            self.oldest_unacked = self.oldest_unacked.wrapping_add(1);
        }
    }

    /// Checks a received id against the receive window without changing anything.
    pub fn check_receive(&self, id: u16) -> Result<(), ChannelError> {
        let window = self.sizes.receive_queue_size;
        if sequence_less_than(id, self.receive_message_id) {
            return Ok(()); // already delivered: a harmless duplicate
        }
        if sequence_difference(id, self.receive_message_id) as usize >= window {
            return Err(ChannelError::Desync {
                message_id: id,
                expected: self.receive_message_id,
                window: window as u16,
            });
        }
        Ok(())
    }

    /// Stores a received message (call [`Self::check_receive`] first); returns false when it was
    /// a duplicate or already delivered.
    pub fn insert_received(&mut self, id: u16, message: Message) -> bool {
        if self.check_receive(id).is_err()
            || sequence_less_than(id, self.receive_message_id)
            || self.receive_queue.exists(id)
        {
            keep_payload(&mut self.freed, message.payload, FREED_BUFFERS);
            return false;
        }
        match self.receive_queue.insert(id) {
            Some(slot) => {
                *slot = message;
                true
            }
            None => false,
        }
    }

    /// The next message in order, if it has arrived.
    pub fn receive(&mut self) -> Option<Message> {
        let id = self.receive_message_id;
        let m = std::mem::take(self.receive_queue.get_mut(id)?);
        self.receive_queue.remove(id);
        self.receive_message_id = id.wrapping_add(1);
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reliability::message::MessageType;

    fn msg(n: u8) -> Message {
        Message { kind: MessageType::SmallEvent, payload: vec![n; 8] }
    }

    #[test]
    fn acked_messages_are_never_picked_again_and_the_window_advances() {
        let mut c = ReliableChannel::new(ChannelSizes::default());
        for i in 0..3 {
            c.send(msg(i), i as u64, 90).unwrap();
        }
        let mut picks = Vec::new();
        let mut budget = 10_000;
        c.select(SimTime(0), 100_000, &mut budget, 64, &mut picks);
        assert_eq!(picks.iter().map(|p| p.id).collect::<Vec<_>>(), vec![0, 1, 2]);
        c.on_packet_sent(SimTime(0), 7, &picks[..2]);
        let mut acked = Vec::new();
        c.on_packet_acked(7, &mut acked);
        assert_eq!(acked.len(), 2);
        assert_eq!(c.unacked(), 1);
        picks.clear();
        budget = 10_000;
        c.select(SimTime(100_000), 100_000, &mut budget, 64, &mut picks);
        assert_eq!(picks, vec![Pick { id: 2, workload_id: 2, kind: SendKind::DelayResend }]);
    }

    #[test]
    fn a_message_over_a_lowered_budget_goes_alone_instead_of_stalling() {
        let mut c = ReliableChannel::new(ChannelSizes::default());
        c.send(msg(0), 0, 2000).unwrap();
        c.send(msg(1), 1, 90).unwrap();
        let mut picks = Vec::new();
        let mut budget = 1000;
        c.select(SimTime(0), 100_000, &mut budget, 64, &mut picks);
        assert_eq!(picks.iter().map(|p| p.id).collect::<Vec<_>>(), vec![0]);
        assert_eq!(budget, 0);
        picks.clear();
        budget = 1000;
        c.select(SimTime(1), 100_000, &mut budget, 64, &mut picks);
        assert_eq!(picks.iter().map(|p| p.id).collect::<Vec<_>>(), vec![1], "message 1 fits the next packet");
    }

    #[test]
    fn a_late_ack_for_an_old_packet_never_acks_a_newer_message_with_the_same_wrapped_id() {
        let mut c = ReliableChannel::new(ChannelSizes::default());
        let mut picks = Vec::new();
        let mut acked = Vec::new();
        let mut budget = usize::MAX;
        // Message id 0 goes out in packet 1 (whose ack is delayed) and again in packet 2 (acked).
        c.send(msg(0), 0, 64).unwrap();
        c.select(SimTime(0), 0, &mut budget, 256, &mut picks);
        c.on_packet_sent(SimTime(0), 1, &picks);
        c.select(SimTime(1), 0, &mut budget, 256, &mut picks);
        c.on_packet_sent(SimTime(1), 2, &picks[1..]);
        c.on_packet_acked(2, &mut acked);
        assert_eq!(acked.len(), 1);
        // 65535 more messages, 256 per packet, so message ids wrap within 256 packets.
        let mut seq = 3u16;
        let mut t = 2;
        let mut next = 1u64;
        while next < 65536 {
            while next < 65536 && c.unacked() < 256 {
                c.send(msg(0), next, 64).unwrap();
                next += 1;
            }
            picks.clear();
            c.select(SimTime(t), 0, &mut budget, 256, &mut picks);
            c.on_packet_sent(SimTime(t), seq, &picks);
            c.on_packet_acked(seq, &mut acked);
            seq += 1;
            t += 1;
        }
        assert_eq!(c.next_message_id(), 0, "ids wrapped");
        c.send(msg(9), 65536, 64).unwrap();
        acked.clear();
        c.on_packet_acked(1, &mut acked);
        assert!(acked.is_empty(), "packet 1 carried the old message 0, not the new one: {acked:?}");
        assert_eq!(c.unacked(), 1);
    }

    #[test]
    fn ids_beyond_the_receive_window_are_a_desync() {
        let c = ReliableChannel::new(ChannelSizes { receive_queue_size: 16, ..Default::default() });
        assert!(c.check_receive(15).is_ok());
        assert!(matches!(c.check_receive(16), Err(ChannelError::Desync { .. })));
        assert!(c.check_receive(65535).is_ok(), "an old id is a duplicate, not a desync");
    }

    #[test]
    fn delivery_waits_for_the_gap_then_releases_in_order() {
        let mut c = ReliableChannel::new(ChannelSizes::default());
        assert!(c.insert_received(1, msg(1)));
        assert!(c.receive().is_none());
        assert!(c.insert_received(0, msg(0)));
        assert!(!c.insert_received(0, msg(0)), "duplicate");
        assert_eq!(c.receive(), Some(msg(0)));
        assert_eq!(c.receive(), Some(msg(1)));
        assert!(!c.insert_received(1, msg(1)), "already delivered");
        assert!(c.receive().is_none());
    }
}
