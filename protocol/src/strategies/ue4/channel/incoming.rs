//! The receiving half of a channel index, as `UNetConnection::ReceivedPacket` (per bunch),
//! `UChannel::ReceivedRawBunch` and `UChannel::ReceivedNextBunch` handle it in 4.25.
//!
//! Per bunch: a reliable one whose `ChSequence` was already processed is dropped (this is how the
//! duplicates a Nak-driven resend or a bSkipAck produce go away); a channel that does not exist
//! is created by any reliable bunch (or a valid unreliable open), while another unreliable bunch
//! for it cannot be processed and asks for bSkipAck; a reliable bunch ahead of a gap waits in
//! `InRec`; partial bunches are reassembled, and the merge problems UE4 answers with bSkipAck
//! (a partial without its initial one, a sequence or reliability mismatch, an unreliable partial
//! breaking an unfinished reliable one) do the same here. A bunch that opens the channel makes it
//! fully open; a bunch that closes it ends the channel, but not the index's sequence counter.
//!
//! The cases where UE4 flags the bunch as an error (`Bunch.SetError()`: a reliable partial
//! breaking a reliable one, a reassembled bunch over 64 KiB, a reliable bunch before the channel
//! is open) only happen with corrupt input; they are counted, the bunch is discarded and the
//! packet skip-acked. A UE4 server would also close the connection; endpoints here are
//! symmetric peers and keep it, as UE4's client side does.

use std::collections::BTreeMap;

use thiserror::Error;

use crate::event::{SimTime, Ue4ChannelKind};

use super::super::bunch::{make_relative, Bunch, ChName, MAX_CHSEQUENCE, MAX_CONSTRUCTED_BUNCH_BYTES};
use super::RELIABLE_BUFFER;

/// Why a channel could not accept a bunch in a way that ends the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ChannelError {
    #[error("Incoming reliable buffer overflow")]
    InRecOverflow,
}

/// What handling one bunch did: the out-of-order queue (`changed`, `depth`, and `blocked_us`,
/// how long the channel has been — or was, if now unblocked — blocked), and whether the packet
/// must be skip-acked or the channel ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BunchOutcome {
    pub changed: bool,
    pub depth: usize,
    pub blocked_us: u64,
    pub skip_ack: bool,
    /// The channel was closed by the bunch (or one it released from `InRec`).
    pub closed: bool,
    /// The channel was created by the bunch.
    pub created: bool,
}

/// Counters of a receiving channel index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InChannelCounters {
    pub duplicate_bunches: u64,
    pub queued_bunches: u64,
    pub max_inrec_depth: usize,
    /// Longest and total time a bunch waited in `InRec`.
    pub max_inrec_wait_us: u64,
    pub total_inrec_wait_us: u64,
    pub partial_discarded: u64,
    pub too_large_discarded: u64,
    /// Bunches that could not be processed and made their packet skip-acked.
    pub skipped_bunches: u64,
    /// Bunches UE4 would flag as errors (only corrupt input makes them).
    pub bunch_errors: u64,
}

#[derive(Debug, Clone)]
struct Assembly {
    reliable: bool,
    open: bool,
    /// Last `ChSequence` (reliable) or packet id (unreliable) appended.
    seq: u64,
    data: Vec<u8>,
}

/// The channel living on an index at the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct InInstance {
    kind: Ue4ChannelKind,
    /// Channels that exist from the start on both sides (control, snapshots) count as opened
    /// locally: fully open without an opening bunch.
    opened_locally: bool,
    /// The opening bunch was processed (`OpenAcked`).
    open_acked: bool,
}

/// Receiving half of a channel index.
#[derive(Debug, Clone)]
pub struct InChannel {
    /// Last reliable `ChSequence` processed (`InReliable[ChIndex]`), kept across reopenings.
    in_reliable: u32,
    instance: Option<InInstance>,
    /// Reliable bunches ahead of a gap, with their arrival time.
    in_rec: BTreeMap<u32, (Bunch, SimTime)>,
    blocked_since: Option<SimTime>,
    partial: Option<Assembly>,
    pub counters: InChannelCounters,
}

/// An open channel that needs no opening bunch (what tests and the static channels use).
impl Default for InChannel {
    fn default() -> Self {
        Self::static_channel(Ue4ChannelKind::Actor)
    }
}

impl InChannel {
    /// An index no channel uses yet.
    pub fn unused() -> Self {
        Self {
            in_reliable: 0,
            instance: None,
            in_rec: BTreeMap::new(),
            blocked_since: None,
            partial: None,
            counters: InChannelCounters::default(),
        }
    }

