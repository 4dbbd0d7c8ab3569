//! KCP segments as the reference library (`ikcp.c`) sends them, alone or in kcptun's frame.
//!
//! A datagram holds one or more segments, each a 24-byte little-endian header — `conv` u32,
//! `cmd` u8 (81 push, 82 ack, 83 window ask, 84 window tell), `frg` u8, `wnd` u16, `ts` u32,
//! `sn` u32, `una` u32, `len` u32 — then `len` bytes of data. A push is an item keyed by `sn`
//! stamped with `ts`; an ack names `sn` and echoes the `ts` of the copy it answers (the sender's
//! RTT sample is its clock minus that `ts`); every segment's `una` acknowledges all segments
//! below it. Decoding is strict: known commands only, one conversation per datagram, and the
//! segments must end exactly at the datagram's end.
//!
//! kcptun frames each datagram, even with `--crypt none` and FEC off: 16 random nonce bytes,
//! then a CRC32 (IEEE, little-endian) of everything after byte 20, then the segments. The
//! `kcptun` format checks that checksum before reading the segments.

use crate::event::{Dir, MalformedReason};

use super::format::WireFormat;
use super::record::{Fields, Item, ItemAck, ParseError, Parsed};
use super::track::{LossRule, RttRule};

/// Segment header bytes.
pub const KCP_OVERHEAD: usize = 24;
/// kcptun's nonce and checksum before the segments.
pub const KCPTUN_FRAME_BYTES: usize = 20;
const CMD_PUSH: u8 = 81;
const CMD_ACK: u8 = 82;
const CMD_WASK: u8 = 83;
const CMD_WINS: u8 = 84;

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// KCP, bare (`framed: false`) or in kcptun's frame.
#[derive(Debug, Clone, Copy, Default)]
pub struct KcpFormat {
    pub framed: bool,
}

