//! ENet's wire format (ENet 1.3, `include/enet/protocol.h` and `protocol.c`), written from its
//! layout: every integer in network byte order (big-endian).
//!
//! A datagram is a protocol header, then commands back to back to its end:
//! - header: `peerID` u16, whose top bits are flags (bit 15 `SENT_TIME`: a `sentTime` u16 of the
//!   sender's clock in milliseconds follows; bit 14 `COMPRESSED`) and bits 12..13 the session;
//! - each command: `command` u8 (low 4 bits the command number, bit 7 `ACKNOWLEDGE`: the command
//!   is reliable and the receiver acks it, bit 6 `UNSEQUENCED`), `channelID` u8,
//!   `reliableSequenceNumber` u16, then the command's fixed body and, for the send commands, its
//!   `dataLength` bytes of data.
//!
//! An `ACKNOWLEDGE` command names the acked command by (channel, `receivedReliableSequenceNumber`)
//! and echoes the `sentTime` of the datagram that carried it (`receivedSentTime`): the sender's
//! RTT sample is its clock at the ack minus that time, so an ack names the exact copy it answers.
//! Each reliable command is an item keyed by (channel, reliable sequence number); sending it
//! again after a retransmit timeout is a resend (ENet counts it in `packetsLost`).
//!
//! Not read: compressed datagrams (a range coder the host may enable) and the optional 4-byte
//! checksum (off unless the host sets one): both are refused as malformed.

use crate::event::{Dir, MalformedReason};

use super::format::WireFormat;
use super::record::{Fields, Item, ItemAck, ParseError, Parsed};
use super::track::{LossRule, RttRule};

const FLAG_ACKNOWLEDGE: u8 = 0x80;
const FLAG_UNSEQUENCED: u8 = 0x40;
const HEADER_FLAG_COMPRESSED: u16 = 1 << 14;
const HEADER_FLAG_SENT_TIME: u16 = 1 << 15;

/// The commands by number: name, fixed size (header included), and where `dataLength` sits.
const COMMANDS: [(&str, usize, Option<usize>); 13] = [
    ("none", 0, None),
    ("acknowledge", 8, None),
    ("connect", 48, None),
    ("verify connect", 44, None),
    ("disconnect", 8, None),
    ("ping", 4, None),
    ("send reliable", 6, Some(4)),
    ("send unreliable", 8, Some(6)),
    ("send fragment", 24, Some(6)),
    ("send unsequenced", 8, Some(6)),
    ("bandwidth limit", 12, None),
    ("throttle configure", 16, None),
    ("send unreliable fragment", 24, Some(6)),
];

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// ENet's protocol, both directions alike.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnetFormat;

