//! The packet comment each exported packet carries, and its parser: ackscope's ground truth and
//! anomaly flags for the packet, which Wireshark shows as they are and the dissector reads to
//! raise its expert items. An interface: the dissector, tests and later imports parse it.
//!
//! One line of space-separated `key=value` fields after the word `ackscope`, in this order (a
//! field not shown has no value for the packet):
//!
//! | field | on | meaning |
//! |---|---|---|
//! | `uid=N` | both | ackscope's send id (`PacketSent::uid`, the packet log's `link_id`) |
//! | `side=A` | both | the sending endpoint (`A` the server, `B` the client) |
//! | `client=K` | both | the connection (client) the packet belongs to |
//! | `seq=S` | both | the sequence the sender reported (`PacketSent::seq`) |
//! | `fate=F` | sent | the link's verdict: `delivered`, `duplicated` (delivered, and copied), `dropped_loss`, `dropped_burst`, `dropped_queue`, `dropped_mtu` or `in_flight` (the recording ended, or a restart emptied the link, first) |
//! | `delay_ms=D` | both | time on the link of the first copy (sent) or of this copy (delivered) |
//! | `copy=K/N` | delivered | this is copy K of the N the link delivered (duplicates only) |
//! | `resend=...` | sent | what the packet carries again, comma separated: `msg:ID:KIND` (KIND `delay`, `redundant`, `nak`, `timeout`), `slice:CHUNK/SLICE`, `block:CHUNK/ATTEMPT` |
//! | `spurious=ID,...` | sent | messages resent although the peer's application already had them (the anomaly list's *spurious*) |
//! | `nak_at=T` | sent | when the sender concluded the packet was lost (the anomaly list's *nak*), seconds |
//! | `slice_bytes=`, `max_slices=` | sent and delivered | chunks and fragments: the sizes the wire fields are bounded by |
//! | `max_packet=` | sent and delivered | UE4: `MaxPacket`, which sets the width of a bunch's data length |
//! | `protocol_id=0x...` | sent and delivered | rellikt: the protocol id its packets start with |

use std::collections::BTreeMap;

use ackscope_protocol::DropReason;

/// The first word of every comment.
pub const TAG: &str = "ackscope";

/// A comment being built, field by field in the documented order.
#[derive(Debug, Clone, Default)]
pub struct Comment(String);

impl Comment {
    pub fn new() -> Self {
        Self(TAG.to_string())
    }

    /// Appends `key=value` (nothing when `value` is empty).
    pub fn field(mut self, key: &str, value: impl std::fmt::Display) -> Self {
        let value = value.to_string();
        if !value.is_empty() {
            self.0.push(' ');
            self.0.push_str(key);
            self.0.push('=');
            self.0.push_str(&value);
        }
        self
    }

    /// Appends raw, already formatted fields (the wire settings).
    pub fn raw(mut self, fields: &str) -> Self {
        if !fields.is_empty() {
            self.0.push(' ');
            self.0.push_str(fields);
        }
        self
    }

    pub fn finish(self) -> String {
        self.0
    }
}

/// The fields of an ackscope comment, or `None` when `text` is not one.
pub fn parse(text: &str) -> Option<BTreeMap<String, String>> {
    let mut words = text.split_whitespace();
    if words.next()? != TAG {
        return None;
    }
    Some(words.filter_map(|w| w.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect())
}

/// The `fate=` value of a send the link dropped (`dropped`), delivered (`first_delay_us`, with
/// `copies` copies) or still held when the recording ended: [`fate_hint`] reads it back.
pub fn fate_name(dropped: Option<DropReason>, first_delay_us: Option<u32>, copies: u32) -> &'static str {
    match (dropped, first_delay_us, copies) {
        (Some(DropReason::Random), ..) => "dropped_loss",
        (Some(DropReason::Burst), ..) => "dropped_burst",
        (Some(DropReason::QueueFull), ..) => "dropped_queue",
        (Some(DropReason::Mtu), ..) => "dropped_mtu",
        (None, Some(_), n) if n > 1 => "duplicated",
        (None, Some(_), _) => "delivered",
        (None, None, _) => "in_flight",
    }
}

/// What a comment says of a sent packet's fate when the capture alone cannot tell: the link
/// dropped it (and why), or the recording ended with it still in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FateHint {
    Dropped(DropReason),
    InFlight,
}

/// The [`FateHint`] of an ackscope comment's `fate` field (`None` for any other text or fate).
pub fn fate_hint(text: &str) -> Option<FateHint> {
    Some(match parse(text)?.get("fate")?.as_str() {
        "dropped_loss" => FateHint::Dropped(DropReason::Random),
        "dropped_burst" => FateHint::Dropped(DropReason::Burst),
        "dropped_queue" => FateHint::Dropped(DropReason::QueueFull),
        "dropped_mtu" => FateHint::Dropped(DropReason::Mtu),
        "in_flight" => FateHint::InFlight,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comment_parses_back() {
        let c =
            Comment::new().field("uid", 7).field("fate", "dropped_loss").field("resend", "").field("seq", 3).finish();
        assert_eq!(c, "ackscope uid=7 fate=dropped_loss seq=3");
        let f = parse(&c).unwrap();
        assert_eq!(f["uid"], "7");
        assert_eq!(f["fate"], "dropped_loss");
        assert!(!f.contains_key("resend"));
        assert_eq!(parse("something else"), None);
    }
}