impl WireFormat for KcpFormat {
    fn name(&self) -> &'static str {
        if self.framed {
            "kcptun"
        } else {
            "kcp"
        }
    }

    fn seq_bits(&self) -> u32 {
        32
    }

    fn rtt_rule(&self) -> RttRule {
        RttRule::KcpMs
    }

    fn loss_rule(&self) -> LossRule {
        LossRule::Resent
    }

    fn parse(&mut self, _dir: Dir, bytes: &[u8]) -> Result<Parsed, ParseError> {
        let mut f = Fields::default();
        let mut at = 0;
        if self.framed {
            if bytes.len() < KCPTUN_FRAME_BYTES {
                return Err(ParseError::new(MalformedReason::Truncated, "shorter than kcptun's frame"));
            }
            let crc = le32(bytes, 16);
            let want = crc32fast::hash(&bytes[KCPTUN_FRAME_BYTES..]);
            f.bytes("nonce", "16 bytes", 0, 16);
            f.bytes("crc32", format!("{crc:#010x}"), 16, 4);
            if crc != want {
                let e = ParseError::new(
                    MalformedReason::Foreign,
                    format!("kcptun checksum {crc:#010x}, content gives {want:#010x}"),
                );
                return Err(e.with_fields(f));
            }
            at = KCPTUN_FRAME_BYTES;
        }
        let mut parsed = Parsed::default();
        let mut conv = None;
        let mut names = Vec::new();
        let mut una_max: Option<u32> = None;
        let mut i = 0;
        while at < bytes.len() {
            if bytes.len() - at < KCP_OVERHEAD {
                let e = ParseError::new(MalformedReason::Truncated, format!("segment {i} header cut off"));
                return Err(e.with_fields(f));
            }
            let c = le32(bytes, at);
            let cmd = bytes[at + 4];
            let frg = bytes[at + 5];
            let wnd = u16::from_le_bytes([bytes[at + 6], bytes[at + 7]]);
            let ts = le32(bytes, at + 8);
            let sn = le32(bytes, at + 12);
            let una = le32(bytes, at + 16);
            let len = le32(bytes, at + 20) as usize;
            let name = match cmd {
                CMD_PUSH => "push",
                CMD_ACK => "ack",
                CMD_WASK => "window ask",
                CMD_WINS => "window tell",
                _ => {
                    let e = ParseError::new(MalformedReason::BadPayload, format!("segment {i}: unknown command {cmd}"));
                    return Err(e.with_fields(f));
                }
            };
            if *conv.get_or_insert(c) != c {
                let e = ParseError::new(MalformedReason::BadPayload, format!("segment {i}: another conversation {c}"));
                return Err(e.with_fields(f));
            }
            if bytes.len() - at - KCP_OVERHEAD < len {
                let e = ParseError::new(MalformedReason::Truncated, format!("segment {i}: data cut off"));
                return Err(e.with_fields(f));
            }
            let p = format!("segment {i} ");
            f.bytes(format!("{p}conv"), c, at, 4);
            f.bytes(format!("{p}cmd"), format!("{cmd} ({name})"), at + 4, 1);
            f.bytes(format!("{p}frg"), frg, at + 5, 1);
            f.bytes(format!("{p}wnd"), wnd, at + 6, 2);
            f.bytes(format!("{p}ts"), format!("{ts} ms"), at + 8, 4);
            f.bytes(format!("{p}sn"), sn, at + 12, 4);
            f.bytes(format!("{p}una"), una, at + 16, 4);
            f.bytes(format!("{p}len"), len, at + 20, 4);
            if len > 0 {
                f.bytes(format!("{p}data"), format!("{len} bytes"), at + KCP_OVERHEAD, len);
            }
            match cmd {
                CMD_PUSH => {
                    parsed.items.push(Item { key: sn as u64, stamp: Some(ts), msg: None });
                    names.push(format!("push {sn}"));
                }
                CMD_ACK => {
                    parsed.item_acks.push(ItemAck { key: sn as u64, echo: Some(ts) });
                    names.push(format!("ack {sn}"));
                }
                _ => names.push(name.to_string()),
            }
            una_max = Some(una_max.map_or(una, |u| u.max(una)));
            at += KCP_OVERHEAD + len;
            i += 1;
        }
        if i == 0 {
            return Err(ParseError::new(MalformedReason::BadPayload, "no segments").with_fields(f));
        }
        parsed.cumulative_ack = una_max.map(u64::from);
        parsed.summary = format!("conv {} una {}: {}", conv.unwrap_or(0), una_max.unwrap_or(0), names.join(", "));
        parsed.fields = f.into_vec();
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(cmd: u8, ts: u32, sn: u32, una: u32, data: &[u8]) -> Vec<u8> {
        let mut s = Vec::new();
        s.extend_from_slice(&7u32.to_le_bytes());
        s.extend_from_slice(&[cmd, 0]);
        s.extend_from_slice(&128u16.to_le_bytes());
        for v in [ts, sn, una, data.len() as u32] {
            s.extend_from_slice(&v.to_le_bytes());
        }
        s.extend_from_slice(data);
        s
    }

    #[test]
    fn segments_and_kcptun_frames_read_back() {
        let mut d = segment(CMD_PUSH, 100, 5, 3, b"hello");
        d.extend(segment(CMD_ACK, 90, 2, 3, &[]));
        let p = KcpFormat { framed: false }.parse(Dir::AtoB, &d).unwrap();
        assert_eq!(p.items, vec![Item { key: 5, stamp: Some(100), msg: None }]);
        assert_eq!(p.item_acks, vec![ItemAck { key: 2, echo: Some(90) }]);
        assert_eq!(p.cumulative_ack, Some(3));
        let mut framed = vec![0xAB; 16];
        framed.extend_from_slice(&crc32fast::hash(&d).to_le_bytes());
        framed.extend_from_slice(&d);
        assert!(KcpFormat { framed: true }.parse(Dir::AtoB, &framed).is_ok());
        framed[30] ^= 1;
        assert!(KcpFormat { framed: true }.parse(Dir::AtoB, &framed).is_err(), "checksum");
        assert!(KcpFormat { framed: false }.parse(Dir::AtoB, &d[..d.len() - 1]).is_err());
    }
}