    /// A channel open on both sides from the start.
    pub fn static_channel(kind: Ue4ChannelKind) -> Self {
        let mut c = Self::unused();
        c.instance = Some(InInstance { kind, opened_locally: true, open_acked: true });
        c
    }

    pub fn inrec_depth(&self) -> usize {
        self.in_rec.len()
    }

    /// The kind of the channel on this index, if one is open.
    pub fn kind(&self) -> Option<Ue4ChannelKind> {
        self.instance.map(|i| i.kind)
    }

    /// One bunch of a packet (`ReceivedPacket`'s per-bunch part, then `ReceivedRawBunch`):
    /// `packet_id` is the receiver's running id of the carrying packet. Completed payloads are
    /// appended to `delivered`.
    pub fn received_raw_bunch(
        &mut self,
        now: SimTime,
        packet_id: u64,
        mut bunch: Bunch,
        delivered: &mut Vec<Vec<u8>>,
    ) -> Result<BunchOutcome, ChannelError> {
        let mut out = BunchOutcome { depth: self.in_rec.len(), ..Default::default() };
        if bunch.reliable {
            bunch.ch_sequence = make_relative(bunch.ch_sequence, self.in_reliable.wrapping_add(1), MAX_CHSEQUENCE);
            if bunch.ch_sequence <= self.in_reliable {
                self.counters.duplicate_bunches += 1;
                return Ok(out);
            }
        }
        if self.instance.is_none() {
            let valid_unreliable_open = bunch.open && (bunch.close || bunch.partial);
            let kind = match bunch.ch_name {
                ChName::Actor => Some(Ue4ChannelKind::Actor),
                ChName::Control => Some(Ue4ChannelKind::Control),
                ChName::None | ChName::Voice => None,
            };
            if !bunch.reliable && !valid_unreliable_open {
                // "Received unreliable bunch before open": not processed, so not acked.
                return Ok(self.skipped(out));
            }
            let Some(kind) = kind else {
                // A channel type this model does not open (UE4: unknown channel name).
                self.counters.bunch_errors += 1;
                return Ok(self.skipped(out));
            };
            self.instance = Some(InInstance { kind, opened_locally: false, open_acked: false });
            out.created = true;
        }
        if !bunch.reliable {
            // UE4 processes unreliable bunches at once, even while reliable ones wait.
            self.received_next_bunch(packet_id, bunch, delivered, &mut out);
            return Ok(out);
        }
        let seq = bunch.ch_sequence;
        if seq != self.in_reliable + 1 {
            if self.in_rec.contains_key(&seq) {
                self.counters.duplicate_bunches += 1;
                return Ok(out);
            }
            if self.in_rec.len() >= RELIABLE_BUFFER {
                return Err(ChannelError::InRecOverflow);
            }
            self.in_rec.insert(seq, (bunch, now));
            let since = *self.blocked_since.get_or_insert(now);
            self.counters.queued_bunches += 1;
            self.counters.max_inrec_depth = self.counters.max_inrec_depth.max(self.in_rec.len());
            return Ok(BunchOutcome {
                changed: true,
                depth: self.in_rec.len(),
                blocked_us: now.saturating_since(since).0,
                ..out
            });
        }
        self.in_reliable = seq;
        self.received_next_bunch(packet_id, bunch, delivered, &mut out);
        while !out.closed {
            let Some(entry) = self.in_rec.first_entry() else { break };
            if *entry.key() != self.in_reliable + 1 {
                break;
            }
            let (b, arrived) = entry.remove();
            let waited = now.saturating_since(arrived).0;
            self.counters.max_inrec_wait_us = self.counters.max_inrec_wait_us.max(waited);
            self.counters.total_inrec_wait_us += waited;
            self.in_reliable = b.ch_sequence;
            // Queued bunches were acked already: a skip-ack here could not take that back.
            let skip = out.skip_ack;
            self.received_next_bunch(packet_id, b, delivered, &mut out);
            out.skip_ack = skip;
            out.changed = true;
        }
        if out.closed && !self.in_rec.is_empty() {
            // Bunches of a channel that has ended go with it, as in UE4.
            self.counters.partial_discarded += self.in_rec.len() as u64;
            self.in_rec.clear();
            out.changed = true;
        }
        out.depth = self.in_rec.len();
        if out.changed {
            if let Some(since) = self.blocked_since {
                out.blocked_us = now.saturating_since(since).0;
            }
            if self.in_rec.is_empty() {
                self.blocked_since = None;
            }
        }
        Ok(out)
    }

