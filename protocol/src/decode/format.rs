//! The one trait every format a passive decoder reads implements. Which formats there are, and
//! how a user names them, is [`super::choice`]'s: it names each format, and each format names
//! only this trait.

use crate::event::{Dir, DiscardReason, SendKind, SimTime};

use super::record::{ParseError, Parsed};
use super::track::{AckRule, LossRule, RttRule};

/// One wire format, as the decoder of one client's traffic uses it.
///
/// A format is made per client ([`FormatKind::make`](super::FormatKind::make)), so it may keep
/// state across datagrams (reliable.io's reassembly buffers). `parse` must return `Ok` or `Err`
/// for any bytes, never panic.
pub trait WireFormat: Send {
    /// The format's name in records and probe results.
    fn name(&self) -> &'static str;
    /// Width of its packet sequence numbers (16 for reliable.io, 14 for UE4).
    fn seq_bits(&self) -> u32 {
        16
    }
    /// How its endpoints smooth RTT and estimate loss.
    fn rtt_rule(&self) -> RttRule {
        RttRule::Ewma { factor: crate::reliability::stats::StatsConfig::default().rtt_smoothing }
    }
    fn loss_rule(&self) -> LossRule {
        LossRule::Unacked
    }
    /// In how many of its packets an endpoint writes each ack, where its endpoints correct their
    /// loss estimate for acks lost on the way back (dnm: `ack_repeat`); `None` where they report
    /// the count of unacked packets as it is. See [`return_path_corrected`](super::decoder).
    fn ack_redundancy(&self) -> Option<u32> {
        None
    }
    /// What a resend of one of its items is called in `MessageSent`.
    fn resend_kind(&self) -> SendKind {
        SendKind::TimeoutResend
    }
    /// How its senders turn acks into outcomes (by default every ack that names a packet still
    /// waiting acks it).
    fn ack_rule(&self) -> AckRule {
        AckRule::default()
    }
    /// Reads one datagram sent in `dir` (`AtoB` client -> server).
    fn parse(&mut self, dir: Dir, bytes: &[u8]) -> Result<Parsed, ParseError>;
    /// Whether the endpoint receiving a datagram sent in `dir`, with packet sequence `seq`, at
    /// `at` reads it (`None`: its acks and items count) or discards it unread, and why: dnm's
    /// book rule drops a packet older than the newest it processed, with the acks it carries.
    /// Called for every parsed datagram with a sequence at its delivery, in delivery order; by
    /// default every one is read.
    fn admit(&mut self, dir: Dir, seq: u32, at: SimTime) -> Option<DiscardReason> {
        let _ = (dir, seq, at);
        None
    }
}