impl WireFormat for EnetFormat {
    fn name(&self) -> &'static str {
        "enet"
    }

    fn seq_bits(&self) -> u32 {
        32
    }

    fn rtt_rule(&self) -> RttRule {
        RttRule::EighthMs
    }

    fn loss_rule(&self) -> LossRule {
        LossRule::Resent
    }

    fn parse(&mut self, _dir: Dir, bytes: &[u8]) -> Result<Parsed, ParseError> {
        let mut f = Fields::default();
        if bytes.len() < 2 {
            return Err(ParseError::new(MalformedReason::Truncated, "shorter than ENet's header"));
        }
        let peer = be16(bytes, 0);
        let flags = peer & (HEADER_FLAG_SENT_TIME | HEADER_FLAG_COMPRESSED);
        f.bytes("peer id", format!("{} (session {}, flags {:#06x})", peer & 0x0FFF, (peer >> 12) & 3, flags), 0, 2);
        if flags & HEADER_FLAG_COMPRESSED != 0 {
            return Err(ParseError::new(MalformedReason::BadPayload, "compressed ENet datagram").with_fields(f));
        }
        let mut at = 2;
        let mut sent_time = None;
        if flags & HEADER_FLAG_SENT_TIME != 0 {
            if bytes.len() < 4 {
                return Err(ParseError::new(MalformedReason::Truncated, "sent time cut off").with_fields(f));
            }
            let t = be16(bytes, 2);
            f.bytes("sent time", format!("{t} ms"), 2, 2);
            sent_time = Some(t as u32);
            at = 4;
        }
        let mut items = Vec::new();
        let mut item_acks = Vec::new();
        let mut names = Vec::new();
        let mut i = 0;
        while at < bytes.len() {
            let start = at;
            if bytes.len() - at < 4 {
                let e = ParseError::new(MalformedReason::Truncated, format!("command {i} header cut off"));
                return Err(e.with_fields(f));
            }
            let cmd = bytes[at];
            let number = (cmd & 0x0F) as usize;
            let channel = bytes[at + 1];
            let rseq = be16(bytes, at + 2);
            let Some(&(name, size, data_at)) = COMMANDS.get(number).filter(|c| c.1 > 0) else {
                let e = ParseError::new(MalformedReason::BadPayload, format!("command {i}: unknown command {number}"));
                return Err(e.with_fields(f));
            };
            if bytes.len() - at < size {
                let e = ParseError::new(MalformedReason::Truncated, format!("command {i} ({name}) cut off"));
                return Err(e.with_fields(f));
            }
            let data_len = data_at.map_or(0, |d| be16(bytes, at + d) as usize);
            if bytes.len() - at - size < data_len {
                let e = ParseError::new(MalformedReason::Truncated, format!("command {i} ({name}): data cut off"));
                return Err(e.with_fields(f));
            }
            let reliable = cmd & FLAG_ACKNOWLEDGE != 0;
            let mut flags = String::new();
            if reliable {
                flags.push_str(" reliable");
            }
            if cmd & FLAG_UNSEQUENCED != 0 {
                flags.push_str(" unsequenced");
            }
            let p = format!("command {i} ");
            f.bytes(format!("{p}command"), format!("{name}{flags}"), at, 1);
            f.bytes(format!("{p}channel"), channel, at + 1, 1);
            f.bytes(format!("{p}reliable seq"), rseq, at + 2, 2);
            let key = (channel as u64) << 16 | rseq as u64;
            if number == 1 {
                let acked = be16(bytes, at + 4);
                let echo = be16(bytes, at + 6);
                f.bytes(format!("{p}acked seq"), acked, at + 4, 2);
                f.bytes(format!("{p}acked sent time"), format!("{echo} ms"), at + 6, 2);
                item_acks.push(ItemAck { key: (channel as u64) << 16 | acked as u64, echo: Some(echo as u32) });
                names.push(format!("ack {channel}:{acked}"));
            } else {
                if size > 4 {
                    f.bytes(format!("{p}body"), format!("{} bytes", size - 4), at + 4, size - 4);
                }
                if data_len > 0 {
                    f.bytes(format!("{p}data"), format!("{data_len} bytes"), at + size, data_len);
                }
                if reliable {
                    if sent_time.is_none() {
                        let e = ParseError::new(
                            MalformedReason::BadHeader,
                            format!("command {i}: reliable without a sent time"),
                        );
                        return Err(e.with_fields(f));
                    }
                    items.push(Item { key, stamp: sent_time, msg: None });
                    names.push(format!("{name} {channel}:{rseq}"));
                } else {
                    names.push(name.to_string());
                }
            }
            at = start + size + data_len;
            i += 1;
        }
        if i == 0 {
            return Err(ParseError::new(MalformedReason::BadPayload, "no commands").with_fields(f));
        }
        Ok(Parsed {
            summary: format!("{}{}", sent_time.map(|t| format!("sent {t} ms: ")).unwrap_or_default(), names.join(", ")),
            fields: f.into_vec(),
            items,
            item_acks,
            ..Parsed::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reliable_send_and_its_ack_read_back() {
        // Peer 0, sent time 1000, SEND_RELIABLE channel 0 seq 1 with 3 bytes of data.
        let send = [0x80, 0x00, 0x03, 0xE8, 0x86, 0x00, 0x00, 0x01, 0x00, 0x03, 7, 8, 9];
        let p = EnetFormat.parse(Dir::AtoB, &send).unwrap();
        assert_eq!(p.items, vec![Item { key: 1, stamp: Some(1000), msg: None }]);
        // No sent time; ACKNOWLEDGE of channel 0 seq 1 echoing 1000.
        let ack = [0x00, 0x00, 0x01, 0x00, 0x00, 0x02, 0x00, 0x01, 0x03, 0xE8];
        let p = EnetFormat.parse(Dir::BtoA, &ack).unwrap();
        assert_eq!(p.item_acks, vec![ItemAck { key: 1, echo: Some(1000) }]);
        // Cut short, an unknown command, trailing bytes: refused, never a panic.
        for bad in [&send[..12], &[0x80, 0, 3, 0xE8, 0x0F, 0, 0, 0][..], &[0, 0, 5], &[0x00]] {
            assert!(EnetFormat.parse(Dir::AtoB, bad).is_err(), "{bad:?}");
        }
    }
}