    fn skipped(&mut self, mut out: BunchOutcome) -> BunchOutcome {
        self.counters.skipped_bunches += 1;
        out.skip_ack = true;
        out
    }

    /// A bunch UE4 flags as an error: discarded, counted, its packet skip-acked.
    fn error(&mut self, out: &mut BunchOutcome) {
        self.counters.bunch_errors += 1;
        out.skip_ack = true;
    }

    /// `ReceivedNextBunch`: reassembles partial bunches, then opens, delivers and closes.
    fn received_next_bunch(
        &mut self,
        packet_id: u64,
        bunch: Bunch,
        delivered: &mut Vec<Vec<u8>>,
        out: &mut BunchOutcome,
    ) {
        let handle = if bunch.partial {
            match self.merge_partial(packet_id, bunch, out) {
                Some(whole) => whole,
                None => return,
            }
        } else {
            bunch
        };
        let Some(inst) = self.instance.as_mut() else { return };
        if handle.open {
            inst.open_acked = true;
        }
        if !inst.opened_locally && !inst.open_acked {
            // "Skipping bunch since channel isn't fully open" (an error when reliable).
            if handle.reliable {
                self.error(out);
            } else {
                self.counters.skipped_bunches += 1;
                out.skip_ack = true;
            }
            return;
        }
        // `ReceivedSequencedBunch`.
        if !handle.payload.is_empty() {
            delivered.push(handle.payload);
        }
        if handle.close && !inst.opened_locally {
            self.instance = None;
            self.partial = None;
            out.closed = true;
        }
    }

    /// The partial-bunch part of `ReceivedNextBunch`: the reassembled bunch once its final piece
    /// arrives (open from the initial piece, close from the final one), or None.
    fn merge_partial(&mut self, packet_id: u64, bunch: Bunch, out: &mut BunchOutcome) -> Option<Bunch> {
        let seq = if bunch.reliable { bunch.ch_sequence as u64 } else { packet_id };
        let mut complete = None;
        if bunch.partial_initial {
            if let Some(p) = &self.partial {
                if p.reliable {
                    // "Reliable partial trying to destroy reliable partial 1" is an error;
                    // an unreliable one destroying it is skip-acked.
                    if bunch.reliable {
                        self.error(out);
                    } else {
                        self.counters.skipped_bunches += 1;
                        out.skip_ack = true;
                    }
                    return None;
                }
                // An unfinished unreliable partial is simply dropped.
                self.counters.partial_discarded += 1;
            }
            self.partial =
                Some(Assembly { reliable: bunch.reliable, open: bunch.open, seq, data: bunch.payload.clone() });
        } else {
            let Some(p) = self.partial.as_mut() else {
                // "Received Partial Bunch before we received initial partial bunch".
                self.counters.partial_discarded += 1;
                self.counters.skipped_bunches += 1;
                out.skip_ack = true;
                return None;
            };
            let reliable_matches = seq == p.seq + 1;
            let seq_matches = if p.reliable { reliable_matches } else { reliable_matches || seq == p.seq };
            if !(seq_matches && p.reliable == bunch.reliable) {
                // Merge problem: not acked, since the bunch was not processed.
                out.skip_ack = true;
                self.counters.skipped_bunches += 1;
                if p.reliable {
                    if bunch.reliable {
                        self.error(out);
                    }
                    return None;
                }
                self.partial = None;
                self.counters.partial_discarded += 1;
                return None;
            }
            p.seq = seq;
            p.data.extend_from_slice(&bunch.payload);
        }
        if self.partial.as_ref().is_some_and(|p| p.data.len() > MAX_CONSTRUCTED_BUNCH_BYTES) {
            // "Final partial bunch too large".
            self.partial = None;
            self.counters.too_large_discarded += 1;
            self.error(out);
            return None;
        }
        if bunch.partial_final {
            if let Some(p) = self.partial.take() {
                complete = Some(Bunch {
                    open: p.open,
                    close: bunch.close,
                    close_reason: bunch.close_reason,
                    reliable: p.reliable,
                    ch_index: bunch.ch_index,
                    ch_sequence: bunch.ch_sequence,
                    ch_name: bunch.ch_name,
                    payload: p.data,
                    ..Default::default()
                });
            }
        }
        complete
    }
}
